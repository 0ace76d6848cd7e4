// The job-health dashboard of the selected connection: KPI cards, charts over a time range (live
// or paused), queues and processes tables, thresholds, connection health, CSV export.
import { useMemo, useRef, useState } from 'react';
import { useQuery } from '@tanstack/react-query';
import type { Alert, History, Thresholds } from '../../api/client.ts';
import { useClient } from '../../app/client-context.tsx';
import { useSelectedConnection } from '../../app/connection-context.tsx';
import { saveBlob } from '../../app/save-file.ts';
import { historyCsvName } from '../../../common/file-name.ts';
import { PALETTE, TimeSeriesChart, type Marker, type RefLine, type Series } from '../../components/TimeSeriesChart.tsx';
import { Glossary } from '../../components/glossary.tsx';
import { ago, decimal, humanDuration, num, timeOfDay } from '../../components/format.ts';
import { RANGES, SPARK_POINTS, isRangeKey, type RangeKey } from './ranges.ts';
import { TOP, adoptEarlyHistory, arrivedEarlyHistory, historyParams } from './early-history.ts';
import { useUiState } from '../../app/ui-state.ts';
import { KpiCards } from './KpiCards.tsx';
import { useTrendHistory } from '../../app/queue-trends.ts';
import { QueuesTable } from './QueuesTable.tsx';
import { ProcessesTable } from './ProcessesTable.tsx';
import { RedisFactsCard } from './RedisFactsCard.tsx';
import { ThresholdsEditor } from './ThresholdsEditor.tsx';
import { QueuePicker } from './QueuePicker.tsx';
import { PollControl } from './PollControl.tsx';
import { usePauses } from './usePauses.ts';
import { useQueueColours } from './useQueueColours.ts';
import { ratesSeries, workersSeries } from './totals-series.ts';
import { useAnnounceChange } from '../../app/announcer.tsx';
import { usePace, usePaceOverride } from '../../app/pace.tsx';

// Module-level, so the memoized charts get the same function on every render.
const formatDuration = (v: number) => humanDuration(v);
const formatRate = (v: number) => decimal(v);
const NO_TIMES: number[] = [];

const NO_NAMES: string[] = [];

function queueSeries(h: History | undefined, field: 'backlog' | 'latency', names: string[], colourOf: (name: string) => string): Series[] {
  if (!h) return [];
  return names.map((q) => ({ name: q, values: h.queues[q]?.[field] ?? [], color: colourOf(q) }));
}

function thresholdLines(t: Thresholds | undefined, field: 'backlog' | 'latency', names: string[]): RefLine[] {
  if (!t) return [];
  const out: RefLine[] = [];
  const seen = new Set<number>();
  for (const q of names) {
    const v = t.queues[q]?.[field];
    if (v !== undefined && !seen.has(v)) {
      seen.add(v);
      out.push({ y: v, label: `${q} ${field} limit` });
    }
  }
  const d = t.default?.[field];
  if (d !== undefined && !seen.has(d)) out.push({ y: d, label: `${field} limit` });
  return out;
}

