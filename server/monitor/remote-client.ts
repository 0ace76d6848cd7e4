// Reads compound_metrics from a GitLab (or another Jobscope) the way an admin's script would:
// GET {base}/api/{v3|v4}/{segment}/compound_metrics with PRIVATE-TOKEN. Every failure becomes one
// sentence saying what went wrong and what to try next; the token never appears in it.
import http from 'node:http';
import https from 'node:https';
import type { CompoundMetrics } from '../../contract/metrics.ts';
import { hideUserinfo } from '../../common/secrets.ts';
import { OutboundRefused, type OutboundPolicy } from '../outbound/policy.ts';

export interface RemoteTarget {
  baseUrl: string;
  token: string;
  apiVersion: 'v3' | 'v4';
  segment: string;
}

export interface FetchOutcome {
  ok: boolean;
  status: number | null;
  message: string;
  latencyMs: number;
  metrics: CompoundMetrics | null;
  /** Reachable, but nothing to watch there (a sidekiq connection's namespace without Sidekiq data). */
  warning?: boolean;
}

const MAX_BODY_BYTES = 32 * 1024 * 1024;

export function metricsUrl(t: Pick<RemoteTarget, 'baseUrl' | 'apiVersion' | 'segment'>): string {
  return `${t.baseUrl.replace(/\/+$/, '')}/api/${t.apiVersion}/${encodeURIComponent(t.segment)}/compound_metrics`;
}

/** A base URL we will talk to: http(s), no credentials, query or fragment; trailing slashes removed. */
export function normalizeBaseUrl(raw: string): string | { error: string } {
  let u: URL;
  try {
    u = new URL(raw.trim());
  } catch {
    return { error: `"${raw}" is not a URL; write it like https://gitlab.example.com` };
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') return { error: `only http:// and https:// URLs work, not ${u.protocol}//` };
  if (u.username || u.password) return { error: 'put the token in private_token, not in the URL' };
  if (u.search || u.hash) return { error: 'the base URL takes no query or fragment; give just the GitLab address' };
  return `${u.origin}${u.pathname.replace(/\/+$/, '')}`;
}

interface Answer {
  status: number;
  header(name: string): string | null;
  body: AsyncIterable<Uint8Array> & { destroy(): void };
}

/**
 * One GET through node:http rather than fetch: the connection must go to the address the outbound
 * policy checked (its `lookup`), which fetch cannot be told without an undici Agent of our own.
 * Redirects are never followed (the token would go along).
 */
function get(url: string, headers: Record<string, string>, signal: AbortSignal, policy: OutboundPolicy | undefined): Promise<Answer> {
  const u = new URL(url);
  const lib = u.protocol === 'https:' ? https : http;
  return new Promise((resolve, reject) => {
    const req = lib.request(u, { headers, signal, ...(policy && !policy.open ? { lookup: policy.lookup } : {}) }, (res) =>
      resolve({
        status: res.statusCode ?? 0,
        header: (name) => {
          const v = res.headers[name.toLowerCase()];
          return v === undefined ? null : Array.isArray(v) ? v.join(', ') : v;
        },
        body: res,
      }),
    );
    req.on('error', reject);
    req.end();
  });
}

export async function fetchCompound(target: RemoteTarget, opts: { timeoutMs: number; signal?: AbortSignal; policy?: OutboundPolicy }): Promise<FetchOutcome> {
  const started = performance.now();
  const url = metricsUrl(target);
  const done = (ok: boolean, status: number | null, message: string, metrics: CompoundMetrics | null = null): FetchOutcome => ({
    ok,
    status,
    message,
    latencyMs: Math.round((performance.now() - started) * 10) / 10,
    metrics,
  });
  const signals = [AbortSignal.timeout(opts.timeoutMs)];
  if (opts.signal) signals.push(opts.signal);
  // Bodies of what is not GitLab are quoted only where the network is the user's own: elsewhere a
  // quote would read out an internal page the policy lets through.
  const quote = (text: string) => (opts.policy && !opts.policy.open ? `${Buffer.byteLength(text)} bytes` : snippet(text));
  let res: Answer;
  try {
    await opts.policy?.check(new URL(url).hostname);
    res = await get(url, { 'PRIVATE-TOKEN': target.token, accept: 'application/json', 'user-agent': 'Jobscope' }, AbortSignal.any(signals), opts.policy);
  } catch (err) {
    if (err instanceof OutboundRefused) return done(false, null, err.message);
    return done(false, null, describeNetworkError(err, url, opts.timeoutMs));
  }
  const status = res.status;
  const cancel = () => res.body.destroy();
  if (status >= 300 && status < 400) {
    cancel();
    const to = res.header('location');
    return done(false, status, `${status} redirect to ${hideUserinfo(to ?? 'elsewhere', '***')}: check the base URL (https instead of http? a sub-path like /gitlab?)`);
  }
  if (status === 401) return (cancel(), done(false, status, '401 Unauthorized: check the token (a personal access or private token of an admin user)'));
  if (status === 403) return (cancel(), done(false, status, '403 Forbidden: the token is not an admin\'s; the job-queue metrics API needs an admin token'));
  if (status === 404) {
    cancel();
    return done(false, status, `404 Not Found at ${url}: check the API version (v3 for GitLab 8.x, v4 after) and the path segment ("sidekiq" for GitLab)`);
  }
  let text: string;
  try {
    text = await readLimited(res, MAX_BODY_BYTES);
  } catch (err) {
    return done(false, status, describeNetworkError(err, url, opts.timeoutMs));
  }
  if (status >= 400) return done(false, status, `${status} from ${url}: ${quote(text)}; check that the GitLab instance is healthy`);
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    const type = res.header('content-type') ?? 'no content type';
    return done(false, status, `the answer was not JSON (${type}: ${quote(text)}); check that the base URL points at GitLab itself, not a sign-in page or proxy`);
  }
  const metrics = asCompound(body);
  if (!metrics) return done(false, status, 'the answer is JSON but not compound_metrics (queues, processes, jobs); check the path segment and API version');
  return done(true, status, `OK: ${Object.keys(metrics.queues).length} queues, ${metrics.processes.length} processes`, metrics);
}

