import { describe, expect, it } from 'vitest';
import { describeError } from '../../server/http/errors.ts';
import { StorageError } from '../../server/store/ports/storage-error.ts';

describe('StorageError kinds answer in one place', () => {
  it('unavailable is a 503 with Retry-After and the adapter sentence', () => {
    const d = describeError(new StorageError('unavailable', 'Redis at 127.0.0.1:6379 did not answer within 2 s; retry once it is back', 2.2));
    expect(d).toEqual({
      status: 503,
      message: '503 Service Unavailable - Redis at 127.0.0.1:6379 did not answer within 2 s; retry once it is back',
      headers: { 'Retry-After': '3' },
      bug: false,
    });
  });
  it('full is a 507; no Retry-After unless the adapter knows one', () => {
    const d = describeError(new StorageError('full', 'the database is full; free some space and retry'));
    expect(d.status).toBe(507);
    expect(d.headers).toEqual({});
    expect(d.bug).toBe(false);
  });
  it('read-only and busy are 503s', () => {
    expect(describeError(new StorageError('read-only', 'x')).status).toBe(503);
    expect(describeError(new StorageError('busy', 'x', 0)).headers).toEqual({ 'Retry-After': '1' });
  });
});
