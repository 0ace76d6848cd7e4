// An answer given while a big body is still arriving (413 past the artifact limit, 507 on a full
// disk) must reach the client. Closing the socket with unread bytes in it makes the kernel send a
// reset, which can overtake the answer: the runner then sees EPIPE/ECONNRESET instead of the message
// that says what to do (CI met exactly this on the full-disk upload test). So the server closes
// lingeringly, as nginx and Apache do: it ends its side, reads and drops what still comes, and only
// then lets go.
import crypto from 'node:crypto';
import net from 'node:net';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { startServer, type TestServer } from '../helpers/server.ts';
import { json, uploadArtifact } from './support.ts';

interface Linger {
  s: TestServer;
  takeBuild(): Promise<{ id: number; token: string }>;
}

/** A server whose artifact limit (256 KiB) is passed early in any upload here, with a project and a runner. */
async function lingerServer(lingeringCloseMs?: number): Promise<Linger> {
  const s = await startServer({ maxArtifactBytes: '0.25', ...(lingeringCloseMs === undefined ? {} : { lingeringCloseMs }) });
  const admin = { 'private-token': s.adminToken };
  const projectId = (await json(`${s.url}/api/v3/sim/projects`, 'POST', { name: 'linger' }, admin)).body.id;
  const runnerToken = (await json(`${s.url}/ci/api/v1/runners/register.json`, 'POST', { token: s.registrationToken })).body.token;
  return {
    s,
    async takeBuild() {
      await json(`${s.url}/api/v3/sim/projects/${projectId}/builds`, 'POST', {}, admin);
      const r = await json(`${s.url}/ci/api/v1/builds/register.json`, 'POST', { token: runnerToken });
      expect(r.status).toBe(201);
      return r.body as { id: number; token: string };
    },
  };
}

// The default linger (5 s): 12 MiB bodies must drain inside it whatever the machine's load.
let dflt: Linger;
// The second test waits the linger out, so its server has a test-sized one (the rule is the same at any length).
const SHORT_LINGER_MS = 1000;
let short: Linger;
beforeAll(async () => {
  [dflt, short] = await Promise.all([lingerServer(), lingerServer(SHORT_LINGER_MS)]);
});
afterAll(async () => {
  await dflt?.s.close();
  await short?.s.close();
});

test('a client still writing a body far past the drain cap reads the 413, never a reset', async () => {
  const outcomes: string[] = [];
  // Several tries: without lingering the reset wins the race often, but not always.
  const { s, takeBuild } = dflt;
  // The server refuses it unread: one body serves every try.
  const body = crypto.randomBytes(12 * 1024 * 1024);
  for (let i = 0; i < 6; i++) {
    const b = await takeBuild();
    const r = await uploadArtifact(s.url, b.id, b.token, body, { chunk: 256 * 1024 })
      .done.then((x) => String(x.status))
      .catch((e: NodeJS.ErrnoException) => e.code ?? e.message);
    outcomes.push(r);
  }
  expect(outcomes).toEqual(Array(6).fill('413'));
});

test('a client that keeps trickling after the answer is let go once the linger is over', async () => {
  const { s, takeBuild } = short;
  const b = await takeBuild();
  const port = Number(new URL(s.url).port);
  const boundary = 'lingerboundary';
  const outcome = await new Promise<{ text: string; closedAfterMs: number }>((resolve) => {
    // Half-open allowed: this client does not close when the server ends its side; once answered it
    // keeps sending a few bytes every 200 ms for ever, as a stuck or hostile uploader would.
    const sock = net.connect({ port, host: '127.0.0.1', allowHalfOpen: true });
    let text = '';
    let answeredAt = 0;
    let trickle: NodeJS.Timeout | undefined;
    sock.on('data', (d: Buffer) => {
      text += d.toString('latin1');
      answeredAt ||= Date.now();
      trickle ??= setInterval(() => sock.write('x'.repeat(16)), 200);
    });
    sock.on('error', () => undefined);
    sock.on('close', () => {
      clearInterval(trickle);
      resolve({ text, closedAfterMs: answeredAt ? Date.now() - answeredAt : -1 });
    });
    // Declared far larger than the limit: refused as soon as the file part starts.
    sock.write(
      `POST /ci/api/v1/builds/${b.id}/artifacts HTTP/1.1\r\nHost: 127.0.0.1\r\nBUILD-TOKEN: ${b.token}\r\n` +
        `Content-Type: multipart/form-data; boundary=${boundary}\r\nContent-Length: ${64 * 1024 * 1024}\r\n\r\n`,
    );
    sock.write(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="a.zip"\r\n\r\n`);
    sock.write(crypto.randomBytes(64 * 1024));
  });
  expect(outcome.text).toMatch(/^HTTP\/1\.1 413/);
  expect(outcome.text).toMatch(/connection: close/i);
  // Read and dropped for the linger, then cut although the client never stopped. The server's timer
  // starts as it ends its side, a moment before the answer is read here: hence the slack (1 s of 5 before).
  expect(outcome.closedAfterMs).toBeGreaterThanOrEqual(SHORT_LINGER_MS * 0.8);
  const after = await json(`${s.url}/api/v3/sim/builds/${b.id}`, 'GET', undefined, { 'private-token': s.adminToken });
  expect(after.status).toBe(200);
}, 30_000);
