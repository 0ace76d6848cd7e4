// Where a test run's time went, from the JSON lines JOBSCOPE_FILE_CPU=<file> collects (vitest:
// test/helpers/file-cpu.ts; Playwright: test/e2e/fixtures.ts): the files that cost the most CPU and
// the longest ones, per runner, and each runner's sum. A spec split over two workers counts once,
// its parts added. Usage: node --import tsx test/helpers/file-cpu-table.ts <file> [top=20]
import fs from 'node:fs';

type Line = { file: string; runner?: string; self_s?: number; children_s?: number; cpu_s?: number; wall_s: number };
type Row = { file: string; cpu: number; wall: number };

const [input, topArg] = process.argv.slice(2);
if (!input) throw new Error('usage: file-cpu-table.ts <jsonl> [top]');
const top = Number(topArg ?? 20);
const byRunner = new Map<string, Map<string, Row>>();
for (const text of fs.readFileSync(input, 'utf8').split('\n')) {
  if (!text.trim()) continue;
  const l = JSON.parse(text) as Line;
  const runner = l.runner ?? 'vitest';
  const rows = byRunner.get(runner) ?? new Map<string, Row>();
  byRunner.set(runner, rows);
  const row = rows.get(l.file) ?? { file: l.file, cpu: 0, wall: 0 };
  row.cpu += l.cpu_s ?? (l.self_s ?? 0) + (l.children_s ?? 0);
  row.wall += l.wall_s;
  rows.set(l.file, row);
}
for (const [runner, rows] of byRunner) {
  const all = [...rows.values()];
  const sum = all.reduce((a, r) => a + r.cpu, 0);
  console.log(`\n${runner}: ${all.length} files, ${sum.toFixed(1)} core-s, wall summed over files ${all.reduce((a, r) => a + r.wall, 0).toFixed(1)} s`);
  const table = (title: string, key: 'cpu' | 'wall') => {
    console.log(`top ${top} by ${title}:`);
    for (const r of [...all].sort((a, b) => b[key] - a[key]).slice(0, top)) console.log(`  ${r.cpu.toFixed(1).padStart(6)} core-s ${r.wall.toFixed(1).padStart(7)} s  ${r.file}`);
  };
  table('core-s', 'cpu');
  table('wall', 'wall');
}
