// Typed gateway errors with stable codes; proxy/http/openai-error.ts is the only place that renders them.

export type ErrorCode =
  | 'GW_BAD_REQUEST'
  | 'GW_BODY_TOO_LARGE'
  | 'GW_NOT_FOUND'
  | 'GW_METHOD_NOT_ALLOWED'
  | 'GW_MODEL_NOT_FOUND'
  | 'GW_NO_AVAILABLE_NODE'
  | 'GW_CONTEXT_LENGTH_EXCEEDED'
  | 'GW_QUEUE_REFUSED'
  | 'GW_UPSTREAM_UNREACHABLE'
  | 'GW_UPSTREAM_TIMEOUT'
  | 'GW_UNAUTHORIZED'
  | 'GW_FORBIDDEN'
  | 'GW_RATE_LIMITED'
  | 'GW_CONFIG_INVALID';

export type OpenAIErrorType =
  | 'invalid_request_error'
  | 'authentication_error'
  | 'server_error'
  | 'rate_limit_error'
  /** A tenant's limit (429 rate_limit_exceeded), as OpenAI types them: a request limit or a token limit. */
  | 'requests'
  | 'tokens';

export interface GatewayErrorInit {
  readonly status: number;
  readonly openaiType: OpenAIErrorType;
  /** OpenAI's `param` (e.g. "model", "messages"). */
  readonly param?: string | null;
  /** OpenAI's string `code`; defaults to null. */
  readonly openaiCode?: string | null;
  /** Seconds for a Retry-After header. */
  readonly retryAfterSeconds?: number;
  /**
   * No retry can succeed until the gateway's configuration changes: answered with
   * `x-should-retry: false` (the header OpenAI's and Anthropic's SDKs obey) and never a Retry-After.
   */
  readonly final?: boolean;
  /** Extra fields merged into the error object (e.g. exclusion counts). */
  readonly details?: Readonly<Record<string, unknown>>;
  /** The model the error is about, as the client named it (a dialect may word the error by it: Ollama's `model 'x' not found`). */
  readonly model?: string;
  readonly cause?: unknown;
}

export class GatewayError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly openaiType: OpenAIErrorType;
  readonly param: string | null;
  readonly openaiCode: string | null;
  readonly retryAfterSeconds: number | undefined;
  readonly final: boolean;
  readonly details: Readonly<Record<string, unknown>>;
  readonly model: string | undefined;

  constructor(code: ErrorCode, message: string, init: GatewayErrorInit) {
    super(message, { cause: init.cause });
    this.name = 'GatewayError';
    this.code = code;
    this.status = init.status;
    this.openaiType = init.openaiType;
    this.param = init.param ?? null;
    this.openaiCode = init.openaiCode ?? null;
    this.final = init.final === true;
    this.retryAfterSeconds = this.final ? undefined : init.retryAfterSeconds;
    this.details = init.details ?? {};
    this.model = init.model;
  }
}

export const badRequest = (message: string, param: string | null = null): GatewayError =>
  new GatewayError('GW_BAD_REQUEST', message, { status: 400, openaiType: 'invalid_request_error', param });

export const bodyTooLarge = (limitBytes: number): GatewayError =>
  new GatewayError('GW_BODY_TOO_LARGE', `request body exceeds the limit of ${limitBytes} bytes`, {
    status: 413,
    openaiType: 'invalid_request_error',
    openaiCode: 'request_too_large',
  });

export const routeNotFound = (method: string, path: string): GatewayError =>
  new GatewayError('GW_NOT_FOUND', `no route for ${method} ${path}`, {
    status: 404,
    openaiType: 'invalid_request_error',
    openaiCode: 'not_found',
  });

export const methodNotAllowed = (method: string, path: string): GatewayError =>
  new GatewayError('GW_METHOD_NOT_ALLOWED', `method ${method} is not allowed on ${path}`, {
    status: 405,
    openaiType: 'invalid_request_error',
    openaiCode: 'method_not_allowed',
  });

export const modelNotFound = (model: string): GatewayError =>
  new GatewayError('GW_MODEL_NOT_FOUND', `The model '${model}' does not exist or is not served by this gateway.`, {
    status: 404,
    openaiType: 'invalid_request_error',
    param: 'model',
    openaiCode: 'model_not_found',
  });
