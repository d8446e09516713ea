// Pure: the UTC day keys a shared-store script chooses between by the store's own clock (TIME),
// so replicas whose clocks disagree still count one day's budget. The replica names three
// candidates around its best estimate of the store's time (its clock plus the last offset the
// store answered); the script takes the one its clock falls in (the first or last when it is
// further off than a day).

import { DAY_MS, utcDay } from './limits.ts';

export interface DayCandidates {
  /** The day before, the estimated day, the day after ("YYYY-MM-DD"). */
  readonly days: readonly [string, string, string];
  /** When the estimated (middle) day begins, epoch ms UTC. */
  readonly startMs: number;
}

export function dayCandidates(estimateMs: number): DayCandidates {
  const startMs = Math.floor(estimateMs / DAY_MS) * DAY_MS;
  return { days: [utcDay(startMs - DAY_MS), utcDay(startMs), utcDay(startMs + DAY_MS)], startMs };
}

/** Which candidate (0, 1, 2) the store's time `storeMs` falls in, as the scripts choose it. */
export function candidateAt(candidates: DayCandidates, storeMs: number): 0 | 1 | 2 {
  if (storeMs < candidates.startMs) return 0;
  if (storeMs >= candidates.startMs + DAY_MS) return 2;
  return 1;
}
