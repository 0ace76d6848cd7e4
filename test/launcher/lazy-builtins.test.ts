// scripts/launcher.js LAZY_FASTIFY_BUILTINS: in our bundles fastify loads node:http2 at its first
// use, not when fastify is evaluated. A server that never asks for HTTP/2 never loads it; one that
// does (http2: true) still gets a working HTTP/2 server from the same bundled fastify.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { build } from 'esbuild';
import { afterAll, expect, test } from 'vitest';
import { LAZY_FASTIFY_BUILTINS } from '../../scripts/launcher.js';

const ROOT = path.resolve(import.meta.dirname, '../..');
// Inside the repo, so the bundled fastify resolves from its node_modules.
const work = path.join(ROOT, '.tmp', `lazy-builtins-test-${process.pid}`);
afterAll(() => fs.rmSync(work, { recursive: true, force: true }));

const ENTRY = `
const Fastify = require('fastify');
const loaded = () => process.moduleLoadList.includes('NativeModule http2');
(async () => {
  const report = { afterImport: loaded() };
  const plain = Fastify();
  plain.get('/', async () => 'plain');
  await plain.listen({ port: 0, host: '127.0.0.1' });
  // node:http, not fetch: undici loads node:http2 itself.
  report.plainAnswer = await new Promise((resolve, reject) => {
    require('node:http').get('http://127.0.0.1:' + plain.server.address().port + '/', (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d) => (body += d));
      res.on('end', () => resolve(body));
    }).on('error', reject);
  });
  report.afterPlainListen = loaded();
  await plain.close();
  const h2 = Fastify({ http2: true });
  h2.get('/', async () => 'over h2');
  await h2.listen({ port: 0, host: '127.0.0.1' });
  const http2 = require('node:http2');
  const client = http2.connect('http://127.0.0.1:' + h2.server.address().port);
  report.h2Answer = await new Promise((resolve, reject) => {
    const req = client.request({ ':path': '/' });
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (d) => (body += d));
    req.on('end', () => resolve(body));
    req.on('error', reject);
  });
  client.close();
  await h2.close();
  console.log(JSON.stringify(report));
})();
`;

test('a bundled fastify loads node:http2 only for an HTTP/2 server, which still answers over HTTP/2', async () => {
  fs.mkdirSync(work, { recursive: true });
  fs.writeFileSync(path.join(work, 'entry.cjs'), ENTRY);
  const out = path.join(work, 'out.cjs');
  await build({ absWorkingDir: ROOT, entryPoints: [path.join(work, 'entry.cjs')], outfile: out, bundle: true, platform: 'node', format: 'cjs', logLevel: 'silent', plugins: [LAZY_FASTIFY_BUILTINS] });
  expect(fs.readFileSync(out, 'utf8')).toContain('http2Loaded ??=');
  const run = spawnSync(process.execPath, [out], { encoding: 'utf8', timeout: 30_000 });
  expect(run.stderr).toBe('');
  expect(JSON.parse(run.stdout)).toEqual({ afterImport: false, plainAnswer: 'plain', afterPlainListen: false, h2Answer: 'over h2' });
}, 60_000);