export default function DashboardView() {
  const client = useClient();
  const { id } = useSelectedConnection();
  const [rangeKey, setRangeKey] = useUiState<RangeKey>('dashboard.range', '15m', isRangeKey); // remembered across restarts
  const { pausedAt, toggle: togglePause, spans: pauseSpans } = usePauses();
  // Chosen with the refresh slider; until then the connection's sampling interval.
  const [pollS, setPollS] = useState<number | null>(null);
  const [queues, setQueues] = useState<string[] | null>(null);
  const [exportError, setExportError] = useState<string | null>(null);
  // Where the charts end before the first history arrives (render must not read the clock).
  const [openedAt] = useState(() => Date.now());
  const range = RANGES.find((r) => r.key === rangeKey)!;

  const connections = useQuery({ queryKey: ['connections'], queryFn: client.connections, refetchInterval: usePace(5000) });
  const conn = connections.data?.find((c) => c.id === id);
  // The server's --ui-refresh-ms, when set, stands in for the connection's interval (a test server
  // samples every few hundred ms).
  const paceOverride = usePaceOverride();
  const everyMs = pollS !== null ? pollS * 1000 : (paceOverride ?? Math.max(2, conn?.interval_s ?? 5) * 1000);
  const alertsEveryMs = usePace(5000);
  const live = pausedAt === null;
  const refetchInterval = live ? everyMs : false;

  const historyKey = ['history', id, rangeKey, pausedAt, queues?.join('\n') ?? null] as const;
  // The early answer when it is already here: the first render draws it (updatedAt its asking
  // time, so it is refetched at once if older than staleTime). Read once, on the first render,
  // and only for that render's key (another range's query must not start from it).
  const [arrived] = useState(() => ({ key: JSON.stringify(historyKey), early: arrivedEarlyHistory(client.baseUrl, client.token, id, rangeKey, pausedAt, queues) }));
  const initial = arrived.early && arrived.key === JSON.stringify(historyKey) ? arrived.early : undefined;
  const history = useQuery({
    queryKey: historyKey,
    initialData: initial?.data as History | undefined,
    initialDataUpdatedAt: initial?.at,
    queryFn: () => {
      const ask = () => client.history(id, historyParams(rangeKey, pausedAt ?? Date.now(), queues));
      const early = adoptEarlyHistory(client.baseUrl, client.token, id, rangeKey, pausedAt, queues) as Promise<History> | undefined;
      return early ? early.catch(ask) : ask();
    },
    refetchInterval,
    placeholderData: (prev) => prev,
  });
  const current = useQuery({ queryKey: ['current', id], queryFn: () => client.current(id), refetchInterval: live ? everyMs : false });
  const thresholds = useQuery({ queryKey: ['thresholds', id], queryFn: () => client.thresholds(id) });
  // Alerts of this connection, fetched incrementally (only ids above the last one seen) and kept
  // to the most recent 2,000: enough to mark a week of crossings without refetching them all.
  const alertLog = useRef<{ id: string; last?: number; items: Alert[] }>({ id, items: [] });
  const alerts = useQuery({
    queryKey: ['alerts', id],
    queryFn: async () => {
      if (alertLog.current.id !== id) alertLog.current = { id, items: [] };
      const log = alertLog.current;
      const fresh = await client.alertsAfter(log.last, id);
      if (fresh.length) {
        log.last = fresh[fresh.length - 1]!.id;
        log.items = [...log.items, ...fresh].slice(-2000);
      }
      return log.items;
    },
    refetchInterval: live ? alertsEveryMs : false,
  });

  // The connection list keeps polling (other views need it); a paused screen shows its state as of
  // the pause, so "Last sample" does not move on while the charts and cards hold still.
  const liveConn = { lastSampleAt: conn?.last_sample_at ?? null, lastError: conn?.last_error ?? null };
  const [held, setHeld] = useState({ pausedAt, conn: liveConn });
  if (held.pausedAt !== pausedAt) setHeld({ pausedAt, conn: liveConn });
  const shownConn = live ? liveConn : held.conn;

  const h = history.data;
  const to = h?.to ?? pausedAt ?? openedAt;
  // The charts show the whole range, however little of it has history: the same range looks the
  // same from one minute to the next, and a fresh history is a short line at the right edge.
  const windowFrom = to - range.ms;
  // Where the history starts in the range: the sparklines and the CSV export cover only that.
  const from = useMemo(() => {
    const start = h?.from ?? (pausedAt ?? openedAt) - range.ms;
    if (!h) return start;
    const i = h.t.findIndex((_, k) => h.totals.processed[k] !== null || h.totals.busy[k] !== null);
    const firstGap = h.gaps.reduce((m, g) => Math.min(m, g.t), Infinity);
    const first = Math.min(i >= 0 ? h.t[i]! : Infinity, firstGap);
    return Number.isFinite(first) ? Math.max(start, first) : start;
  }, [h, range.ms, pausedAt, openedAt]);
  // Sparklines cover the part of the range that has history (see `from` below), so a young
  // history still gets a trend rather than one bucket; a second, coarse query for every queue.
  const sparkFrom = Math.floor(from / 30_000) * 30_000; // coarse, so the key does not change on every refresh
  const spark = useQuery({
    queryKey: ['spark', id, rangeKey, pausedAt, sparkFrom],
    queryFn: () => client.history(id, { from: sparkFrom, to: pausedAt ?? Date.now(), points: SPARK_POINTS, top: 500 }),
    enabled: history.isSuccess,
    refetchInterval,
    placeholderData: (prev) => prev,
  });
  const trends = useTrendHistory(id, { pausedAt });
  const names = useMemo(() => (h ? (queues ?? Object.keys(h.queues)).filter((q) => h.queues[q]) : []), [h, queues]);

  const colourOf = useQueueColours(id, h?.queue_names ?? NO_NAMES);
  const backlog = useMemo(() => queueSeries(h, 'backlog', names, colourOf), [h, names, colourOf]);
  const latency = useMemo(() => queueSeries(h, 'latency', names, colourOf), [h, names, colourOf]);
  const workers = useMemo<Series[]>(() => (h ? workersSeries(h) : []), [h]);
  const rates = useMemo<Series[]>(() => (h ? ratesSeries(h) : []), [h]);
  const sets = useMemo<Series[]>(
    () => (h?.sets ? [{ name: 'retries', values: h.sets.retry, color: PALETTE[1]! }, { name: 'scheduled', values: h.sets.scheduled, color: PALETTE[0]! }, { name: 'dead', values: h.sets.dead, color: PALETTE[3]! }] : []),
    [h],
  );
  const markers = useMemo<Record<string, Marker[]>>(() => {
    const by: Record<string, Marker[]> = { latency: [], backlog: [], failure_rate: [] };
    for (const a of alerts.data ?? []) {
      const t = Date.parse(a.fired_at);
      if (a.connection_id === id && t >= windowFrom && t <= to) by[a.kind]!.push({ t, label: a.kind });
    }
    return by;
  }, [alerts.data, id, windowFrom, to]);
  // Memoized like the series: new arrays here would re-render the (memo) charts on every render.
  const backlogLines = useMemo(() => thresholdLines(thresholds.data, 'backlog', names), [thresholds.data, names]);
  const latencyLines = useMemo(() => thresholdLines(thresholds.data, 'latency', names), [thresholds.data, names]);
  const failureRate = thresholds.data?.failure_rate;
  const failLine = useMemo<RefLine[]>(() => (failureRate !== undefined ? [{ y: failureRate, label: 'failure-rate limit' }] : []), [failureRate]);

  async function exportCsv() {
    const w = { from: h?.from ?? from, to };
    const blob = await client.exportCsv(id, w.from, w.to);
    await saveBlob(blob, historyCsvName(conn?.name ?? id, id, w.from));
  }

  return (
    <section className="view dashboard" data-testid="view-dashboard">
      <div className="toolbar">
        <h2>{conn?.name ?? 'Dashboard'}</h2>
        <div className="segmented" role="group" aria-label="Time range">
          {RANGES.map((r) => (
            <button key={r.key} className={r.key === rangeKey ? 'on' : ''} aria-pressed={r.key === rangeKey} onClick={() => setRangeKey(r.key)} data-testid={`range-${r.key}`}>
              {r.label}
            </button>
          ))}
        </div>
        <button onClick={togglePause} aria-pressed={!live} data-testid="live-toggle">{live ? '❚❚ Pause' : '▶ Resume live'}</button>
        {/* Disabled while paused: a paused screen holds the moment of the pause, and a refresh of
            that moment would redraw the same window, so it could only look broken. */}
        <button className="ghost" disabled={!live} title={live ? undefined : 'Paused: the screen holds still; resume live to see new data'} onClick={() => { void history.refetch(); void spark.refetch(); void current.refetch(); }} data-testid="refresh">↻ Refresh</button>
        <QueuePicker all={h?.queue_names ?? []} chosen={queues} onChange={setQueues} top={TOP} />
        <span className="spacer" />
        <button className="ghost" onClick={() => { setExportError(null); void exportCsv().catch((e) => setExportError(`CSV export failed: ${(e as Error).message}`)); }} data-testid="export-csv">Export CSV</button>
      </div>

      {/* The refresh slider beside the line that says how often, not in the toolbar: that one has to
          fit 1024 px on one row. */}
      <div style={{ display: 'flex', flexWrap: 'wrap', alignItems: 'center', gap: '4px 16px' }}>
        <Health
          live={live}
          pausedAt={pausedAt}
          lastSampleAt={shownConn.lastSampleAt}
          lastError={shownConn.lastError}
          gaps={h?.gaps.reduce((sum, g) => sum + g.count, 0) ?? 0}
          error={(history.error ?? current.error ?? (exportError ? new Error(exportError) : null)) as Error | null}
          every={everyMs / 1000}
        />
        <PollControl seconds={everyMs / 1000} onChange={setPollS} disabled={!live} />
      </div>

      <KpiCards current={current.data} history={h} />

      <div className="charts">
        <div className="card">
          <h3><Glossary term="backlog">Backlog per queue</Glossary></h3>
          <TimeSeriesChart testId="chart-backlog" integers t={h?.t ?? NO_TIMES} series={backlog} from={windowFrom} to={to} yFormat={num} refLines={backlogLines} markers={markers.backlog} spans={pauseSpans} />
        </div>
        <div className="card">
          <h3><Glossary term="latency">Latency per queue</Glossary></h3>
          <TimeSeriesChart testId="chart-latency" t={h?.t ?? NO_TIMES} series={latency} from={windowFrom} to={to} axis="duration" yFormat={formatDuration} refLines={latencyLines} markers={markers.latency} spans={pauseSpans} />
        </div>
        <div className="card">
          <h3><Glossary term="busy">Busy workers</Glossary> vs <Glossary term="concurrency">concurrency</Glossary></h3>
          <TimeSeriesChart testId="chart-workers" integers t={h?.t ?? NO_TIMES} series={workers} from={windowFrom} to={to} yFormat={num} spans={pauseSpans} />
        </div>
        <div className="card">
          <h3><Glossary term="processed">Processed</Glossary> and <Glossary term="failed">failed</Glossary> per second</h3>
          <TimeSeriesChart testId="chart-rates" t={h?.t ?? NO_TIMES} series={rates} from={windowFrom} to={to} yFormat={formatRate} refLines={failLine} markers={markers.failure_rate} spans={pauseSpans} />
        </div>
        {sets.length > 0 && (
          <div className="card">
            <h3><Glossary term="retries">Retries</Glossary>, <Glossary term="scheduled">scheduled</Glossary> and <Glossary term="dead">dead</Glossary></h3>
            <TimeSeriesChart testId="chart-sets" integers t={h?.t ?? NO_TIMES} series={sets} from={windowFrom} to={to} yFormat={num} spans={pauseSpans} />
          </div>
        )}
      </div>

      <div className="tables">
        <QueuesTable connectionId={id} current={current.data} spark={spark.data} trends={trends} deletable={conn?.kind === 'embedded'} />
        <ProcessesTable connectionId={id} current={current.data} asOf={current.dataUpdatedAt} conn={conn} />
      </div>
      {conn?.kind === 'sidekiq' && <RedisFactsCard key={id} connectionId={id} />}
      <ThresholdsEditor connectionId={id} thresholds={thresholds.data} queueNames={h?.queue_names ?? Object.keys(current.data?.queues ?? {})} />
    </section>
  );
}

