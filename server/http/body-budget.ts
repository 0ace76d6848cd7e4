// One budget for the request bodies held in memory at once, across all requests. Per-route limits
// bound one request; without a total, a few dozen concurrent bodies near their limits (64 MiB for a
// full trace) took gigabytes. Runs in preParsing, after every onRequest hook, so a request refused
// for its token or Host never touches the budget. Routes that stream their body to disk (artifact
// uploads) say so with `config.streamsBody` and are not counted.
import type { ServerResponse } from 'node:http';
import { Transform } from 'node:stream';
import type { FastifyInstance, FastifyRequest, preParsingHookHandler, RequestPayload } from 'fastify';
import type { Config } from '../config.ts';
import { ApiError, tooLarge } from './errors.ts';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The route streams its body to disk instead of holding it: not counted against the budget. */
    streamsBody?: boolean;
  }
}

const kHeld = Symbol('jobscope.bodyBytesHeld');
/** Fastify's own default, for a server built without a bodyLimit. */
const DEFAULT_BODY_LIMIT = 1024 * 1024;
type PreParsingDone = Parameters<preParsingHookHandler>[3];
type HoldingResponse = ServerResponse & { [kHeld]?: number };

export class BodyBudget {
  private used = 0;
  constructor(readonly total: number) {}

  get inUse(): number {
    return this.used;
  }

  /** Takes n bytes, or returns false when that would pass the total. */
  take(n: number): boolean {
    if (this.used + n > this.total) return false;
    this.used += n;
    return true;
  }

  give(n: number): void {
    this.used = Math.max(0, this.used - n);
  }
}

export function installBodyBudget(app: FastifyInstance, config: Pick<Config, 'maxInflightBodyBytes'>): BodyBudget {
  const budget = new BodyBudget(config.maxInflightBodyBytes);
  const mib = Math.round((budget.total / 1024 / 1024) * 100) / 100;
  const busy = () =>
    new ApiError(503, `503 Service Unavailable - request bodies in flight have reached --max-inflight-body-mb (${mib} MiB); retry shortly`, { 'Retry-After': '1' });

  /**
   * Bytes a request holds, handed back once its answer is done or the client has gone ('close'
   * fires in both cases). Kept on the response with one shared listener: no closure per request.
   */
  function giveBack(this: HoldingResponse): void {
    budget.give(this[kHeld] ?? 0);
    this[kHeld] = 0;
  }
  const hold = (res: HoldingResponse, n: number) => {
    if (res[kHeld] === undefined) res.on('close', giveBack);
    res[kHeld] = (res[kHeld] ?? 0) + n;
  };

  /**
   * The check for one request, given its route's body limit and whether the route streams its body.
   * Both come from the route's options, read per request as properties (not request.routeOptions,
   * which fastify builds as a new twelve-field object on every access).
   */
  const check = (request: FastifyRequest, res: HoldingResponse, payload: RequestPayload, done: PreParsingDone, bodyLimit: number, streamsBody: boolean | undefined) => {
    const lengthHeader = request.headers['content-length'];
    const chunked = request.headers['transfer-encoding'] !== undefined;
    if (lengthHeader === undefined && !chunked) return done(null, payload);
    if (streamsBody) return done(null, payload);
    if (lengthHeader !== undefined) {
      const declared = Number(lengthHeader);
      if (!Number.isFinite(declared) || declared <= 0) return done(null, payload);
      // Refused before a byte of the body is read: it could never fit (multipart bypasses fastify's own check).
      if (declared > bodyLimit || declared > budget.total) return done(tooLarge());
      if (!budget.take(declared)) return done(busy());
      hold(res, declared);
      return done(null, payload);
    }
    // Multipart is read from the raw request by busboy, not from this stream; readParams bounds its fields.
    // (isMultipart() is set by the content-type parser, after this hook: the header is what tells.)
    if (/^multipart\//i.test(String(request.headers['content-type'] ?? ''))) return done(null, payload);
    // Chunked: no size up front, so each chunk is counted as it arrives.
    hold(res, 0);
    const counted = new Transform({
      transform(chunk: Buffer, _enc, cb) {
        if (!budget.take(chunk.length)) return cb(busy());
        hold(res, chunk.length);
        cb(null, chunk);
      },
    });
    payload.on('error', (err) => counted.destroy(err));
    done(null, payload.pipe(counted));
  };

  // Each route gets its own hook, made once when the route is added. Its options object is the one
  // fastify builds the route from, and later onRoute hooks (runner-api/body-rules.ts) still set its
  // bodyLimit and config: both are read when a request comes, not now.
  const serverLimit = app.initialConfig.bodyLimit ?? DEFAULT_BODY_LIMIT;
  const ours = new WeakSet<preParsingHookHandler>();
  app.addHook('onRoute', (route) => {
    const existing = route.preParsing === undefined ? [] : [route.preParsing].flat();
    // A HEAD route fastify adds is a copy of its GET route's options, this hook included.
    if (existing.some((h) => ours.has(h))) return;
    const hook: preParsingHookHandler = (request, reply, payload, done) => check(request, reply.raw, payload, done, route.bodyLimit || serverLimit, route.config?.streamsBody);
    ours.add(hook);
    route.preParsing = [hook, ...existing];
  });
  // Requests no route matched (the 404 handler, which reads bodies as routes do) are counted here.
  app.addHook('preParsing', (request, reply, payload, done) => {
    if (!request.is404) return done(null, payload);
    const route = request.routeOptions;
    check(request, reply.raw, payload, done, route.bodyLimit, route.config?.streamsBody);
  });
  return budget;
}
