// Wires the job system into the app's services: Jobscope's own job kinds, the job system itself,
// their schedule once it has loaded what was kept, and the demo load. Registered in this order, so
// they stop in the reverse one: the demo first, the job system last (before the store closes).
import type { AppContext } from '../context.ts';
import type { Service } from '../lifecycle.ts';
import { registerBuiltins, scheduleBuiltins } from './builtin/index.ts';

export function registerJobServices(ctx: AppContext, log: { warn(obj: unknown, msg?: string): void }): void {
  const { jobs, demo, config, domain, events, services } = ctx;
  jobs.log = log;
  registerBuiltins(jobs, { config, domain });
  services.add(jobs);
  // Enqueueing before the start would load the same rows twice: the schedule starts after it.
  const schedule: Service = { name: 'job-schedule', start: () => scheduleBuiltins(jobs, { config, events, domain }), stop: () => undefined };
  services.add(schedule);
  services.add(demo);
}
