// Connections: list, add, change, remove, test. Tokens go in, never out (answers are ConnectionView).
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { ConnectionPatch, ConnectionView, NewConnection, TestResult, Thresholds } from '../../contract/app.ts';
import type { MonitorApi } from '../monitor/api.ts';
import { DEFAULT_INTERVAL_S, originOf, view, type Connection } from '../monitor/connections.ts';
import { normalizeBaseUrl, type FetchOutcome } from '../monitor/remote-client.ts';
import { ApiError, badRequest, conflict } from '../http/errors.ts';
import { refuseControlChars } from '../outbound/control-chars.ts';
import { refuseOutbound } from '../outbound/guard.ts';
import { policyOf } from '../outbound/policy.ts';
import type { AppContext } from '../context.ts';
import type { Config } from '../config.ts';
import { IdParams } from './schemas.ts';
import { NewSidekiqConnection, SidekiqFields } from '../../contract/sidekiq.ts';
import { sidekiqPatch, sidekiqTargetOrThrow, unionErrors } from './sidekiq-fields.ts';

const tags = ['app API'];

export async function connectionOr404(monitor: MonitorApi, id: string): Promise<Connection> {
  const c = await monitor.connections.get(id);
  if (!c) throw new ApiError(404, '404 Connection Not Found');
  return c;
}

function baseUrlOrThrow(raw: string): string {
  // Before the URL parser, which drops tabs and line breaks silently.
  refuseControlChars({ base_url: raw });
  const u = normalizeBaseUrl(raw);
  if (typeof u !== 'string') throw badRequest(`base_url: ${u.error}`);
  return u;
}

/** A GitLab connection's body, or a sidekiq one's (`kind: "sidekiq"`). */
const AnyNewConnection = Type.Union([NewConnection, NewSidekiqConnection]);
const AnyConnectionPatch = Type.Composite([ConnectionPatch, Type.Partial(SidekiqFields)]);
const NOT_SIDEKIQ_CHANGES = "allow_changes belongs to sidekiq connections: this server's own job system always allows actions, a GitLab connection has none";
const isSidekiq = (b: NewConnection | NewSidekiqConnection): b is NewSidekiqConnection => (b as { kind?: string }).kind === 'sidekiq';

/** The interval a new or changed connection samples at: given or the default, never under the server's minimum. */
function intervalOrThrow(config: Config, given: number | undefined): number | undefined {
  const min = config.minConnectionIntervalS;
  if (given !== undefined && given < min) {
    throw badRequest(`interval_s: at least ${min} s on this server (--min-connection-interval-s); give ${min} or more`);
  }
  return given;
}

/** The cap on watched connections (each one is a request to somebody every interval). */
async function refuseOverCap(monitor: MonitorApi, config: Config): Promise<void> {
  const remote = (await monitor.connections.list()).filter((c) => c.kind !== 'embedded').length;
  if (remote >= config.maxWatchedConnections) {
    throw conflict(`this server watches at most ${config.maxWatchedConnections} connections (--max-watched-connections) and has ${remote}: delete one first, or raise the setting`);
  }
}

const asTestResult = (o: FetchOutcome): TestResult => ({ ok: o.ok, ...(o.warning ? { warning: true } : {}), status: o.status, message: o.message, latency_ms: o.latencyMs, sample: o.metrics });

