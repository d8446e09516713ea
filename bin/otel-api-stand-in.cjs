// What prom-client's process-CPU counter is given for `require('@opentelemetry/api')`
// (otel-api-on-first-use.js says why): every read of it is a read of the real API, which is
// required on the first one. Resolved from here: the same package prom-client would get (both sit
// in the top-level node_modules).
'use strict';

const real = { api: undefined };
const api = () => (real.api ??= require('@opentelemetry/api'));

module.exports = new Proxy(
  {},
  {
    get: (_target, key) => api()[key],
    has: (_target, key) => key in api(),
    ownKeys: () => Reflect.ownKeys(api()),
    getOwnPropertyDescriptor: (_target, key) => {
      const found = Reflect.getOwnPropertyDescriptor(api(), key);
      return found === undefined ? undefined : { ...found, configurable: true };
    },
  },
);
