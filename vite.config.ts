import path from 'node:path';
import { defineConfig, type HtmlTagDescriptor, type Plugin, type Rollup } from 'vite';
import react from '@vitejs/plugin-react';

/** renderer/early.ts is an entry of its own, not part of index.html's main script: Vite would
 *  bundle every module script of the HTML into one entry, and the early requests it starts would
 *  wait for the 330 kB main script again. This puts it in <head> before every other script, async
 *  (it runs as soon as it has arrived) and at high priority: Chromium holds back low-priority
 *  requests (an async script is one) while the head's others load, and the early chart
 *  (views/dashboard/early-chart.ts) came no sooner than React's own chart. Its imports, if any,
 *  are preloaded beside it. */
function earlyEntry(name: string): Plugin {
  return {
    name: 'jobscope-early-entry',
    apply: 'build',
    transformIndexHtml: {
      order: 'post',
      handler: (html, ctx) => {
        const early = Object.values(ctx.bundle ?? {}).find((c) => c.type === 'chunk' && c.isEntry && c.name === name);
        if (early?.type !== 'chunk') throw new Error(`earlyEntry: no entry chunk named ${name}`);
        const tag = `<script type="module" async crossorigin fetchpriority="high" src="./${early.fileName}"></script>`;
        const first = html.indexOf('<script');
        if (first < 0) throw new Error('earlyEntry: index.html has no script to put the early entry before');
        return { html: `${html.slice(0, first)}${tag}\n    ${html.slice(first)}`, tags: early.imports.map(modulePreload) };
      },
    },
  };
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

const modulePreload = (file: string): HtmlTagDescriptor => ({ tag: 'link', attrs: { rel: 'modulepreload', crossorigin: true, href: `./${file}` }, injectTo: 'head' });

const EARLY_MODULES = [
  '/renderer/early.ts', '/views/dashboard/early-history.ts', '/views/dashboard/ranges.ts', '/api/query-string.ts', '/app/storage-keys.ts',
  // The early chart (views/dashboard/early-chart.ts) and the chart code it shares with React's.
  '/views/dashboard/early-chart.ts', '/views/dashboard/totals-series.ts', '/app/theme-choice.ts',
  '/components/chart-paint.ts', '/components/chart-canvas.ts', '/components/chart-geometry.ts', '/components/palette.ts',
];

export default defineConfig({
  root: 'renderer',
  base: './',
  plugins: [react(), preloadLandingView('/views/dashboard/DashboardView.tsx'), earlyEntry('early')],
  build: {
    outDir: '../dist/renderer',
    emptyOutDir: true,
    rollupOptions: {
      input: { index: path.resolve(import.meta.dirname, 'renderer/index.html'), early: path.resolve(import.meta.dirname, 'renderer/early.ts') },
      // The early entry's modules stay in its own chunk (the main graph imports them from there):
      // one request, run as soon as it arrives, instead of a chain of shared chunks to fetch first.
      output: { manualChunks: (id) => (EARLY_MODULES.some((m) => id.endsWith(m)) ? 'early' : undefined) },
    },
  },
});
