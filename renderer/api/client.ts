// The one typed client for every backend call the renderer makes, on axios (http.ts holds the
// interceptors: token, 401, error messages). Types come from the server's contract (types only:
// nothing from server/ ends up in the bundle). Remote GitLab instances are reached through the
// backend, so their tokens never come here. simulator.ts and settings.ts group more typed calls
// over the same Client.
import type { AxiosInstance, AxiosResponse, Method } from 'axios';
import type { Alert, AlertBoard, AppStatus, ConnectionPatch, ConnectionView, CurrentSample, History, HistoryQuery, NewConnection, TestResult, Thresholds } from '../../contract/app.ts';
import type { CompoundMetrics } from '../../contract/metrics.ts';
import type { BuildQuery, BuildView, CreatedBuilds, InstanceView, NewBuild, NewProject, ProjectView, RunnerView } from '../../contract/control.ts';
import type { DeletedQueue } from '../../contract/jobs.ts';
import type { NewSidekiqConnection, PeekPage, SidekiqFields } from '../../contract/sidekiq.ts';
import type { RedisFacts } from '../../contract/redis-facts.ts';
import type { BusyJob, BusyPage } from '../../contract/busy.ts';
import { ApiError, createHttp, type Query } from './http.ts';
import { filenameOf } from './filename.ts';

export { ApiError };
export type { Query };
export type { Alert, AlertBoard, AppStatus, ConnectionView, CurrentSample, History, NewConnection, TestResult, Thresholds, CompoundMetrics, BuildView, ProjectView, RunnerView, InstanceView };
export type { NewSidekiqConnection, PeekPage, RedisFacts };
export type { BusyJob, BusyPage };
export type { NewBuild, NewProject, CreatedBuilds };
/** A PATCH of any connection: a GitLab's fields, or a sidekiq connection's (the route takes both shapes). */
export type AnyConnectionPatch = ConnectionPatch & Partial<SidekiqFields>;

export interface TraceChunk {
  status: number; // 200 or 206; 416 when the offset is past the end (the trace was reset)
  bytes: Uint8Array;
  length: number | null; // the whole trace's length, from Content-Range
  buildStatus: string | null;
}

/** One page of a list the control API pages as GitLab does (`page`, `per_page`; the X-Total header). */
export interface Page<T> {
  items: T[];
  total: number;
  page: number;
  perPage: number;
}

export interface RequestOpts {
  json?: unknown;
  form?: FormData; // sent as multipart, the boundary written by fetch
  query?: Query;
}

export class Client {
  /** Called on any 401, so the shell can ask for the token again. */
  onUnauthorized: (() => void) | undefined;

  private readonly http: AxiosInstance;

  constructor(
    readonly baseUrl: string,
    readonly token: string,
  ) {
    this.http = createHttp({ baseUrl, token, onUnauthorized: () => this.onUnauthorized?.() });
  }

  /** A JSON call: the answer's body typed as T (undefined for an empty one). */
  async json<T>(method: Method, path: string, opts: RequestOpts = {}): Promise<T> {
    const res = await this.http.request<T>({ method, url: path, params: opts.query, data: opts.form ?? opts.json });
    return (res.data === '' ? undefined : res.data) as T;
  }

  /** One page of a paged list: the rows and the total from X-Total (the rows' count when absent). */
  async page<T>(path: string, page: number, perPage: number): Promise<Page<T>> {
    const res = await this.http.get<T[]>(path, { params: { page, per_page: perPage } });
    const total = Number(header(res, 'x-total'));
    return { items: res.data, total: Number.isFinite(total) && header(res, 'x-total') ? total : res.data.length, page, perPage };
  }

  /** A file the backend answers (HAR, scenario, archive): the bytes and the plain name it suggests. */
  async file(path: string, query?: Query, fallbackName = 'download'): Promise<{ blob: Blob; filename: string }> {
    const res = await this.http.get<Blob>(path, { params: query, responseType: 'blob' });
    return { blob: res.data, filename: filenameOf(header(res, 'content-disposition')) ?? fallbackName };
  }

