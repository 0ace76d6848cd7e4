// The simulator's HTTP client: node:http directly (not fetch) because faults need what fetch
// hides — destroying the socket half-way through a body, dribbling a body out slowly, chunked
// uploads, header names in the Go runner's canonical case. Every exchange goes to the journal.
import http from 'node:http';
import https from 'node:https';
import crypto from 'node:crypto';
import zlib from 'node:zlib';
import { setTimeout as sleep } from 'node:timers/promises';
import type { LookupFunction } from 'node:net';
import type { Journal } from './journal.ts';

export type Headers = Record<string, string>;

export interface Exchange {
  method: string;
  url: string;
  headers: Headers;
  /** A Buffer goes with Content-Length; an iterable is streamed chunked, as the runner's io.Pipe does. */
  body?: Buffer | Iterable<Buffer> | AsyncIterable<Buffer>;
  runner: string;
  buildId?: number | null;
  fault?: string | null;
  /** Destroy the socket after this many body bytes (fault: connection dropped). */
  dropAfterBytes?: number;
  /** Send the body in small pieces with pauses (fault: slow dribble). */
  dribble?: { bytes: number; delayMs: number };
  /** Keep at most this many response bytes (the rest is counted, and hashed with `digest`). */
  keepBytes?: number;
  /** Hash the whole answer as it arrives (Answer.sha256); only a verification needs it. */
  digest?: boolean;
  onProgress?: (sentBytes: number) => void;
  timeoutMs?: number;
}

export interface Answer {
  status: number; // 0 = no answer
  statusText: string;
  headers: [string, string][];
  body: Buffer;
  bodySize: number;
  /** Of the whole answer when the exchange asked for `digest`, else ''. */
  sha256: string;
  error: string | null;
  durationMs: number;
  journalId: number;
  sentBytes: number;
  requestHeaders: [string, string][];
  requestBodyKept: Buffer;
}

export function header(a: Pick<Answer, 'headers'>, name: string): string | undefined {
  const n = name.toLowerCase();
  return a.headers.find(([k]) => k.toLowerCase() === n)?.[1];
}

/**
 * Asked before each request: rejects when the URL may not be called (the message becomes the
 * exchange's error), else gives the lookup the connection resolves its host with (one that checks
 * the addresses it returns), or undefined for the system's.
 */
export type OutboundCheck = (url: URL) => Promise<LookupFunction | undefined>;

type Result = Omit<Answer, 'durationMs' | 'journalId' | 'requestHeaders' | 'requestBodyKept' | 'sentBytes'>;

const noAnswer = (error: string): Result => ({ status: 0, statusText: '', headers: [], body: Buffer.alloc(0), bodySize: 0, sha256: '', error });

export class HttpClient {
  private readonly agents: { http: http.Agent; https: https.Agent };

  constructor(
    readonly journal: Journal,
    private readonly opts: { timeoutMs: number; maxSockets?: number; onExchange?: (x: Exchange, a: Answer) => void; outbound?: OutboundCheck } = { timeoutMs: 30_000 },
  ) {
    const agentOpts = { keepAlive: true, maxSockets: opts.maxSockets ?? 256, keepAliveMsecs: 1000 };
    this.agents = { http: new http.Agent(agentOpts), https: new https.Agent(agentOpts) };
  }

  close(): void {
    this.agents.http.destroy();
    this.agents.https.destroy();
  }

