// The parts of undici the gateway runs: Pool, Agent and the error classes, each loaded from its own
// module. undici's index loads the rest of undici too (fetch, WebSocket, the cache stores with
// sqlite, the mock agents: ~110 modules against these ~22; ~4 MB of an idle gateway's RSS), none of
// which the gateway uses. These are the very objects the index exports (it requires these same
// files), so `instanceof` against an error a Pool throws holds whichever way either was reached.
// Their types are the index's (src/core/undici-subpaths.d.ts); `import type … from 'undici'` loads
// nothing and stays free anywhere.
//
// The index also puts the request API (`request`, `stream`, `pipeline`, …) on Dispatcher's
// prototype. The gateway uses `dispatch` only; a process that loads just these has no such methods.

import Pool from 'undici/lib/dispatcher/pool.js';
import Agent from 'undici/lib/dispatcher/agent.js';
import errors from 'undici/lib/core/errors.js';

export { Agent, errors, Pool };
