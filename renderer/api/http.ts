// The axios instance under the renderer's Client, with the three rules every call shares as
// interceptors: the admin token goes on every request, a 401 sends the app back to sign-in, and an
// error answer becomes an ApiError carrying the server's `{"message": ...}` (what the UI shows).
import axios, { AxiosError, type AxiosInstance } from 'axios';
import { queryString, type Query } from './query-string.ts';

export class ApiError extends Error {
  constructor(
    readonly status: number, // 0: the backend did not answer at all
    message: string,
    /** The server's own `message`, when the error body had one (callers may phrase around it). */
    readonly serverMessage?: string,
  ) {
    super(message);
  }
}

export { queryString, type Query } from './query-string.ts';

export interface HttpOptions {
  baseUrl: string; // '' = same origin (browser mode)
  token: string;
  onUnauthorized: () => void;
}

export function createHttp(opts: HttpOptions): AxiosInstance {
  const http = axios.create({
    baseURL: opts.baseUrl,
    // fetch in every host (browser, Electron, and Node for the tests), as the renderer used before axios.
    adapter: 'fetch',
    paramsSerializer: { serialize: (params) => queryString(params as Query) },
  });

  http.interceptors.request.use((config) => {
    config.headers.set('PRIVATE-TOKEN', opts.token);
    // false keeps axios's own `axios/x.y` off: the backend sees the browser's (or Node's) agent, as before axios.
    config.headers.set('User-Agent', false);
    // axios would label a body-less POST (and, outside a browser, a FormData body) as a urlencoded
    // form; false keeps any type off, so an empty POST carries none and fetch writes the multipart
    // boundary itself. JSON bodies still get application/json from axios.
    if (config.data === undefined || config.data instanceof FormData) config.headers.setContentType(false);
    return config;
  });

  http.interceptors.response.use(undefined, async (error: unknown) => {
    throw await toApiError(error, opts.onUnauthorized);
  });

  return http;
}

async function toApiError(error: unknown, onUnauthorized: () => void): Promise<Error> {
  if (!(error instanceof AxiosError)) return error instanceof Error ? error : new Error(String(error));
  const res = error.response;
  if (!res) {
    const why = (error.cause as Error | undefined)?.message ?? error.message;
    return new ApiError(0, `The Jobscope backend did not answer (${why}). Is it still running?`);
  }
  if (res.status === 401) onUnauthorized();
  const method = (error.config?.method ?? 'GET').toUpperCase();
  const path = error.config?.url ?? '';
  const serverMessage = await messageOf(res.data);
  let message = serverMessage ?? `${method} ${path}: HTTP ${res.status}`;
  if (res.status === 404 && serverMessage?.includes('Route')) message = `${method} ${path} is not served by this backend (404): is it an older Jobscope?`;
  return new ApiError(res.status, message, serverMessage);
}

/** The `message` of a JSON error body, whatever form the call asked the answer in. */
async function messageOf(data: unknown): Promise<string | undefined> {
  let body = data;
  try {
    if (typeof Blob !== 'undefined' && body instanceof Blob) body = await body.text();
    else if (body instanceof ArrayBuffer) body = new TextDecoder().decode(body);
    if (typeof body === 'string') body = body ? JSON.parse(body) : undefined;
  } catch {
    return undefined; // not JSON: the status line speaks instead
  }
  const m = (body as { message?: unknown } | null | undefined)?.message;
  return typeof m === 'string' ? m : undefined;
}
