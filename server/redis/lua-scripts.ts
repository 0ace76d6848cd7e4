// Every Lua script the server sends to a Redis, read here and only here: each is a .lua file beside
// the code that runs it (store/redis/scripts/, sidekiq/scripts/), so it reads, diffs and lints as
// Lua, not as a TypeScript string. Run from the sources (tsx, vitest) the files are read at load;
// a bundle (scripts/launcher.js's LUA_INLINE, used by every esbuild build of the server) has each
// `lua('…')` call below replaced by the file's text at build time, so no bundle or packaged app
// needs the .lua files beside it. Keep the calls literal: the bundler finds them by their text.
import fs from 'node:fs';
import { createHash } from 'node:crypto';
import type { Redis } from 'ioredis';

function lua(relative: string): string {
  return fs.readFileSync(new URL(relative, import.meta.url), 'utf8');
}

const backToQueue = lua('../store/redis/scripts/back-to-queue.lua');

/** The job backend's scripts, by the command name each is defined as, with how many of its arguments are keys. */
export const JOB_SCRIPTS = {
  jsFetch: { lua: lua('../store/redis/scripts/fetch.lua') },
  jsEnd: { numberOfKeys: 1, lua: lua('../store/redis/scripts/end.lua') },
  jsReturnStrays: { numberOfKeys: 1, lua: backToQueue + lua('../store/redis/scripts/return-strays.lua') },
  jsRequeue: { numberOfKeys: 3, lua: lua('../store/redis/scripts/requeue.lua') },
  jsOrphans: { numberOfKeys: 2, lua: backToQueue + lua('../store/redis/scripts/orphans.lua') },
  jsForgetEmpty: { numberOfKeys: 2, lua: lua('../store/redis/scripts/forget-empty.lua') },
  jsPushOnce: { numberOfKeys: 3, lua: lua('../store/redis/scripts/push-once.lua') },
  jsPushUnlessPending: { numberOfKeys: 5, lua: lua('../store/redis/scripts/push-unless-pending.lua') },
  // The same move as Sidekiq Web's Kill on a watched Sidekiq: one file, the same keys.
  jsKillEntry: { numberOfKeys: 2, lua: lua('../sidekiq/scripts/kill-entry.lua') },
} as const;

/** The read of a watched Sidekiq, with placeholders its reader fills in (sidekiq/read-script.ts). */
export const SIDEKIQ_READ_TEMPLATE = lua('../sidekiq/scripts/read.lua');

/** What Jobscope does to a watched Sidekiq when its user allowed changes (sidekiq/actions.ts). */
export const SIDEKIQ_ACTION_SCRIPTS = {
  skMoveEntry: { numberOfKeys: 3, lua: lua('../sidekiq/scripts/move-entry.lua') },
  skKillEntry: { numberOfKeys: 2, lua: lua('../sidekiq/scripts/kill-entry.lua') },
} as const;

/** Defines each script on the client as a command of its name (ioredis sends EVALSHA, EVAL on NOSCRIPT). */
export function defineScripts(redis: Redis, scripts: Record<string, { lua: string; numberOfKeys?: number }>): void {
  for (const [name, def] of Object.entries(scripts)) redis.defineCommand(name, def);
}

/** The SHA1 a Redis knows a script by (SCRIPT LOAD's answer, EVALSHA's argument). */
export const scriptSha = (text: string): string => createHash('sha1').update(text).digest('hex');
