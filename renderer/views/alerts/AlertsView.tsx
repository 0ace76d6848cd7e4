// Alerts: the ones firing now (acknowledged or not) and the recently resolved, with when each fired,
// resolved and how long it lasted; and how alerts reach the user outside the page (a switch, and in
// a browser the button that asks for its permission: never asked unprompted).
import { useState } from 'react';
import type { Alert } from '../../api/client.ts';
import { describeAlert, isBoolean, useAcknowledge, useAlertBoard } from '../../app/AlertCenter.tsx';
import { NOTIFY_SETTING, askNotifyPermission, notifyChannel, type NotifyChannel } from '../../app/alert-notify.ts';
import { useUiState } from '../../app/ui-state.ts';
import { dateTime, humanDuration } from '../../components/format.ts';

const CHANNEL_SAYS: Record<NotifyChannel, string> = {
  desktop: 'New alerts are shown as desktop notifications by the app.',
  granted: 'This browser shows new alerts as notifications while Jobscope is open in a tab.',
  default: 'This browser has not been allowed to show notifications yet.',
  denied: 'This browser blocks notifications from this page: allow them in its site settings.',
  unsupported: 'This browser cannot show notifications: the banner shows new alerts.',
};

const when = (iso: string | null) => (iso === null ? '—' : dateTime(iso));

function lasted(a: Alert, now: number): string {
  const end = a.resolved_at === null ? now : Date.parse(a.resolved_at);
  return humanDuration((end - Date.parse(a.fired_at)) / 1000);
}

function Notifications() {
  const [on, setOn] = useUiState(NOTIFY_SETTING, true, isBoolean);
  const [channel, setChannel] = useState(notifyChannel);
  return (
    <div className="card" data-testid="alert-notifications">
      <h3>Notifications</h3>
      <label className="check">
        <input type="checkbox" checked={on} onChange={(e) => setOn(e.target.checked)} /> Notify me of each new alert (once per firing, never while acknowledged)
      </label>
      <p className="small muted" role="status">{CHANNEL_SAYS[channel]}</p>
      {on && channel === 'default' && (
        <button type="button" onClick={() => void askNotifyPermission().then(setChannel)}>
          Allow notifications in this browser
        </button>
      )}
    </div>
  );
}

/** `now`: when the list was read (a firing alert has lasted until then). */
function AlertRows({ alerts, resolved, now }: { alerts: Alert[]; resolved: boolean; now: number }) {
  const ack = useAcknowledge();
  return (
    <tbody>
      {alerts.map((a) => (
        <tr key={a.id} className={resolved ? 'alert-resolved' : 'alert-firing'} data-testid={resolved ? 'alert-resolved-row' : 'alert-firing-row'}>
          <td><span className={`badge ${resolved ? 'status-success' : 'danger'}`}>{resolved ? 'resolved' : 'firing'}</span></td>
          <td>{a.connection_name}</td>
          <td>{describeAlert(a)}</td>
          <td>{when(a.fired_at)}</td>
          {resolved && <td>{when(a.resolved_at)}</td>}
          <td>{lasted(a, now)}</td>
          <td>
            {a.acknowledged_at !== null ? (
              <span title={when(a.acknowledged_at)}>yes, {when(a.acknowledged_at)}</span>
            ) : resolved ? (
              'no'
            ) : (
              <button type="button" className="ghost small" onClick={() => ack.mutate(a)} disabled={ack.isPending} aria-label={`Acknowledge: ${describeAlert(a)} on ${a.connection_name}`}>
                Acknowledge
              </button>
            )}
          </td>
        </tr>
      ))}
    </tbody>
  );
}

function AlertTable({ title, alerts, resolved, empty, now }: { title: string; alerts: Alert[]; resolved: boolean; empty: string; now: number }) {
  const id = resolved ? 'alerts-resolved-h' : 'alerts-firing-h';
  return (
    <div className="card">
      <h3 id={id}>{title}</h3>
      {alerts.length === 0 ? (
        <p className="muted">{empty}</p>
      ) : (
        <div className="table-wrap" role="region" aria-labelledby={id} tabIndex={0}>
          <table data-testid={resolved ? 'alerts-resolved' : 'alerts-firing'}>
            <thead>
              <tr>
                <th>State</th><th>Connection</th><th>Alert</th><th>Fired</th>{resolved && <th>Resolved</th>}<th>{resolved ? 'Lasted' : 'For'}</th><th>Acknowledged</th>
              </tr>
            </thead>
            <AlertRows alerts={alerts} resolved={resolved} now={now} />
          </table>
        </div>
      )}
    </div>
  );
}

export default function AlertsView() {
  const board = useAlertBoard();
  return (
    <section className="view" data-testid="view-alerts">
      <div className="toolbar"><h2>Alerts</h2></div>
      <p className="muted small">
        An alert fires when a sample crosses a connection's threshold (set them on the Dashboard) and resolves at the first sample back under it, or once its queue is gone.
      </p>
      {board.error && <p className="error">{(board.error as Error).message}</p>}
      <AlertTable title="Firing now" alerts={board.data?.firing ?? []} resolved={false} empty="Nothing is firing." now={board.dataUpdatedAt} />
      <AlertTable title="Recently resolved" alerts={board.data?.resolved ?? []} resolved empty="No alert has resolved yet." now={board.dataUpdatedAt} />
      <Notifications />
    </section>
  );
}
