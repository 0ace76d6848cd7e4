// The Runners view's backend calls: pause/resume and delete a runner of the embedded server (the
// list and the instance's registration token are on the Client itself).
import type { RunnerView } from '../../contract/control.ts';
import type { Client } from './client.ts';

export const runnerAdmin = {
  /** A paused runner's polls answer 404 (GitLab), so it takes no build until resumed. */
  setActive: (c: Client, id: number, active: boolean) => c.json<RunnerView>('PATCH', `/api/v3/sim/runners/${id}`, { json: { active } }),
  /** The runner's token stops working: its next poll is 403 and it must register again. */
  remove: (c: Client, id: number) => c.json<unknown>('DELETE', `/api/v3/sim/runners/${id}`),
};
