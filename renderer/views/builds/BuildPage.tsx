// One build: its facts, a live trace, its artifacts; cancel while it is active, retry once finished
// (the retry opens the new build, as GitLab's does).
import { useEffect, useLayoutEffect, useRef, useState } from 'react';
import { useQuery } from '@tanstack/react-query';
import { useClient } from '../../app/client-context.tsx';
import { saveBlob } from '../../app/save-file.ts';
import { dateTime, humanDuration, num } from '../../components/format.ts';
import { StatusBadge } from '../../components/StatusBadge.tsx';
import { useTraceTail } from './useTraceTail.ts';
import { BuildActions } from './BuildActions.tsx';
import { Silence } from './BuildSilence.tsx';
import { navigate } from '../../app/route.ts';
import { usePace } from '../../app/pace.tsx';

export function BuildPage({ id }: { id: number }) {
  const client = useClient();
  const pace = usePace(1500);
  const build = useQuery({
    queryKey: ['build', id],
    queryFn: () => client.build(id),
    // Also after the build has finished while its archive has no file list yet: the list is written
    // by the archive_listing job, which may run after the last update (a file that is not a zip gets
    // an empty list, so this ends).
    refetchInterval: (q) => {
      const b = q.state.data;
      return b && (['pending', 'running'].includes(b.status) || (b.artifacts && !b.artifacts.files)) ? pace : false;
    },
  });
  const trace = useTraceTail(client, id);
  const [downloadMsg, setDownloadMsg] = useState<string | null>(null);

  // The trace's Build-Status is fresher than the build query: refetch when they disagree.
  useEffect(() => {
    if (trace.buildStatus && build.data && trace.buildStatus !== build.data.status) void build.refetch();
  }, [trace.buildStatus, build]);

  async function download() {
    setDownloadMsg('Downloading…');
    try {
      const { blob, filename } = await client.artifacts(id);
      await saveBlob(blob, filename);
      setDownloadMsg(`Saved ${filename} (${num(blob.size)} bytes).`);
    } catch (e) {
      setDownloadMsg((e as Error).message);
    }
  }

  const b = build.data;
  if (build.error) return <section className="view"><p className="error">{(build.error as Error).message}</p><a href="#/builds">← Builds</a></section>;
  if (!b) return <section className="view"><p className="muted">Loading build #{id}…</p></section>;

  return (
    <section className="view" data-testid="view-build">
      <div className="toolbar">
        <a href="#/builds">← Builds</a>
        <h2>#{b.id} {b.name}</h2>
        <StatusBadge status={b.status} />
        <Silence build={b} now={build.dataUpdatedAt} />
        <span className="spacer" />
        <BuildActions build={b} wide onRetried={(n) => navigate(`/builds/${n.id}`)} />
      </div>
      <dl className="facts">
        <dt>Project</dt><dd><a href={`#/builds?project=${b.project_id}`} data-testid="build-project">{b.project_name ?? `#${b.project_id}`}</a></dd>
        <dt>Stage</dt><dd>{b.stage}</dd>
        <dt>Ref</dt><dd>{b.ref} <code>{b.sha.slice(0, 8)}</code></dd>
        <dt>Runner</dt><dd>{b.runner_id === null ? '—' : `#${b.runner_id}`}</dd>
        <dt>Duration</dt><dd>{b.duration === null ? '—' : humanDuration(b.duration)}</dd>
        <dt>Created</dt><dd>{dateTime(b.created_at)}</dd>
        <dt>Trace</dt><dd data-testid="trace-bytes">{num(trace.bytes)} bytes</dd>
      </dl>

      <TraceViewer chunks={trace.chunks} live={!trace.done} error={trace.error} />

      <section className="card" aria-labelledby="art-h" data-testid="artifacts">
        <div className="card-head"><h3 id="art-h">Artifacts</h3></div>
        {b.artifacts ? (
          <>
            <p>
              <code>{b.artifacts.filename}</code> — {num(b.artifacts.size)} bytes{b.artifacts.expire_at && <>, expires {dateTime(b.artifacts.expire_at)}</>}{' '}
              <button onClick={() => void download()} data-testid="artifacts-download">Download</button>
            </p>
            {downloadMsg && <p className="small" role="status" data-testid="artifacts-message">{downloadMsg}</p>}
            {b.artifacts.files ? (
              <>
                {b.artifacts.files_truncated && (
                  <p className="muted small" data-testid="artifact-files-truncated">
                    Showing the first {num(b.artifacts.files.length)} of {num(b.artifacts.files_total ?? b.artifacts.files.length)} files: longer
                    listings are cut (--artifact-listing-max-entries, --artifact-listing-max-name-bytes). Download the archive for all of them.
                  </p>
                )}
                <table data-testid="artifact-files">
                  <thead><tr><th>File</th><th>Size</th></tr></thead>
                  {/* Index keys: a zip may hold the same name twice. */}
                  <tbody>{b.artifacts.files.map((f, i) => <tr key={i}><td><code>{f.name}</code></td><td>{num(f.size)}</td></tr>)}</tbody>
                </table>
              </>
            ) : (
              <p className="muted small">The file listing appears once the server has read the archive.</p>
            )}
          </>
        ) : (
          <p className="muted">No artifacts.</p>
        )}
      </section>
    </section>
  );
}

function TraceViewer({ chunks, live, error }: { chunks: string[]; live: boolean; error: string | null }) {
  const box = useRef<HTMLPreElement>(null);
  const [follow, setFollow] = useState(true);
  useLayoutEffect(() => {
    if (follow && box.current) box.current.scrollTop = box.current.scrollHeight;
  }, [chunks, follow]);
  return (
    <section className="card" aria-labelledby="trace-h">
      <div className="card-head">
        <h3 id="trace-h">Trace {live && <span className="badge status-running" data-testid="trace-live">live</span>}</h3>
        <label className="inline small"><input type="checkbox" checked={follow} onChange={(e) => setFollow(e.target.checked)} /> follow</label>
      </div>
      {error && <p className="error small">{error}</p>}
      {/* Each chunk is ansi_up output with escape_html on: text is escaped, only its own <span>s remain.
          Focusable so the keyboard can scroll a long trace; a named region so a screen reader says what it is. */}
      <pre ref={box} className="trace" data-testid="trace" aria-live="polite" tabIndex={0} role="region" aria-label="Build trace">
        {chunks.map((html, i) => <span key={i} dangerouslySetInnerHTML={{ __html: html }} />)}
      </pre>
    </section>
  );
}
