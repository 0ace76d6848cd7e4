// The journal: every exchange of the virtual runners and the console, newest first, filtered on
// the server (runner, status or class, method, path substring, fault); HAR export of the same
// filter; each entry's headers and bodies, and the entry as a curl command.
import { Fragment, useState } from 'react';
import { useClient } from '../../app/client-context.tsx';
import { saveBlob } from '../../app/save-file.ts';
import { sim, type JournalEntry, type JournalQuery } from '../../api/simulator.ts';
import { bytes } from './bytes.ts';
import { timeOfDay } from '../../components/format.ts';
import { BodyView } from './BodyView.tsx';
import { copyText } from './clipboard.ts';
import { FAULT_KINDS } from './fleet-form.ts';
import { useJournalTail } from './useJournalTail.ts';

const LIMIT = 200;
/** The server's placeholder for a token (simulator/journal-redact.ts). */
const REDACTED = '[REDACTED]';
const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'];

function statusClass(s: number): string {
  if (s === 0 || s >= 500) return 'status-failed';
  if (s >= 400) return 'status-pending';
  return 'status-success';
}

export function Headers({ list, testId }: { list: [string, string][]; testId?: string }) {
  return (
    <table className="headers small" data-testid={testId}>
      <tbody>
        {list.map(([k, v], i) => (
          <tr key={i} data-header={k.toLowerCase()}><th>{k}</th><td className="wrap">{v}</td></tr>
        ))}
      </tbody>
    </table>
  );
}

function CurlBox({ id, secrets }: { id: number; secrets: boolean }) {
  const client = useClient();
  const [state, setState] = useState<{ text: string; copied: boolean; complete: boolean } | { error: string } | null>(null);
  async function copy() {
    try {
      const c = await sim.curl(client, id, secrets);
      setState({ text: c.curl, copied: await copyText(c.curl), complete: c.complete });
    } catch (e) {
      setState({ error: (e as Error).message });
    }
  }
  return (
    <div className="curl">
      <button className="ghost" onClick={() => void copy()} data-testid="journal-curl">Copy as curl</button>
      {state && 'error' in state && <p className="error">{state.error}</p>}
      {state && 'text' in state && (
        <>
          <p className={`small ${state.copied ? 'ok-text' : 'muted'}`} data-testid="curl-status">
            {state.copied ? 'Copied to the clipboard.' : 'The clipboard is not available here: the command is selected below, press Ctrl+C.'}
            {!state.complete && ' The body was cut in the journal, so this command will not resend it exactly.'}
            {state.text.includes(REDACTED) && ' Its tokens read [REDACTED]: tick "Include tokens" to copy a command that runs as it is.'}
          </p>
          <textarea readOnly className="curl-text" rows={4} value={state.text} data-testid="curl-text" ref={(el) => { if (el && !state.copied) el.select(); }} />
        </>
      )}
    </div>
  );
}

function EntryDetail({ e, secrets }: { e: JournalEntry; secrets: boolean }) {
  return (
    <div className="exchange-detail" data-testid="journal-detail">
      <div>
        <h4>Request</h4>
        <code className="wrap">{e.method} {e.url}</code>
        <Headers list={e.request_headers} />
        <BodyView body={e.request_body} testId="journal-request-body" />
      </div>
      <div>
        <h4>Response {e.status === 0 ? '(none)' : e.status}</h4>
        {e.error && <p className="error small">{e.error}</p>}
        <Headers list={e.response_headers} />
        <BodyView body={e.response_body} testId="journal-response-body" />
      </div>
      <CurlBox key={String(secrets)} id={e.id} secrets={secrets} />
    </div>
  );
}

