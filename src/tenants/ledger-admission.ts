// The in-thread side of tenant admission: the ledger itself, answered at once. (A request worker
// asks the owner's ledger over its MessagePort instead: worker-admission.ts.)

import type { TenantAdmission, TenantAsk } from './admission-types.ts';
import type { TenantLedger } from './ledger.ts';

export function ledgerAdmission(ledger: Pick<TenantLedger, 'admit'>): (ask: TenantAsk) => Promise<TenantAdmission> {
  return (ask) => {
    const { decision, ticket } = ledger.admit(ask);
    if (decision.kind === 'limited') return Promise.resolve(decision);
    return Promise.resolve({ kind: 'admitted', figures: decision.figures, settle: (outcome) => ticket.settle(outcome) });
  };
}

/**
 * Pure: the tokens a request reserves at admission: its prompt's upper bound plus, for each answer
 * it asks to be generated (`choices`: `n`, `best_of`), max_tokens, or routing.completion_reserve
 * when it sets none (docs/tenants.md, "Admission and limits"). The prompt is read once, whatever
 * the number of answers.
 */
export function tenantReservation(
  promptTokens: number,
  maxTokens: number | undefined,
  completionReserveTokens: number,
  choices = 1,
): number {
  return Math.max(0, promptTokens) + Math.max(1, Math.floor(choices)) * Math.max(0, maxTokens ?? completionReserveTokens);
}
