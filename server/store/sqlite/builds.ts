import type { Db } from './db.ts';
import type { Runner } from '../ports/runner.ts';
import { digest, newToken } from '../../auth/tokens.ts';
import { MAX_JSON_DEPTH, jsonNestedDeeperThan } from '../../util/json-depth.ts';
import { isArray, isId, isPlainObject, storedInt, storedJson, storedTimeOr0 } from '../rows/row-values.ts';
import { storedTime } from '../../util/times.ts';
import type { Build, BuildCredentials, BuildFilter, NewBuild } from '../ports/build.ts';
import { listLimit, runnerMatches } from '../ports/build.ts';
import { isString, isVariable } from '../rows/row-values.ts';

type BuildRow = Omit<Build, 'tag' | 'variables' | 'options' | 'tag_list' | 'depends_on'> & {
  tag: number;
  variables: string;
  options: string;
  tag_list: string;
  depends_on: string;
  /** Emptied by migration 5 and never written since: listings live in artifact_listings. */
  artifacts_listing: string | null;
};

// Every dispatch reads a row (a tag list per pending row it looks at, the whole build it hands out),
// and most rows hold empty lists and options: those are read without parsing or walking them.
const listOf = <T>(text: unknown, keep: (v: unknown) => v is T): T[] => (text === '[]' ? [] : storedJson(text, [], isArray).filter(keep));
const tagListOf = (text: unknown): string[] => listOf(text, isString);

/** Options nested past the request bound (an older version stored them) would overflow whoever answers them: read as {}. */
function optionsOf(text: unknown): Record<string, unknown> {
  if (text === '{}' || typeof text !== 'string') return {};
  const options = storedJson(text, {}, isPlainObject);
  return jsonNestedDeeperThan(text, options, MAX_JSON_DEPTH) ? {} : options;
}

// Every column through row-values.ts: a row an older version stored out of range reads clamped, not as a throw.
const toBuild = (r: BuildRow): Build => ({
  ...r,
  id: storedInt(r.id) ?? 0,
  project_id: storedInt(r.project_id) ?? 0,
  runner_id: storedInt(r.runner_id),
  tag: r.tag === 1,
  variables: listOf(r.variables, isVariable),
  options: optionsOf(r.options),
  timeout: storedInt(r.timeout, 1, 2 ** 31 - 1),
  tag_list: tagListOf(r.tag_list),
  depends_on: listOf(r.depends_on, isId),
  artifacts_size: storedInt(r.artifacts_size, 0),
  artifacts_expire_at: storedTime(r.artifacts_expire_at),
  created_at: storedTimeOr0(r.created_at),
  started_at: storedTime(r.started_at),
  finished_at: storedTime(r.finished_at),
});

/** How many builds' credentials stay cached (one per build that is streaming its trace). */
const CREDENTIALS_CACHE_MAX = 4096;

export class Builds {
  /**
   * credentials() by build id. Every trace part authenticates its build; the row read was a fifth of
   * the part's cost. What it holds never changes except the status, and only this class writes
   * builds: each status change below drops the build's entry, and a rolled-back transaction drops all.
   */
  private readonly credentialsCache = new Map<number, BuildCredentials>();

  /**
   * The shared runners' project order when it named one project or none, kept until the end of the
   * transaction that read it. A dispatch batch takes for every poll of an event-loop turn in one
   * transaction (domain/dispatch-batch.ts), and inside one that order can only lose projects: a take,
   * a cancel or a delete ends pending builds, and only create() makes one (it drops what is kept). A
   * project kept after its last pending build was taken costs one empty scan, with the answer the
   * read would have given. With two projects or more the order moves with every take, so it is read
   * each time. Kept for the figures: CPU a poll in the store 27.0–30.0 µs (median 28.0) against
   * 28.3–33.0 (31.3) without, six alternating runs of bench/experiments/dispatch-store.ts (20 polls a
   * transaction, N=20000, load ~10); about 1 % of a poll over HTTP, below what the end-to-end A/B resolves.
   */
  private sharedOrder: { tx: number; ids: number[] } | undefined;

  constructor(private readonly db: Db) {
    db.onRollback(() => this.credentialsCache.clear());
  }

