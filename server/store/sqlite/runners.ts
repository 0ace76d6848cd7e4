import type { Db } from './db.ts';
import { digest, newToken, tokenDigestHex } from '../../auth/tokens.ts';
import { isArray, isPlainObject, storedJson, storedTimeOr0 } from '../rows/row-values.ts';
import { storedTime } from '../../util/times.ts';
import { CONTACT_WRITE_MS, type NewRunner, type Runner, type RunnerInfo } from '../ports/runner.ts';

interface RunnerRow {
  id: number;
  token: string;
  description: string;
  is_shared: number;
  project_id: number | null;
  active: number;
  run_untagged: number;
  locked: number;
  tag_list: string;
  info: string;
  online: number;
  contacted_at: number | null;
  created_at: number;
}

const toRunner = (r: RunnerRow): Runner => ({
  id: r.id,
  token: r.token,
  description: r.description,
  is_shared: r.is_shared === 1,
  project_id: r.project_id,
  active: r.active === 1,
  run_untagged: r.run_untagged === 1,
  locked: r.locked === 1,
  tag_list: storedJson(r.tag_list, [], isArray).filter((t): t is string => typeof t === 'string'),
  info: storedJson(r.info, {}, isPlainObject) as RunnerInfo,
  online: r.online === 1,
  contacted_at: storedTime(r.contacted_at),
  created_at: storedTimeOr0(r.created_at),
});

/**
 * Whether merging `sent` into `stored` changes what is stored. Values are the strings pickInfo keeps;
 * anything else that is not the same value counts as a change (a write too many, never one too few).
 * An undefined value is dropped by JSON as a missing key is, so it changes only a key that was set.
 */
function infoDiffers(stored: RunnerInfo, sent: RunnerInfo): boolean {
  for (const key in sent) {
    if (!Object.hasOwn(sent, key)) continue;
    const v = sent[key];
    if (v === undefined ? stored[key] !== undefined : stored[key] !== v) return true;
  }
  return false;
}

/** How many runners' rows stay cached by token digest (a fleet polls with the same tokens over and over). */
const CACHE_MAX = 10_000;

export class Runners {
  /**
   * Runners by token digest. Every poll authenticates its runner; reading and decoding the row each
   * time cost more than the rest of a poll that finds nothing to do. This class is the only writer of
   * the runners table, so each write below keeps the cache true (or drops it). Only tokens that
   * matched a row are cached: unknown tokens cannot fill it.
   */
  private readonly cache = new Map<string, Runner>();
  private readonly shaOf = new WeakMap<Runner, string>();

  constructor(private readonly db: Db) {
    // A rolled-back touch leaves a cached runner saying it was written when the database says not.
    db.onRollback(() => this.forgetCached());
  }

  /** Drops every cached runner. */
  forgetCached(): void {
    this.cache.clear();
  }

  create(input: NewRunner): Runner {
    const token = newToken();
    const now = Date.now();
    const { lastInsertRowid } = this.db.run(
      `INSERT INTO runners (token, token_sha, description, is_shared, project_id, active, run_untagged, locked, tag_list, info, online, contacted_at, created_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 1, ?, ?)`,
      [
        token, digest(token), input.description, input.is_shared ? 1 : 0, input.project_id, input.active === false ? 0 : 1,
        input.run_untagged ? 1 : 0, input.locked ? 1 : 0, JSON.stringify(input.tag_list), JSON.stringify(input.info), now, now,
      ],
    );
    return this.byId(lastInsertRowid)!;
  }

  byId(id: number): Runner | undefined {
    const r = this.db.get<RunnerRow>('SELECT * FROM runners WHERE id = ?', [id]);
    return r && toRunner(r);
  }

  /** The runner with this token; the object is shared with other requests of the same runner (touch keeps it current). */
  byToken(token: string): Runner | undefined {
    // digest() of auth/tokens.ts, hashed once per token string (not per poll).
    const sha = tokenDigestHex(token);
    const cached = this.cache.get(sha);
    if (cached) return cached;
    const r = this.db.get<RunnerRow>('SELECT * FROM runners WHERE token_sha = ?', [sha]);
    if (!r) return undefined;
    const runner = toRunner(r);
    if (this.cache.size >= CACHE_MAX) this.cache.clear();
    this.cache.set(sha, runner);
    this.shaOf.set(runner, sha);
    return runner;
  }

  /** Whether this runner still exists and is active (it may have been paused or deleted since it was read). */
  stillActive(runner: Runner): boolean {
    const sha = this.shaOf.get(runner);
    if (sha !== undefined && this.cache.get(sha) === runner) return runner.active;
    return this.db.get<{ active: number }>('SELECT active FROM runners WHERE id = ?', [runner.id])?.active === 1;
  }

  /**
   * Records contact (and the runner's self-description, when sent): what `last_contact_at` shows.
   * Like GitLab's `update_runner?`, an unchanged runner is written at most every CONTACT_WRITE_MS:
   * a fleet polling in a loop would otherwise turn every poll into a database write.
   */
  touch(runner: Runner, info?: RunnerInfo): void {
    const now = Date.now();
    // A runner sends the same info with every poll: compared key by key (the merge changes nothing
    // unless a sent value differs), not by serialising both objects twice per poll.
    const infoChanged = info !== undefined && infoDiffers(runner.info, info);
    if (!infoChanged && runner.online && runner.contacted_at !== null && now - runner.contacted_at < CONTACT_WRITE_MS) return;
    if (infoChanged) {
      const merged = { ...runner.info, ...info };
      this.db.run('UPDATE runners SET contacted_at = ?, online = 1, info = ? WHERE id = ?', [now, JSON.stringify(merged), runner.id]);
      runner.info = merged;
    } else {
      this.db.run('UPDATE runners SET contacted_at = ?, online = 1 WHERE id = ?', [now, runner.id]);
    }
    runner.contacted_at = now;
    runner.online = true;
  }

  setActive(id: number, active: boolean): boolean {
    this.forgetCached();
    return this.db.run('UPDATE runners SET active = ? WHERE id = ?', [active ? 1 : 0, id]).changes === 1;
  }

  /** Marks runners silent since `before` as offline; returns how many changed. */
  markOffline(before: number): number {
    const changes = this.db.run('UPDATE runners SET online = 0 WHERE online = 1 AND (contacted_at IS NULL OR contacted_at < ?)', [before]).changes;
    if (changes > 0) this.forgetCached();
    return changes;
  }

  delete(id: number): boolean {
    this.forgetCached();
    return this.db.run('DELETE FROM runners WHERE id = ?', [id]).changes === 1;
  }

  list(): Runner[] {
    return this.db.all<RunnerRow>('SELECT * FROM runners ORDER BY id').map(toRunner);
  }

  /** Builds handed to each runner (any status), by runner id; runners with none are absent. Reads the builds_runner index only. */
  buildCounts(): Map<number, number> {
    const rows = this.db.all<{ runner_id: number; n: number }>('SELECT runner_id, count(*) AS n FROM builds WHERE runner_id IS NOT NULL GROUP BY runner_id');
    return new Map(rows.map((r) => [r.runner_id, r.n]));
  }

  /** Builds handed to one runner (any status). */
  buildCount(id: number): number {
    return this.db.get<{ n: number }>('SELECT count(*) AS n FROM builds WHERE runner_id = ?', [id])?.n ?? 0;
  }
}
