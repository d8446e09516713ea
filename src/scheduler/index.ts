export { Scheduler, type SchedulerOptions, type SwitchModels } from './scheduler.ts';
export type { Admission, LoadTicket, QueueSettings, RefusalReason } from './admission.ts';
export type { SchedulerEffects, SchedulerNotice } from './effects.ts';
export { onRoomMayOpen } from './fleet-changes.ts';
export { type LoadOutcome } from './router-switches.ts';
export type { ModelQueueReport } from './fair-queue.ts';
export { type ProtectedModels, EVICTION_HOLD_MS } from './switch-claims.ts';
export type { EvictionResult } from './effects.ts';
export type { QueueHolder } from './queue-holder.ts';
