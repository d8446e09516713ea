import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { formatSizeBytes, parseSizeBytes } from '#src/config/size.ts';

describe('parseSizeBytes', () => {
  const accepted: readonly (readonly [unknown, number])[] = [
    [0, 0],
    [1_048_576, 1_048_576],
    ['100B', 100],
    ['512KiB', 524_288],
    ['10MiB', 10_485_760],
    ['1GiB', 1_073_741_824],
    ['1KB', 1_000],
    ['1MB', 1_000_000],
    ['2GB', 2_000_000_000],
    ['1.5MiB', 1_572_864],
    ['4 MiB', 4_194_304],
    ['10mib', 10_485_760],
  ];
  for (const [input, expectedBytes] of accepted) {
    test(`reads ${JSON.stringify(input)} as ${expectedBytes} bytes`, () => {
      assert.deepEqual(parseSizeBytes(input), { ok: true, value: expectedBytes });
    });
  }

  const refused: readonly (readonly [unknown, string])[] = [
    [1.5, 'a whole number of bytes'],
    [-1, 'a whole number of bytes'],
    ['10', 'units: B, KB, MB, GB, KiB, MiB, GiB'],
    ['10XB', 'units: B, KB, MB, GB, KiB, MiB, GiB'],
    ['-1MiB', 'units: B, KB, MB, GB, KiB, MiB, GiB'],
    ['1.5B', 'whole number of bytes'],
    [true, 'must be a size in bytes'],
  ];
  for (const [input, fragment] of refused) {
    test(`refuses ${JSON.stringify(input)} with a message saying "${fragment}"`, () => {
      const result = parseSizeBytes(input);
      assert.ok(!result.ok && result.message.includes(fragment), JSON.stringify(result));
    });
  }
});

describe('formatSizeBytes', () => {
  const cases: readonly (readonly [number, string])[] = [
    [10_485_760, '10MiB'],
    [524_288, '512KiB'],
    [1_073_741_824, '1GiB'],
    [1_000, '1000B'],
    [0, '0B'],
  ];
  for (const [bytes, text] of cases) {
    test(`writes ${bytes} bytes as "${text}"`, () => {
      assert.equal(formatSizeBytes(bytes), text);
    });
  }
});
