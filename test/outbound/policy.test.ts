// The outbound policy: bound to loopback, every target is allowed (the desktop's network is the
// user's own); bound to another address, loopback, link-local, cloud-metadata and this machine's own
// addresses are refused unless --outbound-allow lists them, with a 403 naming the setting that says
// nothing about the port; an allowed internal host's non-JSON page is not quoted back.
import os from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type TestServer } from '../helpers/server.ts';
import { http } from '../helpers/http.ts';
import { recordingServer, type RecordingServer } from '../helpers/recording-server.ts';
import { OutboundRefused, outboundAllowProblem, outboundPolicy } from '../../server/outbound/policy.ts';
import { resolveConfig } from '../../server/config.ts';

/** A non-loopback IPv4 address of this machine, if it has one. */
const external = Object.values(os.networkInterfaces()).flat().find((i) => i && i.family === 'IPv4' && !i.internal)?.address;
const PAGE = '<html><body>internal admin page: secret-internal-content</body></html>';

describe('the policy on its inputs', () => {
  it('bound to loopback, allows everything by default', () => {
    const p = outboundPolicy('127.0.0.1', undefined);
    expect(p.open).toBe(true);
    for (const a of ['127.0.0.1', '169.254.169.254', 'fd00:ec2::254', '10.0.0.1']) expect(p.allows(a, a)).toBe(true);
  });

  it('bound elsewhere, refuses loopback, link-local, metadata and own addresses, in every spelling', () => {
    const p = outboundPolicy('0.0.0.0', undefined);
    expect(p.open).toBe(false);
    for (const a of ['127.0.0.1', '127.8.9.10', '0.0.0.0', '169.254.169.254', '169.254.1.1', '::1', '::', 'fe80::1', 'fd00:ec2::254', '::ffff:127.0.0.1', '::ffff:7f00:1', '::ffff:a9fe:a9fe']) {
      expect(p.allows(a, a), a).toBe(false);
    }
    if (external) expect(p.allows(external, external)).toBe(false);
    for (const a of ['10.1.2.3', '192.168.1.10', '8.8.8.8', '2001:db8::1']) expect(p.allows(a, a), a).toBe(true);
  });

  it('--outbound-allow exempts hosts, addresses and networks; * allows all', () => {
    const one = outboundPolicy('0.0.0.0', '127.0.0.1, gitlab.internal');
    expect(one.allows('127.0.0.1', '127.0.0.1')).toBe(true);
    expect(one.allows('127.0.0.2', '127.0.0.2')).toBe(false);
    expect(one.allows('gitlab.internal', '127.0.0.5')).toBe(true);
    const net = outboundPolicy('0.0.0.0', '127.0.0.0/8,fd00:ec2::/64');
    expect(net.allows('127.0.0.2', '127.0.0.2')).toBe(true);
    expect(net.allows('fd00:ec2::254', 'fd00:ec2::254')).toBe(true);
    expect(net.allows('169.254.169.254', '169.254.169.254')).toBe(false);
    expect(outboundPolicy('0.0.0.0', '*').open).toBe(true);
    // Given on a loopback bind, the list is what counts: the restrictive policy can be chosen there too.
    expect(outboundPolicy('127.0.0.1', '').open).toBe(false);
  });

  it('checks every address a name resolves to, and the lookup a connection uses', async () => {
    const p = outboundPolicy('0.0.0.0', '10.0.0.0/8');
    await expect(p.check('localhost')).rejects.toBeInstanceOf(OutboundRefused);
    await expect(p.check('169.254.169.254')).rejects.toThrow(/refused by the outbound policy.*--outbound-allow/);
    await expect(p.check('10.9.9.9')).resolves.toBeUndefined();
    const err = await new Promise<Error | null>((resolve) => p.lookup('localhost', {}, (e) => resolve(e)));
    expect(err).toBeInstanceOf(OutboundRefused);
  });

  it('a bad --outbound-allow value is a usage error naming the flag', () => {
    expect(outboundAllowProblem('10.0.0.0/33')).toMatch(/not a network/);
    expect(outboundAllowProblem('a b/c/d')).toMatch(/not a host/);
    expect(outboundAllowProblem('127.0.0.1, gitlab.example.com, 10.0.0.0/8, *')).toBeNull();
    expect(() => resolveConfig({ outboundAllow: '10.0.0.0/99' }, {})).toThrow(/--outbound-allow \(JOBSCOPE_OUTBOUND_ALLOW\): "10.0.0.0\/99" is not a network/);
  });
});