function Health({ live, pausedAt, lastSampleAt, lastError, gaps, error, every }: { live: boolean; pausedAt: number | null; lastSampleAt: string | null; lastError: string | null; gaps: number; error: Error | null; every: number }) {
  const ok = !lastError && !error;
  const dot = !ok ? 'bad' : live ? 'ok' : 'paused';
  // Not a live region: its clock text changes with every sample. Changes of state are announced.
  useAnnounceChange(live ? `Live, every ${every} s` : 'Paused');
  useAnnounceChange(ok ? 'Sampling works' : 'Sampling failed');
  return (
    <div className={`health ${ok ? 'ok' : 'bad'}`} data-testid="connection-health">
      <span className={`dot ${dot}`} aria-hidden="true" data-testid="health-dot" data-state={dot} />
      <span data-testid="live-state">{live ? `Live, every ${every} s` : `Paused since ${timeOfDay(pausedAt)}`}</span>
      <span className="muted">Last sample{live ? '' : ' before the pause'}: <span data-testid="last-sample">{lastSampleAt ? `${timeOfDay(lastSampleAt)}${live ? ` (${ago(lastSampleAt)})` : ''}` : 'none yet'}</span></span>
      {gaps > 0 && <span className="muted" data-testid="gap-count">{gaps} failed sample{gaps === 1 ? '' : 's'} in range (shown as gaps)</span>}
      {lastError && <span className="error" data-testid="last-error">Sampling failed: {lastError}</span>}
      {error && <span className="error">{error.message}</span>}
    </div>
  );
}
