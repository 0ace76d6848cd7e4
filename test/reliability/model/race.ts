// A runner's final PUT and a cancel of the same running build, sent at once (in the PostgreSQL mode
// to two instances, as a runner and an admin reach different ones): exactly one may win. The PUT
// wins with 200 and the cancel gets 409; or the cancel wins with 200 and the PUT gets 404.
import assert from 'node:assert/strict';
import { checkTrace } from './checks.ts';
import type { Model } from './model.ts';
import { NotApplied, type Answer, type RealSystem } from './system.ts';
import { afterStep, body, pick, type Cmd } from './step.ts';

const settle = async (p: Promise<Answer>): Promise<Answer | 'not applied'> => {
  try {
    return await p;
  } catch (err) {
    if (err instanceof NotApplied) return 'not applied';
    throw err;
  }
};

export class RaceUpdateCancel implements Cmd {
  constructor(
    readonly build: number,
    readonly state: 'success' | 'failed',
    readonly other: number,
  ) {}
  check = (m: Readonly<Model>) => m.builds.some((b) => b.status === 'running' && m.runner(b.runnerId)?.deleted === false);
  async run(m: Model, r: RealSystem) {
    const b = pick(
      m.builds.filter((x) => x.status === 'running' && m.runner(x.runnerId)?.deleted === false),
      this.build,
    );
    const runner = m.runner(b.runnerId)!;
    const first = r.target;
    const second = pick(r.live(), this.other);
    // request() reads the target when it is called: each request goes to its own instance.
    const put = settle(r.runner('PUT', `/ci/api/v1/builds/${b.id}.json`, { token: runner.token, state: this.state }));
    r.target = second;
    const cancel = settle(r.admin('POST', `/api/v3/sim/builds/${b.id}/cancel`));
    r.target = first;
    const [p, c] = await Promise.all([put, cancel]);
    const what = `PUT state=${this.state} (instance ${first}) raced with a cancel (instance ${second}) of running build ${b.id}: PUT ${p === 'not applied' ? p : `${p.status} ${body(p)}`}, cancel ${c === 'not applied' ? c : `${c.status} ${body(c)}`}`;
    const putWon = p !== 'not applied' && p.status === 200;
    const cancelWon = c !== 'not applied' && c.status === 200;
    assert.ok(!(putWon && cancelWon), `${what}: both won`);
    if (putWon) {
      assert.ok(c === 'not applied' || c.status === 409, `${what}: the cancel lost, it must answer 409`);
      b.status = this.state;
    } else if (cancelWon) {
      assert.ok(p === 'not applied' || p.status === 404, `${what}: the PUT lost, it must answer 404`);
      b.status = 'canceled';
    } else assert.ok(p === 'not applied' && c === 'not applied', `${what}: neither won`);
    if (putWon || cancelWon) await checkTrace(r, b);
    await afterStep(m, r, b);
  }
  toString = () => `RaceUpdateCancel(build#${this.build}, ${this.state}, other#${this.other})`;
}
