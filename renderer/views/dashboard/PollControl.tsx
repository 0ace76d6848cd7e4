// How often the dashboard asks for new data, as Sidekiq Web's polling slider does. It starts at
// the connection's sampling interval (the dashboard's pace before this control; asking faster
// than samples are taken shows nothing new) and goes from 2 s (the shortest sampling interval)
// to 60 s, for a screen left open all day.
export const POLL_MIN_S = 2;
export const POLL_MAX_S = 60;

export function PollControl({ seconds, onChange, disabled }: { seconds: number; onChange: (s: number) => void; disabled: boolean }) {
  return (
    <label className="inline small" title={disabled ? 'Paused: nothing is asked for until you resume' : 'How often the charts, cards and tables ask for new data'}>
      Refresh every
      <input type="range" min={POLL_MIN_S} max={POLL_MAX_S} step={1} value={seconds} disabled={disabled} style={{ width: '7em' }}
        onChange={(e) => onChange(Number(e.target.value))} aria-valuetext={`${seconds} seconds`} data-testid="poll-interval" />
      <output data-testid="poll-interval-value" style={{ minWidth: '3.5em' }}>{seconds} s</output>
    </label>
  );
}
