// The dashboard's first history, asked for by the early entry (renderer/early.ts) as soon as the
// HTML is parsed, and adopted by the dashboard's history query when that asks for the same thing.
// Why: the query's own request could leave only after the 330 kB entry script had loaded and run
// and React had rendered the shell and the dashboard once (its fetch starts in an effect): the
// history answer then came on top of all that before the first chart (bench/ui.ts
// first_chart_ms). Started early, it is answered while the page loads. No imports beyond small
// constant modules: this runs before React, axios or the client have loaded.
import { queryString } from '../../api/query-string.ts';
import { CONNECTION_KEY, TOKEN_KEY, UI_STATE_KEY } from '../../app/storage-keys.ts';
import { CHART_POINTS, RANGES, isRangeKey, type RangeKey } from './ranges.ts';

/** Queues drawn when none were chosen: the busiest this many. */
export const TOP = 8;
/** An early answer older than this is left alone (the page took long to get there: sign-in). */
const FRESH_MS = 5000;

export interface EarlyHistory {
  token: string;
  id: string;
  range: RangeKey;
  at: number;
  answer: Promise<unknown>;
  /** The answer, once it has arrived (the dashboard's first render can then draw it at once). */
  value?: unknown;
}

declare global {
  interface Window {
    __jobscopeEarlyHistory?: EarlyHistory;
  }
}

/** The history query's parameters: the range up to `to`, the chosen queues or the top ones. */
export function historyParams(range: RangeKey, to: number, queues: string[] | null) {
  const ms = RANGES.find((r) => r.key === range)!.ms;
  return { from: to - ms, to, points: CHART_POINTS, ...(queues ? { queues: queues.join(',') } : { top: TOP }) };
}

export function historyPath(id: string): string {
  return `/api/app/connections/${encodeURIComponent(id)}/history`;
}

/** The view state's local copy, as app/ui-state.ts reads it for the first render. */
function localUiState(): Record<string, unknown> {
  try {
    const raw = JSON.parse(localStorage.getItem(UI_STATE_KEY) ?? 'null') as { values?: unknown } | null;
    return raw?.values && typeof raw.values === 'object' && !Array.isArray(raw.values) ? (raw.values as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

/** Asks for the history the dashboard will ask for first (and answers what it asked), when this page opens on the dashboard
 *  in browser mode with a token at hand (the sign-in link or this tab's). In Electron the token
 *  comes from the bridge, asynchronously: nothing is started, the query asks as before. */
export function startEarlyHistory(): EarlyHistory | undefined {
  if (window.jobscope) return undefined;
  const view = /^#\/?([^/?&]*)/.exec(window.location.hash)?.[1] ?? '';
  if (view !== '' && view !== 'dashboard' && !view.startsWith('token=')) return undefined;
  const fromLink = /(?:^#|[#&])token=([^&]+)/.exec(window.location.hash)?.[1];
  let token: string | null;
  try {
    token = fromLink !== undefined ? decodeURIComponent(fromLink) : sessionStorage.getItem(TOKEN_KEY);
  } catch {
    return undefined;
  }
  if (!token) return undefined;
  const values = localUiState();
  const stored = values.connection;
  const id = typeof stored === 'string' ? stored : (localStorage.getItem(CONNECTION_KEY) ?? 'embedded');
  const range: RangeKey = isRangeKey(values['dashboard.range']) ? values['dashboard.range'] : '15m';
  const at = Date.now();
  const url = `${historyPath(id)}?${queryString(historyParams(range, at, null))}`;
  const answer = fetch(url, { headers: { 'PRIVATE-TOKEN': token } }).then((r) => (r.ok ? r.json() : Promise.reject(new Error(`HTTP ${r.status}`))));
  answer.catch(() => {}); // a failure is the query's to report: it asks again itself
  const early: EarlyHistory = { token, id, range, at, answer };
  answer.then((v) => void (early.value = v), () => {});
  window.__jobscopeEarlyHistory = early;
  return early;
}

/** The early answer if it has already arrived and is what the query asks for: its data and when
 *  it was asked for, taken once (the query's initial data, so the first render draws the chart). */
export function arrivedEarlyHistory(baseUrl: string, token: string, id: string, range: RangeKey, pausedAt: number | null, queues: string[] | null): { data: unknown; at: number } | undefined {
  const e = window.__jobscopeEarlyHistory;
  if (!e || e.value === undefined) return undefined;
  const at = e.at;
  const answer = adoptEarlyHistory(baseUrl, token, id, range, pausedAt, queues);
  return answer ? { data: e.value, at } : undefined;
}

/** The early answer, when it is what the dashboard's first history query asks for (same token,
 *  connection and range, live, no queues chosen, fresh); taken once: later calls are the query's. */
export function adoptEarlyHistory(baseUrl: string, token: string, id: string, range: RangeKey, pausedAt: number | null, queues: string[] | null): Promise<unknown> | undefined {
  const e = window.__jobscopeEarlyHistory;
  if (!e) return undefined;
  window.__jobscopeEarlyHistory = undefined;
  const same = baseUrl === '' && e.token === token && e.id === id && e.range === range && pausedAt === null && queues === null;
  return same && Date.now() - e.at <= FRESH_MS ? e.answer : undefined;
}
