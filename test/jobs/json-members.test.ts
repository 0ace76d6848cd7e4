// The payload scanner the Redis backend writes failures with: members found whatever the spacing,
// strings holding brackets, commas and escaped quotes, and a depth no recursive walker survives.
import { describe, expect, it } from 'vitest';
import { jsonMemberText, jsonMembers, withJsonMembers } from '../../server/util/json-members.ts';

const payloads: Record<string, unknown>[] = [
  { class: 'X', args: [1, 'two', { three: [3, null, true, false, -1.5e3] }], jid: 'a', retry: true },
  { class: 'Tricky', args: ['}],"{[', 'quote " and \\ backslash', '\u2028 é 💥'], empty: {}, none: [], n: 0 },
  { args: [] },
  {},
];

describe('jsonMembers / withJsonMembers', () => {
  it('splits an object into its members, values as their exact text, compact or spaced', () => {
    for (const p of payloads) {
      for (const text of [JSON.stringify(p), JSON.stringify(p, null, 2), ` \n${JSON.stringify(p, null, '\t')}\n `]) {
        const members = jsonMembers(text)!;
        expect(members.map(([k]) => k)).toEqual(Object.keys(p));
        for (const [k, v] of members) expect(JSON.parse(v)).toEqual(p[k]);
      }
    }
    for (const notObject of ['[1,2]', '"x"', '3', 'null']) expect(jsonMembers(notObject)).toBeNull();
  });

  it('sets, adds and removes members and keeps every other byte', () => {
    const text = JSON.stringify(payloads[1]);
    const changed = withJsonMembers(text, { n: 7, error_class: 'NameError', empty: undefined })!;
    expect(JSON.parse(changed)).toEqual({ ...payloads[1], n: 7, error_class: 'NameError', empty: undefined });
    expect(Object.keys(JSON.parse(changed) as object)).toEqual(['class', 'args', 'none', 'n', 'error_class']);
    expect(changed).toContain(`"args":${JSON.stringify(payloads[1]!.args)}`);
  });

  it('copes with args nested 100,000 levels (JSON.stringify of them overflows the stack)', () => {
    const deep = `${'['.repeat(100_000)}"]"${']'.repeat(100_000)}`;
    const text = `{"class":"Deep","args":[${deep}],"jid":"j"}`;
    expect(() => JSON.stringify(JSON.parse(text))).toThrow(RangeError);
    expect(jsonMemberText(text, 'args')).toBe(`[${deep}]`);
    const changed = withJsonMembers(text, { retry_count: 0 })!;
    expect(changed).toBe(`{"class":"Deep","args":[${deep}],"jid":"j","retry_count":0}`);
  });
});
