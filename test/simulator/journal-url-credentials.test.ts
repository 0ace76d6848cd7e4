// A build's repo_url may carry a password (https://oauth2:PASSWORD@host/…): every export of the
// journal (view, HAR, curl) and the console's own answer hide it by default, as they hide tokens.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type TestServer } from '../helpers/server.ts';
import { http } from '../helpers/http.ts';
import { createBuild, createProject } from '../helpers/fixtures.ts';
import { hideUserinfo } from '../../common/secrets.ts';

const PASSWORD = 'Pa55w0rd-in-the-repo-url';
const count = (text: string, s: string) => text.split(s).length - 1;

describe('URL credentials in journal exports', () => {
  let s: TestServer;
  let consoleBody = '';
  beforeAll(async () => {
    s = await startServer();
    const project = await createProject(s);
    for (let i = 0; i < 4; i++) await createBuild(s, project.id, { commands: `echo ${i}`, repo_url: `https://oauth2:${PASSWORD}@gitlab.example.com/group/app.git` });
    const api = (p: string, json: unknown) => http(`${s.url}/api/app/sim${p}`, { token: s.adminToken, json });
    await api('/console/register', {});
    for (let i = 0; i < 4; i++) {
      const got = await api('/console/request-build', {});
      expect(got.body.response.status).toBe(201);
      consoleBody += got.raw.toString();
      // The password also comes back bare, as a job log could print it.
      await api('/console/trace', { body: `Cloning with ${PASSWORD}\n` });
    }
  });
  afterAll(async () => s.close());
  const get = async (p: string) => (await http(`${s.url}/api/app/sim${p}`, { token: s.adminToken })).raw.toString();

  it('the password was recorded (so the counts below mean something)', async () => {
    expect(count(await get('/journal.har?include_secrets=1'), PASSWORD)).toBeGreaterThanOrEqual(4);
  });

  it('is gone from the journal, the HAR export, every curl command and the console answer', async () => {
    const journal = await get('/journal?limit=10000');
    const har = await get('/journal.har');
    const ids = (JSON.parse(journal) as { entries: { id: number }[] }).entries.map((e) => e.id);
    const curls = (await Promise.all(ids.map((id) => get(`/journal/${id}/curl`)))).join('\n');
    for (const [where, text] of Object.entries({ journal, har, curls, console: consoleBody })) expect(count(text, PASSWORD), where).toBe(0);
    expect(har).toContain('https://oauth2:[REDACTED]@gitlab.example.com/group/app.git');
    expect(consoleBody).toContain('oauth2:[REDACTED]@gitlab.example.com');
  });

  it('hides userinfo in free text and escaped JSON, keeping the user name', () => {
    const t = `clone https://oauth2:${PASSWORD}@h/x.git failed; {"u":"https:\\/\\/tok3n@h"} redis://:p@ss@127.0.0.1:6379/0 mail a@b.c https://h/p?x=a@b`;
    expect(hideUserinfo(t, 'X')).toBe('clone https://oauth2:X@h/x.git failed; {"u":"https:\\/\\/X@h"} redis://:X@127.0.0.1:6379/0 mail a@b.c https://h/p?x=a@b');
  });
});
