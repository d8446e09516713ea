// The batch tests' fleet: vLLM sim nodes and an in-process gateway with a state_dir (or without),
// and the official openai client in front of it; JSONL input built from lines.
import OpenAI, { toFile } from 'openai';
import { startTenantGateway, type TenantGateway, type TenantGatewaySpec } from '#test/fixtures/tenant-gateway.ts';
import { tempStateDir } from '#test/fixtures/state-dirs.ts';
import { eventually } from '#test/fixtures/http.ts';

export interface BatchGateway extends TenantGateway {
  readonly stateDir: string;
  /** Removes the state_dir made for it (none when one was given). */
  removeState(): void;
  client(apiKey?: string): OpenAI;
}

/** A tenant gateway with `[server] state_dir` (a fresh one unless given) and `[batch]` lines when given. */
export async function startBatchGateway(
  spec: TenantGatewaySpec & { readonly stateDir?: string | null; readonly batch?: string },
): Promise<BatchGateway> {
  const made = spec.stateDir === undefined ? tempStateDir() : undefined;
  const dir = made?.dir ?? spec.stateDir ?? null;
  const server = [spec.server ?? '', dir === null ? '' : `state_dir = "${dir}"`].join('\n');
  const extra = [spec.extra ?? '', spec.batch === undefined ? '' : `[batch]\n${spec.batch}`].join('\n');
  const started = await startTenantGateway({ ...spec, server, extra });
  return {
    ...started,
    stateDir: dir ?? '',
    removeState: () => made?.remove(),
    client: (apiKey = 'none') => new OpenAI({ baseURL: `${started.gw.url}/v1`, apiKey, maxRetries: 0, timeout: 60_000 }),
  };
}

/** One chat line of a batch input. */
export function chatLine(customId: string, model: string, content: string, extra: Record<string, unknown> = {}): string {
  return JSON.stringify({
    custom_id: customId,
    method: 'POST',
    url: '/v1/chat/completions',
    body: { model, messages: [{ role: 'user', content }], max_tokens: 4, ...extra },
  });
}

export async function upload(client: OpenAI, lines: readonly string[]): Promise<OpenAI.FileObject> {
  return client.files.create({ file: await toFile(Buffer.from(`${lines.join('\n')}\n`), 'input.jsonl'), purpose: 'batch' });
}

/** Polls the batch until it reaches one of `statuses` (generous bound: a busy machine). */
export async function pollUntil(
  client: OpenAI,
  id: string,
  statuses: readonly string[],
  timeoutMs = 240_000,
): Promise<OpenAI.Batch> {
  let last: OpenAI.Batch | undefined;
  await eventually(
    async () => {
      last = await client.batches.retrieve(id);
      return statuses.includes(last.status);
    },
    timeoutMs,
    `batch ${id} to reach ${statuses.join('/')} (last: ${JSON.stringify(last?.status)} ${JSON.stringify(last?.request_counts)})`,
  );
  return last!;
}

export interface OutputLine {
  readonly id: string;
  readonly custom_id: string;
  readonly response: { readonly status_code: number; readonly request_id: string; readonly body: Record<string, unknown> } | null;
  readonly error: { readonly code: string; readonly message: string } | null;
}

export async function fileLines(client: OpenAI, id: string | null | undefined): Promise<OutputLine[]> {
  if (id === null || id === undefined) return [];
  const text = await (await client.files.content(id)).text();
  return text
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as OutputLine);
}
