// POST|GET|DELETE /builds/:id/artifacts. Uploads stream to a temp file and become visible whole
// (see store/artifacts.ts); downloads stream from disk; nothing is held whole in memory.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { MultipartFile } from '@fastify/multipart';
import type { AppContext } from '../context.ts';
import { ApiError, forbidden, missing, notFound, tooLarge } from '../http/errors.ts';
import { asMultipartError, pathId, str, type Params } from '../http/params.ts';
import { TooLargeError, type StagedUpload } from '../store/artifacts.ts';
import type { Build } from '../store/builds.ts';
import { authenticateBuild, buildTokenOf, buildTokenValid } from './auth.ts';
import { buildDetails } from './build-details.ts';
import { artifactsExpireAt, parseExpireIn } from './expire-in.ts';

/** Content-Disposition for a name the client chose: ASCII fallback plus RFC 5987 UTF-8 form. */
export function contentDisposition(filename: string): string {
  const ascii = filename.replace(/[^\x20-\x7e]|["\\]/g, '_');
  return `attachment; filename="${ascii}"; filename*=UTF-8''${encodeURIComponent(filename)}`;
}

/** Only the base name, without control characters: this text is stored and echoed, never used as a path. */
function cleanFilename(name: string | undefined): string {
  const base = (name ?? '').split(/[\\/]/).pop() ?? '';
  const clean = base.replace(/[\x00-\x1f\x7f]/g, '').slice(0, 255);
  return clean === '' || clean === '.' || clean === '..' ? 'artifacts.zip' : clean;
}

export async function artifactsRoutes(app: FastifyInstance, { ctx }: { ctx: AppContext }) {
  const { store } = ctx;

  const findBuild = (raw: string): Build => {
    const id = pathId(raw);
    const build = id === undefined ? undefined : store.builds.byId(id);
    if (!build) throw notFound();
    return build;
  };

  app.post<{ Params: { id: string }; Querystring: Params }>(
    '/builds/:id/artifacts',
    { schema: { tags: ['runner API v1'], summary: 'Upload the artifacts archive (multipart field "file")', consumes: ['multipart/form-data'] } },
    async (request, reply) => {
      const build = findBuild(request.params.id);
      const query = request.query ?? {};
      // The token may come as a header, a query parameter or a form field sent before the file.
      let authed = buildTokenValid(ctx, build, buildTokenOf(request, query));
      if (!authed && (query.token !== undefined || request.headers['build-token'] !== undefined)) throw forbidden();
      if (!request.isMultipart()) {
        if (!authed) throw forbidden();
        if (build.status !== 'running') throw forbidden('Build is not running!');
        throw missing('Missing artifacts file!');
      }
      const declared = Number(request.headers['content-length']);
      const fields: Params = Object.create(null) as Params;
      let staged: StagedUpload | undefined;
      let filename = 'artifacts.zip';
      // Fields (token, expire_in) may come before the file and so before the token is known: all of
      // them together are held to the small-body limit, not multipart's 50 × 1 MiB.
      const fieldBudget = ctx.config.maxRunnerBodyKib * 1024;
      let fieldBytes = 0;
      try {
        for await (const part of request.parts({ limits: { fieldSize: fieldBudget } })) {
          if (part.type === 'field') {
            fieldBytes += Buffer.byteLength(part.fieldname) + Buffer.byteLength(String(part.value));
            if (part.valueTruncated || fieldBytes > fieldBudget) throw tooLarge();
            if (part.fieldname === 'token' && !authed) {
              authed = buildTokenValid(ctx, build, str(part.value));
              if (!authed) throw forbidden();
            }
            if (part.fieldname !== '__proto__') fields[part.fieldname] = part.value;
            continue;
          }
          const file = part as MultipartFile;
          if (file.fieldname !== 'file' || staged) {
            file.file.resume();
            continue;
          }
          if (!authed) throw forbidden();
          if (build.status !== 'running') throw forbidden('Build is not running!');
          if (Number.isFinite(declared) && declared > store.artifacts.maxBytes + 64 * 1024) throw tooLarge();
          filename = cleanFilename(file.filename);
          staged = await store.artifacts.stage(file.file);
          if (file.file.truncated) throw tooLarge();
        }
      } catch (err) {
        if (staged) store.artifacts.discard(staged);
        if (err instanceof TooLargeError || (err as { code?: string }).code === 'FST_REQ_FILE_TOO_LARGE') throw tooLarge();
        throw asMultipartError(err);
      }
      if (!authed) throw forbidden();
      if (!staged) {
        if (build.status !== 'running') throw forbidden('Build is not running!');
        throw missing('Missing artifacts file!');
      }
      const expireIn = parseExpireIn(str(query.expire_in) ?? str(fields.expire_in));
      const old = store.builds.byId(build.id)?.artifacts_key ?? null;
      let key: string;
      try {
        key = store.artifacts.commit(build.id, staged);
      } catch (err) {
        store.artifacts.discard(staged);
        throw err;
      }
      store.db.tx(() =>
        store.builds.setArtifacts(build.id, {
          key,
          filename,
          size: staged.size,
          expire_at: artifactsExpireAt(Date.now(), expireIn, ctx.config.maxArtifactExpireDays),
        }),
      );
      if (old && old !== key) store.artifacts.remove(old);
      ctx.events.emit('artifacts:stored', { buildId: build.id, key });
      return reply.code(201).send(buildDetails(ctx, store.builds.byId(build.id)!, request.host));
    },
  );

  const download = async (request: FastifyRequest<{ Params: { id: string }; Querystring: Params }>, reply: FastifyReply) => {
    const build = findBuild(request.params.id);
    authenticateBuild(ctx, request, request.query ?? {}, build);
    if (!build.artifacts_key) throw notFound();
    return sendArtifact(ctx, build, reply);
  };
  app.get<{ Params: { id: string }; Querystring: Params }>(
    '/builds/:id/artifacts',
    { schema: { tags: ['runner API v1'], summary: 'Download the artifacts archive' } },
    download,
  );

  app.delete<{ Params: { id: string }; Querystring: Params }>(
    '/builds/:id/artifacts',
    { schema: { tags: ['runner API v1'], summary: 'Erase the artifacts archive (200 also when there is none)' } },
    async (request, reply) => {
      const build = findBuild(request.params.id);
      const params: Params = { ...(request.query ?? {}) };
      if (request.body && typeof request.body === 'object' && !Buffer.isBuffer(request.body)) {
        const t = (request.body as Params).token;
        if (params.token === undefined && t !== undefined) params.token = t;
      }
      authenticateBuild(ctx, request, params, build);
      if (build.artifacts_key) {
        store.db.tx(() => store.builds.clearArtifacts(build.id));
        store.artifacts.remove(build.artifacts_key);
      }
      return reply.code(200).send(buildDetails(ctx, store.builds.byId(build.id)!, request.host));
    },
  );
}

/** Streams a build's archive with GitLab's `present_file!` headers. */
export function sendArtifact(ctx: AppContext, build: Build, reply: FastifyReply) {
  if (!build.artifacts_key) throw notFound();
  let stream;
  let size: number;
  try {
    size = ctx.store.artifacts.size(build.artifacts_key);
    stream = ctx.store.artifacts.open(build.artifacts_key);
  } catch {
    throw new ApiError(404, '404 Not Found');
  }
  return reply
    .code(200)
    .headers({
      'Content-Type': 'application/octet-stream',
      'Content-Disposition': contentDisposition(build.artifacts_filename ?? 'artifacts.zip'),
      'Content-Transfer-Encoding': 'binary',
      'Content-Length': String(size),
    })
    .send(stream);
}
