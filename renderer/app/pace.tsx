// How often the views ask the backend for new data. Each has a pace chosen for a person (the
// dashboard at its connection's sampling interval but at least 2 s, alerts every 2-5 s, lists every
// few seconds); a server started with --ui-refresh-ms (tests, demos that sample every few hundred
// ms) names one faster pace for all of them in /api/app/status, so the same build serves both.
import { createContext, useContext } from 'react';

/** The server's --ui-refresh-ms; 0 while unknown or unset: every view keeps its own pace. */
export const PaceContext = createContext(0);

/** The server's --ui-refresh-ms in ms, or null when the views keep their own paces. */
export function usePaceOverride(): number | null {
  const ms = useContext(PaceContext);
  return ms > 0 ? ms : null;
}

/** A view's refresh interval: its own `ms`, unless the server set one pace for every view. */
export function usePace(ms: number): number {
  return usePaceOverride() ?? ms;
}
