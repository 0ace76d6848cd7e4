// What a server on PostgreSQL answers when the database fails under a request (server/store/pg/
// domain-errors.ts): the SQLSTATEs of storage trouble become the 507/503 a server on SQLite gives
// for its file, and every other error (a constraint, a file's ENOSPC, a bug) passes unchanged to the
// handler. Pure: the end-to-end case, a real cluster refusing a batch part-way, is build-batch.test.ts.
import { describe, expect, it } from 'vitest';
import { ApiError, describeError } from '../../server/http/errors.ts';
import { pgStorageError, withStorageErrors } from '../../server/store/pg/domain-errors.ts';

const pgError = (code: string, message = 'x') => Object.assign(new Error(message), { code, severity: 'ERROR' });

describe('pgStorageError', () => {
  it('maps disk full to 507, other resource, read-only and lost-connection states to 503, each saying what to do', () => {
    const cases: [unknown, number, RegExp][] = [
      [pgError('53100'), 507, /database is full/],
      [pgError('53200'), 503, /no room/],
      [pgError('53300'), 503, /no room/],
      [pgError('25006'), 503, /read-only/],
      [pgError('57P01'), 503, /lost or it is shutting down/],
      [pgError('08006'), 503, /lost/],
      [new Error('Connection terminated unexpectedly'), 503, /lost/],
    ];
    for (const [err, status, message] of cases) {
      const e = pgStorageError(err);
      expect(e, String((err as { code?: string }).code)).toBeInstanceOf(ApiError);
      expect(e!.status).toBe(status);
      expect(e!.message).toMatch(new RegExp(`^${status} `));
      expect(e!.message).toMatch(message);
    }
  });

  it('leaves any other error alone: a constraint, a syntax error, a file system code, a plain error', () => {
    for (const err of [pgError('23505'), pgError('42601'), Object.assign(new Error('no space'), { code: 'ENOSPC' }), new Error('boom'), undefined, 'text']) {
      expect(pgStorageError(err)).toBeUndefined();
    }
  });
});

describe('describeError', () => {
  // The job backend and the monitor on PostgreSQL are not behind the domain's wrapper: an error of
  // theirs reaching the error handler is answered the same way, not as a 500 bug.
  it('answers a raw PostgreSQL storage error with its 507/503, not as a bug; other database errors stay bugs', () => {
    expect(describeError(pgError('53100'))).toMatchObject({ status: 507, bug: false });
    expect(describeError(pgError('57P01'))).toMatchObject({ status: 503, bug: false });
    expect(describeError(pgError('23505'))).toMatchObject({ status: 500, bug: true });
    expect(describeError(Object.assign(new Error('x'), { code: 'EROFS' })).message).toMatch(/data dir is read-only/);
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

  it('turns a rejected storage error into the ApiError, passes other rejections, values, getters and this unchanged', async () => {
    const t = withStorageErrors(new Thing());
    expect(t.twice(4)).toBe(8);
    expect(t.label).toBe('n=2');
    expect(await t.viaOwn()).toBe(6);
    await expect(t.full()).rejects.toMatchObject({ status: 507 });
    await expect(t.full()).rejects.toBeInstanceOf(ApiError);
    await expect(t.unique()).rejects.toMatchObject({ code: '23505', message: 'duplicate key' });
  });
});
