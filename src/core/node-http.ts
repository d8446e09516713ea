// node:http's functions, taken without building its ES module namespace. An ESM `import … from
// 'node:http'` makes the namespace by reading every export, and three of them (WebSocket,
// MessageEvent, CloseEvent) are lazy getters that load Node's own bundled copy of undici: about
// 13 MB of RSS held for the process's life by a gateway that never uses them (issue 28, lean
// process). process.getBuiltinModule hands over the CommonJS exports, and only the names read here
// are read. Types still come from `import type … from 'node:http'`.

const http = process.getBuiltinModule('node:http');

export const createServer = http.createServer;
export const request = http.request;
export const Agent = http.Agent;
