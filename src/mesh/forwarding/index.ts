export { contentDigest, digestMatches } from './content-digest.ts';
export { decodePinnedKey, pinsOf } from './pinned-key.ts';
export { signForward, FORWARDED_BY, SIGNATURE_LABEL, SIGNED_COMPONENTS, SIGNATURE_PARAMS, type ForwardToSign } from './forward-signature.ts';
export { verifyForward, claimsForward, FORWARD_REJECTIONS, type ForwardRejection, type ForwardVerdict, type ForwardHead, type VerifyContext } from './verify-forward.ts';
export { meshLinkFor, type MeshLink, type SitesSource } from './mesh-link.ts';
