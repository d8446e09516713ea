// The Kubernetes API for one source, through the official client library (@kubernetes/client-node,
// loaded by a dynamic import only when a kubernetes source is configured): it reads the kubeconfig
// file or the pod's service account (token, CA, API address) and puts the credentials on each
// request (a token file re-read as it rotates, exec plugins, client certificates). The two reads
// themselves are bounded here, which the library's own list and watch are not: a list page within
// `timeout` and 16 MiB, a watch's head within `timeout`, each event within 4 MiB, and no byte for
// `watch` + `timeout` ends it (the server ends a watch after `watch` itself; bookmarks come between).

import { requestBoundedJson } from '#src/core/bounded-json.ts';
import type { ExchangeDispatcher } from '#src/core/bounded-exchange.ts';
import { Agent } from '#src/core/undici-parts.ts';
import type { KubeApi, KubeApiOpener, WatchEnd, WatchHandlers } from './k8s-api.ts';
import { readListPage, statusText, type ListPage } from './k8s-watch.ts';
import { watchLines } from './k8s-watch-stream.ts';

/** Slices per list page (a Service has one slice per 100 endpoints by default). */
const PAGE_LIMIT = 100;
const MAX_LIST_BYTES = 16 * 1024 * 1024;
const MAX_EVENT_BYTES = 4 * 1024 * 1024;
const MAX_ERROR_BYTES = 64 * 1024;

interface Credentials {
  readonly headers: Record<string, string>;
  readonly dispatcher: ExchangeDispatcher | undefined;
}

export const openKubeApi: KubeApiOpener = async (spec) => {
  const k8s = await import('@kubernetes/client-node');
  const config = new k8s.KubeConfig();
  if (spec.kubeconfig === undefined) {
    if (process.env['KUBERNETES_SERVICE_HOST'] === undefined || process.env['KUBERNETES_SERVICE_PORT'] === undefined)
      throw new Error('not running in a pod (KUBERNETES_SERVICE_HOST/PORT are unset): give kubeconfig');
    config.loadFromCluster();
  } else {
    try {
      config.loadFromFile(spec.kubeconfig);
    } catch (error) {
      throw new Error(`cannot read the kubeconfig ${spec.kubeconfig}: ${error instanceof Error ? error.message : String(error)}`);
    }
    if (spec.context !== undefined) {
      if (config.getContextObject(spec.context) === null)
        throw new Error(`the kubeconfig ${spec.kubeconfig} has no context '${spec.context}'`);
      config.setCurrentContext(spec.context);
    }
  }
  const cluster = config.getCurrentCluster();
  if (cluster === null) throw new Error('the kubeconfig names no cluster for its current context');
  const server = cluster.server.replace(/\/+$/, '');
  const path = `/apis/discovery.k8s.io/v1/namespaces/${spec.namespace}/endpointslices`;
  const selector = `labelSelector=${encodeURIComponent(`kubernetes.io/service-name=${spec.service}`)}`;
  const plain = new Agent({ connect: { timeout: spec.timeoutMs } });
  const dispatchers = new Set<{ close(): Promise<void> }>([plain]);
  const tls: { dispatcher: ExchangeDispatcher | undefined } = { dispatcher: undefined };

  /** The credentials for one request: asked of the library each time (a rotated token is read again); its TLS dispatcher kept once made. */
  const credentials = async (url: string): Promise<Credentials> => {
    const context = new k8s.RequestContext(url, k8s.HttpMethod.GET);
    await config.applySecurityAuthentication(context);
    const made = context.getDispatcher();
    if (made !== undefined && tls.dispatcher === undefined) {
      tls.dispatcher = made;
      dispatchers.add(made);
    } else if (made !== undefined) void made.close();
    return { headers: { ...context.getHeaders(), accept: 'application/json' }, dispatcher: tls.dispatcher };
  };

  const api: KubeApi = {
    where: `EndpointSlices of ${spec.namespace}/${spec.service} at ${server}`,

    async list(continueToken, signal): Promise<ListPage> {
      const url = `${server}${path}?${selector}&limit=${PAGE_LIMIT}${continueToken === undefined ? '' : `&continue=${encodeURIComponent(continueToken)}`}`;
      let asked: Credentials;
      try {
        asked = await credentials(url);
      } catch (error) {
        return { ok: false, reason: `credentials: ${describe(error)}`, gone: false };
      }
      const answer = await requestBoundedJson(url, {
        dispatcher: asked.dispatcher ?? plain,
        headers: asked.headers,
        timeoutMs: spec.timeoutMs,
        maxBytes: MAX_LIST_BYTES,
        signal,
      });
      if (!answer.ok)
        return {
          ok: false,
          reason: `list: ${answer.status === undefined ? '' : `HTTP ${answer.status}, `}${answer.error}`,
          gone: false,
        };
      if (answer.status === 410) return { ok: false, reason: `list: HTTP 410 ${statusText(answer.body)}`, gone: true };
      if (answer.status !== 200)
        return { ok: false, reason: `list: HTTP ${answer.status} ${statusText(answer.body)}`, gone: false };
      return readListPage(answer.body);
    },

    async watch(resourceVersion: string, handlers: WatchHandlers, signal: AbortSignal): Promise<WatchEnd> {
      const seconds = Math.max(1, Math.round(spec.watchMs / 1000));
      const url = `${server}${path}?${selector}&watch=true&allowWatchBookmarks=true&resourceVersion=${encodeURIComponent(resourceVersion)}&timeoutSeconds=${seconds}`;
      let asked: Credentials;
      try {
        asked = await credentials(url);
      } catch (error) {
        return { kind: 'failed', reason: `credentials: ${describe(error)}` };
      }
      return watchLines(asked.dispatcher ?? plain, url, {
        headers: asked.headers,
        headersTimeoutMs: spec.timeoutMs,
        idleTimeoutMs: spec.watchMs + spec.timeoutMs,
        maxLineBytes: MAX_EVENT_BYTES,
        maxErrorBytes: MAX_ERROR_BYTES,
        handlers,
        signal,
      });
    },

    close(): void {
      for (const dispatcher of dispatchers) void dispatcher.close().catch(() => {});
      dispatchers.clear();
    },
  };
  return api;
};

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