export async function connectionRoutes(fastify: FastifyInstance, { monitor, ctx }: { monitor: MonitorApi; ctx: AppContext }) {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const policy = () => policyOf(ctx.config);
  const defaultInterval = () => Math.max(DEFAULT_INTERVAL_S, ctx.config.minConnectionIntervalS);
  app.get('/connections', { schema: { tags, summary: 'Every watched connection (the embedded one first); tokens are never included', response: { 200: Type.Array(ConnectionView) } } }, async () =>
    (await monitor.connections.list()).map(view),
  );

  app.post(
    '/connections',
    {
      schema: { tags, summary: 'Add a remote GitLab (or Jobscope), or a Sidekiq through its Redis (kind "sidekiq"), to watch; sampling starts at once', body: AnyNewConnection, response: { 201: ConnectionView } },
      schemaErrorFormatter: unionErrors,
    },
    async (request, reply) => {
      const b = request.body;
      const intervalS = intervalOrThrow(ctx.config, b.interval_s) ?? defaultInterval();
      if (isSidekiq(b)) {
        const t = sidekiqTargetOrThrow(b.redis_url, b.password, b.namespace);
        await refuseOutbound(policy(), 'redis_url', t.url);
        await refuseOverCap(monitor, ctx.config);
        const c = await monitor.connections.create({
          kind: 'sidekiq',
          name: b.name.trim() || 'Sidekiq',
          baseUrl: t.url,
          token: t.password,
          apiVersion: 'v4',
          segment: t.namespace,
          intervalS,
          enabled: b.enabled ?? true,
        });
        monitor.changed(c);
        return reply.code(201).send(view(c));
      }
      refuseControlChars({ private_token: b.private_token });
      const baseUrl = baseUrlOrThrow(b.base_url);
      await refuseOutbound(policy(), 'base_url', baseUrl);
      await refuseOverCap(monitor, ctx.config);
      const c = await monitor.connections.create({
        name: b.name.trim() || 'GitLab',
        baseUrl,
        token: b.private_token,
        apiVersion: b.api_version ?? 'v4',
        segment: b.segment ?? 'sidekiq',
        intervalS,
        enabled: b.enabled ?? true,
      });
      monitor.changed(c);
      return reply.code(201).send(view(c));
    },
  );

  app.patch(
    '/connections/:id',
    {
      schema: {
        tags,
        summary: 'Change a connection (name, URL, token, API version, segment, interval, enabled; a sidekiq one: redis_url, password, namespace, allow_changes)',
        params: IdParams,
        body: AnyConnectionPatch,
        response: { 200: ConnectionView },
      },
    },
    async (request) => {
      const c = await connectionOr404(monitor, request.params.id);
      const p = request.body;
      if (c.kind !== 'embedded') intervalOrThrow(ctx.config, p.interval_s);
      if (c.kind === 'sidekiq') {
        const fields = sidekiqPatch(c, p);
        if (fields.baseUrl) await refuseOutbound(policy(), 'redis_url', fields.baseUrl);
        const updated = (await monitor.connections.update(c.id, fields))!;
        monitor.changed(updated);
        if (updated.allowChanges !== c.allowChanges) {
          request.log.info({ connection: c.id, allowChanges: updated.allowChanges, from: request.ip }, `${updated.name}: ${updated.allowChanges ? 'changes allowed' : 'read-only again'}`);
        }
        return view(updated);
      }
      if (p.allow_changes !== undefined) throw badRequest(NOT_SIDEKIQ_CHANGES);
      if (p.redis_url !== undefined || p.password !== undefined || p.namespace !== undefined) {
        throw badRequest('redis_url, password and namespace belong to sidekiq connections; this one reads a GitLab over HTTP');
      }
      if (c.kind === 'embedded' && (p.base_url !== undefined || p.private_token !== undefined || p.api_version !== undefined || p.segment !== undefined)) {
        throw badRequest('the embedded connection is this server: only name, interval_s and enabled can change');
      }
      refuseControlChars({ private_token: p.private_token });
      const baseUrl = p.base_url !== undefined ? baseUrlOrThrow(p.base_url) : undefined;
      if (baseUrl !== undefined) await refuseOutbound(policy(), 'base_url', baseUrl);
      // The stored token was given for one host: moving the URL to another origin must not carry it along.
      if (baseUrl !== undefined && originOf(baseUrl) !== originOf(c.baseUrl) && p.private_token === undefined) {
        throw badRequest(
          `base_url: moving this connection from ${c.baseUrl ? new URL(c.baseUrl).host : 'nowhere'} to ${new URL(baseUrl).host} needs its token again: ` +
            'send private_token with the new base_url (the stored token is only sent to the host it was given for)',
        );
      }
      const updated = (await monitor.connections.update(c.id, {
        name: p.name?.trim() || undefined,
        baseUrl,
        token: p.private_token,
        apiVersion: p.api_version,
        segment: p.segment,
        intervalS: p.interval_s,
        enabled: p.enabled,
      }))!;
      monitor.changed(updated);
      return view(updated);
    },
  );

  app.delete(
    '/connections/:id',
    { schema: { tags, summary: 'Stop watching a remote connection and delete its history (not the embedded one)', params: IdParams, response: { 204: Type.Null() } } },
    async (request, reply) => {
      const c = await connectionOr404(monitor, request.params.id);
      if (c.kind === 'embedded') throw badRequest('the embedded connection cannot be deleted; disable it instead (PATCH enabled=false)');
      monitor.removed(c.id);
      await monitor.connections.remove(c.id);
      return reply.code(204).send(null);
    },
  );

  app.post(
    '/connections/test',
    {
      schema: { tags, summary: 'Try a connection before saving it: one compound_metrics read (a sidekiq one: one read of its Redis), nothing stored', body: AnyNewConnection, response: { 200: TestResult } },
      schemaErrorFormatter: unionErrors,
    },
    async (request) => {
      const b = request.body;
      if (isSidekiq(b)) {
        const t = sidekiqTargetOrThrow(b.redis_url, b.password, b.namespace);
        await refuseOutbound(policy(), 'redis_url', t.url);
        return asTestResult(await monitor.probe({ kind: 'sidekiq', baseUrl: t.url, token: t.password, apiVersion: 'v4', segment: t.namespace }));
      }
      refuseControlChars({ private_token: b.private_token });
      const baseUrl = baseUrlOrThrow(b.base_url);
      await refuseOutbound(policy(), 'base_url', baseUrl);
      const o = await monitor.probe({ kind: 'gitlab', baseUrl, token: b.private_token, apiVersion: b.api_version ?? 'v4', segment: b.segment ?? 'sidekiq' });
      return asTestResult(o);
    },
  );

  app.post(
    '/connections/:id/test',
    { schema: { tags, summary: 'Try a saved connection now: one compound_metrics read, nothing stored', params: IdParams, response: { 200: TestResult } } },
    async (request) => asTestResult(await monitor.probe(await connectionOr404(monitor, request.params.id))),
  );

  app.get(
    '/connections/:id/thresholds',
    { schema: { tags, summary: 'Alert thresholds of a connection: per queue, a default, and a failure rate', params: IdParams, response: { 200: Thresholds } } },
    async (request) => (await connectionOr404(monitor, request.params.id)).thresholds,
  );

  app.put(
    '/connections/:id/thresholds',
    { schema: { tags, summary: 'Replace the alert thresholds of a connection', params: IdParams, body: Thresholds, response: { 200: Thresholds } } },
    async (request) => {
      const c = await connectionOr404(monitor, request.params.id);
      const t = request.body;
      if (Object.keys(t.queues).length > 5000) throw badRequest('queues: at most 5000 per-queue rules');
      await monitor.connections.setThresholds(c.id, t);
      return t;
    },
  );
}
