// `--compare`: reads bench/results.json as committed at a revision (HEAD unless --against says another),
// or a results file --against names (a run made in a worktree of another commit, the same hour, to
// compare two revisions under the same load), and prints this run against it; the exit code is 1 when a
// line regressed, so a script can stop on it.
// The earlier committed versions of the file (HISTORY_RUNS, same machine and --quick) tell a move the
// machine has made before from a regression (compare.ts, 'within history').
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import { comparableHistory, compare, figures, machineChange, regressions, table, type ResultsFile } from './compare.ts';
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

/**
 * What `--against` names: a results file when one is there, else a revision. A file's run has no
 * committed runs around it, so its lines are judged by the two runs' spreads alone.
 */
export function baseline(against: string): { before: ResultsFile; history: ResultsFile[]; what: string } {
  if (fs.statSync(against, { throwIfNoEntry: false })?.isFile()) {
    const before = JSON.parse(fs.readFileSync(against, 'utf8')) as ResultsFile;
    if (!Array.isArray(before.results)) throw new Error(`${against} is not a bench results file (no "results" list)`);
    return { before, history: [], what: against };
  }
  return { before: committedResults(against), history: committedHistory(against), what: `bench/results.json at ${against}` };
}

/** Prints the table; returns the exit code (1 when a line regressed). */
export function gate(after: ResultsFile, against: string): number {
  const { before, history: past, what } = baseline(against);
  const history = comparableHistory(after, past);
  const rows = compare(before, after, history);
  console.log(`\nAgainst ${what}:\n`);
  console.log(table(rows, before, after));
  console.log(`\nEach run's figure and the bare reference it measured beside it (median round):\n`);
  console.log(figures(rows, before, after));
  const bad = regressions(rows);
  const counts = (['regressed', 'improved', 'within history', 'within noise', 'no spread', 'new', 'gone'] as const).map((m) => `${rows.filter((r) => r.mark === m).length} ${m}`).join(', ');
  const elsewhere = bad.length && machineChange(before, after).length ? ' (on another machine than the committed run: see the note above)' : '';
  console.log(`\n${counts}.${bad.length ? ` Regressed${elsewhere}: ${bad.map((r) => r.name).join('; ')}.` : ''}`);
  return bad.length ? 1 : 0;
}
