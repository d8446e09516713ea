// The routes that name something one node holds — a stored answer, a running completion — rather
// than a model: each goes to the node that produced or runs it, for the tenant that asked for it
// (proxy/inference/owner-routes.ts; docs/protocols.md §7.z3 says which server serves which).

/** Stored responses: the id is the path segment after this prefix (`/v1/responses/{id}`, `…/{id}/input_items`). */
export const RESPONSES_PREFIX = '/v1/responses/';

/** llama-server's in-flight control (`{id, action, model}`): the id is a running chat completion's. */
export const CONTROL_PATH = '/v1/chat/completions/control';

/** Pure: the answer id a stored-response path names, and whether the rest of the path is a route (undefined = not one). */
export function responseIdOf(pathname: string): string | undefined {
  if (!pathname.startsWith(RESPONSES_PREFIX)) return undefined;
  const rest = pathname.slice(RESPONSES_PREFIX.length);
  const cut = rest.indexOf('/');
  const id = cut < 0 ? rest : rest.slice(0, cut);
  const tail = cut < 0 ? '' : rest.slice(cut);
  if (id === '' || id.length > 512 || (tail !== '' && tail !== '/input_items')) return undefined;
  try {
    return decodeURIComponent(id);
  } catch {
    return undefined;
  }
}
