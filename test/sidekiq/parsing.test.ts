// The pure parts of a sidekiq connection: the Redis URL (the password split off, never kept in the
// URL), Ruby's to_i/to_f as Sidekiq's API applies them, and how a peeked entry becomes a row.
import { describe, expect, it } from 'vitest';
import { normalizeRedisUrl, redactedUrl } from '../../server/sidekiq/redis-url.ts';
import { enqueuedAtOf, rubyToF, rubyToI, utcDays } from '../../server/sidekiq/read.ts';
import { snapshotOf, type RawRead } from '../../server/sidekiq/snapshot.ts';
import { peekJob } from '../../server/sidekiq/peek.ts';
import { describeRedisError } from '../../server/sidekiq/errors.ts';

describe('Redis URL', () => {
  it('splits the password off and keeps user, host, port and db', () => {
    expect(normalizeRedisUrl('redis://:s%40cret@127.0.0.1:6380/3')).toEqual({ url: 'redis://127.0.0.1:6380/3', password: 's@cret' });
    expect(normalizeRedisUrl(' rediss://app:pw@cache.example.com ')).toEqual({ url: 'rediss://app@cache.example.com/0', password: 'pw' });
    expect(normalizeRedisUrl('redis://h:6379/07')).toEqual({ url: 'redis://h:6379/7', password: '' });
  });
  it('refuses what is not a Redis URL, saying why, without echoing a password', () => {
    expect(normalizeRedisUrl('http://h')).toEqual({ error: 'only redis:// and rediss:// (TLS) URLs work, not http://' });
    expect(normalizeRedisUrl('redis://h/queue')).toMatchObject({ error: expect.stringMatching(/database number/) });
    expect(normalizeRedisUrl('redis://h/0#x')).toMatchObject({ error: expect.stringMatching(/no query or fragment/) });
    const bad = normalizeRedisUrl('redis://:hunter2@bad host');
    expect('error' in bad && bad.error).not.toContain('hunter2');
    expect(redactedUrl('redis://user:hunter2@h:1/0')).toBe('redis://user:***@h:1/0');
  });
});

describe("Sidekiq's API arithmetic", () => {
  it("reads counters and floats as Ruby's to_i / to_f do", () => {
    expect([rubyToI('42'), rubyToI(null), rubyToI('12abc'), rubyToI(''), rubyToI('-3')]).toEqual([42, 0, 12, 0, -3]);
    expect([rubyToF('1795457977.4510534'), rubyToF(null), rubyToF('x')]).toEqual([1795457977.4510534, 0, 0]);
  });
  it("takes enqueued_at from the oldest entry, and 0 latency when there is none (Sidekiq's `|| now`)", () => {
    expect(enqueuedAtOf('{"class":"A","enqueued_at":1700000000.25}')).toBe(1700000000.25);
    expect(enqueuedAtOf('{"class":"A"}')).toBeNull();
    expect(enqueuedAtOf('not json')).toBeNull();
    expect(enqueuedAtOf(null)).toBeNull();
  });
  it('names UTC days back from today, newest first', () => {
    expect(utcDays(Date.UTC(2026, 0, 2, 23, 59), 3)).toEqual(['2026-01-02', '2026-01-01', '2025-12-31']);
  });
});

describe("a process hash's quiet field", () => {
  const info = JSON.stringify({ hostname: 'h', pid: 1, tag: '', labels: [], queues: ['q'], concurrency: 5, started_at: 0 });
  const raw = (quiet: string | null): RawRead => ({
    processed: null, failed: null, retrySize: 0, scheduledSize: 0, deadSize: 0, daysProcessed: [], daysFailed: [], queuesTotal: 0, processesTotal: 1,
    queues: [], processes: [{ identity: 'h:1', fields: [info, '2', '1', quiet, '100'] }],
  });
  const stateOf = (quiet: string | null) => (({ quiet: q, stopping }) => ({ quiet: q, stopping }))(snapshotOf(raw(quiet), [], 0, 'pipelines').processes[0]!);
  it('"true" is quiet (6.4 writes it after TSTP and while stopping after TERM); "stopping" says stopping; anything else takes work', () => {
    expect(stateOf('true')).toEqual({ quiet: true, stopping: false });
    expect(stateOf('stopping')).toEqual({ quiet: true, stopping: true });
    expect(stateOf('false')).toEqual({ quiet: false, stopping: false });
    expect(stateOf(null)).toEqual({ quiet: false, stopping: false });
  });
});

describe('a peeked entry', () => {
  it("shows ActiveJob's wrapped class and arguments, as Sidekiq Web's display_class/display_args", () => {
    const entry = JSON.stringify({ class: 'ActiveJob::QueueAdapters::SidekiqAdapter::JobWrapper', wrapped: 'SendMail', args: [{ job_class: 'SendMail', arguments: ['a@b.c', 3] }], queue: 'mailers', jid: 'j'.repeat(24), enqueued_at: 1700000000 });
    expect(peekJob(entry, null)).toMatchObject({ class: 'SendMail', args: '["a@b.c",3]', queue: 'mailers', enqueued_at: '2023-11-14T22:13:20.000Z', unreadable: false });
  });
  it('cuts long arguments and errors, and shows an entry that is no job as it is', () => {
    const long = peekJob(JSON.stringify({ class: 'A', args: ['y'.repeat(1000)], error_class: 'E', error_message: 'm'.repeat(1000) }), 1700000000);
    expect(long.args_truncated).toBe(true);
    expect(long.args.length).toBe(201);
    expect(long.error!.length).toBe(501);
    expect(long.at).toBe('2023-11-14T22:13:20.000Z');
    expect(peekJob('garbage', null)).toMatchObject({ class: '?', args: 'garbage', unreadable: true });
  });
});

describe('Redis failures in words', () => {
  it('never repeats the password a library message might carry', () => {
    const m = describeRedisError(new Error('ERR something about pw-123 here'), 'h:1', 5000, 'pw-123');
    expect(m).not.toContain('pw-123');
    expect(m).toContain('***');
  });
});
