// The SQLite dispatch path in process, without HTTP: batches of 20 polls through DispatchBatch (one
// transaction: stillActive, touch, take, project read) over N pending builds, and each build's JSON.
// Prints CPU µs per poll, to A/B store changes: ROOT=<checkout> node --import tsx bench/experiments/dispatch-store.ts
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
const root = process.env.ROOT ?? path.resolve(import.meta.dirname, '../..');
const { resolveConfig } = await import(path.join(root, 'server/config.ts'));
const { openStore } = await import(path.join(root, 'server/store/index.ts'));
const { DispatchBatch } = await import(path.join(root, 'server/domain/dispatch-batch.ts'));
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'micro-poll-'));
const store = openStore(resolveConfig({ dataDir: dir, logLevel: 'silent' }, {}));
const N = Number(process.env.N ?? 10000);
const p = store.projects.create({ name: 'p' });
const input = { project_id: p.id, name: 'b', stage: 'test', ref: 'main', sha: 'a'.repeat(40), before_sha: '0'.repeat(40), tag: false, commands: 'make test', repo_url: null, variables: [], options: {}, timeout: null, tag_list: [], depends_on: [] };
store.tx(() => { for (let i = 0; i < N; i++) store.builds.create(input); });
const runners = Array.from({ length: 200 }, (_, i) => store.runners.create({ description: `r${i}`, is_shared: true, project_id: null, run_untagged: true, locked: false, tag_list: [], info: {} }));
const byToken = runners.map((r) => store.runners.byToken(r.token));
const batch = new DispatchBatch(store);
const t0 = process.cpuUsage();
const w0 = performance.now();
let taken = 0;
for (let i = 0; i < N; i += 20) {
  const ps = [];
  for (let j = 0; j < 20; j++) ps.push(batch.poll(byToken[(i + j) % 200], { name: 'gitlab-ci-multi-runner', version: '1.11.5' }, true));
  for (const x of await Promise.all(ps)) if (x) { taken++; JSON.stringify(x.build); }
}
const cpu = process.cpuUsage(t0);
console.log(JSON.stringify({ root, taken, usPerPoll: +(((cpu.user + cpu.system) / taken)).toFixed(1), wallUsPerPoll: +(((performance.now() - w0) * 1000) / taken).toFixed(1) }));
store.close();
fs.rmSync(dir, { recursive: true, force: true });
