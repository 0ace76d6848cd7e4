// Setting up an instance through the control API, as a QA script would.
import { http, RUNNER_UA } from './http.ts';
import type { TestServer } from './server.ts';

export async function createProject(s: TestServer, name = 'demo') {
  const r = await http(`${s.url}/api/v3/sim/projects`, { json: { name }, token: s.adminToken });
  if (r.status !== 201) throw new Error(`create project: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body as { id: number; name: string; runners_token: string; ci_token: string };
}

export async function createBuild(s: TestServer, projectId: number, body: Record<string, unknown> = {}) {
  const r = await http(`${s.url}/api/v3/sim/projects/${projectId}/builds`, { json: body, token: s.adminToken });
  if (r.status !== 201) throw new Error(`create build: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body;
}

export async function registerRunner(s: TestServer, token = s.registrationToken, extra: Record<string, unknown> = {}) {
  const r = await http(`${s.url}/ci/api/v1/runners/register.json`, { json: { token, ...extra }, headers: { 'user-agent': RUNNER_UA } });
  if (r.status !== 201) throw new Error(`register runner: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body as { id: number; token: string };
}

export async function requestBuild(s: TestServer, runnerToken: string, extra: Record<string, unknown> = {}) {
  return http(`${s.url}/ci/api/v1/builds/register.json`, { json: { token: runnerToken, ...extra }, headers: { 'user-agent': RUNNER_UA } });
}
