// The regression gate (`npm run bench -- --compare`): this run's lines against the last committed
// bench/results.json. Only ratios are compared (each run's figure over the bare reference measured in
// the same run), so the load of the machine, which moves both, cancels as far as it can; a line moved
// when its range of ratios over the rounds no longer overlaps the other run's range. Runs differ from
// one another by more than their rounds do (page cache, disk, the neighbours of a shared machine): the
// upload's ratio was 0.52-0.64 over seven committed runs of unchanged code, each run with a narrow
// spread, and the gate called it regressed or improved every other run. So the committed runs before
// (same machine, same --quick) say how far a line moves from one run to the next: a line that moved
// beyond the last run's spread, but by no more than the runs have moved between themselves, is marked
// 'within history', not regressed. Between themselves means the second-largest step between
// consecutive runs, so that one real change among them (a fix that doubled a ratio) does not make
// every later move look like noise. An A/B of two revisions on one machine (bench/experiments/*-ab.ts) tells.
import type { BenchResult } from './harness.ts';

/** Min and max over the rounds of one line, and how many rounds there were. */
export interface Spread {
  rounds: number;
  ratio: [number, number];
  value: [number, number];
  reference: [number, number];
}

export interface ResultsFile {
  date?: string;
  command?: string;
  quick?: boolean;
  machine?: { cpu?: string; cores?: number; node?: string; load_average_at_start?: number[] };
  results: BenchResult[];
}

export type Mark = 'regressed' | 'improved' | 'within history' | 'within noise' | 'no spread' | 'new' | 'gone';

export interface Row {
  name: string;
  mark: Mark;
  better: 'higher' | 'lower';
  before?: { ratio: number; range: [number, number] };
  after?: { ratio: number; range: [number, number] };
  /** after ÷ before of the median ratios, minus one (+0.1 = the ratio grew by 10 %). */
  change?: number;
  /** When the line moved within history: how many committed runs, and the step they allow (0.13 = 13 %). */
  history?: { runs: number; step: number };
}

/**
 * Throughputs (a unit per time: parts/s, MiB/s, builds/min) are better higher; latencies, sizes and
 * times are better lower. A result may say so itself with `better`.
 */
export function betterOf(r: BenchResult): 'higher' | 'lower' {
  if (r.better === 'higher' || r.better === 'lower') return r.better;
  return r.unit.includes('/') ? 'higher' : 'lower';
}

/**
 * Names carry sizes and measured figures ("… (1000 polls/s offered)"): two runs' lines are the same line
 * when their names are equal, or else equal once every number is blanked.
 */
export const looseName = (name: string) => name.replace(/\d[\d,.]*/g, '#');

function spreadOf(r: BenchResult): Spread | undefined {
  const s = r.spread as Spread | undefined;
  return s && Array.isArray(s.ratio) && s.rounds > 1 ? s : undefined;
}

function rangeOf(r: BenchResult): [number, number] {
  return spreadOf(r)?.ratio ?? [r.ratio, r.ratio];
}

/**
 * What a renamed line was called in earlier runs (`formerly` on a result), so that it is still
 * compared with its old self. When the reference changed with the name, `ratio` (and `reference`)
 * name the old line's fields that hold the figure against the reference the line has now: the
 * dispatch line's ratio became ours over the bare durable take, which earlier runs reported beside
 * their in-memory ratio as `ratio_to_bare_durable`.
 */
export interface Former {
  name: string;
  ratio?: string;
  reference?: string;
}

function formerOf(r: BenchResult): Former | undefined {
  const f = r.formerly as Former | undefined;
  return f && typeof f.name === 'string' ? f : undefined;
}

const sameLine = (x: BenchResult, name: string) => x.name === name || looseName(x.name) === looseName(name);

/**
 * An old line as its renamed successor reads it: the ratio (and reference) from the fields `formerly`
 * names, without the rounds' spread (kept for `ratio` alone). Undefined when that run did not report them.
 */
function asFormer(old: BenchResult, f: Former): BenchResult | undefined {
  if (f.ratio === undefined) return old;
  const ratio = old[f.ratio];
  const reference = f.reference === undefined ? old.reference : old[f.reference];
  if (typeof ratio !== 'number' || !Number.isFinite(ratio) || typeof reference !== 'number') return undefined;
  const { spread: _spread, ...rest } = old;
  return { ...rest, ratio, reference };
}

/** `a`'s line among `lines` (of those `open` lets it take): exact name, loose name, then its former name. Returns the line found and the line to compare with. */
function counterpart(lines: BenchResult[], a: BenchResult, open: (x: BenchResult) => boolean = () => true): { line: BenchResult; as: BenchResult } | undefined {
  const found = lines.find((x) => open(x) && x.name === a.name) ?? lines.find((x) => open(x) && looseName(x.name) === looseName(a.name));
  if (found) return { line: found, as: found };
  const f = formerOf(a);
  const old = f && lines.find((x) => open(x) && sameLine(x, f.name));
  const as = old && asFormer(old, f!);
  return as ? { line: old!, as } : undefined;
}

