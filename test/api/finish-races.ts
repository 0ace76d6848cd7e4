// The runner's final PUT racing another change of its build: an admin's cancel, or the runner's own
// second PUT (a retry after a lost answer). GitLab finds the build with `.running.find(id)` and
// changes it once, so exactly one side wins and the other hears what a build no longer running is
// answered: 404 `{"message":"404 Not found"}` for a PUT, 409 for a cancel. The requests of a round
// go to the servers given in turn (one server, or two instances on one database), each on its own
// connection, so the servers see them at the same time. Each PUT carries a full trace: the loser's
// must not be stored either (on PostgreSQL the trace and the state commit together or not at all).
import { expect } from 'vitest';
import type { TestServer } from '../helpers/server.ts';
import { createBuild, createProject, registerRunner } from '../helpers/fixtures.ts';
import { control, INFO, runnerJson, type RawRes } from './lib.ts';

const NOT_RUNNING = { message: '404 Not found' };

async function running(servers: TestServer[], name: string): Promise<{ id: number; runnerToken: string }> {
  const s = servers[0]!;
  const project = await createProject(s, name);
  const runner = await registerRunner(s, project.runners_token);
  await createBuild(s, project.id);
  const taken = await runnerJson(`${s.url}/ci/api/v1/builds/register.json`, 'POST', { token: runner.token, info: INFO });
  if (taken.status !== 201) throw new Error(`take build: ${taken.status}`);
  return { id: taken.json.id as number, runnerToken: runner.token };
}

const put = (s: TestServer, id: number, token: string, state: string): Promise<RawRes> =>
  runnerJson(`${s.url}/ci/api/v1/builds/${id}`, 'PUT', { token, state, trace: `finished ${state}\n`, info: INFO });

const statusOf = async (s: TestServer, id: number): Promise<string> => (await control(s, `/builds/${id}`)).body.status as string;
const traceOf = async (s: TestServer, id: number): Promise<string> => (await control(s, `/builds/${id}/trace`)).raw.toString();

/** `rounds` of PUT state=success against an admin cancel: exactly one wins; returns how often each did. */
export async function putAgainstCancel(servers: TestServer[], rounds: number): Promise<{ put: number; cancel: number }> {
  const wins = { put: 0, cancel: 0 };
  for (let round = 0; round < rounds; round++) {
    const { id, runnerToken } = await running(servers, `put-cancel-${round}`);
    const a = servers[round % servers.length]!;
    const b = servers[(round + 1) % servers.length]!;
    const [update, cancel] = await Promise.all([
      put(a, id, runnerToken, 'success'),
      runnerJson(`${b.url}/api/v3/sim/builds/${id}/cancel`, 'POST', {}, { 'private-token': b.adminToken }),
    ]);
    const final = await statusOf(a, id);
    if (update.status === 200) {
      expect(cancel.status, `round ${round}: the PUT won, the cancel must not`).toBe(409);
      expect(update.json.status).toBe('success');
      expect(final).toBe('success');
      expect(await traceOf(a, id)).toBe('finished success\n');
      wins.put++;
    } else {
      expect({ round, put: update.status, body: update.json }).toEqual({ round, put: 404, body: NOT_RUNNING });
      expect(cancel.status).toBe(200);
      expect(cancel.json.status).toBe('canceled');
      expect(final).toBe('canceled');
      // The PUT that lost stored nothing: neither its state nor its trace.
      expect({ round, trace: await traceOf(a, id) }).toEqual({ round, trace: '' });
      wins.cancel++;
    }
  }
  return wins;
}

/** `rounds` of two PUTs (success and failed) of one runner at once: exactly one 200, the other 404, the state the winner's. */
export async function doublePut(servers: TestServer[], rounds: number): Promise<void> {
  for (let round = 0; round < rounds; round++) {
    const { id, runnerToken } = await running(servers, `double-put-${round}`);
    const states = ['success', 'failed'] as const;
    const answers = await Promise.all(states.map((state, i) => put(servers[(round + i) % servers.length]!, id, runnerToken, state)));
    const won = answers.flatMap((r, i) => (r.status === 200 ? [states[i]!] : []));
    expect({ round, won: won.length }).toEqual({ round, won: 1 });
    const lost = answers.find((r) => r.status !== 200)!;
    expect({ status: lost.status, body: lost.json }).toEqual({ status: 404, body: NOT_RUNNING });
    expect(await statusOf(servers[0]!, id)).toBe(won[0]);
    // The trace is the winner's: the loser's PUT, answered 404, left nothing of its own.
    expect({ round, trace: await traceOf(servers[0]!, id) }).toEqual({ round, trace: `finished ${won[0]}\n` });
  }
}
