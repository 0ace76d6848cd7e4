// What the mode suites make of an answer during a fault (outage.ts's Outage.answered, called for
// every 5xx): a 503 that says when and why is "not applied"; one that does not is a failure; any
// other 5xx is a failure too, unless the fault's bug is listed in known-unfixed.ts (then the step's
// outcome is unknown). The suites cannot show the first case yet: the product answers 500 today.
import assert from 'node:assert/strict';
import { expect, test } from 'vitest';
import { Outage } from './outage.ts';
import { unfixed } from './known-unfixed.ts';
import { NotApplied, UnknownOutcome, type Answer } from './system.ts';

const answer = (status: number, headers: Record<string, string>, body: string): Answer => ({
  status,
  headers,
  body: Buffer.from(body),
  json: () => JSON.parse(body),
});
const judge = (o: Outage, a: Answer) => () => o.answered(a, () => `${a.status}`);
const busy = answer(503, { 'retry-after': '2' }, '{"message":"Redis is not answering: try again in 2 s"}');

test('a 503 with Retry-After and a message is "not applied", during any fault', () => {
  for (const kind of ['redis-kill9', 'redis-sigstop', 'pg-stop', 'pg-kill9', 'instance-kill9'] as const) expect(judge(new Outage(kind, kind), busy)).toThrow(NotApplied);
});

test('a 503 without Retry-After, without a message, or with Retry-After not whole seconds is a failure', () => {
  const o = new Outage('instance-kill9', 'an instance killed');
  for (const bad of [
    answer(503, {}, '{"message":"down"}'),
    answer(503, { 'retry-after': '2' }, 'down'),
    answer(503, { 'retry-after': '2' }, '{"message":""}'),
    answer(503, { 'retry-after': 'soon' }, '{"message":"down"}'),
    answer(503, { 'retry-after': '0' }, '{"message":"down"}'),
  ]) expect(judge(o, bad)).toThrow(assert.AssertionError);
});

test('another 5xx passes to the caller as a failure, or is an unknown outcome while its bug is listed', () => {
  const e500 = answer(500, {}, '{"message":"500 Internal Server Error"}');
  expect(judge(new Outage('instance-kill9', 'an instance killed'), e500)).not.toThrow();
  for (const [kind, bug] of [['redis-kill9', 'redis-503'], ['pg-kill9', 'pg-503']] as const) {
    if (unfixed(bug)) expect(judge(new Outage(kind, kind), e500)).toThrow(UnknownOutcome);
    else expect(judge(new Outage(kind, kind), e500)).not.toThrow();
  }
});
