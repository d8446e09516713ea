// `[[node_sources]]`'s shape and checks (node-source-types.ts says what each field means).
import { isIP } from 'node:net';
import { z } from 'zod';
import { resolveApiKey, type EnvVars } from './api-key.ts';
import { CONFIG_DEFAULTS } from './defaults.ts';
import { parseListenAddress } from './listen-address.ts';
import { invalid, valid, type ParseResult } from './parse-result.ts';
import {
  NODE_KINDS,
  NODE_SOURCE_KINDS,
  type DnsNodeSourceSpec,
  type KubernetesNodeSourceSpec,
  type NodeSourceSpec,
} from './types.ts';
import { name, parsedBy, positiveDurationMs, table } from './schema-parts.ts';

/** Source names prefix node names (`<source>-<address>-<port>`), so they keep to a short, plain set. */
const SOURCE_NAME_RULE = /^[A-Za-z0-9][A-Za-z0-9_-]{0,23}$/;
const HOSTNAME = /^(?=.{1,253}$)[A-Za-z0-9_](?:[A-Za-z0-9_.-]*[A-Za-z0-9])?\.?$/;

export const NODE_SOURCE_DEFAULTS = Object.freeze({
  intervalMs: 30_000,
  minTtlMs: 5_000,
  maxTtlMs: 300_000,
  timeoutMs: 2_000,
});

/** A Kubernetes source's defaults: each API read's bound, and how long one watch runs before it is resumed. */
export const KUBERNETES_SOURCE_DEFAULTS = Object.freeze({
  timeoutMs: 10_000,
  watchMs: 300_000,
});

/** A namespace or Service name: an RFC 1123 label. */
const K8S_LABEL = /^(?=.{1,63}$)[a-z0-9](?:[a-z0-9-]*[a-z0-9])?$/;
/** A Service port's name: an IANA service name (lower case, at most 15 characters). */
const K8S_PORT_NAME = /^(?=.{1,15}$)[a-z0-9](?:[a-z0-9-]*[a-z0-9])?$/;

function parseResolver(text: string): ParseResult<{ host: string; port: number }> {
  const parsed = parseListenAddress(text);
  if (!parsed.ok) return invalid(parsed.message.replace('"0.0.0.0:8080" or "[::1]:8080"', '"10.0.0.2:53" or "[::1]:53"'));
  if (isIP(parsed.value.host) === 0) return invalid('must name the DNS server by IP address ("host:port", like "10.0.0.2:53")');
  if (parsed.value.port === 0) return invalid('the port must be from 1 to 65535');
  return valid(parsed.value);
}

const KIND_ERROR = `must be one of: ${NODE_SOURCE_KINDS.join(', ')} (the kind of node source)`;

const sourceName = name
  .refine((text) => SOURCE_NAME_RULE.test(text), {
    error: 'must be 1 to 24 characters: letters A-Z a-z, digits, _ and - (not first)',
  })
  .refine((text) => text.toLowerCase() !== 'static', { error: "'static' names the [[nodes]] list; choose another name" });

function dnsSchema(env: EnvVars) {
  return table({
    kind: z.literal('dns', { error: KIND_ERROR }),
    name: sourceName,
    host: z
      .string()
      .refine((text) => HOSTNAME.test(text), { error: 'must be a DNS name, like "vllm.models.svc"' })
      .optional(),
    port: z
      .int({ error: 'must be a port number' })
      .min(1, { error: 'must be from 1 to 65535' })
      .max(65_535, {
        error: 'must be from 1 to 65535',
      })
      .optional(),
    srv: z
      .string()
      .refine((text) => /^_[A-Za-z0-9-]+\._(tcp|udp)\./.test(text) && HOSTNAME.test(text), {
        error: 'must be an SRV record name, like "_http._tcp.vllm.models.svc"',
      })
      .optional(),
    scheme: z.enum(['http', 'https'], { error: 'must be "http" or "https"' }).default('http'),
    node_kind: z.enum(NODE_KINDS, { error: `must be one of: ${NODE_KINDS.join(', ')}` }).default(CONFIG_DEFAULTS.node.kind),
    group: name.optional(),
    api_key: z
      .string()
      .pipe(parsedBy((value: string) => resolveApiKey(value, env)))
      .optional(),
    resolver: z.string().pipe(parsedBy(parseResolver)).optional(),
    interval: positiveDurationMs.default(NODE_SOURCE_DEFAULTS.intervalMs),
    min_ttl: positiveDurationMs.default(NODE_SOURCE_DEFAULTS.minTtlMs),
    max_ttl: positiveDurationMs.default(NODE_SOURCE_DEFAULTS.maxTtlMs),
    timeout: positiveDurationMs.default(NODE_SOURCE_DEFAULTS.timeoutMs),
  })
    .superRefine((source, ctx) => {
      const problem = (path: string, message: string): void => void ctx.addIssue({ code: 'custom', path: [path], message });
      if (source.srv !== undefined && (source.host !== undefined || source.port !== undefined))
        problem('srv', 'give either srv (the SRV record carries the ports) or host and port, not both');
      else if (source.srv === undefined && source.host === undefined)
        problem('host', 'is required (the name to resolve), or give srv instead');
      else if (source.srv === undefined && source.port === undefined)
        problem('port', 'is required with host (A/AAAA records carry no port), or give srv instead');
      if (source.min_ttl > source.max_ttl) problem('min_ttl', 'must not be longer than max_ttl');
    })
    .transform((source): DnsNodeSourceSpec => ({
      kind: 'dns',
      name: source.name,
      query:
        source.srv === undefined
          ? { type: 'address', host: source.host ?? '', port: source.port ?? 0 }
          : { type: 'srv', record: source.srv },
      scheme: source.scheme,
      nodeKind: source.node_kind,
      group: source.group,
      apiKey: source.api_key,
      resolver: source.resolver,
      intervalMs: source.interval,
      minTtlMs: source.min_ttl,
      maxTtlMs: source.max_ttl,
      timeoutMs: source.timeout,
    }));
}

