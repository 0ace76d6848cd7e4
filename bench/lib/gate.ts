// `--compare`: reads bench/results.json as committed at a revision (HEAD unless --against says another)
// and prints this run against it; the exit code is 1 when a line regressed, so a script can stop on it.
// The earlier committed versions of the file (HISTORY_RUNS, same machine and --quick) tell a move the
// machine has made before from a regression (compare.ts, 'within history').
import { execFileSync } from 'node:child_process';
import { comparableHistory, compare, machineChange, regressions, table, type ResultsFile } from './compare.ts';
import { REPO } from './harness.ts';

export function committedResults(rev: string): ResultsFile {
  try {
    return JSON.parse(execFileSync('git', ['show', `${rev}:bench/results.json`], { cwd: REPO, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] })) as ResultsFile;
  } catch (err) {
    throw new Error(`no bench/results.json at ${rev}: ${((err as { stderr?: string }).stderr ?? (err as Error).message).trim()}`);
  }
}

/** How many committed runs back (the last one included) the history reaches. */
export const HISTORY_RUNS = 8;

/** bench/results.json as committed by the last `n` commits that changed it, up to `rev`, newest first. */
export function committedHistory(rev: string, n = HISTORY_RUNS): ResultsFile[] {
  let revs: string[];
  try {
    revs = execFileSync('git', ['log', '--format=%H', `-n${n}`, rev, '--', 'bench/results.json'], { cwd: REPO, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).split('\n').filter(Boolean);
  } catch {
    return []; // no history to read (a shallow clone, no git): the gate compares with the last run alone
  }
  return revs.flatMap((r) => {
    try {
      return [committedResults(r)];
    } catch {
      return [];
    }
  });
}

/** Prints the table; returns the exit code (1 when a line regressed). */
export function gate(after: ResultsFile, rev: string): number {
  const before = committedResults(rev);
  const history = comparableHistory(after, committedHistory(rev));
  const rows = compare(before, after, history);
  console.log(`\nAgainst bench/results.json at ${rev}:\n`);
  console.log(table(rows, before, after));
  const bad = regressions(rows);
  const counts = (['regressed', 'improved', 'within history', 'within noise', 'no spread', 'new', 'gone'] as const).map((m) => `${rows.filter((r) => r.mark === m).length} ${m}`).join(', ');
  const elsewhere = bad.length && machineChange(before, after).length ? ' (on another machine than the committed run: see the note above)' : '';
  console.log(`\n${counts}.${bad.length ? ` Regressed${elsewhere}: ${bad.map((r) => r.name).join('; ')}.` : ''}`);
  return bad.length ? 1 : 0;
}
