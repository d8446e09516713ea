// `npm run soak -- --minutes 10`: a sim fleet and a gateway as real processes on loopback, a steady
// mixed load (streamed and whole answers, client aborts, malformed bodies, a node failing now and
// then), and the gateway's RSS sampled over time (bench/soak.ts runs it; `npm run bench -- --only
// soak` reads the same run into the targets table). Prints a table and a verdict: the RSS is flat
// when the average of the last third of the samples is within 10% of the first third's (after
// warm-up). Exit code 0 when flat, 1 when it grew, 2 for bad arguments. The gateway runs with the V8
// heap flags docs/performance.md recommends ("Memory flags", as examples/switchyard.service passes
// them); `--gateway-flags ''` runs it with V8's defaults instead.

import { parseArgs } from 'node:util';
import { FLAT_TOLERANCE, RECOMMENDED_FLAGS, runSoak } from '../bench/soak.ts';

function usage(message: string): never {
  process.stderr.write(
    `${message}\nusage: npm run soak -- [--minutes N] [--concurrency N] [--seed N] [--gateway-flags 'V8 FLAGS']\n`,
  );
  process.exit(2);
}

function positiveNumber(text: string | undefined, fallback: number, name: string): number {
  if (text === undefined) return fallback;
  const value = Number(text);
  if (!Number.isFinite(value) || value <= 0) usage(`--${name} must be a positive number, not "${text}"`);
  return value;
}

function mib(bytes: number): string {
  return (bytes / 1_048_576).toFixed(1);
}

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: {
      minutes: { type: 'string' },
      concurrency: { type: 'string' },
      seed: { type: 'string' },
      'gateway-flags': { type: 'string', default: RECOMMENDED_FLAGS },
    },
    allowPositionals: false,
  });
  const minutes = positiveNumber(values.minutes, 10, 'minutes');
  const concurrency = Math.floor(positiveNumber(values.concurrency, 8, 'concurrency'));
  const seed = Math.floor(positiveNumber(values.seed, 1, 'seed'));
  const sampleMs = Math.max(2_000, Math.min(10_000, Math.floor((minutes * 60_000) / 12)));
  const flags = values['gateway-flags'].trim();
  process.stderr.write(
    `soak: ${minutes} min, concurrency ${concurrency}, RSS every ${sampleMs / 1000} s, gateway flags: ${flags === '' ? "V8's defaults" : flags}\n`,
  );
  const result = await runSoak({
    minutes,
    concurrency,
    seed,
    gatewayFlags: flags,
    onSample: (sample) =>
      process.stderr.write(
        `  ${sample.atSeconds}s rss ${mib(sample.rssBytes)} MiB heap ${mib(sample.heapUsedBytes)} MiB requests ${sample.requests} errors ${sample.errors}\n`,
      ),
  });
  const lines = ['| t (s) | RSS MiB | heap MiB | requests | client errors |', '|---|---|---|---|---|'];
  for (const s of result.samples)
    lines.push(`| ${s.atSeconds} | ${mib(s.rssBytes)} | ${mib(s.heapUsedBytes)} | ${s.requests} | ${s.errors} |`);
  console.log(lines.join('\n'));
  console.log(`\noutcomes: ${JSON.stringify(result.outcomes)}`);
  const verdict = result.verdict;
  if (verdict === undefined) {
    console.log('verdict: too few samples for a verdict (run longer)');
    return 1;
  }
  console.log(
    `verdict: ${verdict.flat ? 'FLAT' : 'GROWING'} — RSS first third ${mib(verdict.firstThirdRssBytes)} MiB, last third ${mib(verdict.lastThirdRssBytes)} MiB ` +
      `(${(verdict.change * 100).toFixed(1)}%, tolerance ${FLAT_TOLERANCE * 100}%), after ${verdict.warmUpSeconds} s warm-up; ` +
      `heap floor ${mib(verdict.heapFloorFirstBytes)} → ${mib(verdict.heapFloorLastBytes)} MiB; highest RSS sampled ${mib(verdict.maxRssBytes)} MiB; ` +
      `${result.requests} requests, ${result.errors} client errors`,
  );
  return verdict.flat ? 0 : 1;
}

process.exitCode = await main();
