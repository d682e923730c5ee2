// Preloaded (`node --import`) into every timed child of bench/run.mjs: on exit, writes the
// child's own CPU time and peak RSS to the file named by BENCH_USAGE_FILE.
import { writeFileSync } from 'node:fs';

const file = process.env.BENCH_USAGE_FILE;
if (file) {
  process.on('exit', () => {
    const u = process.resourceUsage();
    writeFileSync(file, JSON.stringify({ cpuMs: (u.userCPUTime + u.systemCPUTime) / 1000, maxRssKiB: u.maxRSS }));
  });
}
