// Watches for threshold alerts of every connection: a native notification through the bridge in
// Electron, and an in-page banner (the only signal in browser mode). Alerts from before the page
// opened are shown only when recent, so a reload does not replay old news.
import { useEffect, useRef, useState } from 'react';
import type { Alert } from '../api/client.ts';
import { nativeNotify } from '../api/bridge.ts';
import { useClient } from './client-context.tsx';
import { humanDuration, num, timeOfDay } from '../components/format.ts';
import { announce } from './announcer.tsx';
import { usePace } from './pace.tsx';

const POLL_MS = 2000;
const RECENT_MS = 10 * 60_000;

export function describeAlert(a: Alert): string {
  const what = a.kind === 'failure_rate' ? 'Failure rate' : a.kind === 'latency' ? `Latency of queue ${a.queue}` : `Backlog of queue ${a.queue}`;
  const fmt = (v: number) => (a.kind === 'latency' ? humanDuration(v) : a.kind === 'failure_rate' ? `${v.toFixed(2)}/s` : num(v));
  return `${what} is ${fmt(a.value)}, above the threshold ${fmt(a.threshold)}`;
}

export function AlertCenter() {
  const client = useClient();
  const [shown, setShown] = useState<Alert[]>([]);
  const lastId = useRef<number | undefined>(undefined);
  const first = useRef(true);
  // Read by the running loop at each tick, so a pace learnt after the first one needs no restart.
  const pace = usePace(POLL_MS);
  const pollMs = useRef(pace);
  useEffect(() => {
    pollMs.current = pace;
  }, [pace]);

  useEffect(() => {
    let stop = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const tick = async () => {
      try {
        const list = await client.alertsAfter(lastId.current);
        const fresh = list.filter((a) => lastId.current === undefined || a.id > lastId.current).sort((a, b) => a.id - b.id);
        if (fresh.length) lastId.current = fresh[fresh.length - 1]!.id;
        const news = first.current ? fresh.filter((a) => Date.now() - Date.parse(a.at) < RECENT_MS) : fresh;
        first.current = false;
        if (news.length && !stop) {
          for (const a of news.slice(-3)) nativeNotify('Jobscope alert', describeAlert(a));
          announce(news.length === 1 ? `Alert: ${describeAlert(news[0]!)}` : `${news.length} new alerts. Latest: ${describeAlert(news[news.length - 1]!)}`);
          setShown((s) => [...s, ...news].slice(-5));
        }
      } catch {
        /* the connection health panel reports backend trouble; alerts retry next tick */
      }
      if (!stop) timer = setTimeout(tick, pollMs.current);
    };
    void tick();
    return () => {
      stop = true;
      clearTimeout(timer);
    };
  }, [client]);

  if (!shown.length) return null;
  return (
    <div className="banner alert" role="region" aria-label="Alerts" data-testid="alert-banner">
      <ul>
        {shown.map((a) => (
          <li key={a.id} data-testid="alert-item">
            <strong>{describeAlert(a)}</strong> <span className="muted small">({a.connection_id}, {timeOfDay(a.at)})</span>
          </li>
        ))}
      </ul>
      <button className="ghost" onClick={() => setShown([])} aria-label="Dismiss alerts">Dismiss</button>
    </div>
  );
}
