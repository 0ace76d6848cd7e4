// The journal holds every token the virtual runners and the console used (admin PRIVATE-TOKEN,
// registration, runner and build tokens, in headers, query strings, JSON bodies and answers such
// as register's and the build details). What leaves through the API (the journal view, HAR, curl)
// shows "[REDACTED]" in their place unless the caller opts in with include_secrets=1.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type TestServer } from '../helpers/server.ts';
import { http as req } from '../helpers/http.ts';
import { REDACTED, redactEntry } from '../../simulator/journal-redact.ts';
import type { JournalEntry } from '../../contract/simulator.ts';
import { databaseOf } from '../../server/store/index.ts';
import { waitFor } from '../helpers/wait.ts';

let s: TestServer;
beforeAll(async () => {
  s = await startServer();
});
afterAll(async () => {
  await s.close();
});
const api = (p: string, o: Parameters<typeof req>[1] = {}) => req(`${s.url}/api/app/sim${p}`, { token: s.adminToken, ...o });

/** Every token this server issued or knows, read from its own store. */
function knownSecrets(): string[] {
  const db = databaseOf(s.server.ctx.store);
  const col = (sql: string) => db.all<{ t: string | null }>(sql).map((r) => r.t).filter((t): t is string => !!t);
  return [
    s.adminToken,
    s.registrationToken,
    ...col('SELECT token AS t FROM runners'),
    ...col('SELECT token AS t FROM builds'),
    ...col('SELECT runners_token AS t FROM projects'),
  ];
}

describe('secrets in journal exports', () => {
  let runnerToken: string;
  beforeAll(async () => {
    const start = await api('/fleet', { json: { runners: 2, builds: 3, behaviour: { update_ms: 0, poll_ms: 20, trace_kb: 1, part_kb: 0.5, artifact_kb: 2 } } });
    expect(start.status).toBe(201);
    await waitFor('the fleet to finish', async () => (await api('/fleet')).body.state === 'finished', 15_000);
    // The console too: a register (registration token in the body, runner token in the answer),
    // then an unregister and a build request carrying the runner token.
    const reg = await api('/console/register', { json: { description: 'secret-test' } });
    expect(reg.status).toBe(200);
    runnerToken = reg.body.state.runner_token;
    expect(runnerToken).toMatch(/\S{8,}/);
    await api('/console/request-build', { method: 'POST' });
  });

  it('records real tokens (so the check below means something)', () => {
    const secrets = knownSecrets();
    expect(secrets).toContain(runnerToken);
    expect(secrets.length).toBeGreaterThan(6);
  });

  it('redacts them by default in the journal, the HAR export and every curl command', async () => {
    const secrets = knownSecrets();
    const page = await api('/journal?limit=10000');
    expect(page.status).toBe(200);
    const har = await api('/journal.har');
    expect(har.status).toBe(200);
    const curls: string[] = [];
    for (const e of page.body.entries as { id: number }[]) {
      const c = await api(`/journal/${e.id}/curl`);
      expect(c.status).toBe(200);
      curls.push(c.body.curl);
    }
    const texts = { journal: page.raw.toString(), har: har.raw.toString(), curl: curls.join('\n') };
    for (const [where, text] of Object.entries(texts)) {
      for (const secret of secrets) expect(text.includes(secret), `${where} holds ${secret}`).toBe(false);
      expect(text, where).toContain('[REDACTED]');
    }
    // Where the placeholder stands: headers, the register body and answer, the build details.
    const entries = har.body.log.entries as { request: { url: string; headers: { name: string; value: string }[]; postData?: { text: string } }; response: { content: { text?: string } } }[];
    const header = (name: string) => entries.flatMap((e) => e.request.headers).filter((h) => h.name.toLowerCase() === name);
    expect(header('private-token').length).toBeGreaterThan(0);
    expect(header('private-token').every((h) => h.value === '[REDACTED]')).toBe(true);
    expect(header('build-token').length).toBeGreaterThan(0);
    expect(header('build-token').every((h) => h.value === '[REDACTED]')).toBe(true);
    const register = entries.find((e) => e.request.url.endsWith('/runners/register.json') && e.response.content.text?.includes('token'))!;
    expect(JSON.parse(register.request.postData!.text).token).toBe('[REDACTED]');
    expect(JSON.parse(register.response.content.text!).token).toBe('[REDACTED]');
    const details = entries.find((e) => e.request.url.endsWith('/builds/register.json') && e.response.content.text?.includes('variables'))!;
    const build = JSON.parse(details.response.content.text!);
    expect(build.token).toBe('[REDACTED]');
    expect(build.repo_url).toContain('gitlab-ci-token:[REDACTED]@');
    expect(build.variables.find((v: { key: string }) => v.key === 'CI_BUILD_TOKEN').value).toBe('[REDACTED]');
    expect(build.variables.find((v: { key: string }) => v.key === 'CI_BUILD_REF_NAME').value).not.toBe('[REDACTED]'); // public ones stay
  });

  it('includes them when asked with include_secrets=1', async () => {
    const har = (await api('/journal.har?include_secrets=1')).raw.toString();
    expect(har).toContain(s.adminToken);
    expect(har).toContain(runnerToken);
    expect(har).not.toContain('[REDACTED]');
    const page = await api('/journal?limit=10000&include_secrets=1');
    expect(page.raw.toString()).toContain(runnerToken);
    const withToken = (page.body.entries as { id: number; request_headers: [string, string][] }[]).find((e) => e.request_headers.some(([n]) => n.toLowerCase() === 'build-token'))!;
    const curl = await api(`/journal/${withToken.id}/curl?include_secrets=1`);
    expect(curl.body.curl).not.toContain('[REDACTED]');
    expect((await api(`/journal/${withToken.id}/curl`)).body.curl).toContain("'Build-Token: [REDACTED]'");
  });
});

