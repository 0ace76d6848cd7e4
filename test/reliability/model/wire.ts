// The model test's HTTP client: keep-alive sockets to one server, requests written whole in one
// write, answers parsed by Node's own HTTP parser (the llhttp binding node:http's client uses, with
// the same strict defaults). A profile of model-inproc-a put ~20 % of the file's CPU in node:http's
// client (ClientRequest, the agent, OutgoingMessage's header checks, IncomingMessage streams and
// their events) for ~4 small requests a step; what it checked that matters here stays: the answer's
// framing is llhttp's to judge, and a header the server should not send is still an error.
import { createRequire } from 'node:module';
import net from 'node:net';
import type http from 'node:http';

/* eslint-disable @typescript-eslint/no-explicit-any -- an untyped legacy module */
// Node's HTTP parser binding (a legacy module, not deprecated; @types/node does not describe it): the
// parser node:http's client itself uses, and the header checks of its OutgoingMessage.
const { HTTPParser, _checkInvalidHeaderChar, _checkIsHttpToken } = createRequire(import.meta.url)('_http_common') as {
  HTTPParser: any;
  _checkInvalidHeaderChar(v: string): boolean;
  _checkIsHttpToken(v: string): boolean;
};
/* eslint-enable @typescript-eslint/no-explicit-any */

export interface WireReply {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
}

// The fields IncomingMessage keeps only the first of (node's matchKnownFields): the answers compare the same.
const FIRST_ONLY = new Set([
  'age', 'authorization', 'content-length', 'content-type', 'etag', 'expires', 'from', 'host', 'if-modified-since',
  'if-unmodified-since', 'last-modified', 'location', 'max-forwards', 'proxy-authorization', 'referer', 'retry-after', 'server', 'user-agent',
]);

function headersOf(raw: string[]): http.IncomingHttpHeaders {
  const out: Record<string, string | string[]> = {};
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i]!.toLowerCase();
    const value = raw[i + 1]!;
    const had = out[name];
    if (name === 'set-cookie') out[name] = had ? [...(had as string[]), value] : [value];
    else if (had === undefined) out[name] = value;
    else if (!FIRST_ONLY.has(name)) out[name] = `${had}, ${value}`;
  }
  return out as http.IncomingHttpHeaders;
}

/** Methods node:http sends without Content-Length when they carry no body (useChunkedEncodingByDefault false). */
const NO_BODY = new Set(['GET', 'HEAD', 'DELETE', 'OPTIONS', 'TRACE', 'CONNECT']);

interface Pending {
  resolve(r: WireReply): void;
  reject(err: Error): void;
  head: boolean;
}

/** One keep-alive connection: one request at a time on it. */
class Conn {
  readonly socket: net.Socket;
  private readonly parser = new HTTPParser() as Record<number, unknown> & { initialize(...a: unknown[]): void; execute(b: Buffer): number | Error; finish(): undefined | Error; free?(): void };
  private pending?: Pending;
  private status = 0;
  private raw: string[] = [];
  private chunks: Buffer[] = [];
  private keepAlive = false;
  private timer?: NodeJS.Timeout;
  closed = false;

