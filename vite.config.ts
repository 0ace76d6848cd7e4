import { defineConfig, type Plugin } from 'vite';
import react from '@vitejs/plugin-react';

/** The dashboard is the view a fresh window opens on, but it is a lazy chunk (as every view): its
 *  script would be asked for only once the entry had loaded and run, one more round trip before
 *  the first chart (bench/ui.ts, first_chart_ms). This lists the dashboard's chunk, the chunks it
 *  imports and its CSS in index.html, so they load beside the entry. */
function preloadLandingView(entry: string): Plugin {
  return {
    name: 'jobscope-preload-landing-view',
    apply: 'build',
    transformIndexHtml: {
      order: 'post',
      handler(_html, ctx) {
        const bundle = ctx.bundle;
        if (!bundle) return [];
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
        // Already loaded by the entry's own tags.
        for (const c of chunks) if (c.isEntry) { js.delete(c.fileName); c.imports.forEach((f) => js.delete(f)); c.viteMetadata?.importedCss.forEach((f) => css.delete(f)); }
        return [
          ...[...js].map((f) => ({ tag: 'link', attrs: { rel: 'modulepreload', crossorigin: true, href: `./${f}` }, injectTo: 'head' as const })),
          ...[...css].map((f) => ({ tag: 'link', attrs: { rel: 'stylesheet', crossorigin: true, href: `./${f}` }, injectTo: 'head' as const })),
        ];
      },
    },
  };
}

export default defineConfig({
  root: 'renderer',
  base: './',
  plugins: [react(), preloadLandingView('/views/dashboard/DashboardView.tsx')],
  build: { outDir: '../dist/renderer', emptyOutDir: true },
});
