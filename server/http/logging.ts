// Server log options. Tokens travel in headers and query strings; neither may reach a log.
import type { FastifyServerOptions } from 'fastify';
import type { Config } from '../config.ts';
import { RotatingLog } from './log-file.ts';
import { SECRET_HEADERS, hideQuery } from '../../common/secrets.ts';

const CENSOR = '[redacted]';

export const redactUrl = (url: string): string => hideQuery(url, CENSOR);

export function loggerOptions(config: Config, logsDir: string): FastifyServerOptions['logger'] {
  if (config.logLevel === 'silent') return false;
  return {
    level: config.logLevel,
    stream: new RotatingLog(logsDir, { maxBytes: 5 * 1024 * 1024, files: 5, tee: config.logToStderr ? process.stderr : undefined }),
    redact: { paths: [...SECRET_HEADERS].map((h) => `req.headers["${h}"]`), censor: CENSOR },
    serializers: {
      req: (req: { method: string; url: string; ip?: string }) => ({ method: req.method, url: redactUrl(req.url), ip: req.ip }),
    },
  };
}