  constructor(host: string, port: number, private readonly release: (c: Conn) => void) {
    this.socket = net.connect({ host, port, noDelay: true });
    this.parser.initialize(HTTPParser.RESPONSE, {}, 0, HTTPParser.kLenientNone);
    this.parser[HTTPParser.kOnHeaders] = (headers: string[]) => void this.raw.push(...headers);
    this.parser[HTTPParser.kOnHeadersComplete] = (_maj: number, _min: number, headers: string[] | undefined, _m: unknown, _u: unknown, status: number, _msg: string, _up: boolean, keepAlive: boolean) => {
      if (headers) this.raw.push(...headers);
      this.status = status;
      this.keepAlive = keepAlive;
      // 1xx: an interim answer, the real one follows; HEAD: headers only, whatever Content-Length says.
      if (status < 200) return 1;
      return this.pending?.head ? 1 : 0;
    };
    this.parser[HTTPParser.kOnBody] = (b: Buffer) => void this.chunks.push(Buffer.from(b));
    this.parser[HTTPParser.kOnMessageComplete] = () => {
      if (this.status < 200) {
        this.raw = [];
        return;
      }
      const p = this.pending;
      const reply = { status: this.status, headers: headersOf(this.raw), body: Buffer.concat(this.chunks) };
      this.pending = undefined;
      this.raw = [];
      this.chunks = [];
      clearTimeout(this.timer);
      if (this.keepAlive) this.release(this);
      else this.destroy();
      p?.resolve(reply);
    };
    this.socket.on('data', (d: Buffer) => {
      const r = this.parser.execute(d);
      if (r instanceof Error) this.fail(new Error(`bad answer: ${r.message}`));
    });
    this.socket.on('end', () => {
      // An answer delimited by the close ends here (llhttp finishes it); any other is cut short.
      const r = this.parser.finish();
      if (r instanceof Error) this.fail(new Error(`bad answer at close: ${r.message}`));
      this.fail(new Error('socket hang up'));
    });
    this.socket.on('error', (err) => this.fail(err));
    this.socket.on('close', () => this.fail(new Error('socket closed')));
  }

  send(head: Buffer, body: Buffer | undefined, isHead: boolean, timeoutMs: number, what: string): Promise<WireReply> {
    return new Promise((resolve, reject) => {
      this.pending = { resolve, reject, head: isHead };
      this.timer = setTimeout(() => this.fail(new Error(`no answer in ${timeoutMs / 1000} s: ${what}`)), timeoutMs);
      this.socket.write(body && body.length ? Buffer.concat([head, body]) : head);
    });
  }

  /** Rejects the request in flight (an answer already parsed stands) and drops the connection. */
  private fail(err: Error): void {
    const p = this.pending;
    this.pending = undefined;
    clearTimeout(this.timer);
    this.destroy();
    p?.reject(err);
  }

  destroy(): void {
    if (this.closed) return;
    this.closed = true;
    this.socket.destroy();
    this.parser.free?.();
  }
}

/** Keep-alive connections to one host:port; requests go on an idle one, or a new one. */
export class Wire {
  private idle: Conn[] = [];
  private readonly all = new Set<Conn>();

  constructor(
    private readonly host: string,
    private readonly port: number,
  ) {}

  request(method: string, path: string, headers: Record<string, string | number>, body: Buffer | string | undefined, timeoutMs: number): Promise<WireReply> {
    let conn = this.idle.pop();
    while (conn?.closed) conn = this.idle.pop();
    if (!conn) {
      conn = new Conn(this.host, this.port, (c) => {
        if (!c.closed) this.idle.push(c);
      });
      this.all.add(conn);
      const c = conn;
      c.socket.once('close', () => this.all.delete(c));
    }
    const payload = typeof body === 'string' ? Buffer.from(body) : body;
    let head = `${method} ${path} HTTP/1.1\r\n`;
    let hasHost = false;
    for (const [k, v] of Object.entries(headers)) {
      // What OutgoingMessage refuses, refused here too: a step that could not be sent is not sent.
      if (!_checkIsHttpToken(k)) throw new TypeError(`invalid header name ${JSON.stringify(k)}`);
      if (_checkInvalidHeaderChar(String(v))) throw new TypeError(`invalid character in header ${k}`);
      if (k.toLowerCase() === 'host') hasHost = true;
      head += `${k}: ${v}\r\n`;
    }
    if (!hasHost) head += `host: ${this.host}:${this.port}\r\n`;
    // node:http frames an empty body of a POST, PUT or PATCH as Content-Length: 0; the server sees the same.
    if (payload === undefined && !NO_BODY.has(method)) head += 'content-length: 0\r\n';
    head += 'connection: keep-alive\r\n\r\n';
    return conn.send(Buffer.from(head, 'latin1'), payload, method === 'HEAD', timeoutMs, `${method} ${path}`);
  }

  destroy(): void {
    for (const c of this.all) c.destroy();
    this.all.clear();
    this.idle = [];
  }
}
