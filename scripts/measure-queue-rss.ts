// Measures what many distinct job queues cost a running server: RSS and database size after
// creating N queues through POST /api/v3/sim/jobs, with the dashboard sampling them every second.
//   npx tsx scripts/measure-queue-rss.ts [--repo DIR] [--queues 20000] [--sample-s 20] [-- extra serve flags]
// --repo runs another checkout's server (e.g. a git worktree of an older commit) for a before/after.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const argv = process.argv.slice(2);
const dash = argv.indexOf('--');
const own = dash >= 0 ? argv.slice(0, dash) : argv;
const extra = dash >= 0 ? argv.slice(dash + 1) : [];
const opt = (name: string, def: string) => {
  const i = own.indexOf(name);
  return i >= 0 ? own[i + 1]! : def;
};
const repo = path.resolve(opt('--repo', path.join(import.meta.dirname, '..')));
const queues = Number(opt('--queues', '20000'));
const sampleS = Number(opt('--sample-s', '20'));
const token = 'measure-queue-rss-admin-token-0123456789';

const rssMiB = (pid: number) => Number(/VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) / 1024;
const dirMiB = (dir: string) => fs.readdirSync(dir).filter((f) => f.startsWith('jobscope.db')).reduce((n, f) => n + fs.statSync(path.join(dir, f)).size, 0) / 2 ** 20;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'jobscope-queue-rss-'));
const child = spawn(
  process.execPath,
  ['--import', 'tsx', path.join(repo, 'hosts/cli.ts'), 'serve', '--port', '0', '--data-dir', dataDir, '--admin-token', token, '--log-level', 'error', '--monitor-interval-ms', '1000', ...extra],
  { cwd: repo, stdio: ['ignore', 'pipe', 'pipe'] },
);
const url = await new Promise<string>((resolve, reject) => {
  let out = '';
  const onData = (c: Buffer) => {
    out += c.toString();
    const m = /Jobscope listening on (http:\/\/\S+)/.exec(out);
    if (m) resolve(m[1]!);
  };
  child.stdout.on('data', onData);
  child.stderr.on('data', onData);
  child.on('exit', (code) => reject(new Error(`server exited ${code}: ${out}`)));
});

try {
  await sleep(3000);
  const idle = rssMiB(child.pid!);
  const status: Record<number, number> = {};
  let next = 0;
  const worker = async () => {
    while (next < queues) {
      const i = next++;
      const res = await fetch(`${url}/api/v3/sim/jobs`, { method: 'POST', headers: { 'PRIVATE-TOKEN': token, 'content-type': 'application/json' }, body: JSON.stringify({ queue: `q-${i}-${Math.random().toString(36).slice(2, 10)}` }) });
      await res.arrayBuffer();
      status[res.status] = (status[res.status] ?? 0) + 1;
    }
  };
  await Promise.all(Array.from({ length: 16 }, worker));
  const created = rssMiB(child.pid!);
  await sleep(sampleS * 1000);
  const sampled = rssMiB(child.pid!);
  const listed = (await (await fetch(`${url}/api/v3/sim/jobs/queues`, { headers: { 'PRIVATE-TOKEN': token } })).json()) as unknown[];
  const f = (n: number) => Math.round(n * 10) / 10;
  console.log(JSON.stringify({ repo, queues, answers: status, queues_listed: listed.length, rss_mib: { idle: f(idle), after_create: f(created), after_sampling: f(sampled) }, db_mib_after_sampling: f(dirMiB(dataDir)), sample_s: sampleS, extra }));
} finally {
  child.kill('SIGTERM');
  await new Promise((r) => child.once('exit', r));
  fs.rmSync(dataDir, { recursive: true, force: true });
}
