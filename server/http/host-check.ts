// DNS rebinding: a web page can point a name it controls at 127.0.0.1 and then talk to this server
// as same-origin, with its own name in the Host header. A server bound to loopback therefore answers
// only Host values that name it: loopback names, the bound address and --allowed-hosts. Bound to a
// wildcard (0.0.0.0, ::), runners reach it by whatever name the network gives it, so every Host is
// served unless --allowed-hosts is given; then IP literals still are (a page whose origin is an IP
// can only reach that IP, so it cannot rebind).
import net from 'node:net';
import type { FastifyInstance } from 'fastify';
import type { Config } from '../config.ts';
import { ApiError } from './errors.ts';
import { isLoopbackHost } from '../host-address.ts';

interface HostPort {
  name: string;
  port: string | undefined;
}

/** `Example.org.:8080` → {name: 'example.org', port: '8080'}; `[::1]:80` → {name: '::1', port: '80'}. */
export function parseHost(value: string): HostPort | undefined {
  const m = /^(?:\[([0-9a-f:.]+)\]|([^:[\]\s]+))(?::(\d{1,5}))?$/i.exec(value.trim());
  if (!m) return undefined;
  const name = (m[1] ?? m[2]!).toLowerCase().replace(/\.$/, '');
  return name === '' ? undefined : { name, port: m[3] };
}

const isWildcard = (host: string) => ['0.0.0.0', '::', '[::]', ''].includes(host.trim());

export function hostFilter(config: Pick<Config, 'host' | 'allowedHosts'>): ((host: string | undefined) => boolean) | null {
  const extra = (config.allowedHosts ?? '')
    .split(',')
    .map((h) => h.trim())
    .filter((h) => h !== '')
    .map(parseHost)
    .filter((h): h is HostPort => h !== undefined);
  const wildcard = isWildcard(config.host);
  if (wildcard && extra.length === 0) return null;
  const bound = wildcard ? undefined : parseHost(config.host)?.name;
  return (value) => {
    // HTTP/1.0 may omit Host; a browser never does, so no page can rebind that way.
    if (value === undefined) return true;
    const h = parseHost(value);
    if (!h) return false;
    if (isLoopbackHost(h.name) || h.name === bound) return true;
    if (wildcard && net.isIP(h.name) !== 0) return true;
    return extra.some((e) => e.name === h.name && (e.port === undefined || e.port === h.port));
  };
}

/** How many distinct accepted Host values are remembered (see installHostCheck). */
const ACCEPTED_MAX = 64;

/** Refuses, before anything else runs, a request whose Host does not name this server (421). */
export function installHostCheck(app: FastifyInstance, config: Config): void {
  const allowed = hostFilter(config);
  if (!allowed) return;
  // Host values already found to name this server: a client sends the same one on every request, so
  // the parse runs once per value instead of once per request. Refused values are never kept, and
  // the set stops growing at ACCEPTED_MAX (any port of a loopback name is accepted).
  const accepted = new Set<string>();
  app.addHook('onRequest', (request, _reply, done) => {
    const host = request.headers.host;
    if (host === undefined || accepted.has(host)) return done();
    if (allowed(host)) {
      if (accepted.size < ACCEPTED_MAX) accepted.add(host);
      return done();
    }
    const name = parseHost(host)?.name ?? host;
    done(
      new ApiError(
        421,
        `421 Misdirected Request - this server does not answer to Host "${host}" (a guard against DNS rebinding); ` +
          `to reach it by that name, start it with --allowed-hosts ${name || '<name>'} (or JOBSCOPE_ALLOWED_HOSTS)`,
      ),
    );
  });
}
