// Spread for every line, given by the harness rather than by each benchmark: bench/run.ts runs a
// benchmark file several times in a row (each run measures ours and then its bare reference, so the
// rounds alternate) and keeps, per line, the round with the median ratio, whole (so its pass, goal and
// details agree with its figure), plus the min–max of the ratio, figure and reference over the rounds.
// A benchmark that measures its own rounds returns `spread` itself and is run once.
import { looseName, type Spread } from './compare.ts';
import type { BenchResult } from './harness.ts';

export const hasSpread = (rs: BenchResult[]) => rs.length > 0 && rs.every((r) => (r.spread as Spread | undefined)?.rounds !== undefined);

const span = (xs: number[]): [number, number] => [Math.min(...xs), Math.max(...xs)];

/** `rounds[i]` is round i's lines; a line is matched across rounds by its loose name (figures in names vary). */
export function mergeRounds(rounds: BenchResult[][]): BenchResult[] {
  if (rounds.length === 1) return rounds[0]!;
  const first = rounds[0] ?? [];
  return first.map((line, index) => {
    const same = rounds.map((rs) => rs.find((r) => r.name === line.name) ?? rs.find((r) => looseName(r.name) === looseName(line.name)) ?? rs[index]).filter((r): r is BenchResult => r !== undefined);
    // Lower median for an even count: a real round, never an average of two.
    const median = [...same].sort((a, b) => a.ratio - b.ratio)[Math.floor((same.length - 1) / 2)]!;
    const spread: Spread = { rounds: same.length, ratio: span(same.map((r) => r.ratio)), value: span(same.map((r) => r.value)), reference: span(same.map((r) => r.reference)) };
    return { ...median, spread };
  });
}

/**
 * For a benchmark that alternates ours and its reference itself: the spread of its own rounds, to return
 * as the line's `spread` (then bench/run.ts runs its file once). `ratio` defaults to ours ÷ reference.
 */
export function ownSpread(rounds: { value: number; reference: number }[], ratio = (r: { value: number; reference: number }) => r.value / r.reference): Spread {
  return { rounds: rounds.length, ratio: span(rounds.map(ratio)), value: span(rounds.map((r) => r.value)), reference: span(rounds.map((r) => r.reference)) };
}
