// The console's log: each step's raw request and response (status, headers, body), newest first.
import type { ConsoleExchange } from '../../api/simulator.ts';
import { BodyView } from '../simulator/BodyView.tsx';
import { Headers } from '../simulator/JournalPanel.tsx';
import { timeOfDay } from '../../components/format.ts';

export interface LogItem {
  n: number;
  step: string;
  at: number;
  exchange?: ConsoleExchange;
  /** The console itself refused (e.g. 409: no runner yet) or the backend did not answer. */
  error?: string;
  /** A step that made no request (using a given runner token). */
  note?: string;
}

function statusClass(s: number | undefined): string {
  if (s === undefined || s >= 500) return 'status-failed';
  if (s >= 400) return 'status-pending';
  return 'status-success';
}

function Exchange({ item }: { item: LogItem }) {
  const x = item.exchange;
  const res = x?.response ?? null;
  return (
    <article className="card exchange" data-testid="exchange" data-step={item.step} data-status={res?.status ?? (item.error ? 'error' : 'none')}>
      <div className="card-head">
        <h3>
          <span className="muted">#{item.n}</span> {item.step}{' '}
          {res ? (
            <span className={`badge ${statusClass(res.status)}`} data-testid="exchange-status">{res.status} {res.status_text}</span>
          ) : item.note ? (
            <span className="badge" data-testid="exchange-status">no request</span>
          ) : (
            <span className="badge status-failed" data-testid="exchange-status">{item.error ? 'refused' : 'no answer'}</span>
          )}
        </h3>
        <span className="muted small">{timeOfDay(item.at)}{x ? ` · ${Math.round(x.duration_ms)} ms · journal #${x.journal_id}` : ''}</span>
      </div>
      {item.error && <p className="error" data-testid="exchange-error">{item.error}</p>}
      {item.note && <p className="muted">{item.note}</p>}
      {x && (
        <div className="exchange-detail">
          <div data-testid="exchange-request">
            <h4>Request</h4>
            <code className="wrap">{x.request.method} {x.request.url}</code>
            <Headers list={x.request.headers} />
            <BodyView body={x.request.body} testId="request-body" />
          </div>
          <div data-testid="exchange-response">
            <h4>Response</h4>
            {x.error && <p className="error small">{x.error}</p>}
            {res && (
              <>
                <code>HTTP {res.status} {res.status_text}</code>
                <Headers list={res.headers} testId="response-headers" />
                <BodyView body={res.body} testId="response-body" />
              </>
            )}
          </div>
        </div>
      )}
    </article>
  );
}

export function ExchangeLog({ items, onClear }: { items: LogItem[]; onClear: () => void }) {
  return (
    <div className="exchange-log" data-testid="exchange-log">
      <div className="toolbar">
        <h3>Exchanges</h3>
        <span className="muted small">newest first</span>
        <span className="spacer" />
        {items.length > 0 && <button className="ghost" onClick={onClear}>Clear</button>}
      </div>
      {items.map((i) => <Exchange key={i.n} item={i} />)}
      {!items.length && <p className="muted">Each step's raw request and response appears here.</p>}
    </div>
  );
}
