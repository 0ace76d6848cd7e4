// One build driven exactly the way real-runner-requests.md's capture of gitlab-ci-multi-runner 1.11.5
// shows it (run3): same paths, same headers (canonical Build-Token, User-Agent only with a body,
// Go-http-client/1.1 on the download), JSON bodies with `info`, exclusive-end Content-Range, a chunked
// multipart upload with expire_in=1+week, the final PUT with the full trace, and the DELETE with a JSON
// body. Plus the appendix's 416-then-resend exchange, the PATCH-404 fallback and a cancel.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type TestServer } from '../helpers/server.ts';
import { createBuild, createProject } from '../helpers/fixtures.ts';
import { control, INFO, makeZip, multipart, pieces, raw, type RawRes } from './lib.ts';

const UA = 'gitlab-ci-multi-runner 1.11.5 (1-11-stable; go1.19.8; linux/amd64)';
const { executor: _executor, ...INFO_AT_REGISTER } = { ...INFO, features: { ...INFO.features, variables: false } };

const PART1 =
  "\u001b[0KRunning with gitlab-ci-multi-runner 1.11.5 (cbfcb5c8)\n  on real-runner-harness (8d4a4c44)\n\u001b[0;m\u001b[0KUsing Shell executor...\n\u001b[0;mRunning on vm...\n\u001b[32;1mCloning repository...\u001b[0;m\nCloning into '/tmp/builds/8d4a4c44/0/project-1'...\n\u001b[32;1mChecking out 251b3ee7 as master...\u001b[0;m\n\u001b[32;1mSkipping Git submodules setup\u001b[0;m\n\u001b[32;1m$ echo hello\u001b[0;m\nhello\n\u001b[32;1m$ ls\u001b[0;m\nREADME.md\n\u001b[32;1m$ sleep 4\u001b[0;m\n";
const PART2 = '\u001b[32;1m$ echo second part of the trace\u001b[0;m\nsecond part of the trace\n\u001b[32;1m$ sleep 4\u001b[0;m\n';
const PART3 = '\u001b[32;1m$ mkdir -p out\u001b[0;m\n\u001b[32;1m$ echo "artifact from real runner" > out/result.txt\u001b[0;m\n';
const TAIL = '\u001b[32;1mUploading artifacts...\u001b[0;m\nout/: found 2 matching files\n\u001b[32;1mJob succeeded\n\u001b[0;m';

let s: TestServer;
beforeAll(async () => {
  s = await startServer();
});
afterAll(() => s.close());

/** What the runner's network/client.go doJSON sends: JSON body, UA, Accept only where it decodes the answer. */
function doJSON(path: string, method: string, body: unknown, decodes: boolean): Promise<RawRes> {
  const headers: Record<string, string> = { 'User-Agent': UA, 'Content-Type': 'application/json', 'Accept-Encoding': 'gzip' };
  if (decodes) headers.Accept = 'application/json';
  return raw(`${s.url}/ci/api/v1/${path}`, { method, headers, body: JSON.stringify(body) });
}

/** network/gitlab.go PatchTrace: raw text/plain, Build-Token, Content-Range start-end (end exclusive). */
function patch(id: number, token: string, start: number, bytes: Buffer): Promise<RawRes> {
  return raw(`${s.url}/ci/api/v1/builds/${id}/trace.txt`, {
    method: 'PATCH',
    headers: { 'User-Agent': UA, 'Build-Token': token, 'Content-Range': `${start}-${start + bytes.length}`, 'Content-Type': 'text/plain', 'Accept-Encoding': 'gzip' },
    body: bytes,
  });
}

/** How the runner decides a JSON answer is good (1.11.5: mime.ParseMediaType; ≤1.6: verbatim, which we also meet). */
function expectRunnerJson(r: RawRes, status: number) {
  expect(r.status).toBe(status);
  expect(r.headers['content-type']).toBe('application/json');
  expect(r.json).toBeTypeOf('object');
}

async function setup(name: string) {
  const project = await createProject(s, name);
  const reg = await doJSON('runners/register.json', 'POST', { info: INFO_AT_REGISTER, token: project.runners_token, description: 'real-runner-harness', run_untagged: true }, true);
  expectRunnerJson(reg, 201);
  return { project, runnerToken: reg.json.token as string };
}

