// The live feed: GET events as server-sent events, read with fetch so the admin token can travel in
// the Authorization header (EventSource cannot send one). It is the page's only source of fleet
// data: `topics` names what the open views show and `filters` the Requests view's filters
// (feed-subscription.ts on the gateway); the page opens a new feed when either changes (the
// operator opened or closed a view, or changed a filter), never on a timer. A lost feed reconnects
// with back-off (1 s doubling to 30 s) and says so through onStatus; a 401 asks for the token instead.

const FIRST_RETRY_MS = 1000;
const LAST_RETRY_MS = 30000;

export function tokenHeaders(token) {
  return token ? { authorization: `Bearer ${token}` } : {};
}

/** Splits a text stream into server-sent events: calls onEvent(name, data) per complete event. */
export function sseParser(onEvent) {
  let buffer = '';
  return (text) => {
    buffer += text;
    let end;
    while ((end = buffer.indexOf('\n\n')) >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      let name = 'message';
      const data = [];
      for (const line of block.split('\n')) {
        if (line.startsWith('event: ')) name = line.slice(7);
        else if (line.startsWith('data: ')) data.push(line.slice(6));
      }
      if (data.length > 0) onEvent(name, data.join('\n'));
    }
  };
}

/** The feed's path for these topics and Requests filters (empty filters are left out). */
export function feedPath(topics, filters = {}) {
  const query = new URLSearchParams({ topics: [...topics].sort().join(',') });
  for (const [name, value] of Object.entries(filters)) if (value !== '') query.set(name, value);
  return `events?${query}`;
}

export function startFeed({ token, topics, filters, onEvent, onStatus }) {
  const stop = new AbortController();
  const path = feedPath(topics, filters);
  let retryMs = FIRST_RETRY_MS;
  const run = async () => {
    while (!stop.signal.aborted) {
      onStatus({ state: 'connecting' });
      try {
        const res = await fetch(path, { headers: tokenHeaders(token), signal: stop.signal, cache: 'no-store' });
        if (res.status === 401) {
          onStatus({ state: 'unauthorized' });
          return;
        }
        if (res.status === 400) {
          // A filter the gateway refuses (named in its answer): asking again would be refused again.
          const body = await res.json().catch(() => null);
          onStatus({ state: 'refused', error: body?.error?.message ?? 'the feed refused this request (400)' });
          return;
        }
        if (!res.ok || res.body === null) throw new Error(`the feed answered ${res.status}`);
        const parse = sseParser((name, data) => {
          if (name === 'snapshot') {
            retryMs = FIRST_RETRY_MS;
            onStatus({ state: 'live' });
          }
          onEvent(name, JSON.parse(data));
        });
        const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          parse(value);
        }
        throw new Error('the feed ended');
      } catch (error) {
        if (stop.signal.aborted) return;
        const waitMs = retryMs;
        retryMs = Math.min(LAST_RETRY_MS, retryMs * 2);
        onStatus({ state: 'lost', retryAt: Date.now() + waitMs, error: String(error?.message ?? error) });
        await new Promise((resolve) => setTimeout(resolve, waitMs));
      }
    }
  };
  run();
  return () => stop.abort();
}
