// The simulator's app API (/api/app/sim): fleets, throughput, scenarios, the journal and the
// runner console. Types from the server's contract only.
import type {
  ConsoleBuildRef, ConsoleExchange, ConsoleRegister, ConsoleTrace, ConsoleUpdate, Curl, FleetStatus, JournalPage, JournalQuery,
  Scenario, StartFleet, Throughput, ThroughputQuery,
} from '../../contract/simulator.ts';
import type { Client } from './client.ts';

export type {
  ConsoleExchange, Curl, FleetStatus, JournalEntry, JournalPage, JournalQuery, RunnerStatus, Scenario, StartFleet, Throughput, FaultKind, Faults, BodyPreview,
} from '../../contract/simulator.ts';

export type ConsoleState = ConsoleExchange['state'];

const BASE = '/api/app/sim';

export const sim = {
  fleet: (c: Client) => c.json<FleetStatus>('GET', `${BASE}/fleet`),
  start: (c: Client, form: StartFleet) => c.json<FleetStatus>('POST', `${BASE}/fleet`, { json: form }),
  stop: (c: Client) => c.json<FleetStatus>('POST', `${BASE}/fleet/stop`),
  throughput: (c: Client, q: ThroughputQuery = {}) => c.json<Throughput>('GET', `${BASE}/fleet/throughput`, { query: q }),
  exportScenario: (c: Client) => c.file(`${BASE}/scenario`, undefined, 'jobscope-scenario.json'),
  /** Validates an imported scenario; answers it normalized or throws a 400 listing the problems. */
  validateScenario: (c: Client, scenario: unknown) => c.json<Scenario>('POST', `${BASE}/scenario/validate`, { json: scenario }),

  journal: (c: Client, q: JournalQuery = {}) => c.json<JournalPage>('GET', `${BASE}/journal`, { query: q }),
  journalHar: (c: Client, q: JournalQuery = {}) => c.file(`${BASE}/journal.har`, q, 'jobscope-simulator.har'),
  /** includeSecrets: the command carries the real tokens (replayable as-is); by default they read [REDACTED]. */
  curl: (c: Client, id: number, includeSecrets = false) => c.json<Curl>('GET', `${BASE}/journal/${id}/curl`, includeSecrets ? { query: { include_secrets: true } } : {}),
  clearJournal: (c: Client) => c.json<void>('DELETE', `${BASE}/journal`),
};

export const runnerConsole = {
  state: (c: Client) => c.json<ConsoleState>('GET', `${BASE}/console`),
  register: (c: Client, b: ConsoleRegister) => c.json<ConsoleExchange>('POST', `${BASE}/console/register`, { json: b }),
  useToken: (c: Client, runner_token: string, target_url?: string) =>
    c.json<ConsoleState>('POST', `${BASE}/console/use-token`, { json: { runner_token, ...(target_url ? { target_url } : {}) } }),
  requestBuild: (c: Client) => c.json<ConsoleExchange>('POST', `${BASE}/console/request-build`),
  trace: (c: Client, b: ConsoleTrace) => c.json<ConsoleExchange>('POST', `${BASE}/console/trace`, { json: b }),
  update: (c: Client, b: ConsoleUpdate) => c.json<ConsoleExchange>('POST', `${BASE}/console/update`, { json: b }),
  /** The chosen file goes up as multipart (no base64 inflation); the backend re-sends it as the runner would. */
  upload: (c: Client, file: Blob, filename: string, extra: { expire_in?: string } = {}) => {
    const form = new FormData();
    if (extra.expire_in) form.append('expire_in', extra.expire_in);
    form.append('file', file, filename);
    return c.json<ConsoleExchange>('POST', `${BASE}/console/upload-file`, { form });
  },
  download: (c: Client, b: ConsoleBuildRef = {}) => c.json<ConsoleExchange>('POST', `${BASE}/console/download`, { json: b }),
  deleteArtifacts: (c: Client, b: ConsoleBuildRef = {}) => c.json<ConsoleExchange>('POST', `${BASE}/console/delete-artifacts`, { json: b }),
  unregister: (c: Client) => c.json<ConsoleExchange>('POST', `${BASE}/console/unregister`),
};
