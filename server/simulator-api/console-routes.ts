import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { MultipartFile } from '@fastify/multipart';
import {
  ConsoleBuildRef, ConsoleExchange, ConsoleRegister, ConsoleTrace, ConsoleUpdate, ConsoleUpload,
} from '../../contract/simulator.ts';
import { badRequest, missing, tooLarge } from '../http/errors.ts';
import { asMultipartError } from '../http/params.ts';
import { checkTarget } from './service.ts';
import { refuseControlChars } from '../outbound/control-chars.ts';
import type { SimulatorRouteOpts } from './route-options.ts';

const tags = ['simulator API: runner console'];
const State = ConsoleExchange.properties.state;
const reply200 = { 200: ConsoleExchange };

/** A build named by the caller; its token goes into a header. */
function buildRef(b: ConsoleBuildRef | undefined): { buildId?: number; buildToken?: string } {
  refuseControlChars({ build_token: b?.build_token });
  return { buildId: b?.build_id, buildToken: b?.build_token };
}

export async function consoleRoutes(fastify: FastifyInstance, { ctx, simulator }: SimulatorRouteOpts) {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const c = () => simulator.console;

  app.get('/console', { schema: { tags, summary: 'The console runner’s state: target, runner token, build, trace length', response: { 200: State } } }, async () =>
    c().state(),
  );

  app.post(
    '/console/register',
    { schema: { tags, summary: 'POST runners/register.json (with a registration token; default: this server’s)', body: ConsoleRegister, response: reply200 } },
    async (request) => {
      const b = request.body;
      refuseControlChars({ registration_token: b.registration_token });
      const target = b.target_url ? checkTarget(b.target_url) : undefined;
      simulator.refuseOwnTokens(target, [{ field: 'registration_token', value: b.registration_token }]);
      await simulator.refuseTarget(target);
      return c().register({
        target,
        registrationToken: b.registration_token ?? (simulator.isHome(target) ? ctx.store.registrationToken : ''),
        description: b.description,
        tagList: b.tag_list,
        runUntagged: b.run_untagged,
      });
    },
  );

  app.post(
    '/console/use-token',
    {
      schema: {
        tags,
        summary: 'Act as an existing runner (no request is made)',
        body: Type.Object({ runner_token: Type.String({ minLength: 1, maxLength: 512 }), target_url: Type.Optional(Type.String({ maxLength: 2048 })) }),
        response: { 200: State },
      },
    },
    async (request) => {
      const target = request.body.target_url ? checkTarget(request.body.target_url) : undefined;
      const token = request.body.runner_token;
      refuseControlChars({ runner_token: token });
      simulator.refuseOwnTokens(target, [{ field: 'runner_token', value: token }]);
      await simulator.refuseTarget(target);
      if (!simulator.isHome(target) && (await ctx.domain.runners.byToken(token))) {
        throw badRequest(`runner_token: that runner is registered on this server, and its token is only sent to this server; register on ${new URL(target!).host} or leave target_url empty`);
      }
      return c().useToken(target, token);
    },
  );

  app.post('/console/request-build', { schema: { tags, summary: 'POST builds/register.json: ask for a build', response: reply200 } }, async () => c().requestBuild());

  app.post(
    '/console/trace',
    {
      schema: {
        tags,
        summary: 'PATCH builds/:id/trace.txt with an editable Content-Range (default: continue at the server’s length)',
        body: ConsoleTrace,
        response: reply200,
      },
    },
    async (request) => {
      const b = request.body;
      refuseControlChars({ content_range: b.content_range, build_token: b.build_token });
      return c().sendTrace({ contentRange: b.content_range, body: b.body, buildId: b.build_id, buildToken: b.build_token });
    },
  );

  app.post(
    '/console/update',
    { schema: { tags, summary: 'PUT builds/:id.json with a state and optionally the full trace', body: ConsoleUpdate, response: reply200 } },
    async (request) => c().update({ state: request.body.state, trace: request.body.trace, buildId: request.body.build_id }),
  );

  app.post(
    '/console/upload',
    { schema: { tags, summary: 'POST builds/:id/artifacts: upload bytes given as base64 (streamed chunked, field "file")', body: ConsoleUpload, response: reply200 } },
    async (request) => {
      const b = request.body;
      if (!/^[A-Za-z0-9+/]*={0,2}$/.test(b.content_base64.replace(/\s+/g, ''))) throw badRequest('content_base64 is not base64');
      refuseControlChars({ filename: b.filename, expire_in: b.expire_in, build_token: b.build_token });
      return c().upload({
        filename: b.filename ?? 'artifacts.zip',
        content: Buffer.from(b.content_base64, 'base64'),
        expireIn: b.expire_in,
        buildId: b.build_id,
        buildToken: b.build_token,
      });
    },
  );

  app.post(
    '/console/upload-file',
    {
      schema: {
        tags,
        summary: 'The same upload with the file sent as multipart (field "file"; optional fields expire_in, build_id, build_token)',
        consumes: ['multipart/form-data'],
        response: reply200,
      },
    },
    async (request) => {
      if (!request.isMultipart()) throw badRequest('send multipart/form-data with a "file" field');
      const fields: Record<string, string> = Object.create(null) as Record<string, string>;
      let file: { name: string; content: Buffer } | undefined;
      try {
        for await (const part of request.parts()) {
          if (part.type === 'file') {
            const f = part as MultipartFile;
            if (f.fieldname !== 'file' || file) {
              f.file.resume();
              continue;
            }
            file = { name: f.filename || 'artifacts.zip', content: await f.toBuffer() };
          } else if (typeof part.value === 'string' && part.fieldname !== '__proto__') fields[part.fieldname] = part.value;
        }
      } catch (err) {
        if ((err as { code?: string }).code === 'FST_REQ_FILE_TOO_LARGE') throw tooLarge();
        throw asMultipartError(err);
      }
      if (!file) throw missing('file');
      const id = fields.build_id !== undefined ? Number(fields.build_id) : undefined;
      if (id !== undefined && !(Number.isInteger(id) && id > 0)) throw badRequest('build_id must be a positive integer');
      refuseControlChars({ filename: file.name, expire_in: fields.expire_in, build_token: fields.build_token });
      return c().upload({ filename: file.name, content: file.content, expireIn: fields.expire_in, buildId: id, buildToken: fields.build_token });
    },
  );

  app.post(
    '/console/download',
    { schema: { tags, summary: 'GET builds/:id/artifacts (body shown as base64 up to 1 MiB)', body: ConsoleBuildRef, response: reply200 } },
    async (request) => c().download(buildRef(request.body)),
  );

  app.post(
    '/console/delete-artifacts',
    { schema: { tags, summary: 'DELETE builds/:id/artifacts (no 1.x runner sends it; here to test the endpoint)', body: ConsoleBuildRef, response: reply200 } },
    async (request) => c().deleteArtifacts(buildRef(request.body)),
  );

  app.post('/console/unregister', { schema: { tags, summary: 'DELETE runners/delete (JSON body with the runner token)', response: reply200 } }, async () =>
    c().unregister(),
  );
}
