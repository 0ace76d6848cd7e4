// A typed request over fetch for the simulator and settings calls. Why not D's Client: its request
// method is private, so this reuses the Client's public base URL and token (and its 401 hook) to
// send exactly what the Client would, plus what it does not do: FormData bodies and blob answers.
import { ApiError, type Client } from './client.ts';

export interface RequestOpts {
  json?: unknown;
  form?: FormData;
  query?: Record<string, string | number | boolean | undefined | null>;
}

function url(client: Client, path: string, query: RequestOpts['query']): string {
  const p = new URLSearchParams();
  for (const [k, v] of Object.entries(query ?? {})) if (v !== undefined && v !== null && v !== '') p.set(k, String(v));
  const s = p.toString();
  return client.baseUrl + path + (s ? `?${s}` : '');
}

async function send(client: Client, method: string, path: string, opts: RequestOpts): Promise<Response> {
  const headers: Record<string, string> = { 'PRIVATE-TOKEN': client.token };
  let body: BodyInit | undefined;
  if (opts.form) body = opts.form; // fetch writes the multipart boundary itself
  else if (opts.json !== undefined) {
    headers['Content-Type'] = 'application/json';
    body = JSON.stringify(opts.json);
  }
  let res: Response;
  try {
    res = await fetch(url(client, path, opts.query), { method, headers, body });
  } catch (e) {
    throw new ApiError(0, `The Jobscope backend did not answer (${(e as Error).message}). Is it still running?`);
  }
  if (res.status === 401) client.onUnauthorized?.();
  return res;
}

async function failure(res: Response, method: string, path: string): Promise<ApiError> {
  let msg = `${method} ${path}: HTTP ${res.status}`;
  try {
    const m = ((await res.json()) as { message?: unknown }).message;
    if (typeof m === 'string') msg = m;
  } catch {
    /* not JSON: keep the status line */
  }
  if (res.status === 404 && msg.includes('Route')) msg = `${method} ${path} is not served by this backend (404): is it an older Jobscope?`;
  return new ApiError(res.status, msg);
}

export async function requestJson<T>(client: Client, method: string, path: string, opts: RequestOpts = {}): Promise<T> {
  const res = await send(client, method, path, opts);
  if (!res.ok) throw await failure(res, method, path);
  const text = await res.text();
  return (text ? JSON.parse(text) : undefined) as T;
}

/** A file the backend answers (HAR, scenario): the bytes and the name it suggests. */
export async function requestFile(client: Client, path: string, query?: RequestOpts['query'], fallbackName = 'download'): Promise<{ blob: Blob; filename: string }> {
  const res = await send(client, 'GET', path, { query });
  if (!res.ok) throw await failure(res, 'GET', path);
  return { blob: await res.blob(), filename: filenameOf(res.headers.get('Content-Disposition')) ?? fallbackName };
}

/** The suggested file name, reduced to a plain name: the header may come from another server. */
export function filenameOf(contentDisposition: string | null | undefined): string | undefined {
  const m = /filename\*?=(?:UTF-8'')?"?([^";]+)"?/i.exec(contentDisposition ?? '');
  if (!m) return undefined;
  let name = m[1]!;
  try {
    name = decodeURIComponent(name);
  } catch {
    /* keep it as sent */
  }
  name = (name.split(/[\\/]/).pop() ?? '').replace(/[\u0000-\u001f\u007f]/g, '').replace(/^\.+/, '').trim();
  return name || undefined;
}