/** Pairs each line of `after` with a line of `before`: by exact name first, then by loose name, then by the name it had. */
function pair(before: BenchResult[], after: BenchResult[]): [BenchResult | undefined, BenchResult | undefined][] {
  const left = new Set(before);
  const pairs: [BenchResult | undefined, BenchResult][] = after.map((a) => {
    const c = counterpart(before, a, (x) => left.has(x));
    if (c) left.delete(c.line);
    return [c?.as, a];
  });
  return [...pairs, ...[...left].map((b) => [b, undefined] as [BenchResult, undefined])];
}

/** The line of `run` that pairs with `line` (exact name, loose name, former name), if any. */
function lineIn(run: ResultsFile, line: BenchResult): BenchResult | undefined {
  return counterpart(run.results, line)?.as;
}

/** The smallest move of a median ratio (as a fraction, 0.01 = 1 %) the gate calls a move at all. */
export const MIN_MOVE = 0.01;

/**
 * Marks every line. A line whose runs have no spread on either side (a single round each) cannot be
 * told from noise: 'no spread', never a regression. One side with a spread is enough: the other side's
 * single figure must fall outside it. `history`: earlier committed runs (comparableHistory); a line
 * that moved by no more than those runs moved between themselves (historyStep) is 'within history'.
 */
export function compare(before: ResultsFile, after: ResultsFile, history: ResultsFile[] = []): Row[] {
  return pair(before.results, after.results).map(([b, a]) => {
    const line = (a ?? b)!;
    const better = betterOf(line);
    if (!a) return { name: line.name, mark: 'gone', better, before: { ratio: b!.ratio, range: rangeOf(b!) } };
    if (!b) return { name: line.name, mark: 'new', better, after: { ratio: a.ratio, range: rangeOf(a) } };
    const rb = rangeOf(b);
    const ra = rangeOf(a);
    const row: Row = { name: a.name, mark: 'within noise', better, before: { ratio: b.ratio, range: rb }, after: { ratio: a.ratio, range: ra }, change: b.ratio ? a.ratio / b.ratio - 1 : undefined };
    if (!spreadOf(a) && !spreadOf(b)) return { ...row, mark: a.ratio === b.ratio ? 'within noise' : 'no spread' };
    const higher = ra[0] > rb[1];
    const lower = ra[1] < rb[0];
    if (!higher && !lower) return row;
    // Rounds that agree to the last digit (a size after a fixed workload) have no spread to judge by:
    // a move below MIN_MOVE is below what the figure resolves (the -wal size moved 3.93 -> 3.94 MiB,
    // one page of SQLite's, and was marked regressed).
    if (Math.abs(Math.log(a.ratio / b.ratio)) <= Math.log(1 + MIN_MOVE)) return row;
    // The last run once, though the history (read up to the same revision) may hold it too.
    const past = [b, ...history.flatMap((run) => (run.date !== undefined && run.date === before.date ? [] : (lineIn(run, a) ?? [])))];
    const step = historyStep(past);
    if (step !== undefined && Math.abs(Math.log(a.ratio / b.ratio)) <= Math.log(1 + step)) return { ...row, mark: 'within history', history: { runs: past.length, step } };
    row.mark = higher === (better === 'higher') ? 'improved' : 'regressed';
    return row;
  });
}

/**
 * How far a line moved between consecutive committed runs (newest first), as a fraction of the
 * smaller ratio: the second-largest step, so that one real change among the runs is left out.
 * Needs four runs (three steps); undefined otherwise.
 */
export function historyStep(runs: BenchResult[]): number | undefined {
  const ratios = runs.map((r) => r.ratio).filter((r) => Number.isFinite(r) && r > 0);
  if (ratios.length < 4) return undefined;
  const steps = ratios.slice(1).map((r, i) => Math.abs(Math.log(r / ratios[i]!))).sort((x, y) => y - x);
  return Math.exp(steps[1]!) - 1;
}

/** Of earlier committed runs, those that can stand beside `after`: the same machine, the same --quick. */
export function comparableHistory(after: ResultsFile, runs: ResultsFile[]): ResultsFile[] {
  return runs.filter((r) => machineChange(r, after).length === 0 && Boolean(r.quick) === Boolean(after.quick));
}

/**
 * What differs between the two runs' machines among what moves a ratio: the ratios cancel the load,
 * not the hardware, as our server and a bare reference do not speed up alike on another CPU (an Intel
 * Xeon after an AMD EPYC more than doubled the bare dispatch reference and ours by less: see
 * docs/benchmark-bounds.md). Fields a run did not record are not compared.
 */
