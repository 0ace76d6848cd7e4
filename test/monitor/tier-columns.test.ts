// A queue's column in the in-memory history is freed once no kept row has it: queues come and go
// (deleted, forgotten, renamed), and each column costs 8 bytes for every row of the window.
import { describe, expect, it } from 'vitest';
import { Tier } from '../../server/monitor/tier.ts';
import { NT } from '../../server/monitor/sample-codec.ts';

describe('Tier queue columns', () => {
  it('drops the column of a queue absent from every row left after pruning, keeps the others', () => {
    const tier = new Tier(16);
    const tot = new Float64Array(NT);
    for (let i = 0; i < 10; i++) tier.push(1000 + i, 1, tot, i < 5 ? [0, 1, 2, 1, 3, 4] : [0, 5, 6]);
    expect(tier.q[0]).toBeDefined();
    expect(tier.q[1]).toBeDefined();
    tier.dropBefore(1005);
    expect(tier.len).toBe(5);
    expect(tier.q[1]).toBeUndefined();
    expect(Array.from(tier.q[0]!.subarray(0, 2))).toEqual([5, 6]);
    // A queue that comes back gets a fresh column.
    tier.push(2000, 1, tot, [1, 7, 8]);
    expect(Array.from(tier.q[1]!.subarray(10, 12))).toEqual([7, 8]);
    expect(Number.isNaN(tier.q[1]![0]!)).toBe(true);
  });
});
