// @fastify/multipart in stream mode (server/http/multipart.ts): registered at the root without the
// two disk-mode cleanup hooks it adds to every route, and every route that read multipart still
// reads it (as it reads JSON and urlencoded bodies).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import Fastify, { type FastifyPluginCallback } from 'fastify';
import stockMultipart from '@fastify/multipart';
import { DiskModeRefused, streamMultipart } from '../../server/http/multipart.ts';
import { startServer, type TestServer } from '../helpers/server.ts';
import { createProject } from '../helpers/fixtures.ts';
import { INFO, multipart, raw, runnerJson, RUNNER_UA } from './lib.ts';

/** The lifecycle hooks fastify lists for the one route of an app with `plugin` at its root. */
async function hooksWith(plugin: unknown) {
  const app = Fastify();
  await app.register(plugin as FastifyPluginCallback, {});
  app.post('/p', async (request) => {
    const fields: Record<string, unknown> = {};
    for await (const part of request.parts()) if (part.type === 'field') fields[part.fieldname] = part.value;
    return { multipart: request.isMultipart(), fields };
  });
  app.post('/disk', async (request) => {
    await request.saveRequestFiles();
    return {};
  });
  await app.ready();
  const printed = app.printRoutes({ includeHooks: true, commonPrefix: false });
  const mp = multipart([{ name: 'a', value: 'b' }]);
  const parsed = await app.inject({ method: 'POST', url: '/p', payload: mp.body, headers: { 'content-type': mp.contentType } });
  const disk = await app.inject({ method: 'POST', url: '/disk', payload: mp.body, headers: { 'content-type': mp.contentType } });
  await app.close();
  return { printed, parsed: parsed.json(), disk };
}

describe('the plugin in stream mode', () => {
  it('drops only what the stock plugin adds for disk mode: exactly one onRequest and one onResponse hook (an upgrade that adds another hook fails here, before the wrapper could drop it unseen)', async () => {
    const added: string[] = [];
    const app = Fastify();
    const addHook = app.addHook.bind(app) as (name: string, fn: unknown) => unknown;
    (app as unknown as { addHook(name: string, fn: unknown): unknown }).addHook = (name, fn) => {
      added.push(name);
      return addHook(name, fn);
    };
    await app.register(stockMultipart as unknown as FastifyPluginCallback, {});
    await app.ready();
    await app.close();
    expect(added.sort()).toEqual(['onRequest', 'onResponse']);
  });

  it('adds no onRequest or onResponse hook to a route, where the stock plugin adds one of each', async () => {
    const stock = await hooksWith(stockMultipart);
    expect(stock.printed).toContain('(onRequest)');
    expect(stock.printed).toContain('(onResponse)');
    const ours = await hooksWith(streamMultipart);
    expect(ours.printed).not.toContain('(onRequest)');
    expect(ours.printed).not.toContain('(onResponse)');
  });

  it('still parses multipart fields as streams, as the stock plugin does', async () => {
    expect((await hooksWith(stockMultipart)).parsed).toEqual({ multipart: true, fields: { a: 'b' } });
    expect((await hooksWith(streamMultipart)).parsed).toEqual({ multipart: true, fields: { a: 'b' } });
  });

  it('refuses disk mode, whose temp files only the dropped hooks deleted', async () => {
    const { disk } = await hooksWith(streamMultipart);
    expect(disk.statusCode).toBe(500);
    expect(disk.json().message).toBe(new DiskModeRefused().message);
  });
});

describe('the server', () => {
  let s: TestServer;
  let project: { id: number; runners_token: string };
  const url = (p: string) => `${s.url}/ci/api/v1${p}`;
  beforeAll(async () => {
    s = await startServer();
    project = await createProject(s, 'mp-stream');
  });
  afterAll(() => s.close());

  it('runs no onResponse hook on any runner API route (multipart disk cleanup was the only one)', () => {
    const printed = s.server.app.printRoutes({ includeHooks: true, commonPrefix: false });
    expect(printed).toContain('builds/register');
    expect(printed).not.toContain('(onResponse)');
  });

  /** The same request as JSON, urlencoded and multipart: the statuses, one per encoding. */
  async function eachEncoding(method: string, path: string, fields: () => Record<string, string>): Promise<number[]> {
    const statuses: number[] = [];
    const json = await runnerJson(url(path), method, fields());
    statuses.push(json.status);
    const form = await raw(url(path), {
      method,
      headers: { 'user-agent': RUNNER_UA, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(fields()).toString(),
    });
    statuses.push(form.status);
    const mp = multipart(Object.entries(fields()).map(([name, value]) => ({ name, value })));
    const multi = await raw(url(path), { method, headers: { 'user-agent': RUNNER_UA, 'content-type': mp.contentType }, body: mp.body });
    statuses.push(multi.status);
    return statuses;
  }

  async function register(description: string): Promise<string> {
    const r = await runnerJson(url('/runners/register'), 'POST', { token: project.runners_token, description, info: INFO });
    expect(r.status).toBe(201);
    return r.json.token as string;
  }

  it('runners/register, runners/delete and builds/register read all three encodings', async () => {
    expect(await eachEncoding('POST', '/runners/register', () => ({ token: project.runners_token, description: 'enc' }))).toEqual([201, 201, 201]);
    const tokens = [await register('d1'), await register('d2'), await register('d3')];
    let i = 0;
    expect(await eachEncoding('DELETE', '/runners/delete', () => ({ token: tokens[i++]! }))).toEqual([200, 200, 200]);
    const runner = await register('poll');
    // No build is pending: 204 is the answer of a poll whose token was read (403 when it was not).
    expect(await eachEncoding('POST', '/builds/register.json', () => ({ token: runner }))).toEqual([204, 204, 204]);
    expect(await eachEncoding('POST', '/builds/register.json', () => ({ token: 'not-a-runner' }))).toEqual([403, 403, 403]);
  });
});
