// JOBSCOPE_CPU_PROF=<dir>: a V8 CPU profile of each test file, taken in the vitest worker (in-process
// servers included, child processes not), written as <dir>/<file>.<pid>.cpuprofile (Chrome DevTools,
// speedscope). `--execArgv=--cpu-prof` writes nothing here: vitest 4 ends its forks with SIGTERM, and
// V8 writes that profile only on a normal exit. So the profiler is driven through the inspector, from
// the file's first hook to its last. Samples every 0.5 ms of wall time: on a loaded machine a sample
// can land while the worker waits for the CPU, so read shares, not milliseconds. Off by default.
import fs from 'node:fs';
import inspector from 'node:inspector';
import path from 'node:path';
import { afterAll, beforeAll, expect } from 'vitest';

const dir = process.env.JOBSCOPE_CPU_PROF;

if (dir) {
  const session = new inspector.Session();
  session.connect();
  const post = <T = unknown>(method: string, params: object = {}) =>
    new Promise<T>((resolve, reject) => session.post(method, params, (err, res) => (err ? reject(err) : resolve(res as T))));
  beforeAll(async () => {
    await post('Profiler.enable');
    await post('Profiler.setSamplingInterval', { interval: 500 });
    await post('Profiler.start');
  });
  afterAll(async () => {
    const { profile } = await post<{ profile: unknown }>('Profiler.stop');
    const file = path.basename(expect.getState().testPath ?? 'unknown');
    fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(path.join(dir, `${file}.${process.pid}.cpuprofile`), JSON.stringify(profile));
  });
}
