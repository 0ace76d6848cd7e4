// Two real `sidekiq` processes on one Redis, the first quieted with TSTP (as Sidekiq Web's Quiet
// button does through its signal list): tag "to-quiet" (3 threads) and tag "working" (2 threads).
import type { ChildProcess } from 'node:child_process';
import { sidekiqView, startSidekiqApp } from './sidekiq-oracle.ts';
import { waitFor } from './wait.ts';

export async function startQuietPair(redisUrl: string, started: ChildProcess[]): Promise<{ quiet: ChildProcess; working: ChildProcess }> {
  const quiet = startSidekiqApp(redisUrl, ['-q', 'a', '-c', '3', '-g', 'to-quiet']);
  const working = startSidekiqApp(redisUrl, ['-q', 'b', '-c', '2', '-g', 'working']);
  started.push(quiet, working);
  await waitFor('both processes listed', async () => ((await sidekiqView(redisUrl)).processes.length === 2 ? true : undefined), 30_000, 50);
  quiet.kill('SIGTSTP');
  await waitFor('the process to report quiet', async () => ((await sidekiqView(redisUrl)).processes.find((p) => p.tag === 'to-quiet')?.quiet ? true : undefined), 30_000, 50);
  return { quiet, working };
}
