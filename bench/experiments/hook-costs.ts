// What each per-request hook of server/http/ costs a poll, one at a time: a fastify server (a child
// process, as the bench's servers are) with one POST route answering a runner-sized JSON body, and
// the hooks of one variant installed as app.ts installs them; a keep-alive client in this process
// sends the runner's poll body. All variants' servers are up at once and driven one after another,
// in an order rotated round by round, so load drift hits them alike. Each variant's server CPU per
// request (µs, /proc) is compared with the variant with no hook of ours, measured in the same round.
// On a loaded machine read the medians, not one round.
//   node --import tsx bench/experiments/hook-costs.ts [rounds] [requests] [variant,variant...]
import http from 'node:http';
import os from 'node:os';
import { pathToFileURL } from 'node:url';
import Fastify, { LogController, type FastifyInstance } from 'fastify';
import { cpuMeter } from '../lib/pg-bench.ts';
import { log, round, send, startChild, RUNNER_UA } from '../lib/harness.ts';
import type { Config } from '../../server/config.ts';
import { installHostCheck } from '../../server/http/host-check.ts';
import { installBodyProgress, serverTimeoutOptions } from '../../server/http/timeouts.ts';
import { installBodyBudget } from '../../server/http/body-budget.ts';
import { connectionCaps, installConnectionCaps } from '../../server/http/connection-caps.ts';
import { installErrorHandling } from '../../server/http/errors.ts';
import { installBodyParsers } from '../../server/http/body-parsers.ts';
import { refuseNonFiniteNumbers } from '../../server/http/finite-numbers.ts';
import { streamMultipart } from '../../server/http/multipart.ts';

const config = {
  host: '127.0.0.1',
  allowedHosts: '',
  headersTimeoutMs: 30_000,
  bodyTimeoutMs: 30_000,
  bodyMinBytesPerS: 0,
  idleTimeoutMs: 60_000,
  keepAliveTimeoutMs: 60_000,
  maxInflightBodyBytes: 256 * 1024 * 1024,
  maxConnections: 0,
  maxConnectionsPerAddress: 0,
  lingeringCloseMs: 5000,
} as Config;

/**
 * Each variant: what app.ts installs for that concern. `none` is fastify with the poll's route alone
 * (node's own socket timeouts); `socket-timeouts` is the server options of http/timeouts.ts.
 */
const VARIANTS: Record<string, (app: FastifyInstance) => Promise<void> | void> = {
  none: () => undefined,
  'socket-timeouts': () => undefined,
  'host-check': (app) => installHostCheck(app, config),
  'body-progress': (app) => installBodyProgress(app, config),
  'body-budget': (app) => void installBodyBudget(app, config),
  'connection-caps': (app) => void installConnectionCaps(app.server, connectionCaps(config), { warn: () => undefined }),
  'error-handling': (app) => installErrorHandling(app, config),
  'body-parsers': (app) => installBodyParsers(app),
  'finite-numbers': (app) => refuseNonFiniteNumbers(app),
  multipart: async (app) => void (await app.register(streamMultipart, { limits: { files: 1 } })),
};
VARIANTS.all = async (app) => {
  for (const [name, install] of Object.entries(VARIANTS)) if (name !== 'none' && name !== 'all') await install(app);
};

const POLL_SCHEMA = { body: { type: 'object', properties: { token: { type: 'string' }, info: { type: 'object' } } } };
const ANSWER = { id: 1, token: 'x'.repeat(20), status: 'running', commands: 'make test', variables: [] };

async function serve(variant: string): Promise<void> {
  const timeouts = variant === 'socket-timeouts' || variant === 'all' ? serverTimeoutOptions(config) : {};
  const app = Fastify({ logger: false, logController: new LogController({ disableRequestLogging: true }), forceCloseConnections: 'idle', ...timeouts });
  await VARIANTS[variant]!(app);
  app.post('/builds/register.json', { schema: POLL_SCHEMA }, (_request, reply) => reply.code(201).send(ANSWER));
  const url = await app.listen({ host: '127.0.0.1', port: 0 });
  console.log(`hook-costs ${variant} listening on ${url}`);
}

interface Side {
  variant: string;
  child: Awaited<ReturnType<typeof startChild>>;
  agent: http.Agent;
}

const BODY = JSON.stringify({ token: 'x'.repeat(40), info: { name: 'gitlab-ci-multi-runner', version: '1.11.5' } });

async function drive(side: Side, requests: number, connections: number): Promise<void> {
  const url = `${side.child.url}/builds/register.json`;
  const loop = async (n: number) => {
    for (let i = 0; i < n; i++) {
      const r = await send(url, { method: 'POST', agent: side.agent, body: BODY, headers: { 'content-type': 'application/json', 'user-agent': RUNNER_UA } });
      if (r.status !== 201) throw new Error(`${side.variant}: ${r.status} ${r.body.toString()}`);
    }
  };
  await Promise.all(Array.from({ length: connections }, () => loop(Math.ceil(requests / connections))));
}

/**
 * One round: each variant's server driven alone in turn, in an order rotated round by round (driven
 * all at once, ten servers on two cores, their CPU per request moved by 50 % between rounds).
 */
async function measure(sides: Side[], requests: number, connections: number, r: number): Promise<Record<string, number>> {
  const got: Record<string, number> = {};
  for (let i = 0; i < sides.length; i++) {
    const side = sides[(i + r) % sides.length]!;
    const cpu = cpuMeter([side.child.pid]);
    await drive(side, requests, connections);
    got[side.variant] = (cpu().servers * 1000) / requests;
  }
  return got;
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};

if (process.argv[2] === '--serve') await serve(process.argv[3]!);
else if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const rounds = Number(process.argv[2] ?? 3);
  const requests = Number(process.argv[3] ?? 20_000);
  const variants = process.argv[4]?.split(',') ?? Object.keys(VARIANTS);
  if (!variants.includes('none')) variants.unshift('none');
  const us: Record<string, number[]> = {};
  const extra: Record<string, number[]> = {};
  const connections = 8;
  const sides: Side[] = [];
  try {
    for (const variant of variants) {
      const child = await startChild(['--import', 'tsx', new URL(import.meta.url).pathname, '--serve', variant], /listening on (http:\/\/\S+)/, `hook-costs-${variant}`);
      sides.push({ variant, child, agent: new http.Agent({ keepAlive: true, maxSockets: connections }) });
    }
    // Warm: each route's validator compiles and the hot functions tier up before the measured rounds.
    await Promise.all(sides.map((s) => drive(s, 3000, connections)));
    for (let r = 0; r < rounds; r++) {
      const load = os.loadavg()[0]!;
      const got = await measure(sides, requests, connections, r);
      for (const v of variants) {
        (us[v] ??= []).push(got[v]!);
        (extra[v] ??= []).push(got[v]! - got.none!);
      }
      log(`round ${r + 1} (load ${round(load, 1)}): ${variants.map((v) => `${v} ${round(got[v]!, 1)} µs`).join(', ')}`);
    }
  } finally {
    for (const s of sides) {
      s.agent.destroy();
      await s.child.stop();
    }
  }
  console.log('variant            server CPU µs/request (median, min–max)   over none (median, min–max)');
  for (const v of variants) {
    const xs = us[v]!;
    const ds = extra[v]!;
    console.log(`${v.padEnd(18)} ${String(round(median(xs), 1)).padStart(6)} (${round(Math.min(...xs), 1)}–${round(Math.max(...xs), 1)})${' '.repeat(20)}${String(round(median(ds), 1)).padStart(6)} (${round(Math.min(...ds), 1)}–${round(Math.max(...ds), 1)})`);
  }
}