async function readLimited(res: Answer, max: number): Promise<string> {
  const len = Number(res.header('content-length'));
  if (Number.isFinite(len) && len > max) {
    res.body.destroy();
    throw new Error(`answer of ${len} bytes is larger than ${max}`);
  }
  const chunks: Uint8Array[] = [];
  let total = 0;
  for await (const chunk of res.body) {
    total += chunk.byteLength;
    if (total > max) {
      res.body.destroy();
      throw new Error(`answer larger than ${max} bytes`);
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

function snippet(text: string): string {
  const s = hideUserinfo(text.replace(/\s+/g, ' ').trim(), '***').slice(0, 120);
  return s ? `"${s}${text.length > 120 ? '…' : ''}"` : 'empty body';
}

export function describeNetworkError(err: unknown, url: string, timeoutMs: number): string {
  const e = err as { name?: string; message?: string; cause?: { code?: string; message?: string; name?: string } };
  const code = e.cause?.code ?? (e as { code?: string }).code;
  let host = url;
  try {
    host = new URL(url).host;
  } catch {
    /* keep the url */
  }
  if (e.name === 'TimeoutError' || e.cause?.name === 'TimeoutError') {
    return `no answer from ${host} within ${timeoutMs / 1000} s: check the URL and the network, or raise --remote-timeout-ms`;
  }
  if (e.name === 'AbortError') return 'the request was stopped (the connection was changed or the server is closing)';
  switch (code) {
    case 'ECONNREFUSED':
      return `connection refused by ${host}: is GitLab running there, and is the port right?`;
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return `host ${host} not found (DNS): check the spelling of the base URL and your network`;
    case 'ECONNRESET':
    case 'UND_ERR_SOCKET':
      return `${host} closed the connection: check http:// versus https:// and any proxy in between`;
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
      return `${host} is unreachable: check the network (VPN?)`;
    case 'UND_ERR_HEADERS_TIMEOUT':
    case 'UND_ERR_BODY_TIMEOUT':
      return `no answer from ${host} within ${timeoutMs / 1000} s: check the URL and the network, or raise --remote-timeout-ms`;
  }
  if (code && /CERT|SSL|TLS/i.test(code)) return `TLS problem with ${host} (${code}): check the certificate, or the system's trusted CAs`;
  const detail = e.cause?.message ?? e.message ?? String(err);
  return `could not reach ${host} (${code ?? detail}): check the base URL and the network`;
}

const num = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) ? v : Number(v) || 0);
const strs = (v: unknown): string[] => (Array.isArray(v) ? v.map(String) : []);

/** GitLab's shapes, read leniently (older Sidekiq versions leave fields out; latency may be a float). */
export function asCompound(body: unknown): CompoundMetrics | null {
  if (!body || typeof body !== 'object') return null;
  const b = body as Record<string, unknown>;
  if (!b.queues || typeof b.queues !== 'object' || !Array.isArray(b.processes) || !b.jobs || typeof b.jobs !== 'object') return null;
  const queues: CompoundMetrics['queues'] = {};
  for (const [name, q] of Object.entries(b.queues as Record<string, unknown>)) {
    const e = (q ?? {}) as Record<string, unknown>;
    queues[name] = { backlog: num(e.backlog), latency: num(e.latency) };
  }
  const processes = (b.processes as unknown[]).map((p) => {
    const e = (p ?? {}) as Record<string, unknown>;
    return {
      hostname: String(e.hostname ?? ''),
      pid: num(e.pid),
      tag: String(e.tag ?? ''),
      started_at: String(e.started_at ?? ''),
      queues: strs(e.queues),
      labels: strs(e.labels),
      concurrency: num(e.concurrency),
      busy: num(e.busy),
    };
  });
  const j = b.jobs as Record<string, unknown>;
  return { queues, processes, jobs: { processed: num(j.processed), failed: num(j.failed), enqueued: num(j.enqueued) } };
}
