// The simulated fleet's public surface: the only file other folders import from src/sim/.

export { parseFleetConfig, type FleetConfigProblem, type FleetConfigResult } from '#src/sim/fleet-config.ts';
export { startFleet, type Fleet, type FleetOptions } from '#src/sim/fleet.ts';
export { startSimNode, type SimNode, type SimNodeOptions } from '#src/sim/sim-node.ts';
export {
  SIM_DEFAULTS,
  SIM_KINDS,
  type FleetSpec,
  type KvMode,
  type ModelStatus,
  type SimKind,
  type SimModelSpec,
  type SimNodeSpec,
} from '#src/sim/spec.ts';
export {
  HEALTH_FAULTS,
  INFERENCE_FAULTS,
  MODELS_FAULTS,
  NO_FAULTS,
  type HealthFault,
  type InferenceFault,
  type ModelsFault,
  type SimFaults,
} from '#src/sim/faults.ts';
export type { RecordedRequest, SimStats } from '#src/sim/recorder.ts';
export {
  CHAT_TOKENS_PER_MESSAGE,
  CHAT_TOKENS_PER_PROMPT,
  chatPromptTokens,
  countTokens,
  responsesPromptTokens,
  textPromptTokens,
  tokenize,
} from '#src/sim/tokenizer.ts';
export { DEFAULT_GENERATED_TOKENS } from '#src/sim/context-rules.ts';
