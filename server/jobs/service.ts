// Starting and stopping the job system with the server: Jobscope's own jobs, their schedule,
// the demo load when asked for, and a clean stop before the store closes.
import type { AppContext } from '../context.ts';
import { registerBuiltins, scheduleBuiltins } from './builtin/index.ts';

export function startJobs(ctx: AppContext, log: { warn(obj: unknown, msg?: string): void }): void {
  const { jobs, config, store, events } = ctx;
  jobs.log = log;
  registerBuiltins(jobs, { config, store, events });
  jobs.start();
  scheduleBuiltins(jobs, { config, events, store });
  if (config.demo) jobs.demo.apply({});
  ctx.onClose(() => jobs.stop());
}
