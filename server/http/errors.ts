// One error type with a status and a message, turned into `{"message": ...}` in one place.
// Anything a client can cause maps to a 4xx; storage trouble maps to 507/503 with what to do next;
// only a real bug is a 500, and that is logged.
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { closeLingeringly } from './lingering-close.ts';
import { StorageError } from '../store/ports/storage-error.ts';
import { fileStorageError } from '../store/ports/file-errors.ts';

export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }
}

export const badRequest = (what: string) => new ApiError(400, `400 (Bad request) ${what}`);
export const missing = (attr: string) => new ApiError(400, `400 (Bad request) "${attr}" not given`);
export const unauthorized = () => new ApiError(401, '401 Unauthorized');
export const forbidden = (reason?: string) => new ApiError(403, reason ? `403 Forbidden  - ${reason}` : '403 Forbidden');
/** GitLab's `not_found!` ("404 Not Found") and its RecordNotFound rescue ("404 Not found") differ in case; we keep both. */
export const notFound = (what?: string) => new ApiError(404, what ? `404 ${what} Not Found` : '404 Not Found');
export const recordNotFound = () => new ApiError(404, '404 Not found');
export const conflict = (what?: string) => new ApiError(409, what ? `409 Conflict - ${what}` : '409 Conflict');
export const tooLarge = () => new ApiError(413, '413 Request Entity Too Large');

/** A storage adapter's trouble kind as its answer: 507 when full, else 503, with Retry-After when the adapter knows one. */
function storageTrouble(err: StorageError): { status: number; message: string; headers: Record<string, string>; bug: false } {
  const status = err.kind === 'full' ? 507 : 503;
  const line = status === 507 ? '507 Insufficient Storage' : '503 Service Unavailable';
  const headers: Record<string, string> = err.retryAfterS !== undefined ? { 'Retry-After': String(Math.max(1, Math.ceil(err.retryAfterS))) } : {};
  return { status, message: `${line} - ${err.message}`, headers, bug: false };
}

/** Maps any thrown value to a status and message a client can act on. */
export function describeError(err: unknown): { status: number; message: string; headers: Record<string, string>; bug: boolean } {
  if (err instanceof ApiError) return { status: err.status, message: err.message, headers: err.headers, bug: false };
  if (err instanceof StorageError) return storageTrouble(err);
  // A file-system failure no adapter turned into its kind (the store's files are written in many places).
  const file = fileStorageError(err);
  if (file) return storageTrouble(file);
  const e = err as Partial<FastifyError> & { code?: string; errno?: number };
  if (e.validation) return { status: 400, message: `400 (Bad request) ${e.message}`, headers: {}, bug: false };
  if (e.code === 'FST_ERR_CTP_BODY_TOO_LARGE' || e.statusCode === 413) return { status: 413, message: '413 Request Entity Too Large', headers: {}, bug: false };
  if (e.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') return { status: 415, message: '415 Unsupported Media Type', headers: {}, bug: false };
  if (typeof e.statusCode === 'number' && e.statusCode >= 400 && e.statusCode < 500) {
    return { status: e.statusCode, message: `${e.statusCode} ${e.message ?? 'Bad request'}`, headers: {}, bug: false };
  }
  return { status: 500, message: '500 Internal Server Error', headers: {}, bug: true };
}

export function sendError(reply: FastifyReply, err: unknown, request?: FastifyRequest, lingerMs = 0): FastifyReply | Promise<FastifyReply> {
  const d = describeError(err);
  if (d.bug) (request?.log ?? reply.log).error({ err }, 'unhandled error');
  else if (d.status >= 500) (request?.log ?? reply.log).warn({ err }, d.message);
  const answer = () => reply.code(d.status).headers(d.headers).type('application/json').send({ message: d.message });
  const unread = request && !request.raw.complete ? settleUnreadBody(request, reply, lingerMs) : undefined;
  // A promise is what fastify waits on for an error handler that answers later.
  return unread ? unread.then(answer) : answer();
}

/**
 * Draining costs only bandwidth, and at most this many bytes: any body up to it is read and dropped
 * so the client, still writing, gets the answer instead of EPIPE and keeps its connection.
 */
export const DRAIN_MAX_BYTES = 1024 * 1024;

/**
 * An error answered before the body was all read (413 mid-upload, 403 before the file part, 503 on
 * a read-only disk) leaves the rest of the body in the socket, where a keep-alive client's next
 * request would wait behind it for ever, and an answer sent while the client still writes reaches
 * it as EPIPE. So:
 * - a body declared larger than DRAIN_MAX_BYTES is answered now with Connection: close, and the
 *   connection closed lingeringly (lingering-close.ts) so the answer is not lost to a reset;
 * - a body declared smaller is read and dropped as the answer goes out (node then keeps the connection);
 * - a chunked body of no declared size is drained *before* answering: if it ends within the cap the
 *   answer goes out on a connection that stays open; past the cap it is answered with
 *   Connection: close and closed lingeringly, as a large declared one is. The body timeouts bound
 *   how long this can wait.
 * Returns a promise when the answer must wait for the drain.
 */
function settleUnreadBody(request: FastifyRequest, reply: FastifyReply, lingerMs: number): Promise<void> | undefined {
  const length = request.headers['content-length'];
  const declared = length === undefined ? undefined : Number(length);
  const raw = request.raw;
  if (declared !== undefined && !(Number.isFinite(declared) && declared <= DRAIN_MAX_BYTES)) {
    reply.header('Connection', 'close');
    raw.unpipe();
    closeLingeringly(raw, lingerMs);
    return undefined;
  }
  // Whoever was reading (a body parser, busboy) has given up: detach it, then read the rest into nothing.
  raw.unpipe();
  reply.removeHeader('connection');
  if (declared !== undefined) {
    raw.on('data', () => undefined);
    raw.resume();
    return undefined;
  }
  return new Promise<void>((resolve) => {
    let drained = 0;
    const done = () => {
      raw.off('data', onData);
      raw.off('end', done);
      raw.off('close', done);
      raw.off('error', done);
      resolve();
    };
    const onData = (chunk: Buffer) => {
      drained += chunk.length;
      if (drained <= DRAIN_MAX_BYTES) return;
      reply.header('Connection', 'close');
      done();
      closeLingeringly(raw, lingerMs);
    };
    raw.on('data', onData);
    raw.once('end', done);
    raw.once('close', done);
    raw.once('error', done);
    raw.resume();
  });
}

export function installErrorHandling(app: FastifyInstance, config: { lingeringCloseMs: number }): void {
  app.setErrorHandler((err, request, reply) => sendError(reply, err, request, config.lingeringCloseMs));
  app.setNotFoundHandler((request, reply) => {
    // GitLab answers unknown paths 404 and wrong methods on known paths 405; we answer 404 for both.
    reply.code(404).type('application/json').send({ message: '404 Not Found' });
  });
  // Runners up to 1.6 compare Content-Type with "application/json" verbatim, so no charset suffix.
  // A callback hook, not an async one: it runs on every answer (each trace part), and an async hook
  // costs a promise and a microtask turn per request for work that is synchronous.
  app.addHook('onSend', (_request, reply, payload, done) => {
    const type = reply.getHeader('content-type');
    if (typeof type === 'string' && type.startsWith('application/json')) reply.header('content-type', 'application/json');
    done(null, payload);
  });
}
