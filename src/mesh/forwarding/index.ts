export { contentDigest, digestMatches } from './content-digest.ts';
export { decodePinnedKey, pinsOf } from './pinned-key.ts';
export {
  signForward,
  NONCE_RULE,
  SIGNATURE_LABEL,
  SIGNED_COMPONENTS,
  SIGNED_COMPONENTS_WITH_TENANT,
  SIGNATURE_PARAMS,
  type ForwardToSign,
} from './forward-signature.ts';
export {
  decodeTenantHeader,
  encodeTenantHeader,
  MAX_TENANT_HEADER_CHARS,
  TENANT_HEADER,
  type ForwardTenantClaim,
  type TenantHeaderVerdict,
} from './forward-tenant.ts';
export { siteTargetUrl } from './forward-url.ts';
export {
  claimFor,
  localReplayGuard,
  MAX_REMEMBERED_FORWARDS,
  replayOp,
  SeenForwards,
  type ClaimVerdict,
  type ForwardClaim,
  type LocalReplayOptions,
  type ReplayGuard,
  type ReplayOp,
} from './seen-forwards.ts';
export {
  acceptanceWindow,
  earlierRunCouldAccept,
  firstAcceptedCreatedMs,
  replayShare,
  type AcceptanceWindow,
} from './replay-window.ts';
export {
  verifyForward,
  claimsForward,
  judgeTimes,
  type ForwardVerdict,
  type ForwardHead,
  type VerifyContext,
} from './verify-forward.ts';
export { forwardRefused, FORWARD_REJECTIONS, type ForwardRejection } from './forward-refusal.ts';
export { FORWARDED_BY } from './forwarded-by.ts';
export { FORWARDED_REPORTS } from './forwarded-line.ts';
export { meshLinkFor, SITES_PORT, type MeshLink, type SitesSource } from './mesh-link.ts';
export {
  parseReplayRecord,
  restartRule,
  serializeRunning,
  serializeStopped,
  type CarriedMemory,
  type RecordRead,
  type ReplayRecord,
  type RestartContext,
  type RestartRule,
} from './replay-record.ts';
export { fileExists, replayRecordFile, replayRecordFileFor, type ReplayRecordStore } from './replay-record-file.ts';
export { ReplayKeeper, type ReplayKeeperDeps, type ReplayKeeperLog } from './replay-keeper.ts';
