// The features' admin commands (core/feature.ts `adminActions`: the batch feature's cancel of any
// tenant's job), laid into the admin table by path: POST behind the same change guard as every admin
// command (the token, and the same-origin and JSON checks that keep another origin's page out), a
// bounded JSON body or none, the action's answer as JSON — or its GatewayError, with its status.

import { badRequest, GatewayError } from '#src/core/errors.ts';
import { readBody, sendError, sendJson, type TableBuilder } from '#src/proxy/index.ts';
import type { AdminDeps, Guard } from './admin-deps.ts';

const MAX_BODY_BYTES = 16 * 1024;

/** The body as JSON: undefined when empty, or the problem. */
export function actionBody(raw: Buffer): { readonly body: unknown } | { readonly error: string } {
  if (raw.length === 0) return { body: undefined };
  try {
    return { body: JSON.parse(raw.toString('utf8')) as unknown };
  } catch {
    return { error: 'the body must be JSON (or empty)' };
  }
}

export function featureActions(table: TableBuilder, deps: Pick<AdminDeps, 'actions'>, guard: Guard): void {
  for (const [path, action] of Object.entries(deps.actions ?? {})) {
    table.add(
      'POST',
      path,
      guard('change', async (req, res, url) => {
        let raw: Buffer;
        try {
          raw = await readBody(req, MAX_BODY_BYTES);
        } catch (error) {
          sendError(res, error instanceof GatewayError ? error : badRequest('the body could not be read', 'body'));
          return;
        }
        const read = actionBody(raw);
        if ('error' in read) {
          sendError(res, badRequest(read.error, 'body'));
          return;
        }
        const answer: unknown = await action({ path: url.pathname, body: read.body });
        if (answer instanceof GatewayError) sendError(res, answer);
        else sendJson(res, 200, answer);
      }),
    );
  }
}