  async send(x: Exchange): Promise<Answer> {
    const started = Date.now();
    const t0 = performance.now();
    const url = new URL(x.url);
    const lib = url.protocol === 'https:' ? https : http;
    const headers: Headers = { ...x.headers };
    const streamed = x.body !== undefined && !Buffer.isBuffer(x.body);
    if (Buffer.isBuffer(x.body)) headers['Content-Length'] = String(x.body.length);
    if (streamed) headers['Transfer-Encoding'] = 'chunked';
    const limit = this.journal.opts.bodyBytes;
    const kept: Buffer[] = [];
    let keptLen = 0;
    let sent = 0;
    const keep = (b: Buffer) => {
      if (keptLen < limit) {
        const piece = b.subarray(0, limit - keptLen);
        kept.push(piece);
        keptLen += piece.length;
      }
    };

    let lookup: LookupFunction | undefined;
    let refused: string | null = null;
    if (this.opts.outbound) {
      try {
        lookup = await this.opts.outbound(url);
      } catch (err) {
        refused = (err as Error).message;
      }
    }

    const result = refused !== null ? noAnswer(refused) : await new Promise<Result>((resolve) => {
      let done = false;
      const finish = (r: Result) => {
        if (done) return;
        done = true;
        resolve(r);
      };
      const fail = (error: string) => finish(noAnswer(error));
      // The agent opens its sockets with the request's options, the lookup included: a pooled socket was
      // connected to an address checked when it was opened.
      const agent = url.protocol === 'https:' ? this.agents.https : this.agents.http;
      const req = lib.request(url, { method: x.method, headers, agent, ...(lookup ? { lookup } : {}) });
      req.setTimeout(x.timeoutMs ?? this.opts.timeoutMs, () => {
        req.destroy();
        fail(`no answer within ${x.timeoutMs ?? this.opts.timeoutMs} ms`);
      });
      req.on('error', (err) => fail(err.message));
      let answered = false;
      req.on('close', () => {
        if (!answered) fail('connection closed before an answer');
      });
      req.on('response', (res) => {
        answered = true;
        res.on('error', (err) => fail(`answer cut off: ${err.message}`));
        res.on('aborted', () => fail('answer cut off: connection closed'));
        const hash = x.digest ? crypto.createHash('sha256') : undefined;
        const body: Buffer[] = [];
        let bodyLen = 0;
        let size = 0;
        const keepBytes = x.keepBytes ?? 64 * 1024 * 1024;
        const enc = String(res.headers['content-encoding'] ?? '').toLowerCase();
        const stream = enc === 'gzip' ? res.pipe(zlib.createGunzip()) : enc === 'deflate' ? res.pipe(zlib.createInflate()) : res;
        stream.on('data', (chunk: Buffer) => {
          hash?.update(chunk);
          size += chunk.length;
          if (bodyLen < keepBytes) {
            const piece = chunk.subarray(0, keepBytes - bodyLen);
            body.push(piece);
            bodyLen += piece.length;
          }
        });
        const headersOut: [string, string][] = [];
        for (let i = 0; i < res.rawHeaders.length; i += 2) headersOut.push([res.rawHeaders[i]!, res.rawHeaders[i + 1]!]);
        stream.on('end', () =>
          finish({
            status: res.statusCode ?? 0,
            statusText: res.statusMessage ?? '',
            headers: headersOut,
            body: Buffer.concat(body),
            bodySize: size,
            sha256: hash ? hash.digest('hex') : '',
            error: null,
          }),
        );
        stream.on('error', (err) => fail(`answer cut off: ${err.message}`));
      });

      // The common cases need no writer: no body, or a Buffer sent whole with the end, as a plain
      // client sends it (an async writer a request was ~6 µs of CPU each, .tmp micro-benchmark).
      if (x.body === undefined) return void req.end();
      if (Buffer.isBuffer(x.body) && x.dropAfterBytes === undefined && !x.dribble) {
        keep(x.body);
        sent = x.body.length;
        x.onProgress?.(sent);
        return void req.end(x.body);
      }
      void (async () => {
        const write = async (chunk: Buffer): Promise<boolean> => {
          if (x.dropAfterBytes !== undefined && sent + chunk.length >= x.dropAfterBytes) {
            const head = chunk.subarray(0, Math.max(0, x.dropAfterBytes - sent));
            if (head.length) {
              req.write(head);
              keep(head);
              sent += head.length;
            }
            // Let the bytes leave before the socket goes, as when a machine loses its network.
            await sleep(5);
            req.destroy();
            fail(`connection dropped after ${sent} body bytes (injected)`);
            return false;
          }
          keep(chunk);
          sent += chunk.length;
          x.onProgress?.(sent);
          if (!req.write(chunk)) await new Promise<void>((r) => req.once('drain', r));
          return !done;
        };
        try {
          const source: Iterable<Buffer> | AsyncIterable<Buffer> = Buffer.isBuffer(x.body) ? [x.body] : x.body!;
          for await (let chunk of source) {
            if (x.dribble) {
              while (chunk.length > 0) {
                if (!(await write(chunk.subarray(0, x.dribble.bytes)))) return;
                chunk = chunk.subarray(x.dribble.bytes);
                if (chunk.length) await sleep(x.dribble.delayMs);
              }
            } else if (!(await write(chunk))) return;
          }
          req.end();
        } catch (err) {
          req.destroy();
          fail(`request body failed: ${(err as Error).message}`);
        }
      })();
    });

    const durationMs = Math.round((performance.now() - t0) * 100) / 100;
    const requestHeaders = Object.entries(headers) as [string, string][];
    const requestBodyKept = Buffer.concat(kept);
    const journalId = this.journal.add({
      started_at: new Date(started).toISOString(),
      duration_ms: durationMs,
      runner: x.runner,
      method: x.method,
      url: x.url,
      path: url.pathname + url.search,
      status: result.status,
      request_headers: requestHeaders,
      response_headers: result.headers,
      request_body: { bytes: requestBodyKept, size: sent },
      response_body: { bytes: result.body, size: result.bodySize },
      fault: x.fault ?? null,
      error: result.error,
      build_id: x.buildId ?? null,
    });
    const answer = { ...result, durationMs, journalId, sentBytes: sent, requestHeaders, requestBodyKept };
    this.opts.onExchange?.(x, answer);
    return answer;
  }
}
