// Prng.fill (common/prng.ts) draws a byte per step in one loop of its own: it must give the very bytes
// a per-byte next() gives and leave the sequence where they would, so that a seed names the same run
// everywhere; support.ts's prng, which the reliability suites draw their bodies from, is checked through it.
import { expect, test } from 'vitest';
import { seededRandom } from '../../common/prng.ts';
import { prng } from './support.ts';

test('prng: next, int, pick and bytes follow common/prng.ts draw for draw, bytes() as (next() * 256) | 0', () => {
  for (const seed of [0, 1, 4242, 20261122, 2 ** 31 - 1, 2 ** 32 - 1]) {
    const ours = prng(seed);
    const shared = seededRandom(seed);
    for (let round = 0; round < 50; round++) {
      const n = (round * 7919) % 3001;
      const bytes = ours.bytes(n);
      const expected = Buffer.alloc(n);
      for (let i = 0; i < n; i++) expected[i] = (shared() * 256) | 0;
      expect(bytes.equals(expected), `seed ${seed}, round ${round}: ${n} bytes`).toBe(true);
      // After bytes(), the next draws continue the shared sequence where n draws left it.
      expect(ours.next()).toBe(shared());
      expect(ours.int(3, 900)).toBe(3 + Math.floor(shared() * 898));
      expect(ours.pick(['a', 'b', 'c'])).toBe(['a', 'b', 'c'][Math.floor(shared() * 3)]);
    }
  }
});
