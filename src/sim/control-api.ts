// The control endpoint every sim node serves on its own port under /__sim/: read and switch faults,
// read the recording and stats, reset. These requests are not recorded themselves.

import { parseFaultPatch, type SimFaults } from '#src/sim/faults.ts';
import type { RecordedRequest, SimStats } from '#src/sim/recorder.ts';
import { jsonReply, type Reply } from '#src/sim/reply.ts';
import type { RequestBody } from '#src/sim/request-body.ts';

export const CONTROL_PREFIX = '/__sim/';

/** What the control endpoint may read and change on its node. */
export interface ControlTarget {
  faults(): SimFaults;
  setFaults(patch: Partial<SimFaults>): SimFaults;
  requests(): readonly RecordedRequest[];
  stats(): SimStats;
  /** Clears the recording and the faults. */
  reset(): void;
  /** A test knob on the node's models (`POST /__sim/model {action, model, …}`); undefined = the kind has none. */
  modelControl?(
    action: string,
    body: Readonly<Record<string, unknown>>,
  ): { ok: true; detail?: string } | { ok: false; error: string };
}

const HEADERS: Readonly<Record<string, string>> = { 'Content-Type': 'application/json' };

function problem(status: number, message: string): Reply {
  return jsonReply(status, { error: message }, HEADERS);
}

export function answerControl(method: string, path: string, body: RequestBody, target: ControlTarget): Reply {
  const route = `${method} ${path}`;
  switch (route) {
    case 'GET /__sim/faults':
      return jsonReply(200, target.faults(), HEADERS);
    case 'POST /__sim/faults': {
      if (body.kind !== 'json') return problem(400, 'expected a JSON object of faults');
      const parsed = parseFaultPatch(body.value);
      if (!parsed.ok) return problem(400, parsed.message);
      return jsonReply(200, target.setFaults(parsed.patch), HEADERS);
    }
    case 'GET /__sim/requests':
      return jsonReply(200, target.requests(), HEADERS);
    case 'GET /__sim/stats':
      return jsonReply(200, target.stats(), HEADERS);
    case 'POST /__sim/model': {
      if (body.kind !== 'json' || typeof body.value !== 'object' || body.value === null || Array.isArray(body.value))
        return problem(400, 'expected a JSON object {action, model, …}');
      const value = body.value as Record<string, unknown>;
      if (target.modelControl === undefined) return problem(404, 'this kind of node has no model controls');
      const answer = target.modelControl(String(value['action'] ?? ''), value);
      return answer.ok ? jsonReply(200, { ok: true, detail: answer.detail ?? null }, HEADERS) : problem(400, answer.error);
    }
    case 'POST /__sim/reset':
      target.reset();
      return jsonReply(200, { reset: true, faults: target.faults() }, HEADERS);
    default:
      return problem(404, `no sim control endpoint ${route}`);
  }
}
