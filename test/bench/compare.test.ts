// The regression gate's marks and the rounds' spread, on results objects made here: no benchmark runs.
import { describe, expect, it } from 'vitest';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { comparableHistory, compare, figures, historyStep, machineChange, MIN_MOVE, regressions, table, type ResultsFile, type Row } from '../../bench/lib/compare.ts';
import { baseline } from '../../bench/lib/gate.ts';
import type { BenchResult } from '../../bench/lib/harness.ts';
import { hasSpread, mergeRounds, ownSpread } from '../../bench/lib/rounds.ts';

function line(name: string, unit: string, ratio: number, range?: [number, number]): BenchResult {
  return { name, value: ratio * 100, unit, reference: 100, ratio, goal: '', pass: true, ...(range ? { spread: { rounds: 3, ratio: range, value: [range[0] * 100, range[1] * 100], reference: [100, 100] } } : {}) };
}
const file = (results: BenchResult[], quick = false): ResultsFile => ({ date: 'd', quick, results });
const markOf = (rows: Row[], name: string) => rows.find((r) => r.name === name)?.mark;

describe('compare', () => {
  it('marks a throughput whose ratio range fell below the old range as regressed, and one above as improved', () => {
    const before = file([line('a throughput', 'parts/s', 1.0, [0.95, 1.05]), line('b throughput', 'builds/s', 0.6, [0.58, 0.62])]);
    const after = file([line('a throughput', 'parts/s', 0.85, [0.8, 0.9]), line('b throughput', 'builds/s', 0.8, [0.75, 0.85])]);
    const rows = compare(before, after);
    expect(markOf(rows, 'a throughput')).toBe('regressed');
    expect(markOf(rows, 'b throughput')).toBe('improved');
    expect(regressions(rows).map((r) => r.name)).toEqual(['a throughput']);
    expect(rows[0]!.change).toBeCloseTo(-0.15, 5);
  });

  it('reads a latency or a size the other way: a higher ratio is a regression', () => {
    const before = file([line('p99', 'ms', 2.0, [1.8, 2.2]), line('rss', 'MiB', 2.3, [2.2, 2.4])]);
    const after = file([line('p99', 'ms', 3.0, [2.7, 3.3]), line('rss', 'MiB', 1.9, [1.8, 2.0])]);
    const rows = compare(before, after);
    expect(markOf(rows, 'p99')).toBe('regressed');
    expect(markOf(rows, 'rss')).toBe('improved');
  });

  it('calls overlapping ranges within noise, even when the medians differ', () => {
    const rows = compare(file([line('x', 'parts/s', 1.0, [0.9, 1.1])]), file([line('x', 'parts/s', 0.93, [0.85, 0.95])]));
    expect(markOf(rows, 'x')).toBe('within noise');
    expect(regressions(rows)).toEqual([]);
  });

  it('judges against one side’s spread when the other run had a single round', () => {
    // The committed results of before the gate have no spread: the new run's range decides.
    const old = file([line('x', 'parts/s', 1.0), line('y', 'parts/s', 1.0)]);
    const rows = compare(old, file([line('x', 'parts/s', 0.8, [0.75, 0.85]), line('y', 'parts/s', 0.98, [0.9, 1.05])]));
    expect(markOf(rows, 'x')).toBe('regressed');
    expect(markOf(rows, 'y')).toBe('within noise');
  });

  it('calls a move below MIN_MOVE within noise even when both runs’ rounds agreed exactly, and a larger one a move', () => {
    // The -wal size after a fixed workload: three equal rounds a run, 30.48 then 30.54 (one page more).
    const before = file([line('wal', 'MiB', 30.48, [30.48, 30.48]), line('size', 'MiB', 30.0, [30.0, 30.0])]);
    const rows = compare(before, file([line('wal', 'MiB', 30.54, [30.54, 30.54]), line('size', 'MiB', 30.0 * (1 + 2 * MIN_MOVE), [30.6, 30.6])]));
    expect(markOf(rows, 'wal')).toBe('within noise');
    expect(markOf(rows, 'size')).toBe('regressed');
  });

  it('says no spread, never regressed, when neither run has rounds to measure noise by', () => {
    const rows = compare(file([line('x', 'parts/s', 1.0)]), file([line('x', 'parts/s', 0.5)]));
    expect(markOf(rows, 'x')).toBe('no spread');
    expect(regressions(rows)).toEqual([]);
  });

  it('pairs lines whose names differ only in figures, and lists new and gone lines', () => {
    const before = file([line('dispatch poll latency p99 (998 polls/s offered)', 'ms', 2.0, [1.9, 2.1]), line('old line', 'ms', 1, [1, 1.1])]);
    const after = file([line('dispatch poll latency p99 (1003 polls/s offered)', 'ms', 4.0, [3.8, 4.2]), line('new line', 'ms', 1, [1, 1.1])]);
    const rows = compare(before, after);
    expect(markOf(rows, 'dispatch poll latency p99 (1003 polls/s offered)')).toBe('regressed');
    expect(markOf(rows, 'new line')).toBe('new');
    expect(markOf(rows, 'old line')).toBe('gone');
  });

  it('takes a result’s own better-direction over the unit’s', () => {
    const r = (ratio: number, range: [number, number]) => ({ ...line('speedup', 'x', ratio, range), better: 'higher' });
    expect(markOf(compare(file([r(1, [0.9, 1.1])]), file([r(2, [1.9, 2.1])])), 'speedup')).toBe('improved');
  });

  it('prints every line with its mark and warns when a quick run meets a full one', () => {
    const before = file([line('a', 'parts/s', 1.0, [0.95, 1.05])]);
    const after = file([line('a', 'parts/s', 0.5, [0.45, 0.55])], true);
    const text = table(compare(before, after), before, after);
    expect(text).toMatch(/^a .*1\.00× \(0\.95–1\.05\).*0\.50× \(0\.45–0\.55\).*-50 %.*REGRESSED/m);
    expect(text).toMatch(/one run is --quick/);
    expect(text).not.toMatch(/different machines/);
  });

  it('says when the two runs were made on different machines, naming what differs', () => {
    const on = (cpu: string, cores: number, node: string): ResultsFile => ({ ...file([line('a', 'parts/s', 1.0, [0.95, 1.05])]), machine: { cpu, cores, node, load_average_at_start: [1, 1, 1] } });
    const amd = on('AMD EPYC', 2, 'v20.20.2');
    const intel = on('Intel(R) Xeon(R) Processor', 2, 'v20.20.2');
    expect(machineChange(amd, intel)).toEqual(['cpu AMD EPYC → Intel(R) Xeon(R) Processor']);
    expect(machineChange(amd, on('AMD EPYC', 4, 'v22.1.0'))).toEqual(['cores 2 → 4', 'node v20.20.2 → v22.1.0']);
    expect(machineChange(amd, amd)).toEqual([]);
    // A run from before the machine was recorded is not called another machine.
    expect(machineChange(file([]), intel)).toEqual([]);
    expect(table(compare(amd, intel), amd, intel)).toMatch(/different machines \(cpu AMD EPYC → Intel\(R\) Xeon\(R\) Processor\)/);
  });
});

