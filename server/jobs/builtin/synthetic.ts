// Synthetic work: sleeps for `duration_ms`, then fails when `fail` is set. What `POST
// /api/v3/sim/jobs` and the demo load enqueue, so their jobs go through the real queue machinery.
import type { JobKind } from '../types.ts';

export const SYNTHETIC = 'synthetic';

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(new Error('aborted: the server is stopping'));
    const t = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(t);
      reject(new Error('aborted: the server is stopping'));
    };
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

export const syntheticJob: JobKind = {
  class: 'SyntheticJob',
  queue: 'default',
  retry: 25, // Sidekiq's default
  declare: false,
  async perform(args, { signal }) {
    const ms = typeof args.duration_ms === 'number' && args.duration_ms > 0 ? args.duration_ms : 0;
    if (ms > 0) await sleep(ms, signal);
    if (args.fail === true) throw new Error('SyntheticJob failed on purpose (fail: true)');
  },
};
