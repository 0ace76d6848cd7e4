// Every setting of the server in one table: its flag, its JSCOPE_* variable, its default.
// The CLI, the Electron shell and the tests all build a Config through `resolveConfig`,
// so a knob added here is a flag, an environment variable and a documented default at once.
import path from 'node:path';

export interface Config {
  host: string;
  port: number;
  dataDir: string;
  /** Fixed admin token; undefined = generated once and kept in the data dir. */
  adminToken?: string;
  /** Fixed instance-wide runner registration token; undefined = generated once. */
  registrationToken?: string;
  maxArtifactBytes: number;
  maxTraceBytes: number;
  /** Also fsync trace, artifact and database writes (survive power loss, not just kill -9). */
  fsync: boolean;
  /** Start the demo load generator at boot. */
  demo: boolean;
  /** Serve the built UI at `/` from this folder when it exists. */
  uiDir?: string;
  /** Log level for the server's own log (pino levels); 'silent' writes no log file. */
  logLevel: string;
  /** Not a flag: the headless host copies warnings and errors to stderr. */
  logToStderr?: boolean;
}

type Kind = 'string' | 'int' | 'bool' | 'mb';

export interface SettingSpec {
  key: keyof Config;
  flag: string;
  env: string;
  kind: Kind;
  default: string | number | boolean | undefined;
  help: string;
}

export const SETTINGS: SettingSpec[] = [
  { key: 'host', flag: '--host <host>', env: 'JOBSCOPE_HOST', kind: 'string', default: '127.0.0.1', help: 'address to bind; keep 127.0.0.1 unless other machines must reach it' },
  { key: 'port', flag: '--port <port>', env: 'JOBSCOPE_PORT', kind: 'int', default: 8090, help: 'TCP port; 0 picks any free port' },
  { key: 'dataDir', flag: '--data-dir <dir>', env: 'JOBSCOPE_DATA_DIR', kind: 'string', default: './jobscope-data', help: 'folder holding the database, traces, artifacts and tokens' },
  { key: 'adminToken', flag: '--admin-token <token>', env: 'JOBSCOPE_ADMIN_TOKEN', kind: 'string', default: undefined, help: 'admin PRIVATE-TOKEN (default: generated once, kept in the data dir)' },
  { key: 'registrationToken', flag: '--registration-token <token>', env: 'JOBSCOPE_REGISTRATION_TOKEN', kind: 'string', default: undefined, help: 'instance-wide runner registration token (default: generated once)' },
  { key: 'maxArtifactBytes', flag: '--max-artifact-mb <mb>', env: 'JOBSCOPE_MAX_ARTIFACT_MB', kind: 'mb', default: 100, help: 'largest artifacts upload accepted, in MiB' },
  { key: 'maxTraceBytes', flag: '--max-trace-mb <mb>', env: 'JOBSCOPE_MAX_TRACE_MB', kind: 'mb', default: 64, help: 'largest build trace accepted, in MiB' },
  { key: 'fsync', flag: '--fsync', env: 'JOBSCOPE_FSYNC', kind: 'bool', default: false, help: 'fsync every acknowledged write (power-loss safe; slower). Without it writes survive kill -9' },
  { key: 'demo', flag: '--demo', env: 'JOBSCOPE_DEMO', kind: 'bool', default: false, help: 'start the demo load generator (simulated workers and queues)' },
  { key: 'uiDir', flag: '--ui-dir <dir>', env: 'JOBSCOPE_UI_DIR', kind: 'string', default: undefined, help: 'folder of the built UI to serve at / (default: dist/renderer when built)' },
  { key: 'logLevel', flag: '--log-level <level>', env: 'JOBSCOPE_LOG_LEVEL', kind: 'string', default: 'info', help: 'log level of <data dir>/logs/jobscope.log: silent, fatal, error, warn, info, debug' },
];

export class ConfigError extends Error {}

function parseValue(spec: SettingSpec, raw: unknown): Config[keyof Config] {
  if (spec.kind === 'bool') {
    if (typeof raw === 'boolean') return raw;
    const s = String(raw).toLowerCase();
    if (['1', 'true', 'yes', 'on'].includes(s)) return true;
    if (['0', 'false', 'no', 'off', ''].includes(s)) return false;
    throw new ConfigError(`${spec.env}: expected true or false, got "${raw}"`);
  }
  if (spec.kind === 'int' || spec.kind === 'mb') {
    const n = typeof raw === 'number' ? raw : Number(String(raw).trim());
    if (!Number.isFinite(n) || n < 0 || (spec.kind === 'int' && !Number.isInteger(n))) {
      throw new ConfigError(`${spec.flag.split(' ')[0]}: expected a non-negative number, got "${raw}"`);
    }
    if (spec.key === 'port' && n > 65535) throw new ConfigError(`--port: ${n} is above 65535`);
    return spec.kind === 'mb' ? Math.floor(n * 1024 * 1024) : n;
  }
  return String(raw);
}

/**
 * Precedence: explicit options (flags or a caller's overrides) > JOBSCOPE_* environment > default.
 * `options` uses Config keys; values may be raw strings from the command line.
 */
export function resolveConfig(options: Partial<Record<keyof Config, unknown>> = {}, env: NodeJS.ProcessEnv = process.env): Config {
  const out: Record<string, unknown> = {};
  for (const spec of SETTINGS) {
    let raw: unknown = options[spec.key];
    if (raw === undefined && env[spec.env] !== undefined && env[spec.env] !== '') raw = env[spec.env];
    if (raw === undefined) {
      out[spec.key] = spec.default === undefined ? undefined : parseValue(spec, spec.default);
      continue;
    }
    out[spec.key] = parseValue(spec, raw);
  }
  const config = out as unknown as Config;
  config.dataDir = path.resolve(config.dataDir);
  if (config.uiDir) config.uiDir = path.resolve(config.uiDir);
  return config;
}
