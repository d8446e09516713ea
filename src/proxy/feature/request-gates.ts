// Judging a caller's request gates (request-feature.ts), stage by stage, in the caller's order: the
// first verdict other than "pass" decides. A caller with no gates costs a loop over nothing, and
// only a gate that really waits (a tenant's limits asked of their owner) costs a promise.

import type { IncomingMessage, ServerResponse } from 'node:http';
import type { RequestReport } from '../request/request-report.ts';
import type { Admitted, AnsweredAsUnknown, Refused, RequestGate, SizedRequest } from './request-feature.ts';

export function judgeBody(gates: readonly RequestGate[], raw: Buffer, req: IncomingMessage): Refused | undefined {
  for (const gate of gates) {
    const verdict = gate.body?.(raw, req);
    if (verdict !== undefined) return verdict;
  }
  return undefined;
}

export function judgeModel(gates: readonly RequestGate[], model: string): Refused | AnsweredAsUnknown | undefined {
  for (const gate of gates) {
    const verdict = gate.model?.(model);
    if (verdict !== undefined) return verdict;
  }
  return undefined;
}

/**
 * Judges the admission gates in order; each admission is applied as it comes (its headers on the
 * answer, its `finished` run as the request ends), so a later gate's refusal still finishes it.
 * Resolves to the refusal that ends the request, or undefined: admitted by every gate.
 */
export async function judgeAdmission(
  gates: readonly RequestGate[],
  request: SizedRequest,
  res: ServerResponse,
  report: RequestReport,
): Promise<Refused | undefined> {
  for (const gate of gates) {
    if (gate.admit === undefined) continue;
    const judged = gate.admit(request);
    const verdict = judged instanceof Promise ? await judged : judged;
    if (verdict === undefined) continue;
    if (verdict.kind === 'refused') return verdict;
    admit(verdict, res, report);
  }
  return undefined;
}

function admit(verdict: Admitted, res: ServerResponse, report: RequestReport): void {
  if (verdict.headers !== undefined) for (const [name, value] of Object.entries(verdict.headers)) res.setHeader(name, value);
  const finished = verdict.finished;
  if (finished === undefined) return;
  const before = report.onFinish;
  report.onFinish = (status) => {
    before?.(status);
    finished(status, report.usage);
  };
}
