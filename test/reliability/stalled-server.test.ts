// The body rule (server/http/timeouts.ts) judges a client by the bytes the server read from it in a
// window. When the server itself does not run for longer than a window (its event loop blocked, the
// process starved of CPU on a loaded machine), a client that kept sending has its bytes waiting
// unread in the socket, and the first check after the stall ran before they were read: a healthy
// upload got a 408. Here the client runs in a worker thread, so it keeps sending while the server's
// thread is blocked, and its request must get the answer the same body gets when sent at once.
import net from 'node:net';
import { Worker } from 'node:worker_threads';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { startServer, type TestServer } from '../helpers/server.ts';

const WINDOW_MS = 500;
const MIN_BYTES_PER_S = 8192; // 4 KiB per window
let s: TestServer;
let port: number;

beforeAll(async () => {
  s = await startServer({ bodyTimeoutMs: WINDOW_MS, bodyMinBytesPerS: MIN_BYTES_PER_S, idleTimeoutMs: 10_000 });
  port = Number(new URL(s.url).port);
});
afterAll(() => s?.close());

/** A registration whose JSON is padded with whitespace to `size` bytes: valid, and long enough to trickle. */
function registration(size: number): string {
  const head = `{"token":"${s.registrationToken}","description":"stalled"`;
  return head + ' '.repeat(size - head.length - 1) + '}';
}

function request(body: string): string {
  return `POST /ci/api/v1/runners/register.json HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n${body}`;
}

/** Sends `head` at once; once `go` is set, `rest` in 4 KiB pieces every 25 ms (160 KiB/s, 20 times the
 *  floor), from its own thread; posts 'head-sent' after the first write and the server's whole answer at the end. */
const CLIENT = `
const net = require('node:net');
const { parentPort, workerData: { port, head, rest, go } } = require('node:worker_threads');
const started = new Int32Array(go);
const sock = net.connect(port, '127.0.0.1');
let answer = '';
sock.on('data', (d) => (answer += d.toString('latin1')));
sock.on('error', (e) => (answer += 'socket error: ' + e.message));
sock.on('close', () => parentPort.postMessage({ answer }));
sock.on('connect', () => {
  sock.write(head, () => parentPort.postMessage('head-sent'));
  let at = 0;
  const timer = setInterval(() => {
    if (Atomics.load(started, 0) === 0) return;
    if (at >= rest.length || sock.destroyed) return clearInterval(timer);
    sock.write(rest.slice(at, at + 4096));
    at += 4096;
  }, 25);
});`;

const statusOf = (answer: string) => /^HTTP\/1\.1 (\d{3})/.exec(answer)?.[1] ?? `no answer: ${answer.slice(0, 200)}`;

test('a server blocked for three body windows does not cut a client that kept sending meanwhile', async () => {
  // The same request sent at once: the answer the slow one must get too.
  const prompt = await new Promise<string>((resolve, reject) => {
    const sock = net.connect(port, '127.0.0.1', () => sock.end(request(registration(64 * 1024))));
    let answer = '';
    sock.on('data', (d: Buffer) => (answer += d.toString('latin1')));
    sock.on('close', () => resolve(answer));
    sock.on('error', reject);
  });
  expect(statusOf(prompt)).toBe('201');

  const whole = request(registration(64 * 1024));
  // The headers and 1 KiB of body first, the rest only once the server's thread is blocked: the
  // body's window holds less than the floor when the block starts.
  const cut = whole.indexOf('\r\n\r\n') + 4 + 1024;
  const go = new SharedArrayBuffer(4);
  const worker = new Worker(CLIENT, { eval: true, workerData: { port, head: whole.slice(0, cut), rest: whole.slice(cut), go } });
  const answered = new Promise<string>((resolve, reject) => {
    worker.on('message', (m: unknown) => (typeof m === 'object' && m !== null ? resolve((m as { answer: string }).answer) : undefined));
    worker.on('error', reject);
  });
  await new Promise<void>((resolve) => worker.once('message', () => resolve()));
  // Let the server read the headers and start watching the body, then block its thread (as a long
  // synchronous piece of work would) from the loop's check phase: the next loop turn starts with the
  // timers that fell due meanwhile, the body check among them, before the poll phase reads what the
  // client sent during the block.
  await new Promise((r) => setTimeout(r, 100));
  await new Promise<void>((resolve) =>
    setImmediate(() => {
      Atomics.store(new Int32Array(go), 0, 1);
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 3 * WINDOW_MS);
      resolve();
    }),
  );
  const answer = await answered;
  await worker.terminate();
  expect(statusOf(answer)).toBe('201');
}, 30_000);
