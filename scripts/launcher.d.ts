// Types for scripts/launcher.js (plain JS: it runs before any TypeScript can).
export function runBundled(entry: string, opts?: { root?: string; cacheDir?: string; quiet?: boolean }): Promise<unknown>;
export function ensureBundle(entry: string, where: { root: string; cacheDir: string }): Promise<string>;
export const EXTERNAL_PACKAGES: string[];
export function tuneV8Early(): void;
export const LAZY_FASTIFY_BUILTINS: import('esbuild').Plugin;
export const BUILTINS_ONCE: import('esbuild').Plugin;
export const LUA_INLINE: import('esbuild').Plugin;
