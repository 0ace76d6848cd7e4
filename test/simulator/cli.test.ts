// `jobscope simulate` as a pipeline uses it: a child process, its exit code and its summary.
// Against a correct server it exits 0; against servers that break the protocol on purpose
// (a proxy that corrupts trace bytes, one that answers 202 but drops a part) it exits 1.
// A real process for what is about the process: exit 0 with its summary on stdout (against the
// embedded coordinator the command wires in), exit 1, commander's exit 2 on a bad flag. What the
// simulator finds and says (against a --target, a dropped part, usage errors) is checked in-process
// through the CLI's own parse and run functions: each spawned run costs a process start on top of
// the same fleet.
import { spawn } from 'node:child_process';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type TestServer } from '../helpers/server.ts';
import { jobscopeNodeArgs } from '../helpers/cli-process.ts';
import { parseSimulateArgs, UsageError, type SimulateDeps } from '../../simulator/cli-simulate.ts';
import { proxy, simulateInProcess } from './support.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');

async function simulate(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const node = await jobscopeNodeArgs();
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [...node, 'simulate', ...args], {
      cwd: ROOT,
      env: { ...process.env, NO_COLOR: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    const kill = setTimeout(() => child.kill('SIGKILL'), 50_000);
    child.on('close', (code) => {
      clearTimeout(kill);
      resolve({ code, stdout, stderr });
    });
  });
}

const FLAGS = ['--runners', '4', '--builds', '16', '--trace-kb', '3', '--part-kb', '1', '--artifact-kb', '4', '--update-ms', '0', '--poll-ms', '30'];

describe('jobscope simulate', () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startServer();
  });
  afterAll(async () => s.close());
  const target = () => ['--target', s.url, '--registration-token', s.registrationToken, '--admin-token', s.adminToken];

  // The summary of a run with faults against a correct server, however the run was started.
  const expectCleanSummary = (r: { code: number | null; stdout: string; stderr: string }) => {
    expect(r.stderr).not.toMatch(/the simulator itself failed/);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/builds done +16\/16: 16 success/);
    expect(r.stdout).toMatch(/its builds +16 in project simulator \(project runners: its builds only\): 16 success, 0 failed, 0 canceled, 0 running, 0 pending/);
    expect(r.stdout).toMatch(/32 traces and 16 artifacts byte-exact/);
    expect(r.stdout).toMatch(/416s met +[1-9]/);
    expect(r.stdout).toMatch(/wrong_range \d+ \(416×\d+\)/);
    expect(r.stdout).toMatch(/throughput +\d+ builds\/min, [\d.]+ trace MB\/s/);
    expect(r.stdout).toMatch(/protocol +OK/);
  };
  const CLEAN = [...FLAGS, '--faults', 'wrong_range,duplicate_part', '--seed', '3'];

  // One process covers both the exit and the embedded coordinator the command wires in (hosts/cli.ts):
  // a run of its own cost a second process start with a whole server inside.
  it('exits 0 with a summary, against an embedded server when no --target is given', async () => {
    const r = await simulate(CLEAN);
    expectCleanSummary(r);
    expect(r.stdout).toMatch(/\(embedded server\)/);
    // Not a terminal: plain progress lines, no cursor movement.
    expect(r.stderr).not.toContain('\x1b[');
  });

  it('returns 0 against a correct --target server, with a summary (in-process)', async () => {
    const r = await simulateInProcess([...target(), ...CLEAN]);
    expectCleanSummary(r);
    expect(r.stdout).not.toMatch(/embedded server/);
  });

  it('exits 1 against a server that corrupts trace bytes on their way in', async () => {
    const p = await proxy(s.url, (_req, body) => {
      if (body.length < 10) return null;
      const bad = Buffer.from(body);
      bad[5] = bad[5] === 0x41 ? 0x42 : 0x41; // one byte, length unchanged: only a byte compare sees it
      return { body: bad };
    });
    try {
      const r = await simulate(['--target', p.url, '--registration-token', s.registrationToken, '--admin-token', s.adminToken, ...FLAGS]);
      expect(p.tampered()).toBeGreaterThan(0);
      expect(r.code).toBe(1);
      expect(r.stdout).toMatch(/protocol +BROKEN/);
      expect(r.stdout).toMatch(/trace_mismatch \(build \d+\)/);
    } finally {
      await p.close();
    }
  });

  it('returns 1 against a server that answers 202 but drops a part (in-process)', async () => {
    let n = 0;
    const p = await proxy(s.url, (req) => {
      if (++n % 5 !== 3) return null;
      const end = String(req.headers['content-range']).split('-')[1]!;
      return { answer: { status: 202, headers: { 'Build-Status': 'running', Range: `0-${end}` } } };
    });
    try {
      const r = await simulateInProcess(['--target', p.url, '--registration-token', s.registrationToken, '--admin-token', s.adminToken, ...FLAGS]);
      expect(p.tampered()).toBeGreaterThan(0);
      expect(r.code).toBe(1);
      expect(r.stdout).toMatch(/trace_lost \(build \d+\): the server had acknowledged 0-\d+ and now says 0-\d+/);
    } finally {
      await p.close();
    }
  });

  it('exits 2 for usage errors, saying what is wrong', async () => {
    // A usage error never needs the embedded coordinator: starting one is itself a failure here.
    const deps: SimulateDeps = { startEmbedded: () => Promise.reject(new Error('no embedded coordinator in a usage test')) };
    const run = (args: string[]) => simulateInProcess(args, deps);
    const bad = await run(['--faults', 'bogus', '--target', s.url, '--registration-token', 'x']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/^jobscope simulate: --faults: unknown fault "bogus"; known faults: wrong_range/);
    expect(() => parseSimulateArgs(['--no-such-flag'])).toThrow(UsageError);
    expect(() => parseSimulateArgs(['--no-such-flag'])).toThrow(/unknown option '--no-such-flag'/);
    const down = await run(['--target', 'http://127.0.0.1:9', '--registration-token', 'x']);
    expect(down.code).toBe(2);
    expect(down.stderr).toMatch(/does not answer/);
    const range = await run(['--runners', '0']);
    expect(range.code).toBe(2);
    expect(range.stderr).toMatch(/--runners: expected an integer between 1 and 1000, got "0"/);
    const flag = await simulate(['--no-such-flag']);
    expect(flag.code).toBe(2);
  });

  it('parses flags as the command does', () => {
    const f = parseSimulateArgs(['--target', 'http://x:1', '--runners', '3', '--no-verify', '--json']);
    expect(f).toMatchObject({ target: 'http://x:1', runners: '3', verify: false, json: true });
    expect(parseSimulateArgs([]).verify).toBe(true);
    expect(parseSimulateArgs(['--shared']).shared).toBe(true);
    expect(parseSimulateArgs([]).shared).toBeUndefined();
  });
});
