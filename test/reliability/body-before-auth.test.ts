// Bodies are not buffered before authentication: a wrong-token request with a big
// body is refused while the client is still sending it, runner bodies read before their token is
// known are small, and the bytes held across all requests are bounded (503 with Retry-After).
import crypto from 'node:crypto';
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { startServer, type TestServer } from '../helpers/server.ts';
import { multipart, pieces, raw, runnerJson, runningBuild, type Running } from '../api/lib.ts';

const MiB = 1024 * 1024;

interface Early {
  /** The status the server answered, or 0 when it did not answer before the client sent everything. */
  status: number;
  /** Bytes the client had written (headers excluded) when the answer came. */
  sentWhenAnswered: number;
  text: string;
}

/**
 * Sends `head`, then the body slowly (16 KiB every 20 ms) up to `bodyLength` bytes; notes how much was
 * sent when an answer arrived. A server that buffers the body first answers only after all of it.
 */
function sendSlowly(url: string, head: string, bodyLength: number, opts: { chunked?: boolean } = {}): Promise<Early> {
  const { port } = new URL(url);
  return new Promise((resolve) => {
    const sock = net.connect(Number(port), '127.0.0.1');
    let sent = 0;
    let text = '';
    let answeredAt = -1;
    let timer: NodeJS.Timeout | undefined;
    const done = () => {
      clearInterval(timer);
      sock.destroy();
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1] ?? 0);
      resolve({ status: answeredAt >= 0 && answeredAt < bodyLength ? status : 0, sentWhenAnswered: answeredAt, text });
    };
    sock.on('error', () => undefined);
    sock.on('data', (d: Buffer) => {
      if (answeredAt < 0) answeredAt = sent;
      text += d.toString('latin1');
      if (/\r\n\r\n[\s\S]*\}/.test(text)) done();
    });
    sock.on('close', done);
    sock.write(head);
    timer = setInterval(() => {
      if (sent >= bodyLength || answeredAt >= 0) {
        clearInterval(timer);
        if (opts.chunked && sent >= bodyLength) sock.write('0\r\n\r\n');
        return;
      }
      const n = Math.min(16 * 1024, bodyLength - sent);
      const piece = Buffer.alloc(n, 'a');
      sock.write(opts.chunked ? Buffer.concat([Buffer.from(`${n.toString(16)}\r\n`), piece, Buffer.from('\r\n')]) : piece);
      sent += n;
    }, 20);
    setTimeout(done, 20_000);
  });
}

let s: TestServer;
let run: Running;
let H: string;

beforeAll(async () => {
  s = await startServer({ maxInflightBodyBytes: '1' });
  H = `Host: 127.0.0.1:${new URL(s.url).port}\r\n`;
  run = await runningBuild(s, {}, 'auth-first');
});
afterAll(() => s?.close());

