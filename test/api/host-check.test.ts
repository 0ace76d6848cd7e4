// DNS rebinding: bound to loopback, the server answers only requests whose Host
// names it; and tokens given by flag or environment must be long enough not to be guessed.
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { startServer, tempDir, type TestServer } from '../helpers/server.ts';
import { ConfigError, resolveConfig } from '../../server/config.ts';

/** One GET with exactly this Host header (fetch and node:http would set their own). */
function getWithHost(url: string, host: string | undefined, path = '/api/v3/sim/instance', token?: string): Promise<{ status: number; body: string }> {
  const { port } = new URL(url);
  return new Promise((resolve, reject) => {
    const sock = net.connect(Number(port), '127.0.0.1');
    let text = '';
    sock.on('error', reject);
    sock.on('data', (d: Buffer) => (text += d.toString('utf8')));
    sock.on('end', () => {
      const m = /^HTTP\/1\.1 (\d{3})[\s\S]*?\r\n\r\n([\s\S]*)$/.exec(text);
      if (!m) return reject(new Error(`no answer: ${JSON.stringify(text)}`));
      resolve({ status: Number(m[1]), body: m[2]! });
    });
    const hostLine = host === undefined ? '' : `Host: ${host}\r\n`;
    const version = host === undefined ? 'HTTP/1.0' : 'HTTP/1.1';
    sock.write(`GET ${path} ${version}\r\n${hostLine}${token ? `Private-Token: ${token}\r\n` : ''}Connection: close\r\n\r\n`);
  });
}

describe('bound to 127.0.0.1', () => {
  let s: TestServer;
  let port: string;
  beforeAll(async () => {
    s = await startServer({ allowedHosts: 'jobscope.lan, ci.example.org:8443' });
    port = new URL(s.url).port;
  });
  afterAll(() => s.close());

  test('loopback names with any port, the bound address and configured hosts are served', async () => {
    for (const host of [`127.0.0.1:${port}`, '127.0.0.1', `localhost:${port}`, 'LOCALHOST:5173', `127.1.2.3:${port}`, `[::1]:${port}`, '[::1]', `jobscope.lan:${port}`, 'jobscope.lan', 'ci.example.org:8443', 'localhost.:80']) {
      const r = await getWithHost(s.url, host, '/api/v3/sim/instance', s.adminToken);
      expect(r.status, host).toBe(200);
    }
  });

  test('any other Host gets 421 with a JSON message saying how to allow it, on every route', async () => {
    for (const host of ['evil.example', `evil.example:${port}`, 'rebind.attacker.test', '10.0.0.5', '[::2]', `127.0.0.1.evil.example:${port}`, 'ci.example.org:9999', 'localhost.evil', '']) {
      for (const path of ['/api/v3/sim/instance', '/ci/api/v1/runners/register.json', '/', '/no/such/route']) {
        const r = await getWithHost(s.url, host, path, s.adminToken);
        expect(r.status, `${host} ${path}`).toBe(421);
        const msg = JSON.parse(r.body).message as string;
        expect(msg).toMatch(/--allowed-hosts/);
        expect(msg).toMatch(/JOBSCOPE_ALLOWED_HOSTS/);
      }
    }
  });

  test('accepted Host values are remembered, refused ones never: past the remembered count both rules still hold', async () => {
    const get = (host: string) => getWithHost(s.url, host, '/api/v3/sim/instance', s.adminToken);
    // More distinct accepted values than the check remembers (64), then refusals, then accepted values again.
    for (let p = 1; p <= 70; p++) expect((await get(`localhost:${p}`)).status, `localhost:${p}`).toBe(200);
    for (let i = 0; i < 2; i++) expect((await get('evil.example')).status).toBe(421);
    expect((await get('localhost:1')).status).toBe(200);
    expect((await get('localhost:9999')).status).toBe(200);
    expect((await get('localhost:9999.evil.example')).status).toBe(421);
  });

  test('a rebinding page cannot register a runner, even with the right registration token', async () => {
    const { port: p } = new URL(s.url);
    const body = JSON.stringify({ token: s.registrationToken });
    const status = await new Promise<number>((resolve, reject) => {
      const sock = net.connect(Number(p), '127.0.0.1');
      let text = '';
      sock.on('error', reject);
      sock.on('data', (d: Buffer) => (text += d.toString()));
      sock.on('end', () => resolve(Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1])));
      sock.write(`POST /ci/api/v1/runners/register.json HTTP/1.1\r\nHost: attacker.example:${p}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n${body}`);
    });
    expect(status).toBe(421);
    const runners = await getWithHost(s.url, `127.0.0.1:${p}`, '/api/v3/sim/runners', s.adminToken);
    expect(JSON.parse(runners.body)).toEqual([]);
  });

  test('a request without any Host (HTTP/1.0) is no rebinding and is served', async () => {
    expect((await getWithHost(s.url, undefined, '/api/v3/sim/instance', s.adminToken)).status).toBe(200);
  });
});

test('bound to 0.0.0.0: runners reach it by any name, so any Host is served unless --allowed-hosts is given', async () => {
  const open = await startServer({ host: '0.0.0.0' });
  try {
    expect((await getWithHost(open.url, 'build-box.internal:8090', '/api/v3/sim/instance', open.adminToken)).status).toBe(200);
  } finally {
    await open.close();
  }
  const strict = await startServer({ host: '0.0.0.0', allowedHosts: 'build-box.internal' });
  try {
    expect((await getWithHost(strict.url, 'build-box.internal:8090', '/api/v3/sim/instance', strict.adminToken)).status).toBe(200);
    expect((await getWithHost(strict.url, `localhost:${new URL(strict.url).port}`, '/api/v3/sim/instance', strict.adminToken)).status).toBe(200);
    expect((await getWithHost(strict.url, '192.168.1.7:8090', '/api/v3/sim/instance', strict.adminToken)).status).toBe(200);
    expect((await getWithHost(strict.url, 'evil.example', '/api/v3/sim/instance', strict.adminToken)).status).toBe(421);
  } finally {
    await strict.close();
  }
});

describe('tokens given by flag or environment', () => {
  const dataDir = tempDir();
  test('shorter than 16 characters: a ConfigError that says which setting and how long', () => {
    expect(() => resolveConfig({ dataDir, adminToken: 'short-token' }, {})).toThrow(ConfigError);
    expect(() => resolveConfig({ dataDir, adminToken: 'short-token' }, {})).toThrow(/--admin-token.*at least 16/);
    expect(() => resolveConfig({ dataDir }, { JOBSCOPE_REGISTRATION_TOKEN: 'reg-token' })).toThrow(/--registration-token.*at least 16/);
  });
  test('16 characters or more are taken as given (the README example included)', () => {
    const c = resolveConfig({ dataDir, adminToken: '0123456789abcdef', registrationToken: 'my-registration-token' }, {});
    expect(c.adminToken).toBe('0123456789abcdef');
    expect(c.registrationToken).toBe('my-registration-token');
  });
});