export function JournalPanel({ runnerNames, live }: { runnerNames: string[]; live: boolean }) {
  const client = useClient();
  const [filter, setFilter] = useState<Required<Pick<JournalQuery, 'runner' | 'status' | 'method' | 'path' | 'fault'>>>({ runner: '', status: '', method: '', path: '', fault: '' });
  const [open, setOpen] = useState<number | null>(null);
  const [msg, setMsg] = useState<string | null>(null);
  // Off by default: what is shown, exported or copied can end up in a ticket or a chat.
  const [secrets, setSecrets] = useState(false);
  const query: JournalQuery = { ...(Object.fromEntries(Object.entries(filter).filter(([, v]) => v !== '')) as JournalQuery), ...(secrets ? { include_secrets: true } : {}) };
  const j = useJournalTail(client, query, LIMIT, live ? 1000 : 3000);
  const set = (k: keyof typeof filter) => (e: { target: { value: string } }) => setFilter((f) => ({ ...f, [k]: e.target.value }));
  const entries = [...j.entries].reverse();

  async function exportHar() {
    try {
      const { blob, filename } = await sim.journalHar(client, query);
      await saveBlob(blob, filename);
      setMsg(`Saved ${filename}.`);
    } catch (e) {
      setMsg((e as Error).message);
    }
  }
  async function clear() {
    try {
      await sim.clearJournal(client);
      setOpen(null);
      j.reload();
    } catch (e) {
      setMsg((e as Error).message);
    }
  }

  return (
    <div className="card" data-testid="journal">
      <div className="card-head">
        <h3>Journal</h3>
        <span className="muted small" data-testid="journal-count">
          {j.loaded ? `${entries.length} shown of ${j.total} held${j.dropped ? `, ${j.dropped} older ones dropped` : ''}` : ''}
        </span>
      </div>
      <div className="toolbar small">
        <label className="inline">Runner
          <select value={filter.runner} onChange={set('runner')} data-testid="jf-runner">
            <option value="">any</option>
            {['console', ...runnerNames].map((n) => <option key={n} value={n}>{n}</option>)}
          </select>
        </label>
        <label className="inline">Status
          <input value={filter.status} onChange={set('status')} placeholder="416, 4xx, 0" size={7} data-testid="jf-status" />
        </label>
        <label className="inline">Method
          <select value={filter.method} onChange={set('method')} data-testid="jf-method">
            <option value="">any</option>
            {METHODS.map((m) => <option key={m}>{m}</option>)}
          </select>
        </label>
        <label className="inline">Path
          <input value={filter.path} onChange={set('path')} placeholder="/trace.txt" size={16} data-testid="jf-path" />
        </label>
        <label className="inline">Fault
          <select value={filter.fault} onChange={set('fault')} data-testid="jf-fault">
            <option value="">any or none</option>
            <option value="any">any fault</option>
            {FAULT_KINDS.map((k) => <option key={k} value={k}>{k}</option>)}
          </select>
        </label>
        <span className="spacer" />
        <label className="inline" title="PRIVATE-TOKEN, registration, runner and build tokens: shown here, in the HAR file and in curl commands as recorded, instead of [REDACTED]">
          <input type="checkbox" checked={secrets} onChange={(e) => setSecrets(e.target.checked)} data-testid="journal-secrets" />
          Include tokens in view, HAR and curl
        </label>
        <button className="ghost" onClick={() => void exportHar()} data-testid="journal-har">Export HAR</button>
        <button className="ghost" onClick={() => void clear()} data-testid="journal-clear">Clear</button>
      </div>
      {msg && <p className="muted small">{msg}</p>}
      {j.error && <p className="error">{j.error}</p>}
      <div className="table-wrap journal-table">
        <table data-testid="journal-table">
          <thead>
            <tr><th>#</th><th>Time</th><th>Runner</th><th>Method</th><th>Path</th><th>Status</th><th className="c-num">ms</th><th className="c-num">Sent</th><th className="c-num">Received</th><th>Fault</th></tr>
          </thead>
          <tbody>
            {entries.map((e) => (
              <Fragment key={e.id}>
                {/* The whole row opens on a click; for the keyboard (and aria-expanded, which a table
                    row may not carry) the number is a button. */}
                <tr className={`clickable${open === e.id ? ' open' : ''}`}
                  onClick={() => setOpen(open === e.id ? null : e.id)}
                  data-testid="journal-row" data-status={e.status} data-method={e.method} data-id={e.id}>
                  <td><button type="button" className="ghost small" aria-expanded={open === e.id} aria-label={`Exchange ${e.id}: show request and response`} data-testid="journal-open">{e.id}</button></td>
                  <td className="small">{timeOfDay(e.started_at)}</td>
                  <td>{e.runner}</td>
                  <td>{e.method}</td>
                  <td className="wrap"><code>{e.path}</code></td>
                  <td><span className={`badge ${statusClass(e.status)}`}>{e.status === 0 ? 'none' : e.status}</span></td>
                  <td className="c-num">{Math.round(e.duration_ms)}</td>
                  <td className="c-num">{bytes(e.request_body.size)}</td>
                  <td className="c-num">{bytes(e.response_body.size)}</td>
                  <td>{e.fault && <span className="badge danger">{e.fault}</span>}{e.error && <span className="error small"> {e.error}</span>}</td>
                </tr>
                {open === e.id && (
                  <tr className="detail-row"><td colSpan={10}><EntryDetail e={e} secrets={secrets} /></td></tr>
                )}
              </Fragment>
            ))}
            {j.loaded && !entries.length && <tr><td colSpan={10} className="muted">No exchanges match.</td></tr>}
          </tbody>
        </table>
      </div>
    </div>
  );
}
