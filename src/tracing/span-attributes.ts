// Pure: the names the spans carry — OpenTelemetry's GenAI and HTTP semantic conventions, and the
// gateway's own `switchyard.*` — and the GenAI operation an endpoint performs.

/** `gen_ai.operation.name` of an inference endpoint (the GenAI conventions' well-known values, else the path's last word). */
export function operationOf(endpoint: string): string {
  switch (endpoint) {
    case '/v1/chat/completions':
    case '/v1/messages':
    case '/v1/responses':
    case '/api/chat':
      return 'chat';
    case '/v1/completions':
    case '/api/generate':
      return 'text_completion';
    case '/v1/embeddings':
    case '/api/embed':
    case '/api/embeddings':
      return 'embeddings';
    default:
      return endpoint.slice(endpoint.lastIndexOf('/') + 1) || endpoint;
  }
}

/** server.address and server.port of a URL; empty when it does not parse. */
export function serverOf(origin: string | undefined): { readonly 'server.address'?: string; readonly 'server.port'?: number } {
  if (origin === undefined || !URL.canParse(origin)) return {};
  const url = new URL(origin);
  const port = url.port === '' ? (url.protocol === 'https:' ? 443 : 80) : Number(url.port);
  return { 'server.address': url.hostname.replace(/^\[|\]$/g, ''), 'server.port': port };
}

export const ATTR = Object.freeze({
  operation: 'gen_ai.operation.name',
  requestModel: 'gen_ai.request.model',
  responseModel: 'gen_ai.response.model',
  inputTokens: 'gen_ai.usage.input_tokens',
  outputTokens: 'gen_ai.usage.output_tokens',
  method: 'http.request.method',
  route: 'http.route',
  path: 'url.path',
  status: 'http.response.status_code',
  errorType: 'error.type',
  requestId: 'switchyard.request_id',
  fromSite: 'switchyard.from_site',
  tenant: 'switchyard.tenant',
  target: 'switchyard.target',
  refusal: 'switchyard.refusal',
  attempts: 'switchyard.attempts',
  node: 'switchyard.node',
  site: 'switchyard.site',
  attempt: 'switchyard.attempt',
  outcome: 'switchyard.attempt.outcome',
  failover: 'switchyard.attempt.failed_over',
  among: 'switchyard.route.among',
  chosen: 'switchyard.route.chosen',
  policy: 'switchyard.route.policy',
  reason: 'switchyard.route.reason',
  waited: 'switchyard.queue.wait_ms',
});
