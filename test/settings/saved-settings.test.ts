// A saved setting can never stop the next start: PUT validates with the flags' own schema (enums,
// ranges, one table in server/config.ts), a bad value written to settings.json by other means is
// reported and ignored at start, and a saved host cannot quietly open the server to the network.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startServer, tempDir, type TestServer } from '../helpers/server.ts';
import { http } from '../helpers/http.ts';
import { SAVABLE, SETTINGS_FILE, resolveConfig, settingName } from '../../server/config.ts';

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => fs.rmSync(d, { recursive: true, force: true })));

function dataDirWith(saved: Record<string, unknown>): string {
  const dir = tempDir();
  dirs.push(dir);
  fs.writeFileSync(path.join(dir, SETTINGS_FILE), JSON.stringify(saved));
  return dir;
}

const put = (s: TestServer, body: unknown) => http(`${s.url}/api/app/settings`, { method: 'PUT', json: body, token: s.adminToken });

describe('saving settings', () => {
  it('refuses values outside each setting\'s range or choices, naming the setting and what is allowed', async () => {
    const s = await startServer();
    try {
      const level = await put(s, { values: { 'log-level': 'bogus' } });
      expect(level.status).toBe(400);
      expect(level.body.message).toMatch(/log-level/);
      expect(level.body.message).toMatch(/silent.*debug/);
      const huge = await put(s, { values: { 'sim-journal-entries': 1e15 } });
      expect(huge.status).toBe(400);
      expect(huge.body.message).toMatch(/sim-journal-entries/);
      expect(huge.body.message).toMatch(/from 1 to [\d,]+/);
      for (const [name, value] of [['port', 70000], ['history-days', 0], ['mode', 'kiosk'], ['sim-journal-body-bytes', -1], ['max-trace-mb', 1e12]] as const) {
        const r = await put(s, { values: { [name]: value } });
        expect(r.status, `${name}=${value}`).toBe(400);
        expect(r.body.message, `${name}=${value}`).toContain(name);
      }
      // Every numeric row has bounds, including rows without their own: 1e15 of anything is refused.
      for (const spec of SAVABLE.filter((x) => x.kind === 'int' || x.kind === 'mb')) {
        const r = await put(s, { values: { [settingName(spec)]: 1e15 } });
        expect(r.status, settingName(spec)).toBe(400);
      }
      const view = await http(`${s.url}/api/app/settings`, { token: s.adminToken });
      expect(view.body.settings.every((x: { saved: unknown }) => x.saved === null)).toBe(true); // nothing refused was written
      const journal = view.body.settings.find((x: { name: string }) => x.name === 'sim-journal-entries');
      expect(journal).toMatchObject({ min: 1, choices: null });
      expect(journal.max).toBeGreaterThanOrEqual(5000);
      expect(view.body.settings.find((x: { name: string }) => x.name === 'log-level').choices).toContain('debug');

      const ok = await put(s, { values: { 'log-level': 'debug', 'sim-journal-entries': 20000 } });
      expect(ok.status).toBe(200);
    } finally {
      await s.close();
    }
  });

  it('saves a non-loopback host only with an explicit confirm_expose, and only an address of this machine', async () => {
    const s = await startServer();
    try {
      const wide = await put(s, { values: { host: '0.0.0.0' } });
      expect(wide.status).toBe(400);
      expect(wide.body.message).toMatch(/host/);
      expect(wide.body.message).toMatch(/confirm_expose/);
      expect(fs.existsSync(path.join(s.dataDir, SETTINGS_FILE))).toBe(false);
      const elsewhere = await put(s, { values: { host: '203.0.113.9' }, confirm_expose: true });
      expect(elsewhere.status).toBe(400);
      expect(elsewhere.body.message).toMatch(/not an address of this machine/);
      expect((await put(s, { values: { host: 'localhost' } })).status).toBe(200);
      const confirmed = await put(s, { values: { host: '0.0.0.0' }, confirm_expose: true });
      expect(confirmed.status).toBe(200);
      expect(confirmed.body.settings.find((x: { name: string }) => x.name === 'host')).toMatchObject({ saved: '0.0.0.0' });
    } finally {
      await s.close();
    }
  });
});

describe('starting with saved settings', () => {
  it('reports and ignores bad saved values instead of refusing to start; good ones still apply', async () => {
    const dataDir = dataDirWith({
      'log-level': 'bogus',
      'sim-journal-entries': 1e15,
      'history-days': 0,
      port: 'x',
      host: '203.0.113.9',
      fsync: 'maybe',
      'max-artifact-mb': 7,
    });
    const config = resolveConfig({ dataDir }, {});
    expect(config).toMatchObject({ logLevel: 'info', simJournalEntries: 5000, historyDays: 7, port: 8090, host: '127.0.0.1', fsync: false, maxArtifactBytes: 7 * 1024 * 1024 });
    const warnings = config.settingsWarnings ?? [];
    for (const name of ['log-level', 'sim-journal-entries', 'history-days', 'port', 'host', 'fsync']) {
      expect(warnings.some((w) => w.includes(name)), name).toBe(true);
    }
    expect(warnings.join('\n')).not.toMatch(/max-artifact-mb/);
    // Flags and env still win over a bad saved value, with nothing to report about it.
    expect(resolveConfig({ dataDir, logLevel: 'warn' }, {}).settingsWarnings?.some((w) => w.includes('log-level'))).toBe(false);

    // The real server starts on it, logs the problem and shows it in the settings answer.
    const s = await startServer({ dataDir, logLevel: undefined });
    try {
      const view = await http(`${s.url}/api/app/settings`, { token: s.adminToken });
      expect(view.status).toBe(200);
      expect(view.body.warnings.some((w: string) => w.includes('sim-journal-entries'))).toBe(true);
      const row = view.body.settings.find((x: { name: string }) => x.name === 'log-level');
      expect(row).toMatchObject({ effective: 'info', saved: 'bogus', restart_required: false });
      expect(row.problem).toMatch(/silent/);
      const log = fs.readFileSync(path.join(dataDir, 'logs', 'jobscope.log'), 'utf8');
      expect(log).toMatch(/ignored.*log-level/);
      // The saved file is left as it was: the person can see and fix it.
      expect(JSON.parse(fs.readFileSync(path.join(dataDir, SETTINGS_FILE), 'utf8'))['log-level']).toBe('bogus');
      // Saving another setting still works with bad ones in the file.
      expect((await put(s, { values: { 'history-raw-hours': 12 } })).status).toBe(200);
    } finally {
      await s.close({ keepData: true });
    }
  });

  it('a settings.json that is not JSON is reported, not fatal', () => {
    const dir = tempDir();
    dirs.push(dir);
    fs.writeFileSync(path.join(dir, SETTINGS_FILE), '{"log-level": ');
    const config = resolveConfig({ dataDir: dir }, {});
    expect(config.logLevel).toBe('info');
    expect(config.settingsWarnings?.[0]).toMatch(/settings\.json/);
  });
});
