// `--compare`: reads bench/results.json as committed at a revision (HEAD unless --against says another)
// and prints this run against it; the exit code is 1 when a line regressed, so a script can stop on it.
import { execFileSync } from 'node:child_process';
import { compare, machineChange, regressions, table, type ResultsFile } from './compare.ts';
import { REPO } from './harness.ts';

export function committedResults(rev: string): ResultsFile {
  try {
    return JSON.parse(execFileSync('git', ['show', `${rev}:bench/results.json`], { cwd: REPO, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] })) as ResultsFile;
  } catch (err) {
    throw new Error(`no bench/results.json at ${rev}: ${((err as { stderr?: string }).stderr ?? (err as Error).message).trim()}`);
  }
}

/** Prints the table; returns the exit code (1 when a line regressed). */
export function gate(after: ResultsFile, rev: string): number {
  const before = committedResults(rev);
  const rows = compare(before, after);
  console.log(`\nAgainst bench/results.json at ${rev}:\n`);
  console.log(table(rows, before, after));
  const bad = regressions(rows);
  const counts = (['regressed', 'improved', 'within noise', 'no spread', 'new', 'gone'] as const).map((m) => `${rows.filter((r) => r.mark === m).length} ${m}`).join(', ');
  const elsewhere = bad.length && machineChange(before, after).length ? ' (on another machine than the committed run: see the note above)' : '';
  console.log(`\n${counts}.${bad.length ? ` Regressed${elsewhere}: ${bad.map((r) => r.name).join('; ')}.` : ''}`);
  return bad.length ? 1 : 0;
}
