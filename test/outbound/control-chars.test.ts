// CR/LF (and other control characters) in a field that reaches another server's protocol: a 400
// naming the field, and nothing at all reaches the target port (a raw TCP listener records every
// byte; a text protocol there would run each line as a command).
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type TestServer } from '../helpers/server.ts';
import { http } from '../helpers/http.ts';

describe('control characters in outbound fields', () => {
  let s: TestServer;
  let listener: net.Server;
  let port = 0;
  const bytes: Buffer[] = [];
  beforeAll(async () => {
    s = await startServer();
    listener = net.createServer((sock) => sock.on('data', (b: Buffer) => bytes.push(b)));
    await new Promise<void>((r) => listener.listen(0, '127.0.0.1', r));
    port = (listener.address() as AddressInfo).port;
  });
  afterAll(async () => {
    await new Promise((r) => listener.close(r));
    await s.close();
  });
  const post = (p: string, json: unknown, method = 'POST') => http(`${s.url}/api/app${p}`, { token: s.adminToken, json, method });
  const refused = async (p: string, json: unknown, field: RegExp, method = 'POST') => {
    const r = await post(p, json, method);
    expect(r.status, JSON.stringify(r.body)).toBe(400);
    expect(r.body.message).toMatch(field);
  };

  it('sidekiq: password, redis_url (raw and percent-encoded) and namespace', async () => {
    const sk = { kind: 'sidekiq', name: 'x', redis_url: `redis://127.0.0.1:${port}/0` };
    for (const path of ['/connections/test', '/connections']) {
      await refused(path, { ...sk, password: 'secret\r\nFLUSHALL\r\n' }, /^400 \(Bad request\) password: holds a control character \(CR\)/);
      await refused(path, { ...sk, redis_url: `redis://:secret%0D%0AFLUSHALL@127.0.0.1:${port}/0` }, /^400 \(Bad request\) redis_url: holds a control character/);
      await refused(path, { ...sk, redis_url: `redis://127.0.0.1:${port}/\n0` }, /redis_url: holds a control character/);
      await refused(path, { ...sk, redis_url: `redis://127.0.0.1:${port}\r\n/0` }, /redis_url: holds a control character/);
      await refused(path, { ...sk, namespace: 'ns\r\nFLUSHALL' }, /namespace/);
    }
    const made = await post('/connections', { kind: 'sidekiq', name: 'closed', redis_url: 'redis://127.0.0.1:1/0' });
    expect(made.status).toBe(201);
    await refused(`/connections/${made.body.id}`, { password: 'a\nb' }, /password: holds a control character \(LF\)/, 'PATCH');
    await refused(`/connections/${made.body.id}`, { redis_url: `redis://:a%0Ab@127.0.0.1:${port}/0` }, /redis_url: holds a control character/, 'PATCH');
  });

  it('GitLab connections: base_url and private_token', async () => {
    const gl = { name: 'x', base_url: `http://127.0.0.1:${port}`, private_token: 'tok' };
    for (const path of ['/connections/test', '/connections']) {
      await refused(path, { ...gl, private_token: 'tok\r\nX-Injected: 1' }, /private_token: holds a control character \(CR\)/);
      await refused(path, { ...gl, base_url: `http://127.0.0.1:${port}/\r\nX-Injected: 1` }, /base_url: holds a control character/);
      await refused(path, { ...gl, base_url: `http://127.0.0.1:\t${port}` }, /base_url: holds a control character \(tab\)/);
    }
  });

  it('the runner console and fleet: target, tokens, Content-Range, file name', async () => {
    await refused('/sim/console/register', { target_url: `http://127.0.0.1:${port}/\n`, registration_token: 'r' }, /target_url: holds a control character/);
    await refused('/sim/console/register', { target_url: `http://127.0.0.1:${port}`, registration_token: 'r\r\nX: 1' }, /registration_token/);
    await refused('/sim/console/use-token', { target_url: `http://127.0.0.1:${port}`, runner_token: 'r\r\nX: 1' }, /runner_token/);
    await refused('/sim/console/trace', { body: 'x', build_id: 1, build_token: 't', content_range: '0-1\r\nX: 1' }, /content_range/);
    await refused('/sim/console/download', { build_id: 1, build_token: 't\r\nX: 1' }, /build_token/);
    await refused('/sim/console/upload', { content_base64: 'AA==', build_id: 1, build_token: 't', filename: 'a\r\nb.zip' }, /filename/);
    await refused('/sim/fleet', { target_url: `http://127.0.0.1:${port}`, admin_token: 'a\r\nX: 1', registration_token: 'r', runners: 1, builds: 1 }, /admin_token/);
  });

  it('nothing reached the target port', async () => {
    await new Promise((r) => setTimeout(r, 200));
    expect(Buffer.concat(bytes).toString('latin1')).toBe('');
  });
});
