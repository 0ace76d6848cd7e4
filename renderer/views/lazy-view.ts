// A view loaded on demand, as React.lazy, that can be asked for before it is first rendered
// (preload) and then renders at once, without suspending. Why not plain lazy(): lazy() always
// suspends on its first render, even when the module is already there, and React then reveals
// the view only after its Suspense fallback has been up for 300 ms (FALLBACK_THROTTLE_MS): the
// landing view (the dashboard) asked for its data ~300 ms late, which was most of the first
// chart's delay after the entry script ran (bench/ui.ts first_chart_ms, Chromium trace).
import { createElement, lazy, type ComponentType } from 'react';

export interface LazyView<P extends object> {
  (props: P): ReturnType<typeof createElement>;
  /** Starts loading the module (once); resolves when it has been evaluated. */
  preload(): Promise<unknown>;
}

export function lazyView<P extends object>(load: () => Promise<{ default: ComponentType<P> }>): LazyView<P> {
  let loaded: ComponentType<P> | undefined;
  let pending: Promise<{ default: ComponentType<P> }> | undefined;
  // `loaded` is set before lazy()'s own callback runs (it is chained on this promise), so the
  // render React retries after the suspension already takes the direct path: no remount.
  const preload = () =>
    (pending ??= load().then((m) => {
      loaded = m.default;
      return m;
    }));
  const Suspending = lazy(preload);
  const View = (props: P) => createElement((loaded ?? Suspending) as ComponentType<P>, props);
  View.preload = preload;
  return View;
}
