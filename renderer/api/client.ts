// The one typed client for every backend call the renderer makes. Types come from the server's
// contract (types only: nothing from server/ ends up in the bundle). Every call sends PRIVATE-TOKEN;
// remote GitLab instances are reached through the backend, so their tokens never come here.
import type { Alert, AppStatus, ConnectionPatch, ConnectionView, CurrentSample, History, HistoryQuery, NewConnection, TestResult, Thresholds } from '../../server/contract/app.ts';
import type { CompoundMetrics } from '../../server/contract/metrics.ts';
import type { BuildQuery, BuildView, InstanceView, ProjectView, RunnerView } from '../../server/contract/control.ts';
import type { DeletedQueue } from '../../server/contract/jobs.ts';

export type { Alert, AppStatus, ConnectionView, CurrentSample, History, NewConnection, TestResult, Thresholds, CompoundMetrics, BuildView, ProjectView, RunnerView, InstanceView };

export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

export interface TraceChunk {
  status: number; // 200 or 206; 416 when the offset is past the end (the trace was reset)
  bytes: Uint8Array;
  length: number | null; // the whole trace's length, from Content-Range
  buildStatus: string | null;
}

type Query = Record<string, string | number | boolean | undefined | null>;

function qs(q: Query = {}): string {
  const p = new URLSearchParams();
  for (const [k, v] of Object.entries(q)) if (v !== undefined && v !== null && v !== '') p.set(k, String(v));
  const s = p.toString();
  return s ? `?${s}` : '';
}

export class Client {
  /** Called on any 401, so the shell can ask for the token again. */
  onUnauthorized: (() => void) | undefined;

  constructor(
    readonly baseUrl: string,
    readonly token: string,
  ) {}

  private async raw(method: string, path: string, init: { body?: unknown; headers?: Record<string, string> } = {}): Promise<Response> {
    const headers: Record<string, string> = { 'PRIVATE-TOKEN': this.token, ...init.headers };
    let body: BodyInit | undefined;
    if (init.body !== undefined) {
      headers['Content-Type'] = 'application/json';
      body = JSON.stringify(init.body);
    }
    let res: Response;
    try {
      res = await fetch(this.baseUrl + path, { method, headers, body });
    } catch (e) {
      throw new ApiError(0, `The Jobscope backend did not answer (${(e as Error).message}). Is it still running?`);
    }
    if (res.status === 401) this.onUnauthorized?.();
    return res;
  }

