// What a fleet hands its runners, and through them each build they run: the one HTTP client, the
// target and its tokens, the fleet's stats and its stop signal.
import type { HttpClient } from './http-client.ts';
import type { FleetStats } from './stats.ts';

export interface FleetLink {
  client: HttpClient;
  target: string;
  registrationToken?: string;
  adminToken?: string;
  verify: boolean;
  stats: FleetStats;
  signal: AbortSignal;
  /** Records who took a build; false when another runner already had it (handed out twice). */
  claim(buildId: number, runner: string): boolean;
  /** Whether the fleet still wants builds (its target not yet taken). */
  wantsBuilds(): boolean;
}
