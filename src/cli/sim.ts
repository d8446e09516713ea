// `switchyard sim --config FILE`: starts a simulated fleet, announces it as one JSON line on stdout
// (for scripts), narrates on stderr (for people), and runs until the signal aborts.

import { once } from 'node:events';
import { readFile } from 'node:fs/promises';
import { flagValue, type Command } from '#src/cli/io.ts';
import { parseFleetConfig, startFleet } from '#src/sim/index.ts';

export const runSim: Command = async (argv, io) => {
  const configPath = flagValue(argv, 'config');
  if (configPath === undefined || configPath === '') {
    io.stderr.write('usage: switchyard sim --config FILE\n');
    return 2;
  }
  let text: string;
  try {
    text = await readFile(configPath, 'utf8');
  } catch (error) {
    io.stderr.write(`${configPath}: cannot read: ${error instanceof Error ? error.message : String(error)}\n`);
    return 1;
  }
  const parsed = parseFleetConfig(text);
  if (!parsed.ok) {
    for (const problem of parsed.problems) io.stderr.write(`${problem.path}: ${problem.message}\n`);
    return 1;
  }
  let fleet: Awaited<ReturnType<typeof startFleet>>;
  try {
    fleet = await startFleet(parsed.spec);
  } catch (error) {
    io.stderr.write(`could not start the fleet: ${error instanceof Error ? error.message : String(error)}\n`);
    return 1;
  }
  const nodes = fleet.nodes.map((node) => ({ name: node.name, kind: node.kind, url: node.url, models: node.modelIds() }));
  io.stdout.write(`${JSON.stringify({ event: 'sim ready', nodes })}\n`);
  for (const node of nodes) {
    io.stderr.write(`sim node ${node.name} (${node.kind}) on ${node.url} serving ${node.models.join(', ')}\n`);
  }
  io.stderr.write(`${nodes.length} sim node(s) running; faults and recordings at <url>/__sim/. Stop with Ctrl-C.\n`);
  if (!io.signal.aborted) await once(io.signal, 'abort');
  await fleet.close();
  io.stderr.write('sim fleet stopped\n');
  return 0;
};
