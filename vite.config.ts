import path from 'node:path';
import * as esbuild from 'esbuild';
import { defineConfig, type HtmlTagDescriptor, type Plugin, type Rollup } from 'vite';
import react from '@vitejs/plugin-react';
import { scriptHashSource } from './server/ui/inline-scripts.ts';

/** renderer/early.ts, bundled on its own (esbuild, one classic script) and written into index.html
 *  as the head's first script: it starts the dashboard's history request while the head is still
 *  being parsed, with no request of its own first (as a file it arrived 55-176 ms after navigation
 *  began, bench/experiments/first-chart-ab.ts). A classic script before the style sheets runs at
 *  once (one after them would wait for them). The CSPs allow it by its hash, never
 *  'unsafe-inline': the meta CSP here gets it at build time; the server's header hashes the inline
 *  scripts of the index.html it serves (server/ui/inline-scripts.ts), so the two cannot disagree.
 *  Its modules are bundled again in the main graph (about 10 kB): the early copy shares nothing
 *  with it but window.__jobscopeEarlyHistory. */
function inlineEarlyEntry(entry: string): Plugin {
  return htmlAfterBuild('jobscope-inline-early-entry', async (html) => {
    const out = await esbuild.build({ entryPoints: [entry], bundle: true, format: 'iife', minify: true, target: 'es2022', write: false, logLevel: 'silent' });
    const code = out.outputFiles[0]!.text.trim();
    // esbuild escapes "</script" inside strings; a bare one would end the element early.
    if (/<\/script/i.test(code)) throw new Error('inlineEarlyEntry: the early entry contains "</script"');
    const hash = scriptHashSource(code);
    const csp = /(<meta http-equiv="Content-Security-Policy" content="[^"]*script-src 'self')/;
    if (!csp.test(html)) throw new Error("inlineEarlyEntry: index.html's meta CSP has no script-src 'self' to add the hash to");
    const withHash = html.replace(csp, `$1 ${hash}`);
    const at = withHash.indexOf('<script');
    if (at < 0) throw new Error('inlineEarlyEntry: index.html has no script to put the early entry before');
    return `${withHash.slice(0, at)}<script>${code}</script>\n    ${withHash.slice(at)}`;
  });
}

/** The entry's style sheet (styles.css: the shell's and the dashboard frame's rules), written into
 *  index.html in place of its link: the early chart measures its frame only once its styles
 *  apply, and the sheet's request came after the history's answer in most loads
 *  (bench/experiments/first-chart-timeline.ts). The file is still emitted; nothing asks for it. Allowed by
 *  the CSPs' style-src 'unsafe-inline' (style attributes already needed it). */
function inlineEntryStyles(entry: string): Plugin {
  return htmlAfterBuild('jobscope-inline-entry-styles', (html, bundle) => {
    const chunk = Object.values(bundle).find((c) => c.type === 'chunk' && c.isEntry && c.name === entry);
    if (chunk?.type !== 'chunk') throw new Error(`inlineEntryStyles: no entry chunk named ${entry}`);
    let out = html;
    for (const file of chunk.viteMetadata?.importedCss ?? []) {
      const css = bundle[file];
      const link = new RegExp(`<link rel="stylesheet"[^>]*href="\\./${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}"[^>]*>`);
      if (css?.type !== 'asset' || !link.test(out)) throw new Error(`inlineEntryStyles: no link to ${file} in index.html`);
      const text = String(css.source).trim();
      if (/<\/style/i.test(text)) throw new Error(`inlineEntryStyles: ${file} contains "</style"`);
      out = out.replace(link, () => `<style>${text}</style>`);
    }
    return out;
  });
}

/** The dashboard is the view a fresh window opens on, but it is a lazy chunk (as every view): its
 *  script would be asked for only once the entry had loaded and run, one more round trip before
 *  the first chart (bench/ui.ts, first_chart_ms). This lists the dashboard's chunk, the chunks it
 *  imports and its CSS in index.html, so they load beside the entry. */
function preloadLandingView(entry: string): Plugin {
  return tagsAfterBuild('jobscope-preload-landing-view', (bundle) => {
    const chunks = Object.values(bundle).filter((c) => c.type === 'chunk');
    const view = chunks.find((c) => c.facadeModuleId?.endsWith(entry));
    if (!view) throw new Error(`preloadLandingView: no chunk for ${entry}`);
    const js = new Set<string>();
    const css = new Set<string>();
    const visit = (file: string) => {
      if (js.has(file)) return;
      js.add(file);
      const c = bundle[file];
      if (c?.type !== 'chunk') return;
      c.viteMetadata?.importedCss.forEach((f) => css.add(f));
      c.imports.forEach(visit);
    };
    visit(view.fileName);
    // Already loaded by the entries' own tags.
    for (const c of chunks) if (c.isEntry) { js.delete(c.fileName); c.imports.forEach((f) => js.delete(f)); c.viteMetadata?.importedCss.forEach((f) => css.delete(f)); }
    return [
      ...[...js].map(modulePreload),
      ...[...css].map((f): HtmlTagDescriptor => ({ tag: 'link', attrs: { rel: 'stylesheet', crossorigin: true, href: `./${f}` }, injectTo: 'head' })),
    ];
  });
}

/** A build-only plugin adding the tags `tags` makes from the finished bundle to index.html's head. */
function tagsAfterBuild(name: string, tags: (bundle: Rollup.OutputBundle) => HtmlTagDescriptor[]): Plugin {
  return {
    name,
    apply: 'build',
    transformIndexHtml: {
      order: 'post',
      handler: (_html, ctx) => (ctx.bundle ? tags(ctx.bundle) : []),
    },
  };
}

/** A build-only plugin rewriting index.html once the bundle is finished. */
function htmlAfterBuild(name: string, rewrite: (html: string, bundle: Rollup.OutputBundle) => string | Promise<string>): Plugin {
  return {
    name,
    apply: 'build',
    transformIndexHtml: {
      order: 'post',
      handler: (html, ctx) => {
        if (!ctx.bundle) throw new Error(`${name}: index.html transformed without a bundle`);
        return rewrite(html, ctx.bundle);
      },
    },
  };
}

const modulePreload = (file: string): HtmlTagDescriptor => ({ tag: 'link', attrs: { rel: 'modulepreload', crossorigin: true, href: `./${file}` }, injectTo: 'head' });

export default defineConfig({
  root: 'renderer',
  base: './',
  plugins: [react(), preloadLandingView('/views/dashboard/DashboardView.tsx'), inlineEntryStyles('index'), inlineEarlyEntry(path.resolve(import.meta.dirname, 'renderer/early.ts'))],
  build: {
    outDir: '../dist/renderer',
    emptyOutDir: true,
    rollupOptions: {
      input: { index: path.resolve(import.meta.dirname, 'renderer/index.html') },
    },
  },
});
