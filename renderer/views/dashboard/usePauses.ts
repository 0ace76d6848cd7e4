// Live or paused, and since when. A paused dashboard's window ends where the pause began; every
// pause is kept as a span the charts shade: while paused, a line at the chart's end labelled
// "paused since …"; after resuming, the stretch that was not watched live, as long as it is in range.
import { useCallback, useMemo, useState } from 'react';
import type { Span } from '../../components/TimeSeriesChart.tsx';
import { clock } from '../../components/format.ts';

interface Pause {
  from: number;
  to: number | null;
}

/** Pauses remembered for the charts: more would rarely fall inside even a 7-day range. */
const KEEP = 20;
const hms = (t: number) => clock(t, 0);

export function usePauses(): { pausedAt: number | null; toggle: () => void; spans: Span[] } {
  const [pauses, setPauses] = useState<Pause[]>([]);
  const last = pauses[pauses.length - 1];
  const pausedAt = last && last.to === null ? last.from : null;
  const toggle = useCallback(() => {
    const now = Date.now();
    setPauses((p) => {
      const l = p[p.length - 1];
      if (l && l.to === null) return [...p.slice(0, -1), { from: l.from, to: Math.max(now, l.from) }];
      return [...p, { from: now, to: null }].slice(-KEEP);
    });
  }, []);
  const spans = useMemo<Span[]>(
    () => pauses.map((p) => ({ from: p.from, to: p.to, label: p.to === null ? `paused since ${hms(p.from)}` : `paused ${hms(p.from)}–${hms(p.to)}` })),
    [pauses],
  );
  return { pausedAt, toggle, spans };
}
