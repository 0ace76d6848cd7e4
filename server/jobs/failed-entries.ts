// Keys given to the control API (Sidekiq Web's `<score>-<jid>`, or an old numeric id) resolved to
// the entries of the retry or dead set they name. A key naming nothing is reported missing; a key
// that cannot name anything, or a number that names several entries (a Redis job's number is the
// first 48 bits of its jid: two jids can share it), is refused rather than guessed at.
import { entryMatches, parseEntryKey, type EntryKey, type FailedSet } from './entry-key.ts';
import type { FailedJob } from './types.ts';

/** A key as the API takes it. */
export type GivenKey = string | number;

/** A key that names no entry by its form, or names several; the API's 400. */
export class EntryKeyError extends Error {}

/** An entry asked to be retried is no job (not JSON); the API's 409. */
export class NotAJobError extends Error {}

const setName = (set: FailedSet) => (set === 'retry' ? 'retry set' : 'dead set');

export function parseKeys(given: GivenKey[]): EntryKey[] {
  return given.map((g) => {
    const k = parseEntryKey(g);
    if (!k) throw new EntryKeyError(`"${String(g).slice(0, 80)}" is no entry key: give the entry's \`key\` ("<score>-<jid>", as Sidekiq Web names it) or its numeric id`);
    return k;
  });
}

/** The row ids keys of a row backend name (`<score>-<id>` or the id); keys with another jid name no row. */
export function rowIds(keys: EntryKey[]): number[] {
  return [...new Set(keys.flatMap((k) => ('id' in k ? [k.id] : /^\d{1,16}$/.test(k.jid) ? [Number(k.jid)] : [])))];
}

export interface Resolved {
  found: FailedJob[];
  /** For each key given, the entries it named (the same order). */
  byKey: FailedJob[][];
}

export function resolveKeys(all: readonly FailedJob[], keys: EntryKey[], given: GivenKey[], set: FailedSet): Resolved {
  const byKey = keys.map((k, i) => {
    const named = all.filter((j) => entryMatches(j, k, set));
    if ('id' in k && named.length > 1) {
      throw new EntryKeyError(`id ${String(given[i])} names ${named.length} entries of the ${setName(set)}: address each by its \`key\` ("<score>-<jid>")`);
    }
    return named;
  });
  return { found: [...new Set(byKey.flat())], byKey };
}

/** The keys none of whose entries `done` holds, as given (once each). */
export function missingKeys(r: Resolved, given: GivenKey[], done: readonly FailedJob[]): GivenKey[] {
  const hit = new Set(done);
  const out = given.filter((_, i) => !r.byKey[i]!.some((j) => hit.has(j)));
  return [...new Set(out)];
}

export function refuseUnreadable(entries: readonly FailedJob[], set: FailedSet): void {
  const bad = entries.filter((j) => j.unreadable);
  if (bad.length > 0) throw new NotAJobError(`${bad.length} of the entries asked for in the ${setName(set)} ${bad.length === 1 ? 'is' : 'are'} no job (not JSON): it cannot run; delete it instead`);
}
