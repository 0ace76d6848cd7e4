// JOBSCOPE_FILE_CPU=<file>: each test file's CPU, its own (the worker's, in-process servers included)
// and that of the child processes it started and reaped (`jobscope serve`, redis-cli, builds), one
// JSON line per file appended to <file>. The suite is CPU-bound on two cores, so the time a file takes
// beside another says little about what it costs; this says what to cut first. Off by default.
// PostgreSQL's and Redis's daemons are not our children: their CPU is not counted.
import fs from 'node:fs';
import { afterAll, expect } from 'vitest';

const out = process.env.JOBSCOPE_FILE_CPU;
/** Seconds of CPU from /proc/self/stat: utime, stime, and the reaped children's cutime, cstime (clock ticks of 10 ms). */
function cpu(): { self: number; children: number } {
  const f = fs.readFileSync('/proc/self/stat', 'utf8').split(') ')[1]!.split(' ').slice(11, 15).map(Number);
  return { self: (f[0]! + f[1]!) / 100, children: (f[2]! + f[3]!) / 100 };
}

if (out) {
  // Read here, as vitest runs this before it imports the test file (with isolate: false, once per file):
  // the file's import (the modules it loads first in this worker) counts as the file's.
  const start = cpu();
  const t0 = performance.now();
  afterAll(() => {
    const end = cpu();
    const file = expect.getState().testPath ?? '';
    const line = { file: file.replace(`${process.cwd()}/`, ''), self_s: +(end.self - start.self).toFixed(2), children_s: +(end.children - start.children).toFixed(2), wall_s: +((performance.now() - t0) / 1000).toFixed(2) };
    fs.appendFileSync(out, `${JSON.stringify(line)}\n`);
  });
}
