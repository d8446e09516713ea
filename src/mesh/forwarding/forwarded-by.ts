// The header a forwarding site names itself in (covered by the forward's signature:
// forward-signature.ts). On its own: a gateway without [mesh] looks it up to refuse a request that
// claims to be a forward (proxy/sites/refused-forwards.ts), and loads none of the signing code.

export const FORWARDED_BY = 'x-switchyard-forwarded-by';
