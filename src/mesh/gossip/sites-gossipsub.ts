// gossipsub as the sites topic uses it: StrictSign, flood publish, one allowed topic, frame
// bounds from the message bound, and a peer score that counts only rejected messages.

import { gossipsub, TopicValidatorResult } from '@libp2p/gossipsub';
import { createTopicScoreParams } from '@libp2p/gossipsub/score';
import { SITES_TOPIC } from '../site-record.ts';
import type { MessageVerdict } from '../transport.ts';
import type { ByteMeter } from './byte-meter.ts';
import { fastMessageId } from './fast-message-id.ts';

/**
 * One RPC frame may carry several messages (an IWANT answer batches them) plus control entries,
 * so the frame bound is a multiple of the message bound; the per-message bound is the validator's.
 */
function frameLimit(maxMessageBytes: number): number {
  return maxMessageBytes * 8 + 64 * 1024;
}

export const RESULT: Readonly<Record<MessageVerdict, TopicValidatorResult>> = Object.freeze({
  accept: TopicValidatorResult.Accept,
  reject: TopicValidatorResult.Reject,
  ignore: TopicValidatorResult.Ignore,
});

/**
 * gossipsub's peer score on the sites topic counts only rejected messages (P4, squared): a few
 * and the peer's score falls below the gossip, publish and then graylist thresholds (-10, -50,
 * -80: its RPCs are then ignored). The counter decays by 0.9 a second, so an honest peer that
 * relayed one bad record recovers within seconds, and a flood keeps its sender graylisted. The
 * other topic terms (time in mesh, deliveries) are off: meshes here are small and quiet.
 */
const SITES_TOPIC_SCORE = Object.freeze(
  createTopicScoreParams({
    topicWeight: 1,
    timeInMeshWeight: 0,
    firstMessageDeliveriesWeight: 0,
    meshMessageDeliveriesWeight: 0,
    meshFailurePenaltyWeight: 0,
    invalidMessageDeliveriesWeight: -1,
    invalidMessageDeliveriesDecay: 0.9,
  }),
);

/** The gossipsub service of a site's libp2p node. */
export function sitesGossipsub(maxMessageBytes: number, meter: ByteMeter): ReturnType<typeof gossipsub> {
  return gossipsub({
    // Records are signed by the site key, and so are the gossipsub envelopes (the same key):
    // a message's `from` is the libp2p peer that really sent it.
    globalSignaturePolicy: 'StrictSign',
    // A site publishes whether or not anyone listens yet; heartbeats reach late joiners.
    allowPublishToZeroTopicPeers: true,
    emitSelf: false,
    // Identical bytes twice (e.g. a "want" repeated within the seen-cache window) are a no-op,
    // not an error: records themselves always differ, their revision rises.
    ignoreDuplicatePublishError: true,
    // A copy already seen is dropped before its signature is checked again (fast-message-id.ts).
    fastMsgIdFn: fastMessageId,
    // Own records go to every connected subscriber, not only the D mesh peers: meshes here are
    // small (tens of sites), records are small, and a change should arrive in one hop.
    floodPublish: true,
    // Heartbeat interval and D/Dlo/Dhi stay at gossipsub's defaults (1 s; 6/4/12): D = 4 made no
    // measurable difference to a gateway's CPU at 12 sites (6.4 % vs 6.5 % of a core; #20 item 8).
    allowedTopics: [SITES_TOPIC],
    maxInboundDataLength: frameLimit(maxMessageBytes),
    metricsRegister: meter.register(),
    metricsTopicStrToLabel: new Map([[SITES_TOPIC, 'sites']]),
    // P6 (IP colocation) is off: it defends against many peer ids minted on one host, and here no
    // minted id gets connected (the gater keeps only pinned sites and [mesh] allowed_peers). Left
    // on, more than ten sites behind one address (one host, one NAT) would push each other below
    // the gossip and graylist thresholds (-5 per surplus peer, squared).
    scoreParams: { IPColocationFactorWeight: 0, topics: { [SITES_TOPIC]: SITES_TOPIC_SCORE } },
  });
}
