// POST|GET|DELETE /builds/:id/artifacts. Uploads stream to a temp file and become visible whole
// (see store/files/artifacts.ts); downloads stream from disk; nothing is held whole in memory.
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { MultipartFile } from '@fastify/multipart';
import type { AppContext } from '../context.ts';
import { ApiError, forbidden, missing, notFound, tooLarge } from '../http/errors.ts';
import { asMultipartError, pathId, str, type Params } from '../http/params.ts';
import type { StagedUpload } from '../store/ports/artifact.ts';
import { releaseArchiveChunk, releaseChunksAfterWrite } from '../util/released-buffers.ts';
import { TooLargeError } from '../store/ports/ports.ts';
import type { Build } from '../store/ports/build.ts';
import { authenticateBuild, buildTokenOf, buildTokenValid } from './auth.ts';
import { buildDetails } from './build-details.ts';
import { RunnerPathId, RunnerQuery } from './schemas.ts';
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

export async function artifactsRoutes(fastify: FastifyInstance, { ctx }: { ctx: AppContext }) {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const builds = ctx.domain.builds;
  const schema = (summary: string) => ({ tags: ['runner API v1'], summary, params: RunnerPathId, querystring: RunnerQuery });

  const findBuild = async (raw: string): Promise<Build> => {
    const id = pathId(raw);
    const build = id === undefined ? undefined : await builds.byId(id);
    if (!build) throw notFound();
    return build;
  };

  app.post(
    '/builds/:id/artifacts',
    { schema: { ...schema('Upload the artifacts archive (multipart field "file")'), consumes: ['multipart/form-data'] } },
    async (request, reply) => {
      const build = await findBuild(request.params.id);
      const query = request.query ?? {};
      // The token may come as a header, a query parameter or a form field sent before the file.
      let authed = await buildTokenValid(ctx, build, buildTokenOf(request, query));
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
              authed = await buildTokenValid(ctx, build, str(part.value));
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
          if (Number.isFinite(declared) && declared > builds.maxArtifactBytes + 64 * 1024) throw tooLarge();
          filename = cleanFilename(file.filename);
          releaseChunksAfterWrite(file.file);
          staged = await builds.stageArtifacts(file.file);
          if (file.file.truncated) throw tooLarge();
        }
      } catch (err) {
        if (staged) await builds.discardArtifacts(staged);
        if (err instanceof TooLargeError || (err as { code?: string }).code === 'FST_REQ_FILE_TOO_LARGE') throw tooLarge();
        throw asMultipartError(err);
      }
      if (!authed) throw forbidden();
      if (!staged) {
        if (build.status !== 'running') throw forbidden('Build is not running!');
        throw missing('Missing artifacts file!');
      }
      const expireIn = parseExpireIn(str(query.expire_in) ?? str(fields.expire_in));
      const stored = await builds.storeArtifacts(build.id, staged, {
        filename,
        expire_at: artifactsExpireAt(Date.now(), expireIn, ctx.config.maxArtifactExpireDays),
      });
      return reply.code(201).send(await buildDetails(ctx, stored, request.host));
    },
  );

  app.get('/builds/:id/artifacts', { schema: schema('Download the artifacts archive') }, async (request, reply) => {
    const build = await findBuild(request.params.id);
    await authenticateBuild(ctx, request, request.query ?? {}, build);
    if (!build.artifacts_key) throw notFound();
    return sendArtifact(ctx, build, reply);
  });

  app.delete(
    '/builds/:id/artifacts',
    { schema: schema('Erase the artifacts archive (200 also when there is none)') },
    async (request, reply) => {
      const build = await findBuild(request.params.id);
      const params: Params = { ...(request.query ?? {}) };
      if (request.body && typeof request.body === 'object' && !Buffer.isBuffer(request.body)) {
        const t = (request.body as Params).token;
        if (params.token === undefined && t !== undefined) params.token = t;
      }
      await authenticateBuild(ctx, request, params, build);
      const now = await builds.deleteArtifacts(build);
      return reply.code(200).send(await buildDetails(ctx, now!, request.host));
    },
  );
}

/** Streams a build's archive with GitLab's `present_file!` headers. */
export async function sendArtifact(ctx: AppContext, build: Build, reply: FastifyReply) {
  if (!build.artifacts_key) throw notFound();
  let file;
  try {
    file = await ctx.domain.builds.openArtifacts(build.artifacts_key);
  } catch {
    throw new ApiError(404, '404 Not Found');
  }
  // Each 1 MiB read is given back as soon as the socket has written it, not left to the GC: a dead
  // read still counts against V8's old-generation limit until a scavenge, and 256 MiB sent ran 7-10
  // mark-compacts (see util/released-buffers.ts). Only write()'s callback knows when the kernel has
  // the bytes, and fastify pipes the stream into this response itself, so its write is wrapped here.
  const res = reply.raw;
  const write = res.write;
  res.write = function (this: typeof res, chunk: unknown, ...rest: unknown[]): boolean {
    const cb = typeof rest.at(-1) === 'function' ? (rest.pop() as (err?: Error | null) => void) : undefined;
    return (write as (...a: unknown[]) => boolean).call(this, chunk, ...rest, (err?: Error | null) => {
      if (!err) releaseArchiveChunk(chunk);
      cb?.(err);
    });
  } as typeof res.write;
  return reply
    .code(200)
    .headers({
      'Content-Type': 'application/octet-stream',
      'Content-Disposition': contentDisposition(build.artifacts_filename ?? 'artifacts.zip'),
      'Content-Transfer-Encoding': 'binary',
      'Content-Length': String(file.size),
    })
    .send(file.stream);
}