describe('refused while the client is still sending', () => {
  test('trace PATCH with a wrong Build-Token (8 MiB declared): 403 before the body is in', async () => {
    const r = await sendSlowly(s.url, `PATCH /ci/api/v1/builds/${run.build.id}/trace.txt HTTP/1.1\r\n${H}Build-Token: wrong-token\r\nContent-Range: 0-${8 * MiB}\r\nContent-Type: text/plain\r\nContent-Length: ${8 * MiB}\r\n\r\n`, 8 * MiB);
    expect(r.status).toBe(403);
    expect(r.sentWhenAnswered).toBeLessThan(MiB);
  });

  test('trace PATCH for an unknown build, chunked: 404 before the body is in', async () => {
    const r = await sendSlowly(s.url, `PATCH /ci/api/v1/builds/999999/trace.txt HTTP/1.1\r\n${H}Build-Token: x\r\nContent-Range: 0-10\r\nTransfer-Encoding: chunked\r\n\r\n`, 4 * MiB, { chunked: true });
    expect(r.status).toBe(404);
  });

  for (const path of ['/runners/register', '/runners/register.json', '/builds/register.json', '/runners/delete']) {
    test(`${path}: a body over --max-runner-body-kib (64) is 413 before it is read`, async () => {
      const method = path === '/runners/delete' ? 'DELETE' : 'POST';
      const r = await sendSlowly(s.url, `${method} /ci/api/v1${path} HTTP/1.1\r\n${H}Content-Type: application/json\r\nContent-Length: ${4 * MiB}\r\n\r\n`, 4 * MiB);
      expect(r.status).toBe(413);
      expect(r.text).toMatch(/"message":"413 Request Entity Too Large"/);
    });
  }

  test('runners/register, chunked JSON over the limit: 413 once the limit is passed, not at the end', async () => {
    const r = await sendSlowly(s.url, `POST /ci/api/v1/runners/register.json HTTP/1.1\r\n${H}Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n`, 8 * MiB, { chunked: true });
    expect(r.status).toBe(413);
    // Refused at 64 KiB; a chunked body is then drained (not held) up to 1 MiB before the answer, so
    // a client that would finish soon reads it instead of EPIPE: well short of the 8 MiB sent.
    expect(r.sentWhenAnswered).toBeLessThan(2 * MiB);
  });

  test('runners/register, multipart fields over the limit: 413', async () => {
    const mp = multipart([
      { name: 'token', value: 'x'.repeat(40 * 1024) },
      { name: 'description', value: 'y'.repeat(40 * 1024) },
    ]);
    const r = await raw(`${s.url}/ci/api/v1/runners/register`, { method: 'POST', headers: { 'content-type': mp.contentType }, chunks: pieces(mp.body, 8192) });
    expect(r.status).toBe(413);
  });

  test('artifacts upload: form fields before the file (read before a token field can be checked) are held to --max-runner-body-kib in all', async () => {
    const mp = multipart([
      { name: 'junk1', value: 'x'.repeat(40 * 1024) },
      { name: 'junk2', value: 'y'.repeat(40 * 1024) },
      { name: 'token', value: 'not-the-token' },
      { name: 'file', value: Buffer.alloc(1024), filename: 'a.zip', contentType: 'application/octet-stream' },
    ]);
    const r = await raw(`${s.url}/ci/api/v1/builds/${run.build.id}/artifacts`, { method: 'POST', headers: { 'content-type': mp.contentType }, chunks: pieces(mp.body, 8192) });
    expect(r.status).toBe(413);
    const one = multipart([{ name: 'expire_in', value: 'z'.repeat(200 * 1024) }]);
    const r2 = await raw(`${s.url}/ci/api/v1/builds/${run.build.id}/artifacts`, { method: 'POST', headers: { 'content-type': one.contentType }, chunks: pieces(one.body, 8192) });
    expect(r2.status).toBe(413);
  });

  test('PUT builds/:id with a big body for a build that is not running: 404 (what the runner must hear) before the body is in', async () => {
    const r = await sendSlowly(s.url, `PUT /ci/api/v1/builds/999999.json HTTP/1.1\r\n${H}Content-Type: application/json\r\nContent-Length: ${8 * MiB}\r\n\r\n`, 8 * MiB);
    expect(r.status).toBe(404);
    expect(r.sentWhenAnswered).toBeLessThan(MiB);
  });

  test('an early 404 on a small trace body: drained, answered, the connection serves the next request', async () => {
    const { port } = new URL(s.url);
    const body = Buffer.alloc(100 * 1024, 'a');
    const text = await new Promise<string>((resolve) => {
      const sock = net.connect(Number(port), '127.0.0.1');
      let t = '';
      let rest = false;
      sock.on('error', (e) => resolve(`error ${(e as NodeJS.ErrnoException).code}`));
      sock.on('data', (d: Buffer) => {
        t += d.toString('latin1');
        if (!rest) {
          rest = true;
          sock.write(body.subarray(1024));
          sock.write(`GET /api/v3/sim/instance HTTP/1.1\r\n${H}Private-Token: ${s.adminToken}\r\n\r\n`);
        }
        if ((t.match(/HTTP\/1\.1 \d{3}/g) ?? []).length >= 2 && /\}$/.test(t)) {
          sock.destroy();
          resolve(t);
        }
      });
      sock.write(`PATCH /ci/api/v1/builds/999999/trace.txt HTTP/1.1\r\n${H}Build-Token: wrong\r\nContent-Range: 0-${body.length}\r\nContent-Length: ${body.length}\r\n\r\n`);
      sock.write(body.subarray(0, 1024));
      setTimeout(() => resolve(t), 5000);
    });
    expect([...text.matchAll(/HTTP\/1\.1 (\d{3})/g)].map((m) => m[1])).toEqual(['404', '200']);
  });
});

describe('real runners are unaffected', () => {
  test('the final PUT of a running build still carries a full trace far over the small limit', async () => {
    const r2 = await runningBuild(s, {}, 'full-trace');
    const trace = crypto.randomBytes(300 * 1024).toString('base64');
    const put = await runnerJson(`${s.url}/ci/api/v1/builds/${r2.build.id}.json`, 'PUT', { token: r2.runner.token, state: 'success', trace });
    expect(put.status).toBe(200);
    const stored = await raw(`${s.url}/api/v3/sim/builds/${r2.build.id}/trace`, { headers: { 'private-token': s.adminToken } });
    expect(stored.raw.toString()).toBe(trace);
  });
});

