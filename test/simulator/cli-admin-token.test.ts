// `jobscope simulate --target <a Jobscope> --admin-token T` needs no --registration-token: the admin
// token reads it from the target's GET /api/v3/sim/instance. A wrong admin token
// is a usage error (exit 2) that says which token the target refused.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type TestServer } from '../helpers/server.ts';
import { simulateInProcess as run } from './support.ts';

const FLAGS = ['--runners', '2', '--builds', '4', '--trace-kb', '2', '--part-kb', '1', '--artifact-kb', '2', '--update-ms', '0', '--poll-ms', '30', '--json'];

describe('jobscope simulate --target with only --admin-token', () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startServer();
  });
  afterAll(async () => s.close());

  it('reads the registration token from the target and runs the builds', async () => {
    const r = await run(['--target', s.url, '--admin-token', s.adminToken, ...FLAGS]);
    expect(r.stderr).not.toMatch(/registration-token|itself failed/);
    expect(r.code).toBe(0);
    const status = JSON.parse(r.stdout) as { totals: { builds_done: number; success: number; traces_verified: number }; protocol_broken: boolean };
    expect(status.totals.builds_done).toBe(4);
    expect(status.totals.success).toBe(4);
    // The admin token still does its other jobs: builds were created and their traces verified.
    expect(status.totals.traces_verified).toBeGreaterThanOrEqual(4);
    expect(status.protocol_broken).toBe(false);
    // The builds ran on runners registered with the instance token (the fleet unregisters them at the end).
    const builds = (await (await fetch(`${s.url}/api/v3/sim/builds`, { headers: { 'PRIVATE-TOKEN': s.adminToken } })).json()) as { status: string; runner_id: number | null }[];
    expect(builds.filter((b) => b.status === 'success' && b.runner_id !== null)).toHaveLength(4);
  });

  it('exits 2 naming the admin token when the target refuses it', async () => {
    const r = await run(['--target', s.url, '--admin-token', 'not-the-admin-token-at-all', ...FLAGS]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/--admin-token.*401/);
  });

  it('still asks for --registration-token when there is no admin token either', async () => {
    const r = await run(['--target', s.url, ...FLAGS]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/--registration-token/);
  });
});
