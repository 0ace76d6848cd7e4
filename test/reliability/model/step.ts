// What every step of the model-based test shares: picking an entity by a random number, a short
// answer body for messages, and the checks that follow each step.
import type fc from 'fast-check';
import type { Model, MBuild } from './model.ts';
import { checkBuild, checkRoute, cheapRoutes } from './checks.ts';
import type { Answer, RealSystem } from './system.ts';

export type Cmd = fc.AsyncCommand<Model, RealSystem> & {
  /** false: not run while a fault is in force (it needs a healthy system, as a restart does). */
  duringFault?: boolean;
  /** Widens the model for this step run with an unknown outcome (outage.ts's reconcile has read the entities). */
  unknownOutcome?(m: Model): void;
};
export const pick = <T>(xs: readonly T[], n: number): T => xs[n % xs.length]!;
export const body = (r: Answer) => r.body.subarray(0, 300).toString('utf8');

/** After every step: the build it touched (when it touched one) and the next route of the sweep. */
export async function afterStep(model: Model, real: RealSystem, b?: MBuild): Promise<void> {
  model.steps++;
  if (b) await checkBuild(model, real, b);
  const routes = cheapRoutes(model);
  await checkRoute(real, routes[model.steps % routes.length]!);
}

/** A 4xx must say why: a JSON {message}. */
export function assertMessage(r: Answer, what: string): void {
  let message: unknown;
  try {
    message = r.json().message;
  } catch {
    message = undefined;
  }
  if (typeof message !== 'string' || message === '') throw new Error(`${what}: ${r.status} without a JSON message: ${body(r)}`);
}