/** A trace PATCH announcing `len` bytes that sends 1 KiB and then trickles: it holds `len` of the body budget until destroyed. */
async function holdBudget(run: Running, len: number): Promise<net.Socket> {
  const head = `PATCH /ci/api/v1/builds/${run.build.id}/trace.txt HTTP/1.1\r\n${H}Build-Token: ${run.build.token}\r\nContent-Range: 0-${len}\r\nContent-Length: ${len}\r\n\r\n`;
  const { port } = new URL(s.url);
  const holder = net.connect(Number(port), '127.0.0.1');
  holder.on('error', () => undefined);
  await new Promise<void>((r) => holder.on('connect', () => r()));
  holder.write(head);
  holder.write(Buffer.alloc(1024, 'a'));
  await new Promise((r) => setTimeout(r, 300));
  return holder;
}

describe('bytes held across all requests (--max-inflight-body-mb 1)', () => {
  test('over the budget: 503 with Retry-After while others hold it, 413 when one body alone exceeds it; freed after', async () => {
    const r3 = await runningBuild(s, {}, 'budget');
    const len = 700 * 1024;
    const holder = await holdBudget(r3, len);
    const second = await raw(`${s.url}/ci/api/v1/builds/${r3.build.id}/trace.txt`, {
      method: 'PATCH',
      headers: { 'build-token': r3.build.token, 'content-range': `0-${len}` },
      body: Buffer.alloc(len, 'b'),
    });
    expect(second.status).toBe(503);
    expect(second.headers['retry-after']).toBe('1');
    expect(second.json.message).toMatch(/--max-inflight-body-mb/);
    const whole = await raw(`${s.url}/ci/api/v1/builds/${r3.build.id}/trace.txt`, {
      method: 'PATCH',
      headers: { 'build-token': r3.build.token, 'content-range': `0-${2 * MiB}` },
      body: Buffer.alloc(2 * MiB, 'c'),
    });
    expect(whole.status).toBe(413);
    holder.destroy();
    await new Promise((r) => setTimeout(r, 300));
    const third = await raw(`${s.url}/ci/api/v1/builds/${r3.build.id}/trace.txt`, {
      method: 'PATCH',
      headers: { 'build-token': r3.build.token, 'content-range': `0-${len}` },
      body: Buffer.alloc(len, 'd'),
    });
    expect(third.status).toBe(202);
  });

  test('a body sent to a path no route has is counted too (503 while others hold the budget)', async () => {
    const r6 = await runningBuild(s, {}, 'budget-404');
    const len = 700 * 1024;
    const holder = await holdBudget(r6, len);
    const lost = await raw(`${s.url}/ci/api/v1/no-such-route`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: Buffer.alloc(len, ' ') });
    expect(lost.status).toBe(503);
    holder.destroy();
    await new Promise((r) => setTimeout(r, 300));
    const after = await raw(`${s.url}/ci/api/v1/no-such-route`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: Buffer.alloc(len, ' ') });
    expect(after.status).toBe(404);
  });

  test('a chunked body is counted as it arrives: 503 once it passes what is left', async () => {
    const r4 = await runningBuild(s, {}, 'budget-chunked');
    const r = await raw(`${s.url}/ci/api/v1/builds/${r4.build.id}/trace.txt`, {
      method: 'PATCH',
      headers: { 'build-token': r4.build.token, 'content-range': `0-${2 * MiB}` },
      chunks: pieces(Buffer.alloc(2 * MiB, 'e'), 64 * 1024),
    }).catch((e: Error) => e);
    if (r instanceof Error) expect(r.message).toMatch(/ECONNRESET|EPIPE|socket hang up/);
    else expect(r.status).toBe(503);
    const trace = await raw(`${s.url}/api/v3/sim/builds/${r4.build.id}/trace`, { headers: { 'private-token': s.adminToken } });
    expect(trace.raw.length).toBe(0);
  });

  test('artifact uploads stream to disk and do not count against the budget', async () => {
    const r5 = await runningBuild(s, {}, 'budget-artifacts');
    const file = crypto.randomBytes(3 * MiB);
    const mp = multipart([{ name: 'file', value: file, filename: 'a.zip', contentType: 'application/octet-stream' }]);
    const up = await raw(`${s.url}/ci/api/v1/builds/${r5.build.id}/artifacts`, {
      method: 'POST',
      headers: { 'content-type': mp.contentType, 'build-token': r5.build.token },
      body: mp.body,
    });
    expect(up.status).toBe(201);
  });
});