describe('a real runner’s build, request by request (capture run3)', () => {
  it('register, poll, PUT running, three PATCHes, chunked upload, final PUT, download by a dependent build, unregister', async () => {
    const { project, runnerToken } = await setup('lifecycle');
    expect(runnerToken).toMatch(/\S{8,}/);

    // idle poll (capture exp-empty #2): 204 with the long-poll hint, which the next poll echoes
    const idle = await doJSON('builds/register.json', 'POST', { info: INFO, token: runnerToken }, true);
    expect(idle.status).toBe(204);
    const lastUpdate = idle.headers['x-gitlab-last-update'] as string;
    expect(lastUpdate).toBeTruthy();

    const created = await createBuild(s, project.id, {
      name: 'real-runner-test',
      stage: 'test',
      sha: '251b3ee7942f212a7a759c47b5679ba7fdc5f79e',
      commands: 'echo hello\nls\nsleep 4\necho second part of the trace\nsleep 4\nmkdir -p out\necho "artifact from real runner" > out/result.txt',
      repo_url: 'file:///tmp/repo.git',
      options: { artifacts: { paths: ['out/'], name: 'real-runner-artifacts', expire_in: '1 week' } },
      variables: [],
    });

    // #2: the poll that takes the build
    const polled = await doJSON('builds/register.json', 'POST', { info: INFO, token: runnerToken, last_update: lastUpdate }, true);
    expectRunnerJson(polled, 201);
    const build = polled.json;
    expect(build).toMatchObject({
      id: created.id,
      project_id: project.id,
      status: 'running',
      name: 'real-runner-test',
      stage: 'test',
      ref: 'master',
      tag: false,
      sha: '251b3ee7942f212a7a759c47b5679ba7fdc5f79e',
      repo_url: 'file:///tmp/repo.git',
      timeout: 3600,
      options: { artifacts: { paths: ['out/'], name: 'real-runner-artifacts', expire_in: '1 week' } },
      depends_on_builds: [],
    });
    expect(build.commands.split('\n')).toHaveLength(7);
    expect(typeof build.token).toBe('string');
    expect(typeof build.allow_git_fetch).toBe('boolean');
    expect(Array.isArray(build.variables) && Array.isArray(build.credentials)).toBe(true);

    // #3: first tick, state changed → PUT state=running without a trace
    const running = await doJSON(`builds/${build.id}.json`, 'PUT', { info: INFO, token: runnerToken, state: 'running' }, false);
    expect(running.status).toBe(200);

    // #4–#6: the trace in parts, each Content-Range start-end with the end exclusive
    let offset = 0;
    for (const part of [PART1, PART2, PART3]) {
      const bytes = Buffer.from(part);
      const r = await patch(build.id, build.token, offset, bytes);
      offset += bytes.length;
      expect(r.status).toBe(202);
      expect(r.headers['build-status']).toBe('running');
      expect(r.headers.range).toBe(`0-${offset}`);
      expect(Number(String(r.headers.range).split('-')[1])).toBe(offset); // the runner reads split("-")[1]
    }

    // #7: the artifacts-uploader: chunked multipart, Build-Token header only, expire_in in the query
    const zip = await makeZip({ 'out/': '', 'out/result.txt': 'artifact from real runner\n' });
    const boundary = 'bf3a538cc72f76251a4b5f86ecdce3560ec521fc3b3eb6a6c05061630cf0';
    const mp = multipart([{ name: 'file', filename: 'real-runner-artifacts.zip', contentType: 'application/octet-stream', value: zip }], boundary);
    const upload = await raw(`${s.url}/ci/api/v1/builds/${build.id}/artifacts?expire_in=1+week`, {
      method: 'POST',
      headers: { 'User-Agent': UA, 'Build-Token': build.token, 'Content-Type': mp.contentType, 'Accept-Encoding': 'gzip' },
      chunks: pieces(mp.body, 128),
    });
    expectRunnerJson(upload, 201);
    expect(upload.json.artifacts_file).toEqual({ filename: 'real-runner-artifacts.zip', size: zip.length });
    expect(upload.json.status).toBe('running');

    // #8: the final PUT with state=success and the FULL trace, which replaces the parts
    const fullTrace = PART1 + PART2 + PART3 + TAIL;
    const done = await doJSON(`builds/${build.id}.json`, 'PUT', { info: INFO, token: runnerToken, state: 'success', trace: fullTrace }, false);
    expect(done.status).toBe(200);
    const view = (await control(s, `/builds/${build.id}`)).body;
    expect(view).toMatchObject({ status: 'success', trace_length: Buffer.byteLength(fullTrace), artifacts: { filename: 'real-runner-artifacts.zip', size: zip.length } });
    expect((await control(s, `/builds/${build.id}/trace`)).raw.toString('utf8')).toBe(fullTrace);

    // capture run2 #8: a later build depends on this one; artifacts-downloader GETs with the dependency's token
    const next = await createBuild(s, project.id, { stage: 'deploy', depends_on: [build.id] });
    const polled2 = await doJSON('builds/register.json', 'POST', { info: INFO, token: runnerToken }, true);
    expectRunnerJson(polled2, 201);
    expect(polled2.json.id).toBe(next.id);
    const dep = polled2.json.depends_on_builds[0];
    expect(dep).toMatchObject({ id: build.id, token: build.token, artifacts_file: { filename: 'real-runner-artifacts.zip', size: zip.length } });
    const dl = await raw(`${s.url}/ci/api/v1/builds/${dep.id}/artifacts`, { headers: { 'User-Agent': 'Go-http-client/1.1', 'Build-Token': dep.token, 'Accept-Encoding': 'gzip' } });
    expect(dl.status).toBe(200);
    expect(dl.raw.equals(zip)).toBe(true);
    expect(dl.headers['content-disposition']).toContain('attachment');

    // #9: unregister: a DELETE with a JSON body
    const bye = await doJSON('runners/delete', 'DELETE', { token: runnerToken }, false);
    expect(bye.status).toBe(200);
    expect((await doJSON('builds/register.json', 'POST', { info: INFO, token: runnerToken }, true)).status).toBe(403);
  });
});

