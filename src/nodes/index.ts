export {
  isWaking,
  sameBesidesLearned,
  inFlightOf,
  type NodeView,
  type NodeWake,
  type RoutingSnapshot,
  type Lease,
  type LeaseReturn,
  type InFlightJournal,
  type ListedModelFacts,
  type ViewFacts,
} from './node.ts';
export { NodeRegistry } from './registry.ts';
export { ModelOffers } from './model-offers.ts';
export { servingNow, type Serving } from './serving-now.ts';
export type { RegistryEvents } from './registry-events.ts';
export {
  type HealthState,
  type HealthStatus,
  type ProbeOutcome,
  initialHealthState,
  observeProbe,
  degradedAfter,
} from './health/health-state.ts';
export { HealthChecker } from './health/checker.ts';
export { probeNode } from './health/probe.ts';
export {
  observeUpstream,
  isEjected,
  INITIAL_PASSIVE_STATE,
  type PassiveState,
  type UpstreamVerdict,
  type EjectionPolicy,
} from './health/passive.ts';
export { WakeManager, type WakeResult } from './wake/wake-manager.ts';
export { sendWake, type WakeDelivery } from './wake/send-wake.ts';
export { magicPacket } from './wake/magic-packet.ts';
export { LoadScraper } from './load/load-scraper.ts';
export { fetchLoad, MAX_ROUTER_MODELS } from './load/fetch-load.ts';
export { judgeLoad, type LoadReading, type LoadScrape, type LoadVerdict } from './load/load-reading.ts';
export { pollingAgents, POLL_KEEP_ALIVE_MS, type PollingAgents } from './polling-agents.ts';
export { isRecovery, nodeReactions, wakeProbeIntervalMs, type NodeReactionDeps } from './reactions.ts';
export { nodeRound, wantsCapacity, type NodeRoundDeps } from './node-round.ts';
export { NodeLoops, type NodeLoopsDeps } from './node-loops.ts';
export { ModelPush, type ModelPushDeps, type ModelEventStreamState } from './model-push.ts';
export {
  ModelManager,
  type ModelManagerDeps,
  type ModelActionOutcome,
  type ActionOrigin,
  type ActOptions,
} from './models/model-manager.ts';
export {
  decideModelAction,
  type ModelActionInput,
  type ModelActionVerdict,
  type NodeFacts,
  type ModelFacts,
  type RefusalCode,
} from './models/model-decision.ts';
export { backoffAfter, type FailedOp } from './models/backoff.ts';
export { ModelReconciler, type ReconcilerDeps } from './models/reconciler.ts';
export { actAsOperator, type OperatorActionDeps, type OperatorActionOptions } from './models/operator-action.ts';
export { judgeOperatorLoad, judgeOperatorUnload, type OperatorLoad, type OperatorLoadJudgement } from './models/operator-load.ts';
export { heldFrom, OperatorHolds, type HoldKind, type HoldsState, type OperatorHold } from './models/operator-holds.ts';
export {
  byNodeAndModel,
  MemoryHoldStore,
  type HoldRecord,
  type HoldState,
  type HoldStore,
  type StoredHold,
} from './models/hold-store.ts';
export { planReconcile, withHolds, type ReconcileInput, type ReconcileStep, type DesiredModel } from './models/reconcile-plan.ts';
export { modelStateNote, nodeFacts, unavailability } from './models/model-facts.ts';
export type { ModelAction } from '#src/kinds/index.ts';
export { modelsView, type ModelRow, type ModelsViewInput, type RouterHeldLoad } from './models/models-view.ts';
export {
  mayTake,
  refusalOf,
  SwitchTickets,
  type ClaimAnswer,
  type SwitchBook,
  type SwitchSharing,
  type SwitchTicket,
  type SwitchHolder,
  type TakeVerdict,
} from './models/switch-book.ts';