// Bound to 0.0.0.0 (not loopback, so the restrictive default applies) and reached through loopback:
// a test sends traffic to loopback addresses only, never to this machine's outward address.
describe('a server bound to a non-loopback address', () => {
  let s: TestServer;
  let allowing: TestServer;
  let page: RecordingServer;
  beforeAll(async () => {
    page = await recordingServer((_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end(PAGE));
    s = await startServer({ host: '0.0.0.0' });
    allowing = await startServer({ host: '0.0.0.0', outboundAllow: '127.0.0.1' });
  });
  afterAll(async () => {
    await page.close();
    await Promise.all([s.close(), allowing.close()]);
  });
  const post = (on: TestServer, p: string, json: unknown) => http(`${on.url}/api/app${p}`, { token: on.adminToken, json });

  it('refuses 127.0.0.1 and 169.254.169.254 with a 403 naming the setting, the same for an open and a closed port', async () => {
    const open = await post(s, '/connections/test', { name: 'x', base_url: page.url, private_token: 't' });
    expect(open.status).toBe(403);
    expect(open.body.message).toMatch(/^403 Forbidden +- base_url: 127\.0\.0\.1 is refused by the outbound policy: .*--outbound-allow \(JOBSCOPE_OUTBOUND_ALLOW, outboundAllow in settings\.json\)/);
    const closed = await post(s, '/connections/test', { name: 'x', base_url: 'http://127.0.0.1:1', private_token: 't' });
    expect(closed.body.message).toBe(open.body.message);
    const metadata = await post(s, '/connections/test', { name: 'x', base_url: 'http://169.254.169.254', private_token: 't' });
    expect(metadata.status).toBe(403);
    expect(metadata.body.message).toMatch(/169\.254\.169\.254 is refused by the outbound policy/);
    expect((await post(s, '/connections', { name: 'x', base_url: page.url, private_token: 't' })).status).toBe(403);
    const redis = await post(s, '/connections/test', { kind: 'sidekiq', name: 'x', redis_url: 'redis://127.0.0.1:6379/0' });
    expect(redis.status).toBe(403);
    expect(redis.body.message).toMatch(/redis_url: 127\.0\.0\.1 is refused/);
    const console = await post(s, '/sim/console/register', { target_url: page.url, registration_token: 'r' });
    expect(console.status).toBe(403);
    expect(console.body.message).toMatch(/target_url: 127\.0\.0\.1 is refused/);
    const fleet = await post(s, '/sim/fleet', { target_url: 'http://[::ffff:127.0.0.1]:9', registration_token: 'r', runners: 1, builds: 1 });
    expect(fleet.status).toBe(403);
    expect(page.received).toEqual([]);
  });

  it('the console still reaches this server itself', async () => {
    const home = await post(s, '/sim/console/register', {});
    expect(home.status).toBe(200);
    expect(home.body.response.status).toBe(201);
  });

  it('--outbound-allow lets one host through, without quoting its non-JSON page', async () => {
    const t = await post(allowing, '/connections/test', { name: 'x', base_url: page.url, private_token: 't' });
    expect(t.status).toBe(200);
    expect(t.body.ok).toBe(false);
    expect(t.body.message).toMatch(/^the answer was not JSON \(text\/html: \d+ bytes\)/);
    expect(t.body.message).not.toContain('secret-internal-content');
    const c = await post(allowing, '/sim/console/register', { target_url: page.url, registration_token: 'r' });
    expect(c.status).toBe(200);
    expect(c.body.response.status).toBe(200);
    expect(JSON.stringify(c.body)).not.toContain('secret-internal-content');
    expect(page.received.length).toBe(2);
    expect((await post(allowing, '/connections/test', { name: 'x', base_url: 'http://127.0.0.2:1', private_token: 't' })).status).toBe(403);
  });
});

describe('a server bound to loopback (the default)', () => {
  let s: TestServer;
  let page: RecordingServer;
  beforeAll(async () => {
    page = await recordingServer((_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end(PAGE));
    s = await startServer();
  });
  afterAll(async () => {
    await page.close();
    await s.close();
  });

  it('calls any host, and quotes what came back', async () => {
    const t = await http(`${s.url}/api/app/connections/test`, { token: s.adminToken, json: { name: 'x', base_url: page.url, private_token: 't' } });
    expect(t.status).toBe(200);
    expect(t.body.message).toContain('secret-internal-content');
    expect(page.received.length).toBe(1);
  });
});

describe('the connection goes to the address the lookup checked (DNS rebinding)', () => {
  // A name that passed the first check and then resolves elsewhere: modelled by a check that lets
  // everything through in front of the restrictive lookup, so only the connect-time check can stop it.
  const strict = outboundPolicy('0.0.0.0', undefined);
  const rebinding = { ...strict, open: false, check: async () => undefined };
  let page: RecordingServer;
  beforeAll(async () => {
    page = await recordingServer((_req, res) => res.writeHead(200).end('{}'));
  });
  afterAll(async () => page.close());
  const viaName = () => page.url.replace('127.0.0.1', 'localhost');

  it('the GitLab client', async () => {
    const { fetchCompound } = await import('../../server/monitor/remote-client.ts');
    const o = await fetchCompound({ baseUrl: viaName(), token: 't', apiVersion: 'v4', segment: 'sidekiq' }, { timeoutMs: 5000, policy: rebinding });
    expect(o.ok).toBe(false);
    expect(o.message).toMatch(/^localhost \(.*\) is refused by the outbound policy/);
    expect(page.received).toEqual([]);
  });

  it('a sidekiq connection\'s Redis client (ioredis resolves the name itself: the socket takes the lookup)', async () => {
    const net = await import('node:net');
    const { SidekiqSource } = await import('../../server/sidekiq/source.ts');
    let connections = 0;
    const listener = net.createServer((sock) => {
      connections++;
      sock.destroy();
    });
    await new Promise<void>((r) => listener.listen(0, '127.0.0.1', r));
    const port = (listener.address() as import('node:net').AddressInfo).port;
    const source = new SidekiqSource(
      { url: `redis://localhost:${port}/0`, password: '', namespace: '' },
      { timeoutMs: 3000, limits: { maxQueues: 10, maxProcesses: 10, days: 1, maxNameBytes: 256 }, reply: { maxBytes: 1 << 20, maxElements: 1000 }, lookup: strict.lookup },
    );
    try {
      const o = await source.sample();
      expect(o.ok).toBe(false);
      expect(o.message).toMatch(/refused by the outbound policy/);
      expect(connections).toBe(0);
    } finally {
      source.close();
      await new Promise((r) => listener.close(r));
    }
  });

  it('the simulator\'s HTTP client', async () => {
    const { HttpClient } = await import('../../simulator/http-client.ts');
    const { Journal } = await import('../../simulator/journal.ts');
    const client = new HttpClient(new Journal({ capacity: 10, bodyBytes: 100 }), { timeoutMs: 5000, outbound: async () => strict.lookup });
    try {
      const a = await client.send({ method: 'GET', url: `${viaName()}/x`, headers: {}, runner: 't' });
      expect(a.status).toBe(0);
      expect(a.error).toMatch(/is refused by the outbound policy/);
      expect(page.received).toEqual([]);
    } finally {
      client.close();
    }
  });
});