export function machineChange(before: ResultsFile, after: ResultsFile): string[] {
  const keys = ['cpu', 'cores', 'node'] as const;
  return keys.flatMap((k) => {
    const b = before.machine?.[k];
    const a = after.machine?.[k];
    return b !== undefined && a !== undefined && b !== a ? [`${k} ${b} → ${a}`] : [];
  });
}

const fmt = (x: number) => (Math.abs(x) >= 100 ? x.toFixed(0) : Math.abs(x) >= 10 ? x.toFixed(1) : x.toFixed(2));
const cell = (s?: { ratio: number; range: [number, number] }) => (s ? (s.range[0] === s.range[1] ? `${fmt(s.ratio)}×` : `${fmt(s.ratio)}× (${fmt(s.range[0])}–${fmt(s.range[1])})`) : '—');
const markCell = (r: Row) =>
  r.mark === 'regressed' ? 'REGRESSED' : r.mark === 'gone' ? 'not in this run' : r.mark === 'within history' && r.history ? `within history (±${(r.history.step * 100).toFixed(0)} %, ${r.history.runs} runs)` : r.mark;

/** A plain-text table: line, before, after, change, better, mark. */
export function table(rows: Row[], before: ResultsFile, after: ResultsFile): string {
  const head = ['line', `before: ${before.date ?? '?'}`, `after: ${after.date ?? '?'}`, 'change', 'better', 'mark'];
  const body = rows.map((r) => [r.name, cell(r.before), cell(r.after), r.change === undefined ? '' : `${r.change >= 0 ? '+' : ''}${(r.change * 100).toFixed(0)} %`, r.better, markCell(r)]);
  const widths = head.map((h, i) => Math.min(i === 0 ? 60 : 40, Math.max(h.length, ...body.map((b) => b[i]!.length))));
  const line = (cols: string[]) => cols.map((c, i) => (c.length > widths[i]! ? `${c.slice(0, widths[i]! - 1)}…` : c.padEnd(widths[i]!))).join('  ');
  const notes: string[] = [];
  if (Boolean(before.quick) !== Boolean(after.quick)) notes.push(`note: one run is --quick and the other is not (before quick=${Boolean(before.quick)}, after quick=${Boolean(after.quick)}): sizes differ, so ratios may too`);
  const moved = machineChange(before, after);
  if (moved.length) notes.push(`note: the two runs are on different machines (${moved.join(', ')}). Ours and a bare reference do not scale alike with the hardware, so a mark may be the machine's, not the code's: before believing one, compare two revisions on this machine (bench/experiments/dispatch-ab.ts, traces-ab.ts, artifacts-ab.ts, bench/startup.ts --bundle A --bundle B) or against a run made here (--against REV).`);
  const loads = [before, after].map((f) => f.machine?.load_average_at_start?.join(' / ') ?? '?');
  notes.push(`load average at start: before ${loads[0]}, after ${loads[1]}. Ratios are median (min–max) over the rounds; a line moved when the ranges do not overlap.`);
  if (rows.some((r) => r.mark === 'within history'))
    notes.push('within history: the line moved beyond the last run’s spread, but by no more than it moved between consecutive committed runs on this machine (the second-largest such step, over the runs counted beside it). Not a regression by itself: an A/B of the two revisions (bench/experiments/*-ab.ts, startup.ts --bundle A --bundle B) tells.');
  return [line(head), line(head.map((_, i) => '-'.repeat(widths[i]!))), ...body.map(line), '', ...notes].join('\n');
}

/**
 * The figures behind the ratios: each line's figure and bare reference in both runs, so a ratio that
 * moved can be read as ours moving or the reference moving.
 */
export function figures(rows: Row[], before: ResultsFile, after: ResultsFile): string {
  const both = (r?: BenchResult) => (r ? `${fmt(r.value)} ${r.unit}` : '—');
  const ref = (r?: BenchResult) => (r ? fmt(r.reference) : '—');
  const head = ['line', 'before', 'reference', 'after', 'reference', 'ratio before → after', 'mark'];
  const body = rows.map((row) => {
    const a = after.results.find((x) => x.name === row.name);
    const b = a ? lineIn(before, a) : before.results.find((x) => x.name === row.name);
    const ratios = `${row.before ? fmt(row.before.ratio) : '—'} → ${row.after ? fmt(row.after.ratio) : '—'}`;
    return [row.name, both(b), ref(b), both(a), ref(a), ratios, markCell(row)];
  });
  const widths = head.map((h, i) => Math.min(i === 0 ? 60 : 40, Math.max(h.length, ...body.map((c) => c[i]!.length))));
  const line = (cols: string[]) => cols.map((c, i) => (c.length > widths[i]! ? `${c.slice(0, widths[i]! - 1)}…` : c.padEnd(widths[i]!))).join('  ');
  return [line(head), line(head.map((_, i) => '-'.repeat(widths[i]!))), ...body.map(line)].join('\n');
}

export const regressions = (rows: Row[]) => rows.filter((r) => r.mark === 'regressed');
