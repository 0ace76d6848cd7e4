// A/B of the artifact benchmark between checkouts' servers, as bench/experiments/traces-ab.ts does for traces:
// every side's `bin/jobscope.js` and the bare node:http references run at once, and each round
// uploads then downloads the same bytes through each of them in turn (the bare upload and the
// servers rotate through the places every round, each writer preceded by bench/artifacts.ts's
// `settle`). Per transfer: its place in the round, MiB/s, its ratio to the bare reference's in the
// same round, the server's CPU (user + sys from /proc) and, with --trace-gc (passed to every server
// and reference), the scavenges and mark-compacts it ran.
//   node --import tsx bench/experiments/artifacts-ab.ts <rounds> <label>=<checkout>... [--mib N] [--trace-gc]
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createBuilds, log, MiB, project, registerRunner, round, sendJson, startChild, type BenchServer, type Child } from '../lib/harness.ts';
import { download, settle, upload } from '../artifacts.ts';
import { cpuSeconds } from '../lib/proc-cpu.ts';

const argv = process.argv.slice(2);
const traceGc = argv.includes('--trace-gc');
const mibAt = argv.indexOf('--mib');
const mib = mibAt >= 0 ? Number(argv.splice(mibAt, 2)[1]) : 256;
const args = argv.filter((a) => a !== '--trace-gc');
const rounds = Number(args[0]);
const sides = args.slice(1).map((a) => ({ label: a.slice(0, a.indexOf('=')), root: a.slice(a.indexOf('=') + 1) }));
if (!(rounds > 0) || sides.length < 1 || sides.some((s) => !s.label || !s.root)) {
  console.error('usage: artifacts-ab.ts <rounds> <label>=<checkout>... [--mib N] [--trace-gc]');
  process.exit(2);
}
const size = mib * MiB;
const block = crypto.randomBytes(MiB);
const gcFlags = traceGc ? ['--trace-gc'] : [];

/** Counts the child's --trace-gc lines by kind; `take()` returns and resets the counts. */
function gcCounter(child: Child) {
  let scavenges = 0;
  let markCompacts = 0;
  let tail = '';
  child.proc.stdout!.on('data', (d: Buffer) => {
    const text = tail + d.toString();
    const lines = text.split('\n');
    tail = lines.pop()!;
    for (const l of lines) {
      if (l.includes(': Scavenge ')) scavenges++;
      else if (l.includes(': Mark-Compact ')) markCompacts++;
    }
  });
  return {
    take() {
      const r = { scavenges, markCompacts };
      scavenges = markCompacts = 0;
      return r;
    },
  };
}

async function startSide(label: string, root: string) {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), `jobscope-bench-ab-${label}-`));
  const adminToken = `bench-admin-ab-${label}-0123456789`;
  const registrationToken = `bench-registration-ab-${label}`;
  const child = await startChild(
    [...gcFlags, path.join(root, 'bin/jobscope.js'), 'serve', '--port', '0', '--data-dir', dataDir, '--admin-token', adminToken, '--registration-token', registrationToken, '--log-level', 'error', '--max-artifact-mb', String(mib + 16)],
    /Jobscope listening on (http:\/\/\S+)/,
    `jobscope-ab-${label}`,
  );
  const s: BenchServer = { ...child, dataDir, adminToken, registrationToken };
  const gc = gcCounter(child);
  const p = await project(s, `ab-${label}`);
  await createBuilds(s, p.id, 1);
  const runner = await registerRunner(s, `ab-${label}`);
  const b = (await sendJson(`${s.url}/ci/api/v1/builds/register.json`, 'POST', { token: runner })).body as { id: number; token: string };
  const url = `${s.url}/ci/api/v1/builds/${b.id}/artifacts`;
  const stored = () => path.join(dataDir, 'artifacts', fs.readdirSync(path.join(dataDir, 'artifacts'))[0]!);
  return { label, child, gc, url, token: b.token, stored, async stop() { await child.stop(); fs.rmSync(dataDir, { recursive: true, force: true }); } };
}

const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'jobscope-bench-ab-raw-'));
const servers = [];
for (const side of sides) servers.push(await startSide(side.label, side.root));
const refArgs = (script: string, extra: string[] = []) => [...gcFlags, '--import', 'tsx', path.join(import.meta.dirname, '..', 'reference', script), ...extra];
const bareUp = await startChild(refArgs('upload-server.ts', [path.join(scratch, 'bare')]), /listening on (http:\/\/\S+)/, 'reference-upload');
const bareDown = await startChild(refArgs('download-server.ts'), /listening on (http:\/\/\S+)/, 'reference-download');
const bareUpGc = gcCounter(bareUp);
const bareDownGc = gcCounter(bareDown);
// As in bench/artifacts.ts: a server that has idled (V8's memory reducer has run) is the one a runner meets.
await new Promise((r) => setTimeout(r, 10_000));

