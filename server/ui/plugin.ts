// Serves the built renderer at `/` (browser mode, `serve`, and the Electron window alike), with a
// strict CSP, and the SPA fallback: any other non-API GET gets index.html. Paths are resolved by
// @fastify/static's sendFile inside the UI folder only; API paths keep their JSON 404.
import fs from 'node:fs';
import path from 'node:path';
import type { FastifyInstance, FastifyReply } from 'fastify';
import fastifyStatic from '@fastify/static';
import type { AppContext } from '../context.ts';
import { defaultUiDir } from './package-root.ts';
import { inlineScriptSourcesOf, withScriptSources } from './inline-scripts.ts';

export const CSP = [
  "default-src 'self'",
  "connect-src 'self'",
  "img-src 'self' data:",
  "style-src 'self' 'unsafe-inline'",
  "script-src 'self'",
  "frame-ancestors 'none'",
  "base-uri 'self'",
  "form-action 'self'",
  "object-src 'none'",
].join('; ');

const API_PREFIXES = ['/api/', '/ci/'];

export function uiDirOf(ctx: AppContext): string | undefined {
  const dir = ctx.config.uiDir ?? defaultUiDir();
  return fs.existsSync(path.join(dir, 'index.html')) ? dir : undefined;
}

function secure(reply: FastifyReply, csp = CSP): FastifyReply {
  return reply
    .header('content-security-policy', csp)
    .header('x-content-type-options', 'nosniff')
    .header('referrer-policy', 'no-referrer')
    .header('x-frame-options', 'DENY');
}

export async function uiServing(app: FastifyInstance, { ctx }: { ctx: AppContext }) {
  const root = uiDirOf(ctx);
  if (!root) {
    app.get('/', { schema: { hide: true } }, async (_request, reply) =>
      secure(reply).code(404).type('application/json').send({
        message: '404 The UI is not built: run `npm run build:ui` (or start with `npm start`), or pass --ui-dir',
      }),
    );
    return;
  }
  await app.register(fastifyStatic, { root, serve: false });

  app.get('/*', { schema: { hide: true } }, async (request, reply) => {
    let url: string;
    try {
      url = decodeURIComponent(request.url.split('?')[0]!);
    } catch {
      return reply.code(400).type('application/json').send({ message: '400 (Bad request) malformed percent-encoding in the path' });
    }
    if (API_PREFIXES.some((p) => url.startsWith(p))) {
      return reply.code(404).type('application/json').send({ message: '404 Not Found' });
    }
    const rel = url.replace(/^\/+/, '');
    const file = path.resolve(root, rel);
    const inside = file === root || file.startsWith(root + path.sep);
    if (rel && inside && isFile(file)) {
      // Vite names built assets by content hash: safe to cache for good.
      const immutable = rel.startsWith('assets/');
      return secure(reply).sendFile(rel, { cacheControl: immutable, maxAge: immutable ? '365d' : 0, immutable });
    }
    if (path.extname(rel)) return reply.code(404).type('application/json').send({ message: '404 Not Found' });
    return sendIndex(reply);
  });
  app.get('/', { schema: { hide: true } }, async (_request, reply) => sendIndex(reply));

  const index = path.join(root, 'index.html');
  /** index.html, under the CSP plus the hashes of the inline scripts it holds. */
  function sendIndex(reply: FastifyReply) {
    const csp = withScriptSources(CSP, inlineScriptSourcesOf(index));
    return secure(reply, csp).header('cache-control', 'no-cache').sendFile('index.html', { cacheControl: false });
  }
}

function isFile(p: string): boolean {
  try {
    return fs.statSync(p).isFile();
  } catch {
    return false;
  }
}
