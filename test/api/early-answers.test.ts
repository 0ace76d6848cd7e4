// Answers given before a request's body was read: a small body is drained so the
// client can finish sending, read the 4xx and reuse its connection; and POST /runners/delete is no route.
import net from 'node:net';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { startServer, type TestServer } from '../helpers/server.ts';
import { registerRunner } from '../helpers/fixtures.ts';
import { raw, runnerJson } from './lib.ts';

let s: TestServer;
let port: number;

beforeAll(async () => {
  s = await startServer();
  port = Number(new URL(s.url).port);
});
afterAll(() => s.close());

interface Exchange {
  /** Everything the server sent on the connection. */
  text: string;
  /** The first error the client met while writing or reading (EPIPE, ECONNRESET), if any. */
  error?: string;
  /** True when the server closed the connection. */
  closed: boolean;
}

/**
 * Sends `head` and the first KiB of `body`, waits for the server's early answer, then writes the rest
 * of the body and a second request on the same connection, as a keep-alive client does.
 */
function earlyAnswerThenReuse(head: string, body: Buffer, second: string): Promise<Exchange> {
  return new Promise((resolve) => {
    const sock = net.connect(port, '127.0.0.1');
    let text = '';
    let error: string | undefined;
    let closed = false;
    let wroteRest = false;
    const finish = () => resolve({ text, error, closed });
    const timer = setTimeout(() => {
      sock.destroy();
      finish();
    }, 5000);
    sock.on('error', (e: NodeJS.ErrnoException) => (error ??= e.code ?? e.message));
    sock.on('close', () => {
      closed = true;
      clearTimeout(timer);
      finish();
    });
    sock.on('data', (d: Buffer) => {
      text += d.toString('latin1');
      if (!wroteRest && /\r\n\r\n/.test(text)) {
        wroteRest = true;
        sock.write(body.subarray(1024));
        sock.write(second);
      }
      // Both answers in: the connection served a second request after the early one.
      if ((text.match(/HTTP\/1\.1 \d{3}/g) ?? []).length >= 2 && /\r\n\r\n[\s\S]*\r\n\r\n[\s\S]*\}$/.test(text)) {
        clearTimeout(timer);
        sock.destroy();
        finish();
      }
    });
    sock.write(head);
    sock.write(body.subarray(0, 1024));
  });
}

test('POST /ci/api/v1/runners/delete is no route (GitLab routes only DELETE): 404, and the runner stays', async () => {
  const runner = await registerRunner(s);
  for (const path of ['/runners/delete', '/runners/delete.json']) {
    const r = await runnerJson(`${s.url}/ci/api/v1${path}`, 'POST', { token: runner.token });
    expect(r.status).toBe(404);
    expect(r.json).toEqual({ message: '404 Not Found' });
  }
  const del = await runnerJson(`${s.url}/ci/api/v1/runners/delete`, 'DELETE', { token: runner.token });
  expect(del.status).toBe(200);
  expect(del.json.id).toBe(runner.id);
  const query = await raw(`${s.url}/ci/api/v1/runners/delete?token=${runner.token}`, { method: 'POST' });
  expect(query.status).toBe(404);
});

test('an early 401 on a small body: the client finishes sending, reads the 401 and reuses the connection', async () => {
  const body = Buffer.from(JSON.stringify({ name: 'x'.repeat(200 * 1024) }));
  const head = `POST /api/v3/sim/projects HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nPrivate-Token: wrong-token\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n`;
  const second = `GET /api/v3/sim/instance HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nPrivate-Token: ${s.adminToken}\r\n\r\n`;
  const ex = await earlyAnswerThenReuse(head, body, second);
  expect(ex.error).toBeUndefined();
  expect(ex.text).toMatch(/^HTTP\/1\.1 401 /);
  expect(ex.text).not.toMatch(/connection: close/i);
  expect(ex.text).toMatch(/"401 Unauthorized"/);
  expect([...ex.text.matchAll(/HTTP\/1\.1 (\d{3})/g)].map((m) => m[1])).toEqual(['401', '200']);
});

test('an early answer on a large body still closes the connection (draining it would cost more than a new one)', async () => {
  const len = 64 * 1024 * 1024;
  const head = `POST /api/v3/sim/projects HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nPrivate-Token: wrong-token\r\nContent-Type: application/json\r\nContent-Length: ${len}\r\n\r\n`;
  const answer = await new Promise<string>((resolve) => {
    const sock = net.connect(port, '127.0.0.1');
    let text = '';
    sock.on('error', () => undefined);
    sock.on('data', (d: Buffer) => (text += d.toString('latin1')));
    sock.on('close', () => resolve(text));
    sock.write(head);
    sock.write(Buffer.alloc(1024, 'x'));
    setTimeout(() => sock.destroy(), 5000);
  });
  expect(answer).toMatch(/^HTTP\/1\.1 401 /);
  expect(answer).toMatch(/connection: close/i);
});
