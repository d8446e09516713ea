// Judging a caller's request gates (request-feature.ts), stage by stage, in the caller's order: the
// first verdict other than "pass" decides. A caller with no gates costs a loop over nothing, and
// only a gate that really waits (a tenant's limits asked of their owner) costs a promise.

import type { IncomingMessage, ServerResponse } from 'node:http';
import { whenFinished, type RequestReport } from '../request/request-report.ts';
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
 * Gives the refusal that ends the request, or undefined: admitted by every gate — at once while
 * the verdicts are, a promise only from the first gate that waits.
 */
export function judgeAdmission(
  gates: readonly RequestGate[],
  request: SizedRequest,
  res: ServerResponse,
  report: RequestReport,
): Refused | undefined | Promise<Refused | undefined> {
  for (let index = 0; index < gates.length; index += 1) {
    const judged = gates[index]?.admit?.(request);
    if (judged instanceof Promise)
      return judged.then(
        (verdict) => applied(verdict, res, report) ?? judgeAdmission(gates.slice(index + 1), request, res, report),
      );
    const refused = applied(judged, res, report);
    if (refused !== undefined) return refused;
  }
  return undefined;
}

/** A refusal is returned; an admission is applied (undefined: go on). */
function applied(verdict: Refused | Admitted | undefined, res: ServerResponse, report: RequestReport): Refused | undefined {
  if (verdict === undefined) return undefined;
  if (verdict.kind === 'refused') return verdict;
  admit(verdict, res, report);
  return undefined;
}

function admit(verdict: Admitted, res: ServerResponse, report: RequestReport): void {
  if (verdict.headers !== undefined) for (const [name, value] of Object.entries(verdict.headers)) res.setHeader(name, value);
  const finished = verdict.finished;
  if (finished === undefined) return;
  whenFinished(report, (status) => finished(status, report.usage));
}