function kubernetesSchema(env: EnvVars) {
  return table({
    kind: z.literal('kubernetes', { error: KIND_ERROR }),
    name: sourceName,
    namespace: z.string({ error: 'is required: the namespace of the Service' }).refine((text) => K8S_LABEL.test(text), {
      error: 'must be a Kubernetes namespace name (lower case letters, digits and -, at most 63)',
    }),
    service: z
      .string({ error: 'is required: the Service whose EndpointSlices give the nodes' })
      .refine((text) => K8S_LABEL.test(text), {
        error: 'must be a Kubernetes Service name (lower case letters, digits and -, at most 63)',
      }),
    port_name: z
      .string()
      .refine((text) => K8S_PORT_NAME.test(text), {
        error: "must be the name of one of the Service's ports (lower case letters, digits and -, at most 15)",
      })
      .optional(),
    scheme: z.enum(['http', 'https'], { error: 'must be "http" or "https"' }).default('http'),
    node_kind: z.enum(NODE_KINDS, { error: `must be one of: ${NODE_KINDS.join(', ')}` }).default(CONFIG_DEFAULTS.node.kind),
    group: name.optional(),
    api_key: z
      .string()
      .pipe(parsedBy((value: string) => resolveApiKey(value, env)))
      .optional(),
    kubeconfig: z.string().min(1, { error: 'must be the path of a kubeconfig file' }).optional(),
    context: z.string().min(1, { error: "must name one of the kubeconfig's contexts" }).optional(),
    timeout: positiveDurationMs.default(KUBERNETES_SOURCE_DEFAULTS.timeoutMs),
    watch: positiveDurationMs
      .pipe(z.number().min(1_000, { error: 'must be at least 1s (the API server counts a watch in seconds)' }))
      .default(KUBERNETES_SOURCE_DEFAULTS.watchMs),
  })
    .superRefine((source, ctx) => {
      if (source.context !== undefined && source.kubeconfig === undefined)
        ctx.addIssue({
          code: 'custom',
          path: ['context'],
          message: 'goes with kubeconfig (in a pod the service account is used)',
        });
    })
    .transform((source): KubernetesNodeSourceSpec => ({
      kind: 'kubernetes',
      name: source.name,
      namespace: source.namespace,
      service: source.service,
      portName: source.port_name,
      scheme: source.scheme,
      nodeKind: source.node_kind,
      group: source.group,
      apiKey: source.api_key,
      kubeconfig: source.kubeconfig,
      context: source.context,
      timeoutMs: source.timeout,
      watchMs: source.watch,
    }));
}

export function nodeSourcesSchema(env: EnvVars) {
  const entry = z.discriminatedUnion('kind', [dnsSchema(env), kubernetesSchema(env)], {
    error: (issue) => (issue.code === 'invalid_union' ? KIND_ERROR : undefined),
  });
  return z
    .array(entry, { error: 'must be an array of tables, written [[node_sources]]' })
    .superRefine((sources: readonly NodeSourceSpec[], ctx) => {
      const seen = new Set<string>();
      sources.forEach((source, i) => {
        if (seen.has(source.name.toLowerCase()))
          ctx.addIssue({ code: 'custom', path: [i, 'name'], message: `duplicate node source name '${source.name}'` });
        seen.add(source.name.toLowerCase());
      });
    });
}
