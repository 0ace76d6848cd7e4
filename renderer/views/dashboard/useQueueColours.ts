// The queue colours of one connection, remembered with the view state so they survive restarts.
import { useEffect, useMemo } from 'react';
import { PALETTE } from '../../components/TimeSeriesChart.tsx';
import { assignSlots, isColourSlots, type ColourSlots } from '../../components/series-colours.ts';
import { useUiState } from '../../app/ui-state.ts';

const NONE: ColourSlots = {};

/** Colour of every queue name in `live` (the queues of the range), by name. */
export function useQueueColours(connectionId: string, live: readonly string[]): (name: string) => string {
  const [saved, save] = useUiState<ColourSlots>(`dashboard.colours.${connectionId}`, NONE, isColourSlots);
  const slots = useMemo(() => assignSlots(saved, live, PALETTE.length), [saved, live]);
  useEffect(() => {
    if (slots !== saved && live.length) save(slots);
  }, [slots, saved, live.length, save]);
  return useMemo(() => (name: string) => PALETTE[slots[name] ?? 0]!, [slots]);
}
