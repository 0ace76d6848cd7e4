// The runners this instance read lately, by token, for polls only (RunnersDomain.byTokenForPoll).
//
// Why: a poll was two round trips to the cluster, the runner's token lookup and then the poll
// statement (take.ts), and each is a query's work in pg, a socket write on each side and a
// backend's parse, bind and commit; the lookup was about a third of a poll's server CPU. A runner
// polls every few seconds for as long as it runs, so the row it reads is nearly always the one it
// read last time. What a cached row could get wrong, the poll statement checks against the row as
// committed when it starts (active, shared, project, tags, run_untagged; the id stands for the
// token, which never changes, and ids are never reused): a runner paused,
// deleted or edited on any instance takes nothing, writes nothing, and comes back as not ok; the
// caller then reads the runner again and answers from what it read (403, 404, or the poll).
// Only active runners are kept (a paused one is answered 404 without a poll, so nothing would
// check it), only polls use it (an update or a delete reads the row), and a poll that does not take
// reads the row as before: nothing in it would check a cached runner.
import type { Runner } from '../ports/runner.ts';
import { tokenDigestHex } from '../../auth/tokens.ts';

export class RunnerCache {
  private readonly byDigest = new Map<string, Runner>();
  private readonly kept = new WeakSet<Runner>();

  constructor(private readonly max = 4096) {}

  get(token: string): Runner | undefined {
    return this.byDigest.get(tokenDigestHex(token));
  }

  /** Keeps the runner just read for `token` (or forgets the token's entry when it is not active). */
  remember(token: string, runner: Runner | undefined): void {
    const key = tokenDigestHex(token);
    this.byDigest.delete(key);
    if (!runner?.active) return;
    if (this.byDigest.size >= this.max) this.byDigest.delete(this.byDigest.keys().next().value as string);
    this.byDigest.set(key, runner);
    this.kept.add(runner);
  }

  /** Whether the cache keeps this runner object (so it may be older than the request holding it). */
  has(runner: Runner): boolean {
    return this.kept.has(runner);
  }

  forget(runner: Runner): void {
    const key = tokenDigestHex(runner.token);
    if (this.byDigest.get(key) === runner) this.byDigest.delete(key);
  }
}