describe('comparing with a run made elsewhere (--against FILE)', () => {
  it('reads a results file --against names, with no committed history beside it, and refuses a file that holds no results', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-against-'));
    try {
      const run = path.join(dir, 'before.json');
      fs.writeFileSync(run, JSON.stringify(file([line('a', 'parts/s', 0.8, [0.75, 0.85])])));
      const b = baseline(run);
      expect(b.before.results.map((r) => [r.name, r.ratio])).toEqual([['a', 0.8]]);
      expect(b.history).toEqual([]);
      expect(b.what).toBe(run);
      const other = path.join(dir, 'other.json');
      fs.writeFileSync(other, '{"date":"x"}');
      expect(() => baseline(other)).toThrow(/not a bench results file/);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('compares a renamed line with its old self, through the fields that hold its ratio to the reference it has now', () => {
    const old = { ...line('dispatch (200 runners, 10000 builds, each once)', 'builds/s', 0.6, [0.56, 0.64]), value: 3000, reference: 5000, ratio_to_bare_durable: 0.83, bare_durable_builds_s: 3614 };
    const renamed = (ratio: number, range: [number, number]) => ({
      ...line('dispatch (200 runners, 10000 builds, each once) vs the bare durable take', 'builds/s', ratio, range),
      formerly: { name: 'dispatch (200 runners, 10000 builds, each once)', ratio: 'ratio_to_bare_durable', reference: 'bare_durable_builds_s' },
    });
    const rows = compare(file([old]), file([renamed(0.7, [0.66, 0.74])]));
    // Against the old in-memory ratio (0.6) this would read as improved; against its durable ratio (0.83) it fell.
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ mark: 'regressed', before: { ratio: 0.83, range: [0.83, 0.83] } });
    expect(compare(file([old]), file([renamed(0.85, [0.8, 0.9])]))[0]!.mark).toBe('within noise');
    // Quick runs' names carry other sizes; the old name is matched loosely too.
    const quick = compare(file([{ ...old, name: 'dispatch (200 runners, 3000 builds, each once)' }]), file([renamed(0.9, [0.88, 0.92])]));
    expect(quick.map((r) => r.mark)).toEqual(['improved']);
    expect(figures(rows, file([old]), file([renamed(0.7, [0.66, 0.74])]))).toMatch(/^dispatch \(200 runners, 10000 builds, each once\) vs the bare… +3000 builds\/s +3614 +70\.0 builds\/s +100 +0\.83 → 0\.70 +REGRESSED/m);
    // An old run that did not report the field is not a counterpart: the line is new, the old one gone.
    const without = compare(file([line('dispatch (200 runners, 10000 builds, each once)', 'builds/s', 0.6, [0.56, 0.64])]), file([renamed(0.7, [0.66, 0.74])]));
    expect(without.map((r) => r.mark).sort()).toEqual(['gone', 'new']);
  });

  it('prints each run’s figure beside the bare reference it measured, the ratios and the mark', () => {
    const before = file([{ ...line('trace appends', 'parts/s', 0.8, [0.75, 0.85]), value: 12000, reference: 15000 }]);
    const after = file([{ ...line('trace appends', 'parts/s', 0.4, [0.35, 0.45]), value: 5000, reference: 12500 }]);
    const text = figures(compare(before, after), before, after);
    expect(text).toMatch(/^trace appends +12000 parts\/s +15000 +5000 parts\/s +12500 +0\.80 → 0\.40 +REGRESSED/m);
  });
});

