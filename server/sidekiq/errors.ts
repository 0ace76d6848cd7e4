// Every way reading a Sidekiq's Redis fails, as one sentence saying what is wrong and what to try.
// The password never appears: it is cut out of whatever the client library said.
import { ReplyTooLarge } from '../redis/reply-guard.ts';

export class RedisTimeout extends Error {
  constructor(readonly timeoutMs: number) {
    super(`no answer within ${timeoutMs} ms`);
  }
}

export function describeRedisError(err: unknown, host: string, timeoutMs: number, password = ''): string {
  const e = err as { name?: string; message?: string; code?: string };
  const raw = String(e?.message ?? err);
  const msg = password ? raw.split(password).join('***') : raw;
  const wait = `${timeoutMs / 1000} s`;
  if (err instanceof ReplyTooLarge) return `Redis at ${host}: ${msg}; the connection was dropped`;
  if (err instanceof RedisTimeout || /timed? ?out|ETIMEDOUT/i.test(msg) || e.code === 'ETIMEDOUT') {
    return `no answer from Redis at ${host} within ${wait}: is it overloaded or paused, or is a firewall dropping packets? (raise --sidekiq-timeout-ms if it is just slow)`;
  }
  switch (e.code) {
    case 'ECONNREFUSED':
      return `connection refused by ${host}: is redis-server running there, and is the port right?`;
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return `host ${redisHostName(host)} not found (DNS): check the spelling of the Redis URL and your network`;
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
      return `${host} is unreachable: check the network (VPN?)`;
    case 'ECONNRESET':
    case 'EPIPE':
      return `${host} closed the connection: redis:// versus rediss:// (TLS)? a proxy in between?`;
  }
  if (/^NOAUTH/.test(msg)) return `Redis at ${host} wants a password (NOAUTH): give it in the URL (redis://:password@host) or the password field`;
  if (/WRONGPASS|invalid password|invalid username-password/i.test(msg)) return `Redis at ${host} refused the user name or password (WRONGPASS): check them`;
  if (/AUTH.*without any password configured|called without any password/i.test(msg)) return `Redis at ${host} has no password set, but one was given: leave the password out`;
  if (/^NOPERM/.test(msg)) return `the Redis user may not run a read Sidekiq's API needs (${msg.slice(0, 160)}): grant it read commands on Sidekiq's keys`;
  if (/^WRONGTYPE/.test(msg)) return `a key at ${host} is not of the type Sidekiq writes (WRONGTYPE): is this Sidekiq's Redis, the right database number and namespace?`;
  if (/^ERR .*DB index is out of range|invalid DB index/i.test(msg)) return `Redis at ${host} has no such database number: check the /<db> part of the URL`;
  if (/LOADING/.test(msg)) return `Redis at ${host} is loading its data set: try again in a moment`;
  if (/CERT|SSL|TLS|certificate/i.test(msg) || /CERT|SSL|TLS/.test(String(e.code))) return `TLS problem with ${host} (${msg.slice(0, 120)}): check the certificate, or use redis:// if the server speaks no TLS`;
  if (/Connection is closed|Stream isn't writeable/i.test(msg)) return `the connection to Redis at ${host} closed: is redis-server still running? (rediss:// against a plain server closes it too)`;
  return `reading Redis at ${host} failed: ${msg.slice(0, 200)}`;
}

function redisHostName(host: string): string {
  return host.replace(/:\d+$/, '');
}
