// Sizes in bytes, written either as an integer or with a unit ("512KiB", "10MiB", "1MB").
// KiB/MiB/GiB are powers of 1024, KB/MB/GB powers of 1000, as the units say.
import { invalid, valid, type ParseResult } from './parse-result.ts';

const BYTES_PER_UNIT: Readonly<Record<string, number>> = {
  b: 1,
  kb: 1_000,
  mb: 1_000_000,
  gb: 1_000_000_000,
  kib: 1_024,
  mib: 1_048_576,
  gib: 1_073_741_824,
};

const SIZE = /^(\d+(?:\.\d+)?)\s*([a-z]+)$/i;
const EXPECTED = 'must be a size in bytes, like 1048576 or "512KiB", "10MiB", "1MB"';

export function parseSizeBytes(value: unknown): ParseResult<number> {
  if (typeof value === 'number') {
    return Number.isSafeInteger(value) && value >= 0 ? valid(value) : invalid(`${EXPECTED} (a whole number of bytes)`);
  }
  if (typeof value !== 'string') return invalid(EXPECTED);
  const match = SIZE.exec(value);
  const unitBytes = BYTES_PER_UNIT[match?.[2]?.toLowerCase() ?? ''];
  if (match === null || unitBytes === undefined) return invalid(`${EXPECTED} (units: B, KB, MB, GB, KiB, MiB, GiB)`);
  const bytes = Number(match[1]) * unitBytes;
  if (!Number.isSafeInteger(bytes)) return invalid(`${EXPECTED}; it must come to a whole number of bytes`);
  return valid(bytes);
}

/** Binary units when exact ("10MiB"), else plain bytes ("1000B"). */
export function formatSizeBytes(bytes: number): string {
  for (const unit of ['GiB', 'MiB', 'KiB'] as const) {
    const unitBytes = BYTES_PER_UNIT[unit.toLowerCase()] ?? 1;
    if (bytes >= unitBytes && bytes % unitBytes === 0) return `${bytes / unitBytes}${unit}`;
  }
  return `${bytes}B`;
}