describe('the runner’s recovery paths', () => {
  async function takenBuild(name: string) {
    const { project, runnerToken } = await setup(name);
    await createBuild(s, project.id);
    const polled = await doJSON('builds/register.json', 'POST', { info: INFO, token: runnerToken }, true);
    expectRunnerJson(polled, 201);
    return { runnerToken, build: polled.json as { id: number; token: string } };
  }

  it('416 then resend (capture exp-p416): 0-415 → 416 Range: 0-50 → 50-415 → 202 Range: 0-415', async () => {
    const { build } = await takenBuild('p416');
    const all = Buffer.from(PART1.slice(0, 415).padEnd(415, '.'));
    expect(all.length).toBe(415);
    // the server already holds 50 bytes (an earlier part whose answer the runner never saw)
    expect((await patch(build.id, build.token, 0, all.subarray(0, 50))).status).toBe(202);
    const first = await patch(build.id, build.token, 0, all);
    expect(first.status).toBe(416);
    expect(first.headers.range).toBe('0-50');
    const from = Number(String(first.headers.range).split('-')[1]);
    const resend = await patch(build.id, build.token, from, all.subarray(from));
    expect(resend.status).toBe(202);
    expect(resend.headers.range).toBe('0-415');
    expect(resend.headers['build-status']).toBe('running');
    expect((await control(s, `/builds/${build.id}/trace`)).raw.equals(all)).toBe(true);
  });

  it('after a PATCH 404 the runner sends the whole trace in every tick’s PUT state=running: each replaces the last', async () => {
    const { runnerToken, build } = await takenBuild('put-fallback');
    // what a PATCH 404 looks like (unknown build); from then on the runner uses full-trace PUTs
    expect((await patch(build.id + 1000, build.token, 0, Buffer.from('x'))).status).toBe(404);
    let trace = '';
    for (const part of [PART1, PART2, PART3]) {
      trace += part;
      const r = await doJSON(`builds/${build.id}.json`, 'PUT', { info: INFO, token: runnerToken, state: 'running', trace }, false);
      expect(r.status).toBe(200);
      expect((await control(s, `/builds/${build.id}/trace`)).raw.toString('utf8')).toBe(trace);
      expect((await control(s, `/builds/${build.id}`)).body.status).toBe('running');
    }
    const done = await doJSON(`builds/${build.id}.json`, 'PUT', { info: INFO, token: runnerToken, state: 'success', trace: trace + TAIL }, false);
    expect(done.status).toBe(200);
    expect((await control(s, `/builds/${build.id}/trace`)).raw.toString('utf8')).toBe(trace + TAIL);
  });

  it('a cancel reaches the runner as Build-Status: canceled; its PUT state=failed then gets 404 (stop)', async () => {
    const { runnerToken, build } = await takenBuild('canceled');
    expect((await patch(build.id, build.token, 0, Buffer.from(PART1))).headers['build-status']).toBe('running');
    await control(s, `/builds/${build.id}/cancel`, { method: 'POST' });
    const p = await patch(build.id, build.token, Buffer.byteLength(PART1), Buffer.from(PART2));
    expect(p.status).toBe(202);
    expect(p.headers['build-status']).toBe('canceled');
    const put = await doJSON(`builds/${build.id}.json`, 'PUT', { info: INFO, token: runnerToken, state: 'failed', trace: PART1 + PART2 + 'killed\n' }, false);
    expect(put.status).toBe(404);
    expect((await control(s, `/builds/${build.id}`)).body.status).toBe('canceled');
  });
});
