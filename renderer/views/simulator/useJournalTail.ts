// The journal's newest entries for a filter, tailed: one full read when the filter changes, then
// only entries past the last id seen (`since_id`). Why not a plain refetch: entries carry body
// previews (8 KiB each by default), so re-reading 200 of them every poll would move megabytes.
import { useCallback, useEffect, useRef, useState } from 'react';
import type { Client } from '../../api/client.ts';
import { sim, type JournalEntry, type JournalQuery } from '../../api/simulator.ts';

export interface JournalTail {
  entries: JournalEntry[]; // oldest first
  total: number;
  dropped: number;
  error: string | null;
  loaded: boolean;
  reload: () => void;
}

export function useJournalTail(client: Client, query: JournalQuery, limit: number, intervalMs: number): JournalTail {
  const key = JSON.stringify(query);
  const [state, setState] = useState<Omit<JournalTail, 'reload'>>({ entries: [], total: 0, dropped: 0, error: null, loaded: false });
  const [generation, setGeneration] = useState(0);
  const interval = useRef(intervalMs);
  interval.current = intervalMs;

  useEffect(() => {
    let stop = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    let held: JournalEntry[] = [];
    let lastTotal = -1;
    const q = JSON.parse(key) as JournalQuery;
    const tick = async () => {
      try {
        const since = held.length ? held[held.length - 1]!.id : undefined;
        const page = await sim.journal(client, { ...q, limit, ...(since !== undefined ? { since_id: since } : {}) });
        // The journal holds fewer than before: it was emptied (elsewhere too), so read it afresh.
        if (since !== undefined && page.total < lastTotal) {
          held = [];
          lastTotal = -1;
          if (!stop) timer = setTimeout(tick, 0);
          return;
        }
        held = (since === undefined ? page.entries : [...held, ...page.entries]).slice(-limit);
        lastTotal = page.total;
        if (!stop) setState({ entries: held, total: page.total, dropped: page.dropped, error: null, loaded: true });
      } catch (e) {
        if (!stop) setState((s) => ({ ...s, error: (e as Error).message }));
      }
      if (!stop) timer = setTimeout(tick, interval.current);
    };
    void tick();
    return () => {
      stop = true;
      clearTimeout(timer);
    };
  }, [client, key, limit, generation]);

  const reload = useCallback(() => setGeneration((g) => g + 1), []);
  return { ...state, reload };
}