  // --- app API: connections, history, thresholds, alerts
  status = () => this.json<AppStatus>('GET', '/api/app/status');
  connections = () => this.json<ConnectionView[]>('GET', '/api/app/connections');
  createConnection = (c: NewConnection) => this.json<ConnectionView>('POST', '/api/app/connections', { json: c });
  patchConnection = (id: string, p: AnyConnectionPatch) => this.json<ConnectionView>('PATCH', `/api/app/connections/${encodeURIComponent(id)}`, { json: p });
  deleteConnection = (id: string) => this.json<unknown>('DELETE', `/api/app/connections/${encodeURIComponent(id)}`);
  testConnection = (id: string) => this.json<TestResult>('POST', `/api/app/connections/${encodeURIComponent(id)}/test`);
  testNewConnection = (c: NewConnection) => this.json<TestResult>('POST', '/api/app/connections/test', { json: c });
  // A sidekiq connection (a Sidekiq's Redis): the same endpoints with kind "sidekiq", and read-only peeks.
  createSidekiqConnection = (c: NewSidekiqConnection) => this.json<ConnectionView>('POST', '/api/app/connections', { json: c });
  testNewSidekiqConnection = (c: NewSidekiqConnection) => this.json<TestResult>('POST', '/api/app/connections/test', { json: c });
  peekSidekiqQueue = (id: string, queue: string, page: number, perPage: number) =>
    this.json<PeekPage>('GET', `/api/app/connections/${encodeURIComponent(id)}/sidekiq/queues/${encodeURIComponent(queue)}`, { query: { page, per_page: perPage } });
  peekSidekiqSet = (id: string, set: 'retry' | 'schedule' | 'dead', page: number, perPage: number) =>
    this.json<PeekPage>('GET', `/api/app/connections/${encodeURIComponent(id)}/sidekiq/sets/${set}`, { query: { page, per_page: perPage } });
  redisFacts = (id: string) => this.json<RedisFacts>('GET', `/api/app/connections/${encodeURIComponent(id)}/sidekiq/redis`);
  /** What the connection's workers run now (the embedded one's or a sidekiq connection's). */
  busy = (id: string) => this.json<BusyPage>('GET', `/api/app/connections/${encodeURIComponent(id)}/busy`);
  /** The latest good sample; null before the first one (the server answers 404 then). */
  current = (id: string) =>
    this.json<CurrentSample>('GET', `/api/app/connections/${encodeURIComponent(id)}/current`).catch((e: unknown) => {
      if (e instanceof ApiError && e.status === 404 && /no sample yet/i.test(e.message)) return null;
      throw e;
    });
  history = (id: string, q: HistoryQuery) => this.json<History>('GET', `/api/app/connections/${encodeURIComponent(id)}/history`, { query: q });
  thresholds = (id: string) => this.json<Thresholds>('GET', `/api/app/connections/${encodeURIComponent(id)}/thresholds`);
  putThresholds = (id: string, t: Thresholds) => this.json<Thresholds>('PUT', `/api/app/connections/${encodeURIComponent(id)}/thresholds`, { json: t });
  /** One page (the server's cap: 500) of alerts with an id above `since`, oldest first. */
  alerts = (since?: number, connectionId?: string) => this.json<Alert[]>('GET', '/api/app/alerts', { query: { since, connection_id: connectionId } });

