// X-GitLab-Last-Update on a shared database (context.ts RunnerQueue.fresh, pg/runner-queue.ts): a
// poll answers a value read after it arrived, so a build another instance made pending before the
// poll is never hidden; and polls arriving together share that read instead of one SELECT each.
// The pool is the real one, wrapped only to count the reads and to hold one read's answer.
import { describe, expect, it } from 'vitest';
import { postgresMissing, usePostgres } from '../helpers/postgres.ts';
import { waitFor } from '../helpers/wait.ts';
import { openPgDatabase } from '../../server/store/pg/index.ts';
import type { Queryable } from '../../server/store/pg/connect.ts';
import { PgRunnerQueue } from '../../server/store/pg/runner-queue.ts';
import { RunnerQueue } from '../../server/context.ts';

const missing = postgresMissing();
const pg = usePostgres();

const READ = 'SELECT value AS n FROM settings';

/** The pool, counting the counter's reads sent and answered; `held` keeps the next read's answer (it has run) until it settles. */
function watched(pool: Queryable) {
  const w = {
    reads: 0,
    answered: 0,
    held: undefined as Promise<void> | undefined,
    pool: {
      query: async (...args: Parameters<Queryable['query']>) => {
        const isRead = typeof args[0] === 'string' && args[0].startsWith(READ);
        if (isRead) w.reads++;
        const hold = isRead ? w.held : undefined;
        w.held = undefined;
        const answer = await (pool.query as (...a: unknown[]) => Promise<unknown>)(...args);
        if (isRead) w.answered++;
        await hold;
        return answer;
      },
    } as unknown as Queryable,
  };
  return w;
}

describe.skipIf(missing)(`Last-Update on a shared database${missing ? ` (skipped: ${missing})` : ''}`, () => {
  it('polls arriving together share one read (at most two out at a time), and each answers a value read after it arrived', async () => {
    const a = await openPgDatabase(await pg.createDatabase('lastupdate1'), { max: 4 });
    const b = await openPgDatabase(pg.urlFor('lastupdate1'), { max: 2 });
    try {
      const queue = new RunnerQueue();
      const w = watched(a.pool);
      await PgRunnerQueue.open(w.pool, queue);
      const other = await PgRunnerQueue.open(b.pool, new RunnerQueue());

      const opened = w.reads;
      const values = await Promise.all(Array.from({ length: 20 }, () => queue.fresh()));
      expect(new Set(values).size).toBe(1);
      expect(w.reads - opened).toBeLessThanOrEqual(2);

      // A read that ran before the other instance's commit, its answer still on the way: a poll that
      // arrives after the commit must not be answered from it.
      let release!: () => void;
      w.held = new Promise((r) => (release = r));
      const ran = w.answered;
      const early = queue.fresh();
      await waitFor('the early read to run', () => w.answered > ran);
      const client = await b.pool.connect();
      try {
        await client.query('BEGIN');
        await other.tick(client);
        await client.query('COMMIT');
      } finally {
        client.release();
      }
      const late = queue.fresh();
      release();
      const [before, after] = await Promise.all([early, late]);
      expect(counterOf(after)).toBe(counterOf(before) + 1);
    } finally {
      await a.close();
      await b.close();
    }
  });
});

const counterOf = (value: string) => Number(value.split('-')[1]);
