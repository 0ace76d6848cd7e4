// The CSP sources that allow index.html's inline scripts (the early entry, which vite.config.ts
// writes into the page so the first chart's request needs no script request first): one
// 'sha256-…' per inline script, hashed from the file as it is served, so the header allows exactly
// what the page holds, also after a rebuild while the server runs. Never 'unsafe-inline'.
import crypto from 'node:crypto';
import fs from 'node:fs';

const INLINE_SCRIPT = /<script\b(?![^>]*\bsrc\s*=)[^>]*>([\s\S]*?)<\/script\s*>/gi;

let cached: { file: string; stamp: string; sources: string[] } | undefined;

/** The CSP source allowing one inline script whose text is `code`: the build's meta CSP and the header both name it so. */
export function scriptHashSource(code: string): string {
  return `'sha256-${crypto.createHash('sha256').update(code).digest('base64')}'`;
}

/** The hash sources of the inline scripts in `html`, as a CSP's script-src names them. */
export function inlineScriptSources(html: string): string[] {
  return [...html.matchAll(INLINE_SCRIPT)].filter((m) => m[1]!.length > 0).map((m) => scriptHashSource(m[1]!));
}

/** The same for a file, read again only when its size or time changed (one stat a page load). */
export function inlineScriptSourcesOf(file: string): string[] {
  try {
    const st = fs.statSync(file);
    const stamp = `${st.size}:${st.mtimeMs}`;
    if (cached?.file !== file || cached.stamp !== stamp) cached = { file, stamp, sources: inlineScriptSources(fs.readFileSync(file, 'utf8')) };
    return cached.sources;
  } catch {
    return []; // gone: sendFile answers its 404
  }
}

/** `csp` with `sources` added to its script-src. */
export function withScriptSources(csp: string, sources: string[]): string {
  return sources.length ? csp.replace(/script-src [^;]*/, (d) => `${d} ${sources.join(' ')}`) : csp;
}
