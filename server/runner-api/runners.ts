// POST /runners/register and DELETE /runners/delete (lib/ci/api/runners.rb, unchanged 8.9–8.17).
import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../context.ts';
import { asToken } from '../auth/tokens.ts';
import { forbidden, missing, notFound } from '../http/errors.ts';
import { bool, given, readParams, str, type Params } from '../http/params.ts';
import { pickInfo } from '../domain/runners.ts';
import { refuseNul } from '../http/stored-text.ts';
import { authenticateRunner } from './auth.ts';

/**
 * "tag1, tag2" (what the runner sends) or an array (JSON clients) → distinct trimmed tags.
 * Array items are split on commas too: a schema validator that coerces a string into a one-item
 * array must not turn "a, b" into one tag, and GitLab's tag parser never allowed commas in a tag.
 */
export function parseTagList(v: unknown): string[] {
  const items = (Array.isArray(v) ? v.map((x) => str(x) ?? '') : [str(v) ?? '']).flatMap((x) => x.split(','));
  return [...new Set(items.map((t) => t.trim()).filter((t) => t.length > 0 && t.length <= 255))].slice(0, 100);
}

export async function runnersRoutes(app: FastifyInstance, { ctx }: { ctx: AppContext }) {
  const runners = ctx.domain.runners;

  const register = async (params: Params) => {
    if (!given(params.token)) throw missing('token');
    // A token that is given but not usable (too long, not a string) is a wrong token: 403, as GitLab's lookup failing.
    const token = asToken(params.token);
    if (!token) throw forbidden();
    const fields = {
      description: (str(params.description) ?? '').slice(0, 1024),
      run_untagged: bool(params.run_untagged, true),
      locked: bool(params.locked, false),
      tag_list: parseTagList(params.tag_list),
      info: pickInfo(params.info) ?? {},
    };
    // Before the token is looked up: this 400 is the same for a good token and a bad one, so it tells nothing about it.
    refuseNul('description', fields.description);
    refuseNul('tag_list', fields.tag_list);
    refuseNul('info', fields.info);
    const result = await runners.register(token, fields);
    // A runner that takes no untagged builds and has no tags is not saved: GitLab answered 404.
    if (!result.ok) throw result.reason === 'forbidden' ? forbidden() : notFound();
    return { id: result.runner.id, token: result.runner.token };
  };

  for (const url of ['/runners/register', '/runners/register.json']) {
    app.post(url, { schema: { tags: ['runner API v1'], summary: 'Register a runner with a registration token' } }, async (request, reply) => {
      const body = await register(await readParams(request));
      return reply.code(201).send(body);
    });
  }

  const remove = async (params: Params) => {
    if (!given(params.token)) throw missing('token');
    const runner = await authenticateRunner(ctx, params);
    await runners.delete(runner.id);
    return { id: runner.id, description: runner.description, active: runner.active, is_shared: runner.is_shared };
  };
  for (const url of ['/runners/delete', '/runners/delete.json']) {
    // GitLab routes DELETE only: a POST here is an unknown route (404), as it was there.
    app.route({
      method: 'DELETE',
      url,
      schema: { tags: ['runner API v1'], summary: 'Unregister a runner (its token in the body)' },
      handler: async (request, reply) => reply.code(200).send(await remove(await readParams(request))),
    });
  }
}
