// The "times in UTC" choice (Settings), kept with the remembered view state. The shell reads it
// on every render and hands it to the formatters before any view formats a time.
import { useLayoutEffect } from 'react';
import { announceTimeZone, setUtcTimes } from '../components/format.ts';
import { isBoolean, useUiState } from './ui-state.ts';

export const UTC_TIMES_KEY = 'times.utc';

export function useUtcSetting(): [boolean, (on: boolean) => void] {
  return useUiState(UTC_TIMES_KEY, false, isBoolean);
}

/** For the shell: sets the formatters' zone as it renders, then wakes the memoized charts. */
export function useTimeZoneForFormats(): void {
  const [utc] = useUtcSetting();
  setUtcTimes(utc);
  useLayoutEffect(announceTimeZone, [utc]);
}