  private async json<T>(method: string, path: string, body?: unknown): Promise<T> {
    const res = await this.raw(method, path, { body });
    const text = await res.text();
    let parsed: unknown = undefined;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      /* not JSON: reported below when the status is an error */
    }
    if (!res.ok) {
      const msg = (parsed as { message?: unknown } | undefined)?.message;
      throw new ApiError(res.status, typeof msg === 'string' ? msg : `${method} ${path}: HTTP ${res.status}`);
    }
    return parsed as T;
  }

  // --- app API: connections, history, thresholds, alerts
  status = () => this.json<AppStatus>('GET', '/api/app/status');
  connections = () => this.json<ConnectionView[]>('GET', '/api/app/connections');
  createConnection = (c: NewConnection) => this.json<ConnectionView>('POST', '/api/app/connections', c);
  patchConnection = (id: string, p: ConnectionPatch) => this.json<ConnectionView>('PATCH', `/api/app/connections/${encodeURIComponent(id)}`, p);
  deleteConnection = (id: string) => this.json<unknown>('DELETE', `/api/app/connections/${encodeURIComponent(id)}`);
  testConnection = (id: string) => this.json<TestResult>('POST', `/api/app/connections/${encodeURIComponent(id)}/test`);
  testNewConnection = (c: NewConnection) => this.json<TestResult>('POST', '/api/app/connections/test', c);
  /** The latest good sample; null before the first one (the server answers 404 then). */
  current = (id: string) =>
    this.json<CurrentSample>('GET', `/api/app/connections/${encodeURIComponent(id)}/current`).catch((e: unknown) => {
      if (e instanceof ApiError && e.status === 404 && /no sample yet/i.test(e.message)) return null;
      throw e;
    });
  history = (id: string, q: HistoryQuery) => this.json<History>('GET', `/api/app/connections/${encodeURIComponent(id)}/history${qs(q)}`);
  thresholds = (id: string) => this.json<Thresholds>('GET', `/api/app/connections/${encodeURIComponent(id)}/thresholds`);
  putThresholds = (id: string, t: Thresholds) => this.json<Thresholds>('PUT', `/api/app/connections/${encodeURIComponent(id)}/thresholds`, t);
  /** One page (the server's cap: 500) of alerts with an id above `since`, oldest first. */
  alerts = (since?: number, connectionId?: string) => this.json<Alert[]>('GET', `/api/app/alerts${qs({ since, connection_id: connectionId })}`);

  /** Every alert with an id above `since`, paging through the server's 500-per-answer cap. */
  async alertsAfter(since?: number, connectionId?: string): Promise<Alert[]> {
    const out: Alert[] = [];
    let cursor = since;
    for (let page = 0; page < 40; page++) {
      const got = await this.alerts(cursor, connectionId);
      out.push(...got);
      if (got.length < 500) break;
      cursor = got[got.length - 1]!.id;
    }
    return out;
  }

  async exportCsv(id: string, from: number, to: number): Promise<Blob> {
    const res = await this.raw('GET', `/api/app/connections/${encodeURIComponent(id)}/export.csv${qs({ from, to })}`);
    if (!res.ok) throw new ApiError(res.status, `Export failed: HTTP ${res.status}`);
    return res.blob();
  }

  // --- control API: the embedded instance's builds, projects, runners
  instance = () => this.json<InstanceView>('GET', '/api/v3/sim/instance');
  projects = () => this.json<ProjectView[]>('GET', '/api/v3/sim/projects');
  runners = () => this.json<RunnerView[]>('GET', '/api/v3/sim/runners');
  builds = (q: BuildQuery = {}) => this.json<BuildView[]>('GET', `/api/v3/sim/builds${qs(q as Query)}`);
  build = (id: number) => this.json<BuildView>('GET', `/api/v3/sim/builds/${id}`);
  cancelBuild = (id: number) => this.json<BuildView>('POST', `/api/v3/sim/builds/${id}/cancel`);
  /** Deletes one of the embedded job system's queues with its waiting jobs (built-in ones answer 409). */
  deleteQueue = (name: string) => this.json<DeletedQueue>('DELETE', `/api/v3/sim/jobs/queues/${encodeURIComponent(name)}`);

  /** The trace from byte `offset` on (`Range: bytes=N-` → 206), for live tailing. */
  async traceFrom(id: number, offset: number): Promise<TraceChunk> {
    const res = await this.raw('GET', `/api/v3/sim/builds/${id}/trace`, { headers: { Range: `bytes=${offset}-` } });
    const cr = res.headers.get('Content-Range') ?? '';
    const total = /\/(\d+)$/.exec(cr);
    if (res.status === 416) return { status: 416, bytes: new Uint8Array(), length: total ? Number(total[1]) : null, buildStatus: res.headers.get('Build-Status') };
    if (!res.ok) throw new ApiError(res.status, `Trace of build ${id}: HTTP ${res.status}`);
    const bytes = new Uint8Array(await res.arrayBuffer());
    return { status: res.status, bytes, length: total ? Number(total[1]) : offset + bytes.length, buildStatus: res.headers.get('Build-Status') };
  }

  /** The artifacts archive, fetched with the token (a plain link could not carry the header). */
  async artifacts(id: number): Promise<{ blob: Blob; filename: string }> {
    const res = await this.raw('GET', `/api/v3/sim/builds/${id}/artifacts`);
    if (!res.ok) {
      let msg = `HTTP ${res.status}`;
      try {
        msg = ((await res.json()) as { message?: string }).message ?? msg;
      } catch {
        /* keep the status */
      }
      throw new ApiError(res.status, `Artifacts of build ${id}: ${msg}`);
    }
    const cd = res.headers.get('Content-Disposition') ?? '';
    const m = /filename\*?=(?:UTF-8'')?"?([^";]+)"?/i.exec(cd);
    // A plain file name only: the header is the server's word, and a save dialog must not get a path.
    let name = '';
    try {
      name = m ? decodeURIComponent(m[1]!) : '';
    } catch {
      name = '';
    }
    name = (name.split(/[\\/]/).pop() ?? '').replace(/[\u0000-\u001f\u007f]/g, '').replace(/^\.+/, '').slice(0, 200);
    return { blob: await res.blob(), filename: name || `build-${id}-artifacts.zip` };
  }
}