  create(input: NewBuild): Build {
    this.sharedOrder = undefined;
    const token = newToken();
    const { lastInsertRowid } = this.db.run(
      `INSERT INTO builds (project_id, status, name, stage, ref, sha, before_sha, tag, commands, repo_url, variables, options, timeout,
                           tag_list, depends_on, token, token_sha, created_at)
       VALUES (?, 'pending', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      [
        input.project_id, input.name, input.stage, input.ref, input.sha, input.before_sha, input.tag ? 1 : 0, input.commands,
        input.repo_url, JSON.stringify(input.variables), JSON.stringify(input.options), input.timeout, JSON.stringify(input.tag_list),
        JSON.stringify(input.depends_on), token, digest(token), Date.now(),
      ],
    );
    return this.byId(lastInsertRowid)!;
  }

  /** All or none only inside a transaction (the domain's unit): each row is its own insert. */
  createMany(input: NewBuild, count: number): Build[] {
    return Array.from({ length: count }, () => this.create(input));
  }

  byId(id: number): Build | undefined {
    const r = this.db.get<BuildRow>('SELECT * FROM builds WHERE id = ?', [id]);
    return r && toBuild(r);
  }

  /**
   * What the build-token endpoints need, in one indexed read: the status and the digests of the
   * three tokens that count as this build's token. The trace hot path reads nothing else.
   */
  credentials(id: number): BuildCredentials | undefined {
    const cached = this.credentialsCache.get(id);
    if (cached) return cached;
    const cred = this.db.get<BuildCredentials>(
      `SELECT b.id, b.project_id, b.status, b.token_sha, p.runners_token_sha, p.ci_token_sha
       FROM builds b JOIN projects p ON p.id = b.project_id WHERE b.id = ?`,
      [id],
    );
    if (!cred) return undefined;
    if (this.credentialsCache.size >= CREDENTIALS_CACHE_MAX) this.credentialsCache.delete(this.credentialsCache.keys().next().value!);
    this.credentialsCache.set(id, cred);
    return cred;
  }

  byToken(token: string): Build | undefined {
    const r = this.db.get<BuildRow>('SELECT * FROM builds WHERE token_sha = ?', [digest(token)]);
    return r && toBuild(r);
  }

  byIds(ids: number[]): Build[] {
    return ids.map((id) => this.byId(id)).filter((b): b is Build => b !== undefined);
  }

  /**
   * Hands the oldest pending build this runner may take to it, or returns undefined.
   * One synchronous transaction: no other request can run between the select and the update,
   * so a build is handed out exactly once however many polls arrive together.
   */
  take(runner: Runner): Build | undefined {
    return this.db.tx(() => {
      for (const projectId of this.projectsInDispatchOrder(runner)) {
        for (const row of this.db.iterate<BuildRow>(`SELECT * FROM builds WHERE project_id = ? AND status = 'pending' ORDER BY id`, [projectId])) {
          if (!runnerMatches(runner, { tag_list: tagListOf(row.tag_list) })) continue;
          const now = Date.now();
          const { changes } = this.db.run(`UPDATE builds SET status = 'running', runner_id = ?, started_at = ? WHERE id = ? AND status = 'pending'`, [
            runner.id, now, row.id,
          ]);
          if (changes !== 1) return undefined;
          this.credentialsCache.delete(row.id);
          return toBuild({ ...row, status: 'running', runner_id: runner.id, started_at: now });
        }
      }
      return undefined;
    });
  }

  /**
   * The projects whose pending builds this runner may take, in the order it should look at them.
   * A project runner sees its own project. Shared runners schedule fairly, as GitLab's
   * RegisterBuildService did: projects with the fewest builds running on shared runners first, then
   * the one whose oldest pending build is oldest. Each figure is one index lookup per project, so a
   * poll costs the same over 10 or 10,000 pending builds (sorting all pending builds per poll did not).
   */
  private projectsInDispatchOrder(runner: Runner): number[] {
    if (!runner.is_shared) return runner.project_id === null ? [] : [runner.project_id];
    const tx = this.db.txSerial;
    if (this.sharedOrder?.tx === tx) return this.sharedOrder.ids;
    const waiting = this.db.all<{ id: number; oldest: number | null }>(
      `SELECT p.id, (SELECT min(b.id) FROM builds b WHERE b.project_id = p.id AND b.status = 'pending') AS oldest
       FROM projects p WHERE p.shared_runners_enabled = 1`,
    );
    const candidates = waiting.filter((p) => p.oldest !== null);
    // Counting running builds costs a scan of them: only worth it when projects compete.
    if (candidates.length <= 1) {
      this.sharedOrder = { tx, ids: candidates.map((p) => p.id) };
      return this.sharedOrder.ids;
    }
    const running = new Map(
      this.db
        .all<{ project_id: number; n: number }>(
          `SELECT rb.project_id, count(*) AS n FROM builds rb JOIN runners r ON r.id = rb.runner_id
           WHERE rb.status = 'running' AND r.is_shared = 1 GROUP BY rb.project_id`,
        )
        .map((r) => [r.project_id, r.n]),
    );
    return candidates
      .sort((a, b) => (running.get(a.id) ?? 0) - (running.get(b.id) ?? 0) || a.oldest! - b.oldest!)
      .map((p) => p.id);
  }

  /** running → success|failed; returns false when the build was not running. */
  finish(id: number, status: 'success' | 'failed'): boolean {
    this.credentialsCache.delete(id);
    return this.db.run(`UPDATE builds SET status = ?, finished_at = ? WHERE id = ? AND status = 'running'`, [status, Date.now(), id]).changes === 1;
  }

  cancel(id: number): boolean {
    this.credentialsCache.delete(id);
    return (
      this.db.run(`UPDATE builds SET status = 'canceled', finished_at = ? WHERE id = ? AND status IN ('pending', 'running')`, [Date.now(), id])
        .changes === 1
    );
  }

  /** Running builds whose started_at + timeout is before `now` (project timeout when the build has none). */
  stuck(now: number): Build[] {
    return this.db
      .all<BuildRow>(
        `SELECT b.* FROM builds b JOIN projects p ON p.id = b.project_id
         WHERE b.status = 'running' AND b.started_at + COALESCE(b.timeout, p.build_timeout) * 1000 < ?`,
        [now],
      )
      .map(toBuild);
  }

  setArtifacts(id: number, a: { key: string; filename: string; size: number; expire_at: number | null }): void {
    this.db.run(
      'UPDATE builds SET artifacts_key = ?, artifacts_filename = ?, artifacts_size = ?, artifacts_expire_at = ?, artifacts_listing = NULL WHERE id = ?',
      [a.key, a.filename, a.size, a.expire_at, id],
    );
  }

  clearArtifacts(id: number): void {
    this.db.run(
      'UPDATE builds SET artifacts_key = NULL, artifacts_filename = NULL, artifacts_size = NULL, artifacts_expire_at = NULL, artifacts_listing = NULL WHERE id = ?',
      [id],
    );
  }

  expiredArtifacts(now: number): Build[] {
    return this.db
      .all<BuildRow>('SELECT * FROM builds WHERE artifacts_key IS NOT NULL AND artifacts_expire_at IS NOT NULL AND artifacts_expire_at <= ?', [now])
      .map(toBuild);
  }

  artifactKeys(): Set<string> {
    return new Set(this.db.all<{ k: string }>('SELECT artifacts_key AS k FROM builds WHERE artifacts_key IS NOT NULL').map((r) => r.k));
  }

  list(f: BuildFilter = {}): Build[] {
    const where: string[] = [];
    const params: (string | number)[] = [];
    const filter = (sql: string, value: string | number) => {
      where.push(sql);
      params.push(value);
    };
    if (f.status) filter('status = ?', f.status);
    if (f.project_id !== undefined) filter('project_id = ?', f.project_id);
    if (f.runner_id !== undefined) filter('runner_id = ?', f.runner_id);
    if (f.before_id !== undefined) filter('id < ?', f.before_id);
    params.push(listLimit(f));
    const sql = `SELECT * FROM builds ${where.length ? 'WHERE ' + where.join(' AND ') : ''} ORDER BY id DESC LIMIT ?`;
    return this.db.all<BuildRow>(sql, params).map(toBuild);
  }

  countByStatus(): Record<string, number> {
    const out: Record<string, number> = {};
    for (const r of this.db.all<{ status: string; n: number }>('SELECT status, count(*) AS n FROM builds GROUP BY status')) out[r.status] = r.n;
    return out;
  }
}
