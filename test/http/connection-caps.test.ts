// A flood of half-sent requests from one client must not starve the others (http/connection-caps.ts).
// Before the caps, 19,990 half-sent requests from one client filled the server's open-file limit and
// 60 of 60 other requests failed meanwhile, one on a keep-alive connection already open. Here the
// same, scaled: a real `jobscope serve` under an open-file limit of NOFILE (prlimit), flooded from
// 127.0.0.2 with FLOOD connections (more than the limit) that each send half a request and hold it
// HOLD_MS; a runner on 127.0.0.1 polls (new connections) and PATCHes its trace (one keep-alive
// connection opened before the flood) all the while. A socket the server closes is opened again, as
// an attacker's would be, at up to RECONNECTS_PER_S, so a descriptor the server frees is soon taken
// again; bounded: at most 8 × FLOOD connects in all, and every socket is closed at the end of the window.
// JOBSCOPE_FLOOD_NOFILE / _COUNT / _HOLD_MS change the scale.
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectionCaps } from '../../server/http/connection-caps.ts';
import { startServer, tempDir, type TestServer } from '../helpers/server.ts';
import { json, patchTrace, rangeEnd, request, RUNNER_UA, spawnServer, type ChildServer } from '../reliability/support.ts';

const NOFILE = Number(process.env.JOBSCOPE_FLOOD_NOFILE ?? 4096);
const FLOOD = Number(process.env.JOBSCOPE_FLOOD_COUNT ?? 6000);
const HOLD_MS = Number(process.env.JOBSCOPE_FLOOD_HOLD_MS ?? 20_000);
const ADMIN = 'flood-test-admin-token-0123456789';
const REGISTRATION = 'flood-test-registration-token-0123';

interface FloodResult {
  opened: number;
  /** Closed by the server before the flood let go of them (each is opened again). */
  closedByServer: number;
  /** Of those, how many had read a 503 first. */
  answered503: number;
}

const RECONNECTS_PER_S = 3000;

/** `count` sockets from 127.0.0.2, each sending the first lines of a request and never the rest. */
function flood(url: string, count: number, holdMs: number): Promise<FloodResult> {
  const { hostname, port } = new URL(url);
  const sockets = new Set<net.Socket>();
  const result: FloodResult = { opened: 0, closedByServer: 0, answered503: 0 };
  let budget = count * 8;
  /** Sockets closed by the server, to be opened again at the paced rate. */
  let again = 0;
  let over = false;
  const start = Date.now();
  return new Promise((resolve) => {
    const openOne = () => {
      if (over || budget-- <= 0) return;
      const s = net.connect({ host: hostname, port: Number(port), localAddress: '127.0.0.2' });
      sockets.add(s);
      let got = '';
      s.on('connect', () => {
        result.opened++;
        s.write(`POST /ci/api/v1/builds/register.json HTTP/1.1\r\nHost: ${hostname}:${port}\r\nUser-Agent: ${RUNNER_UA}\r\nContent-Type: application/json\r\n`);
      });
      s.on('data', (d: Buffer) => (got += d.toString('latin1')));
      s.on('error', () => undefined);
      s.on('close', () => {
        sockets.delete(s);
        if (over) return;
        result.closedByServer++;
        if (got.startsWith('HTTP/1.1 503')) result.answered503++;
        again++;
      });
    };
    // Opened in batches so the flood's own connects do not starve the test process's timers.
    let made = 0;
    const batch = () => {
      for (let i = 0; i < 200 && made < count; i++, made++) openOne();
      if (made < count) setTimeout(batch, 5);
    };
    batch();
    const reconnect = setInterval(() => {
      for (let i = 0; i < RECONNECTS_PER_S / 100 && again > 0; i++, again--) openOne();
    }, 10);
    setTimeout(() => {
      over = true;
      clearInterval(reconnect);
      for (const s of sockets) s.destroy();
      resolve(result);
    }, Math.max(0, holdMs - (Date.now() - start)));
  });
}

