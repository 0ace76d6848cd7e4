// Concurrency rules: a build is handed out exactly once however many polls arrive together,
// and rival trace parts for one offset leave exactly one winner and a clean chain of winners' bytes.
// Every request goes on its own connection, so the server really sees them at the same time. On both
// stores (backends.ts): on PostgreSQL the handout and the trace offset are decided by the database.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestServer } from '../helpers/server.ts';
import { createBuild, createProject, registerRunner } from '../helpers/fixtures.ts';
import { control, INFO, patchTrace, runnerJson, runningBuild } from './lib.ts';
import { seededRandom } from '../../common/prng.ts';
import { eachBackend } from './backends.ts';
import { doublePut, putAgainstCancel } from './finish-races.ts';

eachBackend((startServer) => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startServer();
  });
  afterAll(() => s.close());

  describe('builds/register under concurrent polls', () => {
    it('50 concurrent polls over 20 pending builds: each build handed out exactly once, 30 polls get none (3 rounds)', async () => {
      const runners = await Promise.all(Array.from({ length: 10 }, () => registerRunner(s)));
      for (let round = 0; round < 3; round++) {
        const project = await createProject(s, `race-${round}`);
        const created = ((await createBuild(s, project.id, { count: 20 })) as { ids: number[] }).ids;
        const answers = await Promise.all(
          Array.from({ length: 50 }, (_, i) => {
            const runner = runners[i % runners.length]!;
            return runnerJson(`${s.url}/ci/api/v1/builds/register.json`, 'POST', { info: INFO, token: runner.token }).then((r) => ({ r, runner }));
          }),
        );
        const won = answers.filter((a) => a.r.status === 201);
        const none = answers.filter((a) => a.r.status === 204);
        expect(won).toHaveLength(20);
        expect(none).toHaveLength(30);
        const ids = won.map((a) => a.r.json.id as number);
        expect(new Set(ids).size).toBe(20);
        expect([...ids].sort((a, b) => a - b)).toEqual([...created].sort((a, b) => a - b));
        // the store agrees: every build is running on exactly the runner that was told it has it
        const listed = (await control(s, `/builds?project_id=${project.id}`)).body as { id: number; status: string; runner_id: number }[];
        for (const a of won) {
          const b = listed.find((x) => x.id === a.r.json.id)!;
          expect(b.status).toBe('running');
          expect(b.runner_id).toBe(a.runner.id);
        }
      }
    });
  });

  describe('rival trace parts for one offset', () => {
    it('exactly one 202 per offset, the others 416 with the winner’s Range; the trace is the winners’ parts in order (3 builds × 8 rounds)', async () => {
      const random = seededRandom(20261121);
      for (let b = 0; b < 3; b++) {
        const { build, project } = await runningBuild(s, {}, `rivals-${b}`);
        const tokens = [build.token, project.runners_token, project.ci_token];
        const winners: Buffer[] = [];
        let length = 0;
        for (let round = 0; round < 8; round++) {
          const rivals = Array.from({ length: 6 }, (_, i) => {
            const size = 1 + Math.floor(random() * (random() < 0.2 ? 200_000 : 3000));
            const fill = `client${i}-round${round}-`.repeat(Math.ceil(size / 15)).slice(0, size);
            return Buffer.from(fill);
          });
          const answers = await Promise.all(
            rivals.map((body, i) => patchTrace(s, build.id, { token: tokens[i % tokens.length], range: `${length}-${length + body.length}`, body })),
          );
          const winnerIdx = answers.map((a, i) => (a.status === 202 ? i : -1)).filter((i) => i >= 0);
          expect(winnerIdx).toHaveLength(1);
          const w = winnerIdx[0]!;
          const newLength = length + rivals[w]!.length;
          expect(answers[w]!.headers.range).toBe(`0-${newLength}`);
          for (const [i, a] of answers.entries()) {
            if (i === w) continue;
            expect(a.status).toBe(416);
            expect(a.headers.range).toBe(`0-${newLength}`);
          }
          winners.push(rivals[w]!);
          length = newLength;
        }
        const stored = (await control(s, `/builds/${build.id}/trace`)).raw;
        expect(stored.length).toBe(length);
        expect(stored.equals(Buffer.concat(winners))).toBe(true);
      }
    });
  });

  describe('the final PUT racing another change of its build (finish-races.ts)', () => {
    it('PUT state=success against an admin cancel, 25 rounds: exactly one wins, the loser hears 404 / 409, the state is the winner’s', async () => {
      const wins = await putAgainstCancel([s], 25);
      expect(wins.put + wins.cancel).toBe(25);
    });

    it('two PUTs of one runner at once, 25 rounds: exactly one 200, the other 404 Not found', async () => {
      await doublePut([s], 25);
    });
  });
});