  /** The alerts firing now and the `resolved` most recently resolved. */
  alertBoard = (resolved?: number) => this.json<AlertBoard>('GET', '/api/app/alerts/board', { query: { resolved } });
  acknowledgeAlert = (id: number) => this.json<Alert>('POST', `/api/app/alerts/${id}/acknowledge`);

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
    const res = await this.http
      .get<Blob>(`/api/app/connections/${encodeURIComponent(id)}/export.csv`, { params: { from, to }, responseType: 'blob' })
      .catch(rephrase((e) => `Export failed: HTTP ${e.status}`));
    return res.data;
  }

  // --- control API: the embedded instance's builds, projects, runners
  instance = () => this.json<InstanceView>('GET', '/api/v3/sim/instance');
  /** The first 1,000 projects (the most a page holds), for pickers and names; projectsPage pages them all. */
  projects = async () => (await this.projectsPage(1, 1000)).items;
  projectsPage = (page: number, perPage: number) => this.page<ProjectView>('/api/v3/sim/projects', page, perPage);
  /** One page of the runners, oldest first (the list is paged: a fleet can be thousands). */
  runners = (page = 1, perPage = 100) => this.page<RunnerView>('/api/v3/sim/runners', page, perPage);
  builds = (q: BuildQuery = {}) => this.json<BuildView[]>('GET', '/api/v3/sim/builds', { query: q });
  build = (id: number) => this.json<BuildView>('GET', `/api/v3/sim/builds/${id}`);
  cancelBuild = (id: number) => this.json<BuildView>('POST', `/api/v3/sim/builds/${id}/cancel`);
  /** Running → failed, for a build its runner abandoned (409 unless running). */
  failBuild = (id: number) => this.json<BuildView>('POST', `/api/v3/sim/builds/${id}/fail`);
  /** GitLab's retry: a new pending build of a finished one (409 while it is pending or running). */
  retryBuild = (id: number) => this.json<BuildView>('POST', `/api/v3/sim/builds/${id}/retry`);
  createProject = (p: NewProject) => this.json<ProjectView>('POST', '/api/v3/sim/projects', { json: p });
  /** One build (the answer is the build) or, with `count`, that many (the answer is their ids). */
  createBuild = (projectId: number, b: NewBuild) => this.json<BuildView | CreatedBuilds>('POST', `/api/v3/sim/projects/${projectId}/builds`, { json: b });
  /** Deletes one of the embedded job system's queues with its waiting jobs (built-in ones answer 409). */
  deleteQueue = (name: string) => this.json<DeletedQueue>('DELETE', `/api/v3/sim/jobs/queues/${encodeURIComponent(name)}`);

  /** The trace from byte `offset` on (`Range: bytes=N-` → 206), for live tailing. */
  async traceFrom(id: number, offset: number): Promise<TraceChunk> {
    const res = await this.http
      .get<ArrayBuffer>(`/api/v3/sim/builds/${id}/trace`, {
        headers: { Range: `bytes=${offset}-` },
        responseType: 'arraybuffer',
        validateStatus: (s) => (s >= 200 && s < 300) || s === 416, // 416: the trace was reset, not an error
      })
      .catch(rephrase((e) => `Trace of build ${id}: HTTP ${e.status}`));
    const total = /\/(\d+)$/.exec(header(res, 'content-range') ?? '');
    const buildStatus = header(res, 'build-status') ?? null;
    if (res.status === 416) return { status: 416, bytes: new Uint8Array(), length: total ? Number(total[1]) : null, buildStatus };
    const bytes = new Uint8Array(res.data);
    return { status: res.status, bytes, length: total ? Number(total[1]) : offset + bytes.length, buildStatus };
  }

  /** The artifacts archive, fetched with the token (a plain link could not carry the header). */
  async artifacts(id: number): Promise<{ blob: Blob; filename: string }> {
    const res = await this.http
      .get<Blob>(`/api/v3/sim/builds/${id}/artifacts`, { responseType: 'blob' })
      .catch(rephrase((e) => `Artifacts of build ${id}: ${e.serverMessage ?? `HTTP ${e.status}`}`));
    return { blob: res.data, filename: filenameOf(header(res, 'content-disposition'))?.slice(0, 200) || `build-${id}-artifacts.zip` };
  }
}

function header(res: AxiosResponse, name: string): string | undefined {
  const v: unknown = res.headers[name];
  return typeof v === 'string' ? v : undefined;
}

/** Words an error answer in the caller's terms; "did not answer" (status 0) stays as it is. */
function rephrase(say: (e: ApiError) => string): (e: unknown) => never {
  return (e) => {
    if (e instanceof ApiError && e.status !== 0) throw new ApiError(e.status, say(e), e.serverMessage);
    throw e;
  };
}
