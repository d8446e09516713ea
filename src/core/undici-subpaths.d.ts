// Types of the three undici modules src/core/undici-parts.ts loads by path (undici ships types for
// its index only). Each module's `module.exports` is the very object the index exports under that
// name, so each takes the index's own type.

declare module 'undici/lib/dispatcher/pool.js' {
  import { Pool } from 'undici';
  export = Pool;
}

declare module 'undici/lib/dispatcher/agent.js' {
  import { Agent } from 'undici';
  export = Agent;
}

declare module 'undici/lib/core/errors.js' {
  import { errors } from 'undici';
  export = errors;
}
