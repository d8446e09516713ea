// `switchyard serve [--config FILE]`: run the gateway until SIGINT/SIGTERM; SIGHUP reopens the
// request log and reloads the config.
// Without --config it runs the first of DEFAULT_CONFIG_PATHS that exists, and says which.

import { once } from 'node:events';
import { existsSync } from 'node:fs';
import { flushCompileCache } from 'node:module';
import { detach } from '#src/core/detach.ts';
import { formatProblems } from '#src/config/index.ts';
import { loadConfigFile } from '#src/config-tables.ts';
import { createLogger, parseLogFormat } from '#src/logs/logger.ts';
import { Gateway } from '#src/main.ts';
import { defaultConfigPath, DEFAULT_CONFIG_PATHS } from './config-lookup.ts';
import { flagValue, type Command } from './io.ts';
import { SERVE_USAGE } from './command-usage.ts';
import { shedStartUpHeap } from './shed-start-up-heap.ts';

/** How long `serve` waits for every node's first round before it sheds start-up's heap anyway. */
const FIRST_ROUND_WAIT_MS = 30_000;

export const runServe: Command = async (argv, io) => {
  const given = flagValue(argv, 'config');
  if (given === '' || (given === undefined && argv.includes('--config'))) {
    io.stderr.write(SERVE_USAGE);
    return 2;
  }
  const file = given ?? defaultConfigPath(existsSync);
  if (file === undefined) {
    io.stderr.write(
      `switchyard serve: no --config given, and neither ${DEFAULT_CONFIG_PATHS.join(' nor ')} exists (switchyard init writes one)\n`,
    );
    return 2;
  }
  if (given === undefined) io.stderr.write(`switchyard serve: no --config given; using ${file}\n`);
  const format = parseLogFormat(flagValue(argv, 'log-format'));
  if (format === undefined) {
    io.stderr.write('--log-format must be json or pretty\n');
    return 2;
  }
  const loaded = await loadConfigFile(file, io.env);
  if (!loaded.ok) {
    io.stderr.write(`${formatProblems(loaded.problems)}\n${loaded.problems.length} problem(s) in ${file}\n`);
    return 1;
  }
  const logger = createLogger({ format, level: io.env.SWITCHYARD_LOG_LEVEL ?? 'info' });
  // Listen for SIGHUP before the (possibly long) start-up: one that arrives meanwhile is applied
  // once the gateway listens, instead of ending the process.
  const running: { gateway: Gateway | undefined; reloadQueued: boolean } = { gateway: undefined, reloadQueued: false };
  const reload = (gateway: Gateway): void => {
    logger.info({ file }, 'SIGHUP: reopening the request log and reloading config');
    detach(gateway.reopenLogs(), (error) => logger.error({ err: error }, 'request log reopen failed'));
    detach(gateway.reload(), (error) => logger.error({ err: error }, 'config reload failed'));
  };
  const unsubscribe = io.hangups.subscribe(() => {
    if (running.gateway !== undefined) return reload(running.gateway);
    if (!running.reloadQueued) logger.info({ file }, 'SIGHUP during start-up: the reload runs once the gateway listens');
    running.reloadQueued = true;
  });
  try {
    const started = await Gateway.start({
      config: loaded.config,
      logger,
      loadConfig: () => loadConfigFile(file, io.env),
    }).then(
      (gateway) => ({ gateway }),
      (error: unknown) => ({ error }),
    );
    if ('error' in started) {
      // A start that fails (a state file it cannot use, a port in use) is one line that says why, not a stack.
      const reason = started.error instanceof Error ? started.error.message : String(started.error);
      logger.fatal({ err: started.error }, `could not start the gateway: ${reason}`);
      return 1;
    }
    running.gateway = started.gateway;
    // The compile cache (bin/switchyard.js) is written at exit; a gateway may never exit cleanly
    // (SIGKILL, a crash), so what it compiled to start is written now.
    flushCompileCache();
    if (running.reloadQueued) reload(running.gateway);
    shedOnceStarted(running.gateway, logger, io.signal);
    if (!io.signal.aborted) await once(io.signal, 'abort');
    logger.info('shutting down: finishing in-flight requests');
    // The stop may wait on the clock's timers, which are unref'd (a retry of the last usage write):
    // this one holds the process until the stop answers.
    const holdOpen = setInterval(() => undefined, 60_000);
    const stopped = await running.gateway.shutdown().finally(() => clearInterval(holdOpen));
    if (!stopped.saved) {
      // The gateway logged what is lost; an exit status that says so, for systemd and the operator.
      logger.fatal(
        { file: stopped.file, reason: stopped.reason, unsaved_tokens: stopped.tokens },
        `stopped without saving tenant usage to ${stopped.file} (${stopped.reason})`,
      );
      return 1;
    }
    logger.info('stopped');
    return 0;
  } finally {
    unsubscribe();
  }
};

/** After every node's first round (or FIRST_ROUND_WAIT_MS): one memory-reducing collection, logged with the RSS it gave back. */
function shedOnceStarted(gateway: Gateway, logger: ReturnType<typeof createLogger>, signal: AbortSignal): void {
  detach(
    gateway.firstRoundDone(FIRST_ROUND_WAIT_MS, signal).then(() => {
      if (signal.aborted) return;
      const before = process.memoryUsage.rss();
      if (!shedStartUpHeap()) return;
      const mb = (bytes: number): number => Math.round(bytes / 104_857.6) / 10;
      logger.info({ rss_before_mb: mb(before), rss_after_mb: mb(process.memoryUsage.rss()) }, 'start-up heap given back');
    }),
    (error) => logger.warn({ err: error }, 'giving back the start-up heap failed'),
  );
}
