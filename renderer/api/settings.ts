// Settings, server log, data reset and the live demo load: the Settings view's backend calls.
import type { LogQuery, LogView, SettingsView, SettingView } from '../../contract/settings.ts';
import type { LoadPatch, LoadStatus } from '../../contract/jobs.ts';
import type { Client } from './client.ts';

export type { LogView, LogQuery, SettingsView, SettingView, LoadStatus };
export type SettingValue = SettingView['default'];

export const settings = {
  get: (c: Client) => c.json<SettingsView>('GET', '/api/app/settings'),
  /** null removes the saved value (the default, or the flag/env, applies again at the next start). */
  /** confirmExpose: the person agreed that a non-loopback host makes the next start reachable from other machines. */
  /** confirmUnreachable: save a Redis URL that could not be reached now (the server tries it first and refuses it otherwise). */
  save: (c: Client, values: Record<string, SettingValue>, opts: { confirmExpose?: boolean; confirmUnreachable?: boolean } = {}) =>
    c.json<SettingsView>('PUT', '/api/app/settings', {
      json: { values, ...(opts.confirmExpose ? { confirm_expose: true } : {}), ...(opts.confirmUnreachable ? { confirm_unreachable: true } : {}) },
    }),
  logs: (c: Client, q: Omit<LogQuery, 'private_token'> = {}) => c.json<LogView>('GET', '/api/app/logs', { query: q }),
  /** Deletes every build, project, runner, job and sample; the server keeps running. */
  reset: (c: Client) => c.json<unknown>('POST', '/api/app/reset', { json: { confirm: 'reset' } }),
};

export const demoLoad = {
  status: (c: Client) => c.json<LoadStatus>('GET', '/api/v3/sim/load'),
  start: (c: Client, patch: LoadPatch = {}) => c.json<LoadStatus>('PUT', '/api/v3/sim/load', { json: patch }),
  stop: (c: Client) => c.json<LoadStatus>('DELETE', '/api/v3/sim/load'),
};
