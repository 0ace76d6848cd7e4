// Server log options. Tokens travel in headers and query strings; neither may reach a log.
import type { FastifyServerOptions } from 'fastify';
import type { Config } from '../config.ts';

const TOKEN_QUERY = /([?&](?:private_token|token|access_token)=)[^&]*/gi;

export function redactUrl(url: string): string {
  return url.replace(TOKEN_QUERY, '$1[redacted]');
}

export function loggerOptions(config: Config): FastifyServerOptions['logger'] {
  return {
    level: config.logLevel,
    serializers: {
      req: (req: { method: string; url: string; ip?: string }) => ({ method: req.method, url: redactUrl(req.url), ip: req.ip }),
    },
  };
}
