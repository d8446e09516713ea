// Preloaded (`--import`) into a process bench/cli-start.ts times: on exit, writes the process's
// peak RSS (getrusage maxRSS, KB) to stderr as one marked line. Plain JavaScript: a .ts preload
// would load Node's TypeScript stripper (~18 MB) into every process it measures.
process.on('exit', () => {
  process.stderr.write(`\nBENCH_MAXRSS_KB ${process.resourceUsage().maxRSS}\n`);
});
