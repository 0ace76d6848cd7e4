// Queue colours by name: the same names get the same colours in any order and on any connection,
// a new name never moves a colour already given, a clash goes to a free colour, a gone name frees its own.
import { describe, expect, it } from 'vitest';
import { assignSlots } from '../../renderer/components/series-colours.ts';

const SIZE = 12;

describe('series colours', () => {
  it('gives the same slots whatever the ranking or the connection', () => {
    const a = assignSlots({}, ['mailers', 'default', 'exports'], SIZE);
    const b = assignSlots({}, ['exports', 'mailers', 'default'], SIZE);
    expect(b).toEqual(a);
    expect(new Set(Object.values(a)).size).toBe(3);
  });

  it('never moves a remembered slot; a newcomer on a taken slot takes a free one', () => {
    const held = { default: 3, mailers: 4 };
    // Names chosen to hash onto the held slots or not: the held ones stay whatever they hash to.
    const next = assignSlots(held, ['default', 'mailers', ...Array.from({ length: 8 }, (_, i) => `q${i}`)], SIZE);
    expect(next.default).toBe(3);
    expect(next.mailers).toBe(4);
    expect(new Set(Object.values(next)).size).toBe(10);
  });

  it('answers the same object when nothing changed, and frees the slots of gone names', () => {
    const slots = assignSlots({}, ['a', 'b'], SIZE);
    expect(assignSlots(slots, ['b', 'a'], SIZE)).toBe(slots);
    const later = assignSlots(slots, ['b'], SIZE);
    expect(later).toEqual({ b: slots.b });
  });

  it('repeats colours only past the palette', () => {
    const names = Array.from({ length: SIZE + 3 }, (_, i) => `queue_${i}`);
    const slots = assignSlots({}, names, SIZE);
    expect(new Set(Object.values(slots)).size).toBe(SIZE);
  });
});
