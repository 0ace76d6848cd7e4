// Request timeouts: a slow-loris crowd (sockets that trickle headers or bodies, or
// say nothing) cannot keep its sockets or stop a runner's poll, while a slow upload that keeps
// progressing outlives every timeout window and is stored. Timeouts are test-sized through config:
// the defaults (20 s headers, 30 s body window, 60 s idle) would only make the same waits longer.
import crypto from 'node:crypto';
import net from 'node:net';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { startServer, type TestServer } from '../helpers/server.ts';
import { createBuild, createProject, registerRunner } from '../helpers/fixtures.ts';
import { RUNNER_UA, json, uploadArtifact } from './support.ts';

const CROWD = 300;
// Short enough that the waits for them are short, long enough that a whole request on loopback is
// never cut under a loaded machine's scheduling (its headers arrive in one write).
const WINDOW_MS = 1000;
// How often the server checks the body rule (server/http/timeouts.ts: a quarter of the window).
const CHECK_MS = WINDOW_MS / 4;
let s: TestServer;
let port: number;

beforeAll(async () => {
  s = await startServer({ headersTimeoutMs: WINDOW_MS, bodyTimeoutMs: WINDOW_MS, bodyMinBytesPerS: 8192, idleTimeoutMs: 1.5 * WINDOW_MS, keepAliveTimeoutMs: 1000 });
  port = Number(new URL(s.url).port);
});
afterAll(() => s?.close());

interface Loris {
  sock: net.Socket;
  /** Resolves when the server closes the connection. */
  closed: Promise<void>;
  connected: Promise<void>;
  /** What the server sent before closing. */
  answer(): string;
}

/** One slow client on loopback; `drip` is sent a byte at a time, every 200 ms, until the server hangs up. */
function loris(start: string, drip: string): Loris {
  const sock = net.connect(port, '127.0.0.1');
  let answer = '';
  let timer: NodeJS.Timeout | undefined;
  sock.on('error', () => undefined);
  sock.on('data', (d: Buffer) => (answer += d.toString('latin1')));
  const closed = new Promise<void>((resolve) => sock.on('close', () => resolve()));
  const connected = new Promise<void>((resolve) => sock.on('connect', () => resolve()));
  sock.on('connect', () => {
    if (start) sock.write(start);
    let i = 0;
    if (drip) {
      timer = setInterval(() => {
        if (sock.destroyed) return clearInterval(timer);
        sock.write(drip[i++ % drip.length]!);
      }, 200);
    }
  });
  sock.on('close', () => clearInterval(timer));
  return { sock, closed, connected, answer: () => answer };
}