describe('compare with the committed runs before', () => {
  // The upload's ratios over committed runs of unchanged code, newest first.
  const upload = [0.64, 0.52, 0.59, 0.55, 0.63, 0.6];
  const runs = (ratios: number[]) => ratios.map((r, i) => ({ ...file([line('upload', 'MiB/s', r, [r - 0.02, r + 0.02])]), date: `run ${i}` }));

  it('calls a move no larger than the runs made between themselves within history, not a regression', () => {
    const [before, ...history] = runs(upload);
    const after = file([line('upload', 'MiB/s', 0.56, [0.5, 0.6])]);
    expect(markOf(compare(before!, after), 'upload')).toBe('regressed'); // the last run alone
    const rows = compare(before!, after, history);
    expect(markOf(rows, 'upload')).toBe('within history');
    expect(regressions(rows)).toEqual([]);
    expect(rows[0]!.history).toEqual({ runs: 6, step: expect.closeTo(0.1455, 3) }); // 0.55 → 0.63, the second-largest step (0.64 → 0.52 the largest)
    expect(table(rows, before!, after)).toMatch(/within history \(±15 %, 6 runs\)/);
  });

  it('still calls a move larger than that a regression, and a move the other way an improvement', () => {
    const [before, ...history] = runs(upload);
    expect(markOf(compare(before!, file([line('upload', 'MiB/s', 0.45, [0.43, 0.47])]), history), 'upload')).toBe('regressed');
    expect(markOf(compare(before!, file([line('upload', 'MiB/s', 0.9, [0.88, 0.92])]), history), 'upload')).toBe('improved');
  });

  it('leaves out one real change among the runs: a fix that doubled the ratio does not make a fall back look like noise', () => {
    const [before, ...history] = runs([0.8, 0.81, 0.79, 0.4, 0.41]);
    expect(historyStep([before!, ...history].map((r) => r.results[0]!))).toBeCloseTo(0.0253, 3); // 0.81 vs 0.79, not 0.79 vs 0.4
    expect(markOf(compare(before!, file([line('upload', 'MiB/s', 0.5, [0.48, 0.52])]), history), 'upload')).toBe('regressed');
  });

  it('needs four runs to say how far a line moves, and counts the last run once when it is in the history too', () => {
    expect(historyStep(runs([0.64, 0.52, 0.59]).map((r) => r.results[0]!))).toBeUndefined();
    const all = runs([0.64, 0.52, 0.59]);
    expect(markOf(compare(all[0]!, file([line('upload', 'MiB/s', 0.56, [0.5, 0.6])]), all), 'upload')).toBe('regressed');
  });

  it('takes history only from the same machine and the same --quick', () => {
    const on = (cpu: string, quick = false): ResultsFile => ({ ...file([], quick), machine: { cpu, cores: 2, node: 'v20.20.2' } });
    const after = on('Intel');
    const same = on('Intel');
    expect(comparableHistory(after, [same, on('AMD'), on('Intel', true)])).toEqual([same]);
  });
});

describe('mergeRounds', () => {
  it('keeps the median round whole and the min–max of ratio, figure and reference', () => {
    const round = (ratio: number, value: number, reference: number, extra: number, offered: number) => [
      { name: `dispatch poll latency (${offered} polls/s offered)`, value, unit: 'ms', reference, ratio, goal: '', pass: ratio < 2, extra },
    ];
    const [m] = mergeRounds([round(1.5, 3, 2, 1, 998), round(2.5, 5, 2, 2, 1001), round(2.0, 4, 2, 3, 1000)]);
    expect(m).toMatchObject({ ratio: 2.0, value: 4, extra: 3, pass: false, spread: { rounds: 3, ratio: [1.5, 2.5], value: [3, 5], reference: [2, 2] } });
  });

  it('gives a benchmark that alternates its own rounds a spread, so it runs once', () => {
    const spread = ownSpread([{ value: 90, reference: 100 }, { value: 120, reference: 100 }, { value: 100, reference: 80 }]);
    expect(spread).toEqual({ rounds: 3, ratio: [0.9, 1.25], value: [90, 120], reference: [80, 100] });
    expect(hasSpread([{ ...line('x', 'ms', 1), spread }])).toBe(true);
    expect(hasSpread([line('x', 'ms', 1)])).toBe(false);
  });

  it('leaves a single round as it is', () => {
    const one = [line('x', 'ms', 1)];
    expect(mergeRounds([one])).toBe(one);
  });
});
