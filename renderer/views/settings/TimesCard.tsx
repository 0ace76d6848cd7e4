// Settings' "Times" card: every time on screen in this computer's zone or in UTC (the zone is named
// beside each time either way). Kept with the remembered view state, like the theme.
import { useId, useState } from 'react';
import { useUtcSetting } from '../../app/time-zone.ts';
import { timeOfDay, zoneName } from '../../components/format.ts';

export function TimesCard() {
  const [utc, setUtc] = useUtcSetting();
  const id = useId();
  // When the card opened: an example time, which need not tick.
  const [now] = useState(() => Date.now());
  return (
    <div className="card">
      <h3>Times</h3>
      <label htmlFor={id} className="inline">
        <input id={id} type="checkbox" checked={utc} onChange={(e) => setUtc(e.target.checked)} data-testid="times-utc" />
        Show times in UTC
      </label>
      <p className="muted small" data-testid="times-zone">Opened at {timeOfDay(now)}{utc ? '' : ` (this computer's zone, ${zoneName(now)})`}. CSV exports keep ISO 8601 times in UTC.</p>
    </div>
  );
}