type Row = { round: number; place: number; side: string; op: string; mibs: number; ratio: number; cpu_s: number; scavenges?: number; mark_compacts?: number; load: number };
const rows: Row[] = [];
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)]!;
try {
  for (let r = 0; r < rounds; r++) {
    const load = round(os.loadavg()[0]!, 1);
    // The bare upload and every server take each place in turn, one step further every round: what
    // a transfer leaves behind (dirty pages still being written back) slows the next, and with the
    // bare first or last and two servers between, the middle place went to the same server every round.
    const places = [undefined, ...servers];
    const order = places.map((_, i) => places[(i + r) % places.length]);
    const measureBare = async () => {
      settle(scratch, 2 * size, block);
      bareUpGc.take();
      const c0 = cpuSeconds(bareUp.pid);
      const secs = await upload(`${bareUp.url}/upload`, 'x', size, block);
      return { mibs: mib / secs, cpu: cpuSeconds(bareUp.pid) - c0, gc: bareUpGc.take() };
    };
    let bare: Awaited<ReturnType<typeof measureBare>> | undefined;
    const results = [];
    for (const s of order) {
      if (!s) {
        bare = await measureBare();
        continue;
      }
      settle(scratch, 2 * size, block);
      s.gc.take();
      let c0 = cpuSeconds(s.child.pid);
      const up = mib / (await upload(s.url, s.token, size, block));
      const upCpu = cpuSeconds(s.child.pid) - c0;
      const upGc = s.gc.take();
      c0 = cpuSeconds(s.child.pid);
      const down = mib / (await download(s.url, s.token, size, block));
      const downCpu = cpuSeconds(s.child.pid) - c0;
      const downGc = s.gc.take();
      // The bare download of the very file this server stored, right after (same page-cache state).
      bareDownGc.take();
      c0 = cpuSeconds(bareDown.pid);
      const bd = mib / (await download(`${bareDown.url}/download?file=${encodeURIComponent(s.stored())}`, s.token, size, block));
      const bdCpu = cpuSeconds(bareDown.pid) - c0;
      results.push({ s, up, upCpu, upGc, down, downCpu, downGc, bd, bdCpu, bdGc: bareDownGc.take() });
    }
    if (!bare) throw new Error('no bare upload this round');
    const gcOf = (g: { scavenges: number; markCompacts: number }) => (traceGc ? { scavenges: g.scavenges, mark_compacts: g.markCompacts } : {});
    rows.push({ round: r + 1, place: order.indexOf(undefined) + 1, side: 'bare', op: 'upload', mibs: round(bare.mibs, 0), ratio: 1, cpu_s: round(bare.cpu), ...gcOf(bare.gc), load });
    for (const x of results) {
      rows.push({ round: r + 1, place: order.indexOf(x.s) + 1, side: x.s.label, op: 'upload', mibs: round(x.up, 0), ratio: round(x.up / bare.mibs), cpu_s: round(x.upCpu), ...gcOf(x.upGc), load });
      rows.push({ round: r + 1, place: order.indexOf(x.s) + 1, side: x.s.label, op: 'download', mibs: round(x.down, 0), ratio: round(x.down / x.bd), cpu_s: round(x.downCpu), ...gcOf(x.downGc), load });
      rows.push({ round: r + 1, place: order.indexOf(x.s) + 1, side: `bare (after ${x.s.label})`, op: 'download', mibs: round(x.bd, 0), ratio: 1, cpu_s: round(x.bdCpu), ...gcOf(x.bdGc), load });
    }
    for (const row of rows.filter((x) => x.round === r + 1)) log(`artifacts-ab: ${JSON.stringify(row)}`);
  }
} finally {
  for (const s of servers) await s.stop();
  await bareUp.stop();
  await bareDown.stop();
  fs.rmSync(scratch, { recursive: true, force: true });
}
const summary = sides.flatMap(({ label }) =>
  (['upload', 'download'] as const).map((op) => {
    const mine = rows.filter((x) => x.side === label && x.op === op);
    const ratios = mine.map((x) => x.ratio);
    return { side: label, op, ratio_median: median(ratios), ratio_min: Math.min(...ratios), ratio_max: Math.max(...ratios), cpu_s_median: median(mine.map((x) => x.cpu_s)), ...(traceGc ? { mark_compacts: mine.map((x) => x.mark_compacts), scavenges: mine.map((x) => x.scavenges) } : {}) };
  }),
);
console.log(JSON.stringify({ mib, rounds, summary, rows }, null, 2));
