// The model test's HTTP client (wire.ts) against a raw server that writes exact bytes: every framing
// the server may use reads back as node:http reads it, and a malformed or cut answer is an error,
// not an answer: the model test's checks rest on it.
import net from 'node:net';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { Wire } from './wire.ts';

/** Answers per request line: the path picks the bytes written back. */
const ANSWERS: Record<string, string> = {
  '/length': 'HTTP/1.1 200 OK\r\ncontent-length: 5\r\nbuild-status: running\r\n\r\nhello',
  '/chunked': 'HTTP/1.1 201 Created\r\ntransfer-encoding: chunked\r\n\r\n3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n',
  '/dup': 'HTTP/1.1 200 OK\r\ncontent-length: 0\r\nset-cookie: a=1\r\nset-cookie: b=2\r\nx-list: 1\r\nx-list: 2\r\ncontent-type: a/b\r\ncontent-type: c/d\r\n\r\n',
  '/interim': 'HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 404 Not Found\r\ncontent-length: 2\r\n\r\n{}',
  '/close': 'HTTP/1.1 200 OK\r\nconnection: close\r\n\r\nuntil the end',
  // Both framings at once: llhttp's strict mode refuses it (a lenient parser would read one of them).
  '/bad': 'HTTP/1.1 200 OK\r\ncontent-length: 5\r\ntransfer-encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n',
  '/cut': 'HTTP/1.1 200 OK\r\ncontent-length: 100\r\n\r\nonly this',
  '/500': 'HTTP/1.1 500 Internal Server Error\r\ncontent-length: 2\r\n\r\n{}',
};
const CLOSE_AFTER = new Set(['/close', '/cut']);

let server: net.Server;
let port = 0;
const connections: number[] = [];
const seen: string[] = [];

beforeAll(async () => {
  server = net.createServer((socket) => {
    connections.push(1);
    let buf = '';
    socket.on('data', (d) => {
      buf += d.toString('latin1');
      for (let end = buf.indexOf('\r\n\r\n'); end >= 0; end = buf.indexOf('\r\n\r\n')) {
        const head = buf.slice(0, end);
        const length = Number(/content-length: (\d+)/i.exec(head)?.[1] ?? 0);
        if (buf.length < end + 4 + length) return;
        seen.push(`${head}\r\n\r\n${buf.slice(end + 4, end + 4 + length)}`);
        buf = buf.slice(end + 4 + length);
        const path = head.split(' ')[1]!;
        if (CLOSE_AFTER.has(path)) socket.end(ANSWERS[path]);
        else socket.write(ANSWERS[path] ?? 'HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\n\r\n');
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as net.AddressInfo).port;
});
afterAll(() => new Promise((resolve) => server.close(resolve)));

test('answers framed by length, chunks, interim 1xx or the close read back whole; keep-alive reuses one socket', async () => {
  const wire = new Wire('127.0.0.1', port);
  const before = connections.length;
  const a = await wire.request('GET', '/length', {}, undefined, 5000);
  expect([a.status, a.headers['build-status'], a.body.toString()]).toEqual([200, 'running', 'hello']);
  const b = await wire.request('POST', '/chunked', { 'content-length': 3 }, 'xyz', 5000);
  expect([b.status, b.body.toString()]).toEqual([201, 'abcde']);
  const c = await wire.request('GET', '/interim', {}, undefined, 5000);
  expect([c.status, c.body.toString()]).toEqual([404, '{}']);
  const d = await wire.request('GET', '/dup', {}, undefined, 5000);
  expect(d.headers['set-cookie']).toEqual(['a=1', 'b=2']);
  expect(d.headers['x-list']).toBe('1, 2');
  expect(d.headers['content-type']).toBe('a/b');
  expect(connections.length - before).toBe(1);
  const e = await wire.request('GET', '/close', {}, undefined, 5000);
  expect(e.body.toString()).toBe('until the end');
  // The closed connection is not used again.
  expect((await wire.request('GET', '/length', {}, undefined, 5000)).status).toBe(200);
  expect(connections.length - before).toBe(2);
  wire.destroy();
});

test('a malformed or cut answer is an error; a 500 is an answer (the caller judges it)', async () => {
  const wire = new Wire('127.0.0.1', port);
  await expect(wire.request('GET', '/bad', {}, undefined, 5000)).rejects.toThrow(/bad answer/);
  await expect(wire.request('GET', '/cut', {}, undefined, 5000)).rejects.toThrow();
  expect((await wire.request('GET', '/500', {}, undefined, 5000)).status).toBe(500);
  expect(() => wire.request('GET', '/length', { 'x-bad': 'a\r\nb' }, undefined, 5000)).toThrow(/invalid character/);
  wire.destroy();
});

test('what goes out: the Host given or the target, Content-Length 0 on an empty POST, none on a GET, the body as given', async () => {
  const wire = new Wire('127.0.0.1', port);
  seen.length = 0;
  await wire.request('POST', '/length', {}, undefined, 5000);
  await wire.request('GET', '/length', { host: 'evil.example' }, undefined, 5000);
  await wire.request('PATCH', '/length', { 'content-length': 4 }, Buffer.from('ab\r\n'), 5000);
  expect(seen[0]).toMatch(/^POST \/length HTTP\/1\.1\r\n/);
  expect(seen[0]).toContain(`host: 127.0.0.1:${port}\r\n`);
  expect(seen[0]).toContain('content-length: 0\r\n');
  expect(seen[1]).toContain('host: evil.example\r\n');
  expect(seen[1]).not.toContain('content-length');
  expect(seen[2]!.endsWith('\r\n\r\nab\r\n')).toBe(true);
  wire.destroy();
});
