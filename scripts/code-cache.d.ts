// Types for scripts/code-cache.js (plain JS: the launcher imports it before any TypeScript can run).
export const BUNDLE_URL: string;
export function runWithCodeCache(file: string, opts?: { cacheDir?: string; saveAfterMs?: number; onStatus?: (status: 'none' | 'used' | 'rejected') => void }): unknown;
export const CJS_BODY: { format: 'cjs'; define: Record<string, string>; supported: Record<string, boolean>; banner: { js: string }; footer: { js: string } };
