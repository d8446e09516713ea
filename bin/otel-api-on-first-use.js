// Loaded by the entry shim before any command: prom-client's index requires its default metrics,
// whose process-CPU counter requires @opentelemetry/api (51 modules, ~2 MB of heap and compiled
// code) at load, for one use: reading the active span when a registry has exemplars enabled. The
// gateway enables none, and a gateway without [tracing] has no other use for the API. This resolve
// hook hands that one require a stand-in (otel-api-stand-in.cjs) that loads the real API on first
// use, so prom-client behaves the same and the API is loaded only if it is ever read. Every other
// resolution of @opentelemetry/api ([tracing]'s own) goes on unchanged. Plain JavaScript: the shim
// runs it before the TypeScript sources load. docs/performance.md, "Issue 42: start-up imports".

import { registerHooks } from 'node:module';

/** The one module that asks for the API, as prom-client lays it out. */
const PROCESS_CPU_METRIC = /\/node_modules\/prom-client\/lib\/metrics\/processCpuTotal\.js$/;
const OTEL_API = '@opentelemetry/api';
const STAND_IN = new URL('./otel-api-stand-in.cjs', import.meta.url).href;

export function deferPromClientsOtelApi() {
  registerHooks?.({
    resolve(specifier, context, nextResolve) {
      if (specifier !== OTEL_API || context.parentURL === undefined || !PROCESS_CPU_METRIC.test(context.parentURL)) {
        return nextResolve(specifier, context);
      }
      return { url: STAND_IN, format: 'commonjs', shortCircuit: true };
    },
  });
}
