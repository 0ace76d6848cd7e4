// Request validators are kept for the process (server/http/lazy-validators.ts): the next server built
// with the same shared schemas and options reuses a route's compiled validator instead of compiling it
// again, and it answers as the first one did; a different schema still gets its own.
import { randomUUID } from 'node:crypto';
import { afterEach, expect, test, vi } from 'vitest';
import { Ajv } from 'ajv';
import { lazyValidators } from '../../server/http/lazy-validators.ts';

afterEach(() => vi.restoreAllMocks());

// A name no other test's schema has: the cache is the process's, and other files may have filled it.
const unique = `n_${randomUUID().replace(/-/g, '')}`;
const schemaOf = (max: number) => ({ type: 'object', properties: { [unique]: { type: 'integer', minimum: 1, maximum: max } }, required: [unique] });
const options = { customOptions: { allowUnionTypes: true } };
type V = ((data: unknown) => boolean) & { errors?: unknown };
const validatorFor = (max: number): V =>
  (lazyValidators().factory as unknown as (e: unknown, o: unknown) => (r: object) => V)({}, options)({ schema: schemaOf(max), method: 'GET', url: '/x', httpPart: 'querystring' });

test("a second server's validator for the same schema is the first one's, compiled once", () => {
  const compile = vi.spyOn(Ajv.prototype, 'compile');
  const first = validatorFor(10);
  const answers = (v: V) => [{ [unique]: '3' }, { [unique]: '30' }, {}].map((d) => [v(d), v.errors ?? null, d]);
  const a = answers(first);
  expect(compile).toHaveBeenCalledTimes(1);
  const second = validatorFor(10);
  const b = answers(second);
  expect(compile).toHaveBeenCalledTimes(1);
  expect(b).toEqual(a);
  // Coerced in place, refused with the same errors.
  expect(a[0]).toEqual([true, null, { [unique]: 3 }]);
  expect(a[1]![0]).toBe(false);
  // Another schema is compiled on its own and answers by its own bounds.
  const other = validatorFor(100);
  expect(other({ [unique]: '30' })).toBe(true);
  expect(compile).toHaveBeenCalledTimes(2);
});
