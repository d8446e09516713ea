// Loaded by the entry shim before any command: zod's entry points (classic, mini, core) each
// re-export all of its locales (`export * as locales from "../locales/index.js"`): 62 of the ~95
// modules zod loads, for messages in 60 languages the gateway never asks for. Its error messages are
// English, the locale zod's schemas register themselves (classic/schemas.js imports locales/en.js
// directly). This resolve hook hands that one re-export a module holding English only, so
// `z.locales` has `en` and nothing else; every other resolution goes on unchanged. Measured on a
// loaded 2-core machine (median of 9 runs, CPU time): `check-config` −30 ms, idle `serve` −5 MB RSS
// (docs/performance.md, "Lean process"). Plain JavaScript: the shim runs it before the TypeScript
// sources load.

import { registerHooks } from 'node:module';

/** The re-export's specifier as zod writes it, from a module of one of its entry points. */
const ALL_LOCALES = '../locales/index.js';
const ZOD_ENTRY_MODULE = /\/node_modules\/zod\/v4\/(?:classic|mini|core)\/[^/]+\.js$/;

export function keepZodToEnglish() {
  // Built on first use: `--version` and `--help` never load zod.
  const englishOnly = { url: '' };
  registerHooks?.({
    resolve(specifier, context, nextResolve) {
      if (specifier !== ALL_LOCALES || context.parentURL === undefined || !ZOD_ENTRY_MODULE.test(context.parentURL)) {
        return nextResolve(specifier, context);
      }
      if (englishOnly.url === '') {
        const en = nextResolve('../locales/en.js', context).url;
        englishOnly.url = `data:text/javascript,export { default as en } from ${encodeURIComponent(JSON.stringify(en))};`;
      }
      return { url: englishOnly.url, format: 'module', shortCircuit: true };
    },
  });
}
