// The figures table each fault-suite file prints at its end (a markdown table in the CI log).

import type { LeakFigures } from './leaks.ts';
import type { LoadTally } from './load.ts';

export interface FigureRow {
  readonly name: string;
  readonly tally: LoadTally;
  readonly leaks: LeakFigures;
  readonly note?: string;
}

function mib(bytes: number): string {
  return (bytes / 1_048_576).toFixed(1);
}

export class FigureTable {
  readonly #title: string;
  readonly #rows: FigureRow[] = [];

  constructor(title: string) {
    this.#title = title;
  }

  add(row: FigureRow): void {
    this.#rows.push(row);
  }

  render(): string {
    const header = [
      'case',
      'requests sent',
      'client-visible errors',
      'of which avoidable',
      'after first byte',
      'expected refusals',
      'leaked leases',
      'upstream sockets busy after drain',
      'idle keep-alive sockets',
      'node requests left',
      'RSS Δ MiB',
      'secs',
    ];
    const lines = [`### ${this.#title}`, '', `| ${header.join(' | ')} |`, `|${header.map(() => '---').join('|')}|`];
    for (const r of this.#rows) {
      const cells = [
        r.note === undefined ? r.name : `${r.name} (${r.note})`,
        r.tally.sent,
        r.tally.clientErrors,
        r.tally.avoidable,
        r.tally.afterFirstByte,
        r.tally.expected,
        r.leaks.leakedLeases,
        r.leaks.upstreamBusy,
        r.leaks.upstreamIdle,
        r.leaks.simInFlight,
        mib(r.leaks.rssGrowthBytes),
        (r.tally.durationMs / 1000).toFixed(1),
      ];
      lines.push(`| ${cells.join(' | ')} |`);
    }
    return lines.join('\n');
  }

  print(): void {
    if (this.#rows.length > 0) console.log(`\n${this.render()}\n`);
  }
}
