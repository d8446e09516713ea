// Which job holds which slot of a model, and who waits (FIFO), as a pure value. A job that arrives
// while every slot is busy waits; a freed slot goes to the head of the queue, like llama-server's
// deferred tasks.

export interface SlotTable {
  /** One entry per slot: the job id holding it, or null when idle. */
  readonly slots: readonly (number | null)[];
  /** Job ids waiting for a slot, oldest first. */
  readonly waiting: readonly number[];
}

export interface SlotChange {
  readonly table: SlotTable;
  /** Jobs that got a slot by this change, with the slot index, in admission order. */
  readonly started: readonly { readonly jobId: number; readonly slot: number }[];
}

export function emptySlotTable(slotCount: number): SlotTable {
  return { slots: Array.from({ length: slotCount }, () => null), waiting: [] };
}

/**
 * Gives the job a free slot (the first, or the one `prefer` picks among the free ones, as
 * llama-server picks the slot whose cached prompt is most like the new one), else queues it.
 */
export function enqueueJob(table: SlotTable, jobId: number, prefer?: (free: readonly number[]) => number): SlotChange {
  const freeSlots = table.slots.flatMap((holder, slot) => (holder === null ? [slot] : []));
  const first = freeSlots[0] ?? -1;
  const picked = prefer === undefined || freeSlots.length < 2 ? first : prefer(freeSlots);
  const free = freeSlots.includes(picked) ? picked : first;
  if (free === -1 || table.waiting.length > 0) {
    return { table: { slots: table.slots, waiting: [...table.waiting, jobId] }, started: [] };
  }
  const slots = table.slots.with(free, jobId);
  return { table: { slots, waiting: table.waiting }, started: [{ jobId, slot: free }] };
}

/** Removes the job wherever it is (slot or queue) and hands freed slots to waiting jobs. */
export function removeJob(table: SlotTable, jobId: number): SlotChange {
  const slots = table.slots.map((holder) => (holder === jobId ? null : holder));
  const waiting = table.waiting.filter((id) => id !== jobId);
  const started: { jobId: number; slot: number }[] = [];
  for (let slot = 0; slot < slots.length && waiting.length > 0; slot++) {
    if (slots[slot] !== null) continue;
    const next = waiting.shift();
    if (next === undefined) break;
    slots[slot] = next;
    started.push({ jobId: next, slot });
  }
  return { table: { slots, waiting }, started };
}

export function busySlotCount(table: SlotTable): number {
  return table.slots.filter((holder) => holder !== null).length;
}
