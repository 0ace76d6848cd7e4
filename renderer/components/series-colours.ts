// One colour per series name, kept while the name lives: a colour taken from the rank (the i-th
// biggest queue) moved every other series when one bigger queue appeared, and two connections to
// one Redis coloured the same queues differently. A name starts at a hash of itself into the
// palette; a clash with a name already holding that colour moves the newcomer, never the holder.

/** Palette slot of each name, as remembered; names absent from `live` give their slot back. */
export type ColourSlots = Record<string, number>;

/** FNV-1a: the same name gives the same start slot in every window and on every connection. */
function hashOf(name: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < name.length; i++) {
    h ^= name.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/**
 * The slots for `live` names: remembered ones kept, new ones at their hash slot or the next free
 * one. Past `size` live names colours repeat (at the hash slot). Answers `prev` itself when
 * nothing changed, so a caller can skip saving.
 */
export function assignSlots(prev: ColourSlots, live: readonly string[], size: number): ColourSlots {
  const alive = new Set(live);
  const next: ColourSlots = {};
  const used = new Set<number>();
  let changed = false;
  for (const [name, slot] of Object.entries(prev)) {
    if (alive.has(name) && Number.isInteger(slot) && slot >= 0 && slot < size) {
      next[name] = slot;
      used.add(slot);
    } else changed = true;
  }
  for (const name of [...alive].sort()) {
    if (name in next) continue;
    const start = hashOf(name) % size;
    let slot = start;
    for (let k = 0; k < size; k++) {
      const s = (start + k) % size;
      if (!used.has(s)) {
        slot = s;
        break;
      }
    }
    next[name] = slot;
    used.add(slot);
    changed = true;
  }
  return changed ? next : prev;
}

export const isColourSlots = (v: unknown): v is ColourSlots =>
  typeof v === 'object' && v !== null && !Array.isArray(v) && Object.values(v).every((s) => typeof s === 'number');