describe('connection caps under a flood from one address', () => {
  const dataDir = tempDir();
  let child: ChildServer;
  beforeAll(async () => {
    child = await spawnServer(
      // Half-sent requests are held for the whole window, as a server with a long header deadline would.
      ['--port', '0', '--data-dir', dataDir, '--log-level', 'warn', '--admin-token', ADMIN, '--registration-token', REGISTRATION, '--headers-timeout-ms', String(HOLD_MS * 3)],
      { wrap: ['prlimit', `--nofile=${NOFILE}:${NOFILE}`, '--'], timeoutMs: 60_000 },
    );
  }, 90_000);
  afterAll(async () => {
    await child?.stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it(`a runner on another address keeps ≥ 99 % of its polls and trace PATCHes; the server's descriptors stay under the cap`, async () => {
    const base = child.url;
    const caps = connectionCaps({ maxConnections: 0, maxConnectionsPerAddress: 0 }, NOFILE);
    await expect.poll(() => child.log()).toContain(`Connections: at most ${caps.total} open, ${caps.perAddress} per client address (open-file limit ${NOFILE}`);
    expect(FLOOD).toBeGreaterThan(caps.total);

    const admin = { 'private-token': ADMIN };
    const project = (await json<{ id: number }>(`${base}/api/v3/sim/projects`, 'POST', { name: 'flood' }, admin)).body;
    const runner = (await json<{ token: string }>(`${base}/ci/api/v1/runners/register.json`, 'POST', { token: REGISTRATION })).body;
    // Builds waiting for the runner: each one it takes during the flood starts a trace file of its own.
    expect((await json(`${base}/api/v3/sim/projects/${project.id}/builds`, 'POST', { count: 3000 }, admin)).status).toBe(201);
    const keepAlive = new http.Agent({ keepAlive: true, maxSockets: 1 });
    let build: { id: number; token: string } | undefined;
    let traceLength = 0;

    let fds = 0;
    const sampler = setInterval(() => {
      try {
        fds = Math.max(fds, fs.readdirSync(`/proc/${child.pid}/fd`).length);
      } catch {
        /* listing raced a close */
      }
    }, 100);
    const flooding = flood(base, FLOOD, HOLD_MS);
    let done = false;
    void flooding.then(() => (done = true));

    const failures: string[] = [];
    let attempts = 0;
    const attempt = async (what: string, run: () => Promise<boolean>) => {
      attempts++;
      try {
        if (!(await run())) failures.push(what);
      } catch (err) {
        failures.push(`${what}: ${(err as Error).message}`);
      }
    };
    // Polls on a new connection each (agent: false), PATCHes on the keep-alive one, in turn.
    while (!done) {
      await attempt('poll', async () => {
        const r = await request(`${base}/ci/api/v1/builds/register.json`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'user-agent': RUNNER_UA },
          body: JSON.stringify({ token: runner.token }),
          timeoutMs: 10_000,
        });
        if (r.status === 201) {
          build = JSON.parse(r.body.toString('utf8')) as { id: number; token: string };
          traceLength = 0;
        }
        return r.status === 201 || r.status === 204;
      });
      if (!build) continue;
      const { id, token } = build;
      await attempt('patch', async () => {
        const r = await patchTrace(base, id, token, traceLength, Buffer.from('line\n'), keepAlive);
        if (r.status !== 202) return false;
        traceLength = rangeEnd(r.headers);
        return true;
      });
      await new Promise((r) => setTimeout(r, 20));
    }
    const floodResult = await flooding;
    clearInterval(sampler);
    keepAlive.destroy();

    const ok = (attempts - failures.length) / attempts;
    console.log(
      `[connection-caps] nofile ${NOFILE}, caps ${caps.total}/${caps.perAddress}; flood: ${FLOOD} sockets, ${floodResult.opened} connected, ${floodResult.closedByServer} closed by the server ` +
        `(${floodResult.answered503} after a 503); runner: ${attempts - failures.length}/${attempts} ok (${(ok * 100).toFixed(2)} %); server fds at most ${fds}`,
    );
    expect(ok, failures.slice(0, 5).join('\n')).toBeGreaterThanOrEqual(0.99);
    expect(attempts).toBeGreaterThanOrEqual(50);
    expect(fds).toBeLessThan(caps.total);
    // The flood was refused past its share, not served.
    expect(floodResult.closedByServer).toBeGreaterThanOrEqual(FLOOD - caps.perAddress);

    // Logged once per burst: the first refusal, then the burst's count when it has gone quiet.
    await expect.poll(() => child.log().match(/refused \d+ connections in that burst/g)?.length ?? 0, { timeout: 15_000 }).toBe(1);
    expect(child.log().match(/refusing new connections/g)).toHaveLength(1);
    expect(child.log()).toContain(`refusing new connections: 127.0.0.2 holds ${caps.perAddress} (--max-connections-per-address)`);
  }, 120_000);
});

