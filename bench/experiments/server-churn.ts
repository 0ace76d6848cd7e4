// Benchmark: what one in-process server start + close costs in a warm process, as the tests pay it
// (~150 of them in the vitest workers, which run with isolate: false: modules load once per worker,
// the rest is paid per server). CPU of this process (process.cpuUsage: main thread and V8's and
// libuv's workers) per startServer + close, the first WARM starts not counted; then one phase of a
// start at a time, timed the same way, so a change says which part it moved.
//   node --import tsx bench/experiments/server-churn.ts [--starts N] [--warm N]
import os from 'node:os';
import { pathToFileURL } from 'node:url';
import { startServer } from '../../test/helpers/server.ts';

const cpuMs = (c: NodeJS.CpuUsage) => (c.user + c.system) / 1000;

export async function measureChurn(starts: number, warm: number) {
  for (let i = 0; i < warm; i++) await (await startServer()).close();
  await (globalThis as { churnArm?: () => Promise<void> }).churnArm?.();
  const per: number[] = [];
  const startCpu: number[] = [];
  for (let i = 0; i < starts; i++) {
    const c0 = process.cpuUsage();
    const s = await startServer();
    const c1 = process.cpuUsage(c0);
    await s.close();
    per.push(cpuMs(process.cpuUsage(c0)));
    startCpu.push(cpuMs(c1));
  }
  return { per, startCpu };
}

/** A V8 CPU profile of the measured starts only (the warm ones run before the profiler starts). */
async function profiled<T>(file: string, body: () => Promise<T>): Promise<T> {
  const { Session } = await import('node:inspector/promises');
  const fs = await import('node:fs');
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.setSamplingInterval', { interval: 200 });
  const armed = globalThis as { churnArm?: () => Promise<void> };
  armed.churnArm = () => session.post('Profiler.start');
  const out = await body();
  const { profile } = await session.post('Profiler.stop');
  fs.writeFileSync(file, JSON.stringify(profile));
  session.disconnect();
  return out;
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const argv = process.argv.slice(2);
  const opt = (name: string, d: number) => (argv.includes(name) ? Number(argv[argv.indexOf(name) + 1]) : d);
  const load0 = os.loadavg()[0]!.toFixed(1);
  const profIdx = argv.indexOf('--prof');
  const { per, startCpu } = profIdx >= 0 ? await profiled(argv[profIdx + 1]!, () => measureChurn(opt('--starts', 20), opt('--warm', 5))) : await measureChurn(opt('--starts', 20), opt('--warm', 5));
  const sorted = [...per].sort((a, b) => a - b);
  console.log(JSON.stringify({
    start_close_cpu_ms_median: Math.round(median(per) * 10) / 10,
    start_close_cpu_ms_min_max: [Math.round(sorted[0]! * 10) / 10, Math.round(sorted.at(-1)! * 10) / 10],
    start_cpu_ms_median: Math.round(median(startCpu) * 10) / 10,
    load: `${load0} -> ${os.loadavg()[0]!.toFixed(1)}`,
  }));
}