describe('redaction of one entry', () => {
  const base: JournalEntry = {
    id: 1, started_at: new Date(0).toISOString(), duration_ms: 1, runner: 'r', method: 'POST', url: 'http://h/x', path: '/x', status: 200,
    request_headers: [], response_headers: [], request_body: { size: 0, truncated: false }, response_body: { size: 0, truncated: false },
    fault: null, error: null, build_id: null,
  };
  const text = (t: string) => ({ size: t.length, text: t, truncated: false });

  it('hides query parameters, form and multipart fields, Authorization, even short tokens, and leaves the rest alone', () => {
    const e = redactEntry({
      ...base,
      url: 'http://h/api/v3/sim/builds?private_token=adm1n-secret-value&page=2&tok=x',
      path: '/api/v3/sim/builds?private_token=adm1n-secret-value&page=2&tok=x',
      request_headers: [['Authorization', 'Bearer bearer-secret-123'], ['Content-Type', 'application/x-www-form-urlencoded'], ['X-Other', 'bearer-secret-123']],
      request_body: text('token=abc&description=my+token+runner&registration_token=reg-secret-9'),
      response_headers: [['Content-Type', 'application/json']],
      response_body: text('{"id":1,"token":"rt"}'),
      error: 'failed for adm1n-secret-value',
    });
    expect(e.url).toBe(`http://h/api/v3/sim/builds?private_token=${REDACTED}&page=2&tok=x`);
    expect(e.path).toBe(`/api/v3/sim/builds?private_token=${REDACTED}&page=2&tok=x`);
    expect(e.request_headers).toEqual([['Authorization', REDACTED], ['Content-Type', 'application/x-www-form-urlencoded'], ['X-Other', REDACTED]]);
    expect(e.request_body.text).toBe(`token=${REDACTED}&description=my+token+runner&registration_token=${REDACTED}`);
    expect(e.response_body.text).toBe(`{"id":1,"token":"${REDACTED}"}`); // "rt" is hidden where it is labelled, "token" itself stays
    expect(e.error).toBe(`failed for ${REDACTED}`);

    const boundary = 'XyZ';
    const multipart = `--${boundary}\r\nContent-Disposition: form-data; name="token"\r\n\r\nbuild-secret-77\r\n--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="a.zip"\r\nContent-Type: application/octet-stream\r\n\r\nPK…`;
    const m = redactEntry({ ...base, request_headers: [['Content-Type', `multipart/form-data; boundary=${boundary}`]], request_body: text(multipart) });
    expect(m.request_body.text).not.toContain('build-secret-77');
    expect(m.request_body.text).toContain(`name="token"\r\n\r\n${REDACTED}\r\n`);
    expect(m.request_body.text).toContain('filename="a.zip"');
  });

  it('hides a cut JSON body\'s token fields and tokens learned from other entries', () => {
    const cut = '{"id":5,"token":"build-secret-42","repo_url":"http://gitlab-ci-token:build-secret-42@h/p.git","variables":[{"key":"CI_BUILD_TOKEN","value":"build-sec';
    const e = redactEntry({ ...base, response_headers: [['Content-Type', 'application/json']], response_body: { size: 9000, text: cut, truncated: true } });
    expect(e.response_body.text).not.toContain('build-secret-42');
    expect(e.response_body.text).toContain(`gitlab-ci-token:${REDACTED}@h`);
    const trace = redactEntry({ ...base, request_headers: [['Content-Type', 'text/plain']], request_body: text('$ echo runner-secret-5150\nrunner-secret-5150\n') }, new Set(['runner-secret-5150']));
    expect(trace.request_body.text).toBe(`$ echo ${REDACTED}\n${REDACTED}\n`);
  });
});
