// Probe, not a benchmark (nothing is judged): what the simulator line's gap is made of.
//   node --import tsx bench/experiments/simulator-costs.ts [--requests N]
// 1. The wire: one run of each side of bench/simulator.ts (400 builds), every request the embedded
//    server gets counted at its `request` event, by method and path, with the bytes its sockets read
//    and wrote: the two sides must send the same requests, or the ratio measures the requests.
// 2. The simulator's HTTP client against the bench harness's `send`, a request at a time from 20
//    loops to a bare node:http server in this process: CPU a request (server included, the same on
//    both), alternating rounds, median.
// 3. One 16 KiB job log (the simulator makes one a build): µs to make it.
import http from 'node:http';
import type net from 'node:net';
import { simulatorRun, referenceRun, type Shape } from '../simulator.ts';
import { send } from '../lib/harness.ts';
import { HttpClient } from '../../simulator/http-client.ts';
import { Journal } from '../../simulator/journal.ts';
import { jobLog } from '../../simulator/job-log.ts';
import { Prng } from '../../common/prng.ts';

const arg = (name: string) => {
  const i = process.argv.indexOf(name);
  return i > 0 ? process.argv[i + 1] : undefined;
};
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;

async function wire(): Promise<void> {
  const counts = new Map<string, number>();
  const sockets: net.Socket[] = [];
  // Both sides start their own embedded server: the count is taken where every server hears it.
  const emit = http.Server.prototype.emit;
  http.Server.prototype.emit = function (this: http.Server, event: string, ...args: unknown[]) {
    if (event === 'connection') sockets.push(args[0] as net.Socket);
    if (event === 'request') {
      const req = args[0] as http.IncomingMessage;
      const key = `${req.method} ${(req.url ?? '').replace(/\?.*/, '').replace(/\d+/g, 'N')}`;
      counts.set(key, (counts.get(key) ?? 0) + 1);
    }
    return emit.apply(this, [event, ...args] as Parameters<typeof emit>);
  } as typeof emit;
  try {
    const shape: Shape = { runners: 20, builds: 400, traceKb: 16, partKb: 4, artifactKb: 64 };
    for (const [side, run] of [['simulator', simulatorRun], ['bare loop', referenceRun]] as const) {
      counts.clear();
      sockets.length = 0;
      const r = await run(shape);
      const kib = (n: number) => (n / r.builds / 1024).toFixed(1);
      console.log(`${side}: ${r.builds} builds in ${r.seconds.toFixed(2)} s, ${(r.cpuMs / r.builds).toFixed(2)} ms of CPU a build; the server read ${kib(sockets.reduce((n, s) => n + s.bytesRead, 0))} KiB and wrote ${kib(sockets.reduce((n, s) => n + s.bytesWritten, 0))} KiB a build`);
      for (const [k, v] of [...counts].sort((a, b) => b[1] - a[1])) console.log(`  ${(v / r.builds).toFixed(2).padStart(6)} a build  ${k}`);
    }
  } finally {
    http.Server.prototype.emit = emit;
  }
}

async function client(requests: number): Promise<void> {
  const answer = Buffer.from(JSON.stringify({ id: 1, token: 'abc', status: 'running' }));
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': answer.length }).end(answer));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as net.AddressInfo).port}/ci/api/v1/builds/1.json`;
  const body = Buffer.from(JSON.stringify({ token: 'x'.repeat(40), state: 'running', info: { name: 'gitlab-ci-multi-runner', version: '1.11.5' } }));
  const headers = { 'User-Agent': 'gitlab-ci-multi-runner 1.11.5', Accept: 'application/json', 'Content-Type': 'application/json', 'Accept-Encoding': 'gzip' };
  const agent = new http.Agent({ keepAlive: true, maxSockets: 256 });
  const simClient = new HttpClient(new Journal({ capacity: 5000, bodyBytes: 1024 }), { timeoutMs: 30_000 });
  const sides: Record<string, () => Promise<unknown>> = {
    'harness send': () => send(url, { method: 'PUT', headers, body, agent }),
    'HttpClient.send': () => simClient.send({ method: 'PUT', url, headers, body, runner: 'probe' }),
  };
  const perRequest: Record<string, number[]> = {};
  try {
    for (let round = 0; round < 9; round++) {
      for (const [name, fn] of Object.entries(sides)) {
        let left = requests;
        const c0 = process.cpuUsage();
        await Promise.all(Array.from({ length: 20 }, async () => {
          while (left-- > 0) await fn();
        }));
        const c = process.cpuUsage(c0);
        if (round > 0) (perRequest[name] ??= []).push((c.user + c.system) / requests); // round 0 warms up
      }
    }
  } finally {
    agent.destroy();
    simClient.close();
    server.close();
  }
  for (const [name, xs] of Object.entries(perRequest)) console.log(`${name}: ${median(xs).toFixed(1)} µs of CPU a request (median of ${xs.length} rounds, ${Math.min(...xs).toFixed(1)}–${Math.max(...xs).toFixed(1)}), server included`);
}

function log(): void {
  const input = { buildId: 1, projectId: 1, sha: '0123456789abcdef0123456789abcdef01234567', ref: 'master', commands: 'echo build\nmake\nmake test', runnerName: 'probe', runnerToken: 'probe-token-0000', host: 'probe-host', targetBytes: 16 * 1024, fails: false, artifacts: { name: 'artifacts', bytes: 64 * 1024 } };
  let bytes = 0;
  for (let i = 0; i < 1000; i++) bytes += jobLog({ ...input, buildId: i }, new Prng(i)).length;
  const t0 = performance.now();
  for (let i = 0; i < 3000; i++) bytes += jobLog({ ...input, buildId: i }, new Prng(i)).length;
  console.log(`job log: ${(((performance.now() - t0) / 3000) * 1000).toFixed(0)} µs for one of ${(bytes / 4000 / 1024).toFixed(1)} KiB`);
}

await wire();
await client(Number(arg('--requests') ?? 5000));
log();
process.exit(0);
