// Server log options. Tokens travel in headers and query strings; neither may reach a log.
import type { FastifyServerOptions } from 'fastify';
import type { Config } from '../config.ts';
import { RotatingLog } from './log-file.ts';

const TOKEN_QUERY = /([?&](?:private_token|token|access_token)=)[^&]*/gi;

export function redactUrl(url: string): string {
  return url.replace(TOKEN_QUERY, '$1[redacted]');
}

export function loggerOptions(config: Config, logsDir: string): FastifyServerOptions['logger'] {
  if (config.logLevel === 'silent') return false;
  return {
    level: config.logLevel,
    stream: new RotatingLog(logsDir, { maxBytes: 5 * 1024 * 1024, files: 5, tee: config.logToStderr ? process.stderr : undefined }),
    redact: { paths: ['req.headers["private-token"]', 'req.headers["build-token"]', 'req.headers.authorization'], censor: '[redacted]' },
    serializers: {
      req: (req: { method: string; url: string; ip?: string }) => ({ method: req.method, url: redactUrl(req.url), ip: req.ip }),
    },
  };
}
