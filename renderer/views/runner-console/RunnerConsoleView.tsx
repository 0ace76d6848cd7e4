// The Runner console: act as one runner by hand against this server or another
// coordinator. Each button makes exactly one runner-API request through the backend (which shapes
// it as gitlab-ci-multi-runner 1.x does, with what was edited here) and logs the raw exchange.
import { useEffect, useState, type ReactNode } from 'react';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useClient } from '../../app/client-context.tsx';
import { saveBlob } from '../../app/save-file.ts';
import { runnerConsole, type ConsoleExchange, type ConsoleState } from '../../api/simulator.ts';
import { filenameOf } from '../../api/filename.ts';
import { base64Bytes, bytes, header } from '../simulator/bytes.ts';
import { nativeOpen, nativeOpenAvailable } from '../simulator/open-file.ts';
import { ExchangeLog, type LogItem } from './ExchangeLog.tsx';
import '../simulator/simulator.css';

const KEEP = 50;
const STATES = ['running', 'success', 'failed', 'canceled'];

function Step({ title, children }: { title: string; children: ReactNode }) {
  return (
    <div className="card console-step">
      <h3>{title}</h3>
      {children}
    </div>
  );
}

export default function RunnerConsoleView() {
  const client = useClient();
  const qc = useQueryClient();
  const instance = useQuery({ queryKey: ['instance'], queryFn: client.instance, staleTime: 60_000 });
  const stateQ = useQuery({ queryKey: ['sim', 'console'], queryFn: () => runnerConsole.state(client) });
  const st: ConsoleState | undefined = stateQ.data;

  const [target, setTarget] = useState('');
  const [regToken, setRegToken] = useState<string | null>(null);
  const [description, setDescription] = useState('runner-console');
  const [tags, setTags] = useState('');
  const [runUntagged, setRunUntagged] = useState(true);
  const [runnerToken, setRunnerToken] = useState('');
  const [range, setRange] = useState('');
  const [traceBody, setTraceBody] = useState('$ echo hello\nhello\n');
  const [updState, setUpdState] = useState('success');
  const [sendFull, setSendFull] = useState(false);
  const [fullTrace, setFullTrace] = useState('');
  const [file, setFile] = useState<File | null>(null);
  const [expireIn, setExpireIn] = useState('');
  const [busy, setBusy] = useState<string | null>(null);
  const [log, setLog] = useState<LogItem[]>([]);
  const [note, setNote] = useState<string | null>(null);

  // The registration token is prefilled once from the instance; after that it is the user's.
  useEffect(() => {
    if (regToken === null && instance.data) setRegToken(instance.data.runners_registration_token);
  }, [instance.data, regToken]);

  async function run(step: string, call: () => Promise<ConsoleExchange | ConsoleState>, after?: (x: ConsoleExchange) => Promise<void> | void) {
    setBusy(step);
    setNote(null);
    try {
      const r = await call();
      if ('request' in r) {
        qc.setQueryData(['sim', 'console'], r.state);
        setLog((l) => [{ n: (l[0]?.n ?? 0) + 1, step, at: Date.now(), exchange: r }, ...l].slice(0, KEEP));
        await after?.(r);
      } else {
        qc.setQueryData(['sim', 'console'], r);
        setLog((l) => [{ n: (l[0]?.n ?? 0) + 1, step, at: Date.now(), note: `No request is made: the console now acts as the runner with token ${r.runner_token ?? '—'} against ${r.target}.` }, ...l].slice(0, KEEP));
      }
    } catch (e) {
      setLog((l) => [{ n: (l[0]?.n ?? 0) + 1, step, at: Date.now(), error: (e as Error).message }, ...l].slice(0, KEEP));
    } finally {
      setBusy(null);
    }
  }

  const bodyBytes = new TextEncoder().encode(traceBody).length;
  const autoRange = `${st?.trace_length ?? 0}-${(st?.trace_length ?? 0) + bodyBytes}`;
  const targetUrl = target.trim() || undefined;

  async function saveDownload(x: ConsoleExchange) {
    const res = x.response;
    if (!res || res.status !== 200) return;
    if (res.body.truncated) return setNote(`The archive is ${bytes(res.body.size)}, more than the console keeps (1 MiB): download it whole from the Builds view.`);
    const data = res.body.base64 !== undefined ? base64Bytes(res.body.base64) : new TextEncoder().encode(res.body.text ?? '');
    const name = filenameOf(header(res.headers, 'Content-Disposition')) ?? `build-${x.state.build_id ?? 'artifacts'}-artifacts.zip`;
    await saveBlob(new Blob([data as Uint8Array<ArrayBuffer>]), name);
    setNote(`Saved ${name} (${bytes(data.length)}).`);
  }

  const off = busy !== null;
  return (
    <section className="view" data-testid="view-runner-console">
      <div className="toolbar">
        <h2>Runner console</h2>
        <span className="muted small">One runner, by hand: each step is one request of runner API v1, shown raw below.</span>
      </div>

      <dl className="facts card" data-testid="console-state">
        <dt>Target</dt><dd data-testid="cs-target">{st?.target ?? '…'}</dd>
        <dt>Runner token</dt><dd data-testid="cs-runner-token"><code>{st?.runner_token ?? '— (register first)'}</code></dd>
        <dt>Build</dt><dd data-testid="cs-build">{st?.build_id ?? '—'}</dd>
        <dt>Build token</dt><dd><code>{st?.build_token ?? '—'}</code></dd>
        <dt>Trace length</dt><dd data-testid="cs-trace-length">{st?.trace_length ?? 0} bytes</dd>
      </dl>

      <div className="console-grid">
        <Step title="1. Runner">
          <div className="form-grid">
            <label>Target (empty = this server)<input value={target} onChange={(e) => setTarget(e.target.value)} placeholder={st?.target ?? ''} data-testid="c-target" /></label>
            <label>Registration token<input value={regToken ?? ''} onChange={(e) => setRegToken(e.target.value)} autoComplete="off" data-testid="c-reg-token" /></label>
            <label>Description<input value={description} onChange={(e) => setDescription(e.target.value)} /></label>
            <label>Tags (comma-separated)<input value={tags} onChange={(e) => setTags(e.target.value)} data-testid="c-tags" /></label>
            <label className="check"><input type="checkbox" checked={runUntagged} onChange={(e) => setRunUntagged(e.target.checked)} /> run untagged builds</label>
          </div>
          <div className="row gap">
            <button disabled={off} data-testid="c-register"
              onClick={() => void run('register', () => runnerConsole.register(client, { ...(targetUrl ? { target_url: targetUrl } : {}), registration_token: regToken ?? '', description, tag_list: tags, run_untagged: runUntagged }))}>
              Register
            </button>
            <button className="ghost danger" disabled={off || !st?.runner_token} data-testid="c-unregister" onClick={() => void run('unregister', () => runnerConsole.unregister(client))}>Unregister</button>
          </div>
          <div className="row gap">
            <input value={runnerToken} onChange={(e) => setRunnerToken(e.target.value)} placeholder="or an existing runner token" autoComplete="off" data-testid="c-runner-token" />
            <button className="ghost" disabled={off || !runnerToken.trim()} data-testid="c-use-token" onClick={() => void run('use token', () => runnerConsole.useToken(client, runnerToken.trim(), targetUrl))}>Use this token</button>
          </div>
        </Step>

        <Step title="2. Build">
          <button disabled={off} data-testid="c-request-build" onClick={() => void run('request build', () => runnerConsole.requestBuild(client))}>Request a build</button>
          <p className="muted small">201 hands a build over (with its token); 204 means none is pending for this runner.</p>
        </Step>

        <Step title="3. Trace part">
          <div className="form-grid">
            <label><span>Content-Range (empty = continue at <code>{autoRange}</code>)</span>
              <input value={range} onChange={(e) => setRange(e.target.value)} placeholder={autoRange} data-testid="c-range" />
            </label>
          </div>
          <textarea value={traceBody} onChange={(e) => setTraceBody(e.target.value)} rows={4} className="curl-text" aria-label="Trace part to send" data-testid="c-trace-body" />
          <div className="row gap">
            <button disabled={off} data-testid="c-send-trace"
              onClick={() => void run('trace part', () => runnerConsole.trace(client, { body: traceBody, ...(range.trim() ? { content_range: range.trim() } : {}) }))}>
              Send part ({bodyBytes} bytes)
            </button>
            <button className="ghost" onClick={() => setRange(autoRange)} data-testid="c-fill-range">Fill in the next range</button>
          </div>
        </Step>

        <Step title="4. Update state">
          <div className="row gap">
            <select value={updState} onChange={(e) => setUpdState(e.target.value)} aria-label="Build state to send" data-testid="c-state">
              {STATES.map((s) => <option key={s}>{s}</option>)}
            </select>
            <label className="check"><input type="checkbox" checked={sendFull} onChange={(e) => setSendFull(e.target.checked)} data-testid="c-send-full" /> with the full trace</label>
            <button disabled={off} data-testid="c-update" onClick={() => void run('update', () => runnerConsole.update(client, { state: updState, ...(sendFull ? { trace: fullTrace } : {}) }))}>Send update</button>
          </div>
          {sendFull && <textarea value={fullTrace} onChange={(e) => setFullTrace(e.target.value)} rows={3} className="curl-text" placeholder="the whole trace, as a 1.x runner sends it with the final state" aria-label="Full trace to send with the state" data-testid="c-full-trace" />}
        </Step>

        <Step title="5. Artifacts">
          <div className="row gap">
            <input type="file" onChange={(e) => setFile(e.target.files?.[0] ?? null)} aria-label="Artifacts archive to upload" data-testid="c-file" />
            {nativeOpenAvailable() && (
              <button className="ghost" onClick={() => void nativeOpen().then((f) => f && setFile(new File([f.data as Uint8Array<ArrayBuffer>], f.name)))}>Open…</button>
            )}
            <input value={expireIn} onChange={(e) => setExpireIn(e.target.value)} placeholder="expire_in, e.g. 1 week" size={14} aria-label="Artifacts expire_in" data-testid="c-expire-in" />
          </div>
          <div className="row gap">
            <button disabled={off || !file} data-testid="c-upload" onClick={() => file && void run('upload', () => runnerConsole.upload(client, file, file.name, { expire_in: expireIn.trim() || undefined }))}>
              Upload{file ? ` ${file.name} (${bytes(file.size)})` : ''}
            </button>
            <button className="ghost" disabled={off} data-testid="c-download" onClick={() => void run('download', () => runnerConsole.download(client), saveDownload)}>Download</button>
            <button className="ghost danger" disabled={off} data-testid="c-delete" onClick={() => void run('delete artifacts', () => runnerConsole.deleteArtifacts(client))}>Delete artifacts</button>
          </div>
        </Step>
      </div>

      {note && <p className="muted" role="status" data-testid="console-note">{note}</p>}
      {stateQ.error && <p className="error">{(stateQ.error as Error).message}</p>}
      <ExchangeLog items={log} onClear={() => setLog([])} />
    </section>
  );
}
