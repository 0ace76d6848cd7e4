// What a server on PostgreSQL answers when the database fails under a request (server/store/pg/
// storage-errors.ts): the SQLSTATEs, socket codes and node-postgres messages of storage trouble
// become StorageError kinds, answered 507/503 (with Retry-After) by http/errors.ts as a server on
// SQLite answers for its file, and every other error (a constraint, a file's ENOSPC, a bug) passes
// unchanged. Pure: the end-to-end cases are build-batch.test.ts (a real cluster refusing a batch
// part-way) and test/reliability/pg-outage.test.ts (the database stopped, killed, restarted).
import { describe, expect, it } from 'vitest';
import { describeError } from '../../server/http/errors.ts';
import { StorageError } from '../../server/store/ports/storage-error.ts';
import { pgStorageError, withStorageErrors } from '../../server/store/pg/storage-errors.ts';

const pgError = (code: string, message = 'x') => Object.assign(new Error(message), { code, severity: 'ERROR' });

describe('pgStorageError', () => {
  it('maps disk full to 507, other resource, read-only, lost, unreachable and timed-out to 503 with Retry-After, each saying what to do', () => {
    const cases: [unknown, number, RegExp][] = [
      [pgError('53100'), 507, /database is full/],
      [pgError('53200'), 503, /no room/],
      [pgError('53300'), 503, /no room/],
      [pgError('25006'), 503, /read-only/],
      // A session ended under a statement already sent: a commit may have been made.
      [pgError('57P01'), 503, /lost under this request \(a change sent just then may or may not have been made: check before repeating it\)/],
      [pgError('57P03'), 503, /lost or it is shutting down/],
      [pgError('08006'), 503, /lost/],
      [pgError('57014'), 503, /statement timeout/],
      [Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' }), 503, /cannot be reached \(ECONNREFUSED\)/],
      [Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' }), 503, /broke \(ECONNRESET\) under this request \(a change sent just then may or may not have been made/],
      [new Error('Connection terminated unexpectedly'), 503, /lost under this request \(a change sent just then may or may not have been made/],
      [new Error('Connection terminated due to connection timeout'), 503, /lost under this request/],
      [new Error('Client has encountered a connection error and is not queryable'), 503, /lost/],
      [new Error('timeout exceeded when trying to connect'), 503, /connect timeout/],
      [new Error('Query read timeout'), 503, /did not answer this request within the statement timeout .*may or may not have been made/],
    ];
    // Nothing was sent: the answer does not say a change may have been made.
    for (const err of [pgError('57P03'), pgError('08006'), Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' }), new Error('timeout exceeded when trying to connect')]) {
      expect(describeError(pgStorageError(err)).message).not.toMatch(/may or may not/);
    }
    for (const [err, status, message] of cases) {
      const e = pgStorageError(err);
      expect(e, (err as Error).message).toBeInstanceOf(StorageError);
      const answer = describeError(e);
      expect(answer.status).toBe(status);
      expect(answer.message).toMatch(new RegExp(`^${status} `));
      expect(answer.message).toMatch(message);
      if (status === 503) expect(Number(answer.headers['Retry-After'])).toBeGreaterThan(0);
    }
  });

  it('leaves any other error alone: a constraint, a syntax error, a file system code, a plain error', () => {
    for (const err of [pgError('23505'), pgError('42601'), Object.assign(new Error('no space'), { code: 'ENOSPC' }), new Error('boom'), undefined, 'text']) {
      expect(pgStorageError(err)).toBeUndefined();
    }
  });
});

describe('withStorageErrors', () => {
  class Thing {
    n = 2;
    twice(x: number) {
      return x * this.n;
    }
    async full(): Promise<number> {
      throw pgError('53100');
    }
    async unique(): Promise<number> {
      throw pgError('23505', 'duplicate key');
    }
    async viaOwn(): Promise<number> {
      return this.twice(await Promise.resolve(3));
    }
    get label() {
      return `n=${this.n}`;
    }
  }

  it('turns a rejected storage error into a StorageError, passes other rejections, values, getters and this unchanged', async () => {
    const t = withStorageErrors(new Thing());
    expect(t.twice(4)).toBe(8);
    expect(t.label).toBe('n=2');
    expect(await t.viaOwn()).toBe(6);
    await expect(t.full()).rejects.toMatchObject({ kind: 'full' });
    await expect(t.full()).rejects.toBeInstanceOf(StorageError);
    await expect(t.unique()).rejects.toMatchObject({ code: '23505', message: 'duplicate key' });
  });
});
