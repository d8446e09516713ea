// Ollama's prompt-less `POST /api/generate` (PROTOCOLS.md §3.3): with `keep_alive: 0` it unloads the
// model and answers `done_reason: "unload"`; otherwise it loads the model (waiting for the load) and
// answers `done_reason: "load"`. An unknown model is its native 404. A request with a prompt is not
// handled here (undefined).

import type { SimExchange } from '#src/sim/exchange.ts';
import type { Reply } from '#src/sim/reply.ts';
import type { ResidentModels } from '#src/sim/resident-models.ts';
import type { ResolvedModel } from '#src/sim/spec.ts';
import { ollamaJson } from '#src/sim/kinds/ollama-dialect.ts';

function isZeroKeepAlive(value: unknown): boolean {
  return value === 0 || value === '0' || value === '0s' || value === '0m';
}

export async function ollamaLoadOrUnload(
  exchange: SimExchange,
  residents: ResidentModels,
  resolve: (name: string) => ResolvedModel | undefined,
): Promise<Reply | undefined> {
  const body = exchange.body.kind === 'json' ? exchange.body.value : undefined;
  const record =
    typeof body === 'object' && body !== null && !Array.isArray(body) ? Object.fromEntries(Object.entries(body)) : {};
  const prompt = record['prompt'];
  if (typeof prompt === 'string' && prompt !== '') return undefined;
  const name = typeof record['model'] === 'string' ? record['model'] : '';
  const model = resolve(name);
  if (model === undefined) return ollamaJson(404, { error: `model "${name}" not found, try pulling it first` });
  const answer = (reason: 'load' | 'unload'): Reply =>
    ollamaJson(200, { model: name, created_at: new Date().toISOString(), response: '', done: true, done_reason: reason });
  if (isZeroKeepAlive(record['keep_alive'])) {
    residents.unload(model.id);
    return answer('unload');
  }
  if (residents.status(model.id) === 'unloaded') residents.load(model.id);
  const status = await residents.settled(model.id, exchange.signal);
  if (status !== 'loaded') return ollamaJson(500, { error: `model "${model.id}" was unloaded while loading` });
  residents.touch(model.id);
  return answer('load');
}
