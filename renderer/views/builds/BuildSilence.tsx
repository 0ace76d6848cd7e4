// When a running build looks abandoned: its runner streams a trace part at least every 30 s while
// alive (ForceTraceSentInterval), so a build not heard of for three of those has likely lost it.
import type { BuildView } from '../../api/client.ts';

export const SILENT_AFTER_MS = 90_000;

/** Whole minutes since a running build was last heard of, when that looks abandoned; else null. */
export function silentMinutes(b: Pick<BuildView, 'status' | 'last_update_at'>, now: number): number | null {
  if (b.status !== 'running' || b.last_update_at === null) return null;
  const ms = now - Date.parse(b.last_update_at);
  return ms >= SILENT_AFTER_MS ? Math.floor(ms / 60_000) : null;
}

/** "no update for 3 min", or null while the build is heard of. */
export function silenceLabel(b: Pick<BuildView, 'status' | 'last_update_at'>, now: number): string | null {
  const min = silentMinutes(b, now);
  return min === null ? null : `no update for ${min} min`;
}

/** The "no update for N min" badge beside a running build's status; nothing while it is heard of. `now`: when the build was fetched. */
export function Silence({ build, now }: { build: Pick<BuildView, 'status' | 'last_update_at'>; now: number }) {
  const label = silenceLabel(build, now);
  if (!label) return null;
  return (
    <span className="badge warn" data-testid="build-silence" title="Its runner has sent nothing for this build: it may have died mid-build. Cancel or fail the build; deleting the runner fails it too.">
      {label}
    </span>
  );
}
