#!/usr/bin/env node
// Entry shim: Node 24 runs the TypeScript sources directly (type stripping).
import { runCli } from '../src/cli/main.ts';

process.exitCode = await runCli(process.argv.slice(2));
