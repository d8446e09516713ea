// Every node source by kind: the one place a new kind is registered.

import type { NodeSourceFactory } from './node-source.ts';
import { DnsSource } from './dns-source.ts';
import { KubernetesSource } from './k8s-source.ts';
import { StaticSource, STATIC_SOURCE } from './static-source.ts';

export const NODE_SOURCES: Readonly<Record<string, NodeSourceFactory>> = Object.freeze({
  [STATIC_SOURCE]: (config) => {
    if (config.kind !== 'static') throw new Error(`node source '${config.name}' is not a static list`);
    return new StaticSource(config.name, config.nodes);
  },
  dns: (config, deps) => {
    if (config.kind !== 'dns') throw new Error(`node source '${config.name}' is not a DNS source`);
    return new DnsSource(config, deps);
  },
  kubernetes: (config, deps) => {
    if (config.kind !== 'kubernetes') throw new Error(`node source '${config.name}' is not a Kubernetes source`);
    return new KubernetesSource(config, deps);
  },
});
