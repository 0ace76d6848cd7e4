// The manual clock the job system and metrics tests move by hand: timers fire in time order, each
// seeing its own due time, intervals repeat, cancelled ones never run.
import { describe, expect, it } from 'vitest';
import { ManualClock, systemClock } from '../../server/clock.ts';

describe('ManualClock', () => {
  it('runs due timers in time order, each seeing now() at its due time; later ones wait', () => {
    const clock = new ManualClock(1_000);
    const seen: string[] = [];
    clock.after(300, () => seen.push(`b@${clock.now()}`));
    clock.after(100, () => seen.push(`a@${clock.now()}`));
    clock.after(300, () => seen.push(`c@${clock.now()}`)); // same time: in the order they were set
    clock.after(1_000, () => seen.push('late'));
    clock.advance(500);
    expect(seen).toEqual(['a@1100', 'b@1300', 'c@1300']);
    expect(clock.now()).toBe(1_500);
    expect(clock.pending).toBe(1);
    clock.advance(499);
    expect(seen).toHaveLength(3);
    clock.advance(1);
    expect(seen).toEqual(['a@1100', 'b@1300', 'c@1300', 'late']);
    expect(clock.pending).toBe(0);
  });

  it('repeats intervals on every period crossed, and stops them when cancelled', () => {
    const clock = new ManualClock(0);
    const ticks: number[] = [];
    const cancel = clock.every(1_000, () => ticks.push(clock.now()));
    clock.advance(3_500);
    expect(ticks).toEqual([1_000, 2_000, 3_000]);
    cancel();
    clock.advance(10_000);
    expect(ticks).toHaveLength(3);
    expect(clock.pending).toBe(0);
  });

  it('a timer set by a timer during an advance runs in the same advance when due', () => {
    const clock = new ManualClock(0);
    const seen: number[] = [];
    clock.after(100, () => clock.after(50, () => seen.push(clock.now())));
    clock.advance(200);
    expect(seen).toEqual([150]);
  });

  it('a cancelled one-shot timer never runs; time never moves backwards', () => {
    const clock = new ManualClock(0);
    let ran = false;
    clock.after(10, () => (ran = true))();
    clock.advance(100);
    expect(ran).toBe(false);
    expect(() => clock.advance(-1)).toThrow(RangeError);
    expect(() => clock.advance(Number.NaN)).toThrow(RangeError);
    expect(clock.now()).toBe(100);
  });
});

describe('systemClock', () => {
  it('reads wall time and runs a timer that can be cancelled', async () => {
    const before = Date.now();
    expect(systemClock.now()).toBeGreaterThanOrEqual(before);
    let cancelledRan = false;
    systemClock.after(0, () => (cancelledRan = true))();
    await new Promise<void>((resolve) => systemClock.after(1, resolve));
    expect(cancelledRan).toBe(false);
  });
});
