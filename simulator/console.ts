// The runner console: one runner driven by hand. Each step makes exactly one request (shaped as
// the real runner shapes it, with whatever the user edited) and answers the raw exchange: the
// request as sent and the response as received, status, headers and body. It keeps the little
// state a runner keeps (its token, its build, the trace length the server last reported), so the
// next step has sensible defaults. The runner token and the server it came from are one pair: a
// register or use-token without a target is for this server (`home`), and a later step goes where
// the token it carries was issued, never where an earlier call happened to point.
import type { BodyPreview, ConsoleExchange } from '../contract/simulator.ts';
import { header, type Answer, type HttpClient } from './http-client.ts';
import { preview } from './journal.ts';
import { hideUrlCredentials, REDACTED } from './journal-redact.ts';
import { hideUserinfo } from '../common/secrets.ts';
import { jsonOf, rangeEnd, RunnerApi, type BuildPayload } from './runner-client.ts';

const WHO = 'console';
/** Response bodies shown in full up to this size (an artifacts download beyond it is cut). */
const SHOW_BYTES = 1024 * 1024;

/**
 * A step asked for out of order (no runner, no build yet). Its statusCode makes the server's error
 * handler answer "409 Conflict - <message>" without the simulator knowing the server's error type.
 */
export class ConsoleStateError extends Error {
  readonly statusCode = 409;
  constructor(what: string) {
    super(`Conflict - ${what}`);
  }
}

export class RunnerConsole {
  target: string;
  runnerToken: string | null = null;
  buildId: number | null = null;
  buildToken: string | null = null;
  traceLength = 0;

  /**
   * `showForeign`: whether an answer from another server that is neither JSON nor an archive is
   * shown; off where the console could otherwise read out somebody's internal pages.
   */
  constructor(
    private readonly client: HttpClient,
    private readonly home: string,
    private readonly showForeign = true,
  ) {
    this.target = home;
  }

  private responseBody(a: Answer, url: string): BodyPreview {
    const type = (header(a, 'content-type') ?? '').toLowerCase();
    const shown = this.showForeign || url.startsWith(`${this.home}/`) || /json|zip|octet-stream/.test(type);
    return shown ? hideUrlCredentials(preview(a.body, a.bodySize, SHOW_BYTES)) : { size: a.bodySize, truncated: a.bodySize > 0 };
  }

  private api(target = this.target): RunnerApi {
    return new RunnerApi(this.client, target, WHO);
  }

  state(): ConsoleExchange['state'] {
    return { target: this.target, runner_token: this.runnerToken, build_id: this.buildId, build_token: this.buildToken, trace_length: this.traceLength };
  }

  private exchange(a: Answer, method: string, url: string): ConsoleExchange {
    const kept = this.client.journal.opts.bodyBytes;
    return {
      request: { method, url: hideUserinfo(url, REDACTED), headers: a.requestHeaders, body: hideUrlCredentials(preview(a.requestBodyKept, a.sentBytes, kept)) },
      response:
        a.status === 0 ? null : { status: a.status, status_text: a.statusText, headers: a.headers, body: this.responseBody(a, url) },
      error: a.error === null ? null : hideUserinfo(a.error, REDACTED),
      duration_ms: a.durationMs,
      journal_id: a.journalId,
      state: this.state(),
    };
  }

  private last(a: Answer): ConsoleExchange {
    const e = this.client.journal.get(a.journalId);
    return this.exchange(a, e?.method ?? '', e?.url ?? '');
  }

  private needRunner(): string {
    if (!this.runnerToken) throw new ConsoleStateError('no runner yet: register first (or give a runner_token)');
    return this.runnerToken;
  }

  private needBuild(id?: number, token?: string): { id: number; token: string } {
    const bid = id ?? this.buildId;
    const btoken = token ?? this.buildToken;
    if (bid === null || bid === undefined || !btoken) throw new ConsoleStateError('no build yet: request a build first (or give build_id and build_token)');
    return { id: bid, token: btoken };
  }

  async register(o: { target?: string; registrationToken: string; description?: string; tagList?: string; runUntagged?: boolean }): Promise<ConsoleExchange> {
    const target = o.target ?? this.home;
    const a = await this.api(target).register(o.registrationToken, { description: o.description ?? 'runner-console', tagList: o.tagList, runUntagged: o.runUntagged });
    const body = a.status === 201 ? jsonOf<{ token?: string }>(a) : undefined;
    // A refused register leaves the console's runner (and the server it belongs to) as it was.
    if (body?.token) {
      this.target = target;
      this.runnerToken = body.token;
      this.buildId = null;
      this.buildToken = null;
      this.traceLength = 0;
    }
    return this.last(a);
  }

  useToken(target: string | undefined, token: string): ConsoleExchange['state'] {
    this.target = target ?? this.home;
    this.runnerToken = token;
    this.buildId = null;
    this.buildToken = null;
    this.traceLength = 0;
    return this.state();
  }

  async requestBuild(): Promise<ConsoleExchange> {
    const a = await this.api().poll(this.needRunner(), undefined);
    const build = a.status === 201 ? jsonOf<BuildPayload>(a) : undefined;
    if (build && typeof build.id === 'number' && typeof build.token === 'string') {
      this.buildId = build.id;
      this.buildToken = build.token;
      this.traceLength = 0;
    }
    return this.last(a);
  }

  async sendTrace(o: { contentRange?: string; body: string; buildId?: number; buildToken?: string }): Promise<ConsoleExchange> {
    const b = this.needBuild(o.buildId, o.buildToken);
    const bytes = Buffer.from(o.body, 'utf8');
    const range = o.contentRange ?? `${this.traceLength}-${this.traceLength + bytes.length}`;
    const a = await this.api().patchTrace(b.id, b.token, range, bytes);
    const x = rangeEnd(a.headers.find(([k]) => k.toLowerCase() === 'range')?.[1]);
    if (x !== undefined) this.traceLength = x;
    return this.last(a);
  }

  async update(o: { state?: string; trace?: string; buildId?: number }): Promise<ConsoleExchange> {
    const id = o.buildId ?? this.buildId;
    if (id === null || id === undefined) throw new ConsoleStateError('no build yet: request a build first (or give build_id)');
    const a = await this.api().update(id, this.needRunner(), o.state, o.trace);
    if (a.status === 200 && o.trace !== undefined) this.traceLength = Buffer.byteLength(o.trace);
    return this.last(a);
  }

  async upload(o: { filename: string; content: Buffer; expireIn?: string; buildId?: number; buildToken?: string }): Promise<ConsoleExchange> {
    const b = this.needBuild(o.buildId, o.buildToken);
    return this.last(await this.api().upload(b.id, b.token, o.filename, o.content, o.expireIn));
  }

  async download(o: { buildId?: number; buildToken?: string }): Promise<ConsoleExchange> {
    const b = this.needBuild(o.buildId, o.buildToken);
    return this.last(await this.api().download(b.id, b.token, { keepBytes: SHOW_BYTES }));
  }

  async deleteArtifacts(o: { buildId?: number; buildToken?: string }): Promise<ConsoleExchange> {
    const b = this.needBuild(o.buildId, o.buildToken);
    return this.last(await this.api().deleteArtifacts(b.id, b.token));
  }

  async unregister(): Promise<ConsoleExchange> {
    const a = await this.api().unregister(this.needRunner());
    if (a.status === 200) {
      this.runnerToken = null;
      this.buildId = null;
      this.buildToken = null;
    }
    return this.last(a);
  }
}