describe('connection caps, one by one', () => {
  let s: TestServer;
  const held: net.Socket[] = [];
  beforeAll(async () => {
    s = await startServer({ maxConnections: 6, maxConnectionsPerAddress: 3 });
  });
  afterAll(async () => {
    for (const c of held) c.destroy();
    await s?.close();
  });

  const target = () => Number(new URL(s.url).port);
  const open = () => new Promise<number>((resolve, reject) => s.server.app.server.getConnections((err, n) => (err ? reject(err) : resolve(n))));
  /** An idle connection from `from`, once the server has taken it in. */
  const hold = async (from: string) => {
    const before = await open();
    const c = net.connect({ host: '127.0.0.1', port: target(), localAddress: from });
    c.on('error', () => undefined);
    held.push(c);
    await expect.poll(open).toBe(before + 1);
    return c;
  };
  /** Connects from `from` and reads until the server closes: what it wrote before closing. */
  const refused = (from: string) =>
    new Promise<string>((resolve) => {
      const c = net.connect({ host: '127.0.0.1', port: target(), localAddress: from });
      let got = '';
      c.on('data', (d: Buffer) => (got += d.toString('utf8')));
      c.on('error', () => undefined);
      c.on('close', () => resolve(got));
    });
  /** One request from 127.0.0.1 on a connection of its own, closed after it. */
  const oneShot = new http.Agent({ keepAlive: false });
  const get = (agent = oneShot) => request(`${s.url}/api/app/status`, { agent, headers: { 'private-token': s.adminToken } }).then((r) => r.status);

  it('past its share an address gets 503 with Retry-After and a JSON message, and is closed; others and open keep-alive connections are served', async () => {
    const keepAlive = new http.Agent({ keepAlive: true, maxSockets: 1, localAddress: '127.0.0.2' } as http.AgentOptions);
    expect(await get(keepAlive)).toBe(200);
    await hold('127.0.0.2');
    await hold('127.0.0.2');
    const answer = await refused('127.0.0.2');
    expect(answer).toMatch(/^HTTP\/1\.1 503 Service Unavailable\r\n/);
    expect(answer).toContain('Retry-After: 5\r\n');
    expect(JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4))).toEqual({ message: expect.stringContaining('--max-connections-per-address') });
    // The connection it already had keeps working; another address is served.
    expect(await get(keepAlive)).toBe(200);
    expect(await get()).toBe(200);
    keepAlive.destroy();
  });

  it('past the overall cap a connection is closed at accept, without a byte; freed room serves again', async () => {
    // The two idle connections of the test before are still held.
    await expect.poll(open).toBe(2);
    const mine = [await hold('127.0.0.3'), await hold('127.0.0.3'), await hold('127.0.0.4'), await hold('127.0.0.4')];
    expect(await open()).toBe(6);
    expect(await refused('127.0.0.5')).toBe('');
    mine[0]!.destroy();
    await expect.poll(open).toBe(5);
    expect(await get()).toBe(200);
  });
});
