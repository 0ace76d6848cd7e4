// The alerts banner: every alert firing and not acknowledged, by its connection's name, each with
// an Acknowledge button (kept by the backend: it stays acknowledged across reloads and restarts;
// a later crossing is a new alert and shows again). A new firing is announced to screen readers
// and notified once (alert-notify.ts) unless the user turned notifications off.
import { useEffect, useMemo } from 'react';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import type { Alert } from '../api/client.ts';
import { useClient } from './client-context.tsx';
import { humanDuration, num, timeOfDay } from '../components/format.ts';
import { announce } from './announcer.tsx';
import { usePace } from './pace.tsx';
import { useUiState } from './ui-state.ts';
import { NOTIFY_SETTING, firstSeen, showNotification } from './alert-notify.ts';

const POLL_MS = 2000;
/** Alerts that fired longer ago than this before the page opened are old news: shown, not notified. */
const RECENT_MS = 10 * 60_000;
/** Most alerts the banner lists; the Alerts view has them all. */
const SHOWN = 5;
/** When this page opened: alerts older than RECENT_MS before it are not notified. */
const OPENED_AT = Date.now();
export const ALERT_BOARD_KEY = ['alert-board'];

export function describeAlert(a: Alert): string {
  const what = a.kind === 'failure_rate' ? 'Failure rate' : a.kind === 'latency' ? `Latency of queue ${a.queue}` : `Backlog of queue ${a.queue}`;
  const fmt = (v: number) => (a.kind === 'latency' ? humanDuration(v) : a.kind === 'failure_rate' ? `${v.toFixed(2)}/s` : num(v));
  return `${what} is ${fmt(a.value)}, above the threshold ${fmt(a.threshold)}`;
}

export const isBoolean = (v: unknown): v is boolean => typeof v === 'boolean';

/** The alerts firing and recently resolved, polled once for the banner and the Alerts view. */
export function useAlertBoard() {
  const client = useClient();
  // Also while the tab is in the background: that is when a notification is worth the most.
  return useQuery({ queryKey: ALERT_BOARD_KEY, queryFn: () => client.alertBoard(), refetchInterval: usePace(POLL_MS), refetchIntervalInBackground: true });
}

export function useAcknowledge() {
  const client = useClient();
  const qc = useQueryClient();
  return useMutation({
    mutationFn: (a: Alert) => client.acknowledgeAlert(a.id),
    onSuccess: (a) => {
      announce(`Acknowledged: ${describeAlert(a)} on ${a.connection_name}`);
      void qc.invalidateQueries({ queryKey: ALERT_BOARD_KEY });
    },
  });
}

export function AlertCenter() {
  const board = useAlertBoard();
  const ack = useAcknowledge();
  const [notify] = useUiState(NOTIFY_SETTING, true, isBoolean);
  const shown = useMemo(() => (board.data?.firing ?? []).filter((a) => a.acknowledged_at === null), [board.data]);

  useEffect(() => {
    const news = firstSeen(shown).filter((a) => Date.parse(a.fired_at) > OPENED_AT - RECENT_MS);
    if (!news.length) return;
    if (notify) for (const a of news.slice(-3)) showNotification('Jobscope alert', `${describeAlert(a)} on ${a.connection_name}`, `jobscope-alert-${a.id}`);
    const last = news[news.length - 1]!;
    announce(news.length === 1 ? `Alert: ${describeAlert(last)} on ${last.connection_name}` : `${news.length} new alerts. Latest: ${describeAlert(last)} on ${last.connection_name}`);
  }, [shown, notify]);

  if (!shown.length) return null;
  return (
    <div className="banner alert" role="region" aria-label="Alerts" data-testid="alert-banner">
      <ul>
        {shown.slice(-SHOWN).map((a) => (
          <li key={a.id} data-testid="alert-item">
            <strong>{a.connection_name}</strong>: {describeAlert(a)} <span className="muted small">(since {timeOfDay(a.fired_at)})</span>{' '}
            <button className="ghost small" onClick={() => ack.mutate(a)} disabled={ack.isPending} aria-label={`Acknowledge: ${describeAlert(a)} on ${a.connection_name}`}>
              Acknowledge
            </button>
          </li>
        ))}
      </ul>
      <a href="#/alerts">{shown.length > SHOWN ? `All ${num(shown.length)} alerts` : 'All alerts'}</a>
    </div>
  );
}