test(`a crowd of ${CROWD} slow-loris sockets neither stops a runner's poll nor keeps its sockets past the timeouts`, async () => {
  const project = await createProject(s, 'loris');
  const runner = await registerRunner(s);
  const H = `Host: 127.0.0.1:${port}\r\n`;
  const crowd: Loris[] = [];
  for (let i = 0; i < CROWD; i++) {
    if (i % 3 === 0) crowd.push(loris(`POST /ci/api/v1/runners/register HTTP/1.1\r\n${H}`, 'X-Slow: aaaaaaaaaaaaaaaaaaaaaaaa\r\n'));
    else if (i % 3 === 1) crowd.push(loris(`POST /ci/api/v1/runners/register HTTP/1.1\r\n${H}Content-Type: application/json\r\nContent-Length: 60000\r\n\r\n{"token":"`, 'abcdefgh'));
    else crowd.push(loris('', ''));
  }
  // Wait for the connections themselves, not for a time.
  await Promise.all(crowd.map((l) => l.connected));
  const open = () => crowd.filter((l) => !l.sock.destroyed).length;
  expect(open()).toBe(CROWD);

  // The crowd is connected; a real runner's poll still answers, and so does a build hand-out.
  const empty = await json(`${s.url}/ci/api/v1/builds/register.json`, 'POST', { token: runner.token });
  expect(empty.status).toBe(204);
  const build = await createBuild(s, project.id);
  const taken = await json(`${s.url}/ci/api/v1/builds/register.json`, 'POST', { token: runner.token });
  expect(taken.status).toBe(201);
  expect(taken.body.id).toBe(build.id);

  // Every crowd socket is closed by the server once its timeout has passed (WINDOW_MS here), none stays.
  const all = Promise.all(crowd.map((l) => l.closed)).then(() => 'all closed');
  const verdict = await Promise.race([all, new Promise((r) => setTimeout(() => r(`${open()} of ${CROWD} still open`), 15_000))]);
  expect(verdict).toBe('all closed');
  // A client trickling a body is told why (408) before the connection closes.
  const bodyTricklers = crowd.filter((_, i) => i % 3 === 1);
  expect(bodyTricklers.filter((l) => /^HTTP\/1\.1 408 /.test(l.answer())).length).toBe(bodyTricklers.length);
  expect(bodyTricklers[0]!.answer()).toMatch(/"message":"408 Request Timeout/);
  for (const l of crowd) l.sock.destroy();
}, 60_000);

test('a slow upload that keeps progressing outlives the body and idle timeouts and is stored; a stalled one is cut off', async () => {
  const project = await createProject(s, 'slow-upload');
  const runner = await registerRunner(s);
  await createBuild(s, project.id);
  const b = (await json(`${s.url}/ci/api/v1/builds/register.json`, 'POST', { token: runner.token })).body as { id: number; token: string };
  // ~3 s at ~130 KiB/s: three body windows and twice the idle timeout, well over the 8 KiB/s floor.
  const content = crypto.randomBytes(400 * 1024);
  const up = uploadArtifact(s.url, b.id, b.token, content, { chunk: 16 * 1024, paceMs: 3 * WINDOW_MS / 25 });
  const r = await up.done;
  expect(r.status).toBe(201);
  const got = await fetch(`${s.url}/ci/api/v1/builds/${b.id}/artifacts`, { headers: { 'build-token': b.token, 'user-agent': RUNNER_UA } });
  expect(got.status).toBe(200);
  expect(Buffer.from(await got.arrayBuffer()).equals(content)).toBe(true);

  // The same upload stalled after 64 KiB: the server closes it instead of waiting for ever.
  const stalled = uploadArtifact(s.url, b.id, b.token, content, { chunk: 16 * 1024, stallAfter: 64 * 1024 });
  const outcome = await Promise.race([
    stalled.done.then((res) => `answered ${res.status}`, (e: Error) => `closed: ${e.message}`),
    new Promise((res) => setTimeout(() => res('still open'), 15_000)),
  ]);
  expect(outcome).toMatch(/^(answered 408|closed)/);
}, 60_000);

test('a keep-alive socket whose earlier requests were whole is still held to the body rule on a later one', async () => {
  const runner = await registerRunner(s);
  const body = JSON.stringify({ token: runner.token });
  const sock = net.connect(port, '127.0.0.1');
  let answer = '';
  sock.on('error', () => undefined);
  sock.on('data', (d: Buffer) => (answer += d.toString('latin1')));
  const closed = new Promise<void>((resolve) => sock.on('close', () => resolve()));
  await new Promise<void>((resolve) => sock.on('connect', () => resolve()));
  const poll = `POST /ci/api/v1/builds/register.json HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nUser-Agent: ${RUNNER_UA}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`;
  // Two whole polls on the socket, the second after a body check has run (every CHECK_MS here).
  const answers = (n: number) => (answer.match(/^HTTP\/1\.1 /gm) ?? []).length >= n;
  sock.write(poll);
  await expect.poll(() => answers(1), { timeout: 5000 }).toBe(true);
  await new Promise((r) => setTimeout(r, CHECK_MS + 100));
  sock.write(poll);
  await expect.poll(() => answers(2), { timeout: 5000 }).toBe(true);
  expect(answer.match(/^HTTP\/1\.1 (\d+)/gm)).toEqual(['HTTP/1.1 204', 'HTTP/1.1 204']);
  // Then a body that stalls after a few bytes: 408 and the connection closed after the window.
  sock.write(`POST /ci/api/v1/builds/register.json HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nContent-Type: application/json\r\nContent-Length: 60000\r\n\r\n{"token":"`);
  const started = Date.now();
  const verdict = await Promise.race([closed.then(() => 'closed'), new Promise((r) => setTimeout(() => r('still open'), 10_000))]);
  expect(verdict).toBe('closed');
  expect(Date.now() - started).toBeGreaterThanOrEqual(WINDOW_MS - 100);
  expect(answer).toMatch(/HTTP\/1\.1 408 [\s\S]*"message":"408 Request Timeout/);
  sock.destroy();
}, 30_000);
