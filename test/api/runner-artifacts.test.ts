// gitlab-behaviour.md B "Artifacts": upload (streamed chunked multipart, as the runner sends it), the
// order of checks, 413 with nothing stored, replacement, download headers and bytes, idempotent delete,
// and depends_on_builds carrying a dependency's artifacts_file.
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestServer } from '../helpers/server.ts';
import { createBuild, registerRunner } from '../helpers/fixtures.ts';
import { control, makeZip, multipart, pieces, raw, runnerJson, runningBuild, uploadArtifacts, RUNNER_UA } from './lib.ts';
import { eachBackend } from './backends.ts';
import { waitUntil } from '../helpers/wait.ts';

eachBackend((startServer) => {
  let s: TestServer;
  let zip: Buffer;
  beforeAll(async () => {
    s = await startServer();
    zip = await makeZip({ 'out/': '', 'out/result.txt': 'artifact from real runner\n' });
  });
  afterAll(() => s.close());

  const artifactsUrl = (srv: TestServer, id: number | string, q = '') => `${srv.url}/ci/api/v1/builds/${id}/artifacts${q}`;
  const download = (srv: TestServer, id: number | string, token?: string, q = '') =>
    raw(artifactsUrl(srv, id, q), { headers: { 'user-agent': 'Go-http-client/1.1', 'accept-encoding': 'gzip', ...(token ? { 'Build-Token': token } : {}) } });
  const filesIn = (srv: TestServer, sub: string) => fs.readdirSync(path.join(srv.dataDir, sub));

  describe('POST /builds/:id/artifacts', () => {
    it('stores a chunked upload (no Content-Length) and answers 201 BuildDetails with artifacts_file and artifacts_expire_at from expire_in', async () => {
      const { build } = await runningBuild(s, {}, 'art-upload');
      const before = Date.now();
      const r = await uploadArtifacts(s, build.id, build.token, zip, { filename: 'real-runner-artifacts.zip', query: '?expire_in=1+week' });
      expect(r.status).toBe(201);
      expect(r.headers['content-type']).toBe('application/json');
      expect(r.json.id).toBe(build.id);
      expect(r.json.status).toBe('running');
      expect(r.json.artifacts_file).toEqual({ filename: 'real-runner-artifacts.zip', size: zip.length });
      const expires = Date.parse(r.json.artifacts_expire_at);
      expect(expires).toBeGreaterThanOrEqual(before + 7 * 86400_000 - 1000);
      expect(expires).toBeLessThanOrEqual(Date.now() + 7 * 86400_000 + 1000);
      const view = (await control(s, `/builds/${build.id}`)).body;
      expect(view.artifacts).toMatchObject({ filename: 'real-runner-artifacts.zip', size: zip.length });
    });

    it('expire_in forms: "7d" is seven days, absent or unparsable means no expiry (null)', async () => {
      const a = await runningBuild(s, {}, 'art-7d');
      const r7 = await uploadArtifacts(s, a.build.id, a.build.token, zip, { query: '?expire_in=7d' });
      expect(Math.abs(Date.parse(r7.json.artifacts_expire_at) - (Date.now() + 7 * 86400_000))).toBeLessThan(5000);
      const b = await runningBuild(s, {}, 'art-none');
      const none = await uploadArtifacts(s, b.build.id, b.build.token, zip);
      expect(none.status).toBe(201);
      expect(none.json.artifacts_expire_at).toBeNull();
    });

    it('404 for an unknown or non-numeric build, before the token check', async () => {
      for (const id of ['999999', 'abc']) {
        const r = await uploadArtifacts(s, id as unknown as number, undefined, zip);
        expect(r.status, id).toBe(404);
      }
    });

    it('403 for a missing or wrong token, before the running and file checks', async () => {
      const { runner, build } = await runningBuild(s, {}, 'art-403');
      const other = await runningBuild(s, {}, 'art-403-other');
      for (const token of [undefined, 'nope', runner.token, other.build.token]) {
        const r = await uploadArtifacts(s, build.id, token, zip);
        expect(r.status).toBe(403);
        expect(r.json).toEqual({ message: '403 Forbidden' });
      }
      const noFile = await raw(artifactsUrl(s, build.id), { method: 'POST', headers: { 'Build-Token': 'nope' } });
      expect(noFile.status).toBe(403);
      expect((await control(s, `/builds/${build.id}`)).body.artifacts).toBeNull();
    });

    it('the query token, a form field token sent before the file, runners_token and ci_token are build tokens too', async () => {
      const { project, build } = await runningBuild(s, {}, 'art-tokens');
      expect((await uploadArtifacts(s, build.id, undefined, zip, { query: `?token=${build.token}` })).status).toBe(201);
      expect((await uploadArtifacts(s, build.id, project.runners_token, zip)).status).toBe(201);
      expect((await uploadArtifacts(s, build.id, project.ci_token, zip)).status).toBe(201);
      const mp = multipart([
        { name: 'token', value: build.token },
        { name: 'file', filename: 'form.zip', contentType: 'application/zip', value: zip },
      ]);
      const r = await raw(artifactsUrl(s, build.id), { method: 'POST', headers: { 'content-type': mp.contentType }, body: mp.body });
      expect(r.status).toBe(201);
      expect(r.json.artifacts_file.filename).toBe('form.zip');
    });

    it('403 "Build is not running!" once the build finished', async () => {
      const { runner, build } = await runningBuild(s, {}, 'art-finished');
      await runnerJson(`${s.url}/ci/api/v1/builds/${build.id}.json`, 'PUT', { token: runner.token, state: 'success' });
      const r = await uploadArtifacts(s, build.id, build.token, zip);
      expect(r.status).toBe(403);
      expect(r.json).toEqual({ message: '403 Forbidden  - Build is not running!' });
      // the token is checked first: a wrong token on a finished build is the plain 403
      expect((await uploadArtifacts(s, build.id, 'nope', zip)).json).toEqual({ message: '403 Forbidden' });
      const pendingProject = await runningBuild(s, {}, 'art-pending');
      const pending = await createBuild(s, pendingProject.project.id, { tag_list: ['never'] });
      expect((await uploadArtifacts(s, pending.id, pending.token, zip)).json.message).toBe('403 Forbidden  - Build is not running!');
    });

    it('400 without a `file` part: no body, a non-multipart body, a `file` that is a plain field, another file field', async () => {
      const { build } = await runningBuild(s, {}, 'art-400');
      const h = { 'Build-Token': build.token };
      const asField = multipart([{ name: 'file', value: 'not a file' }]);
      const otherName = multipart([{ name: 'archive', filename: 'a.zip', value: zip }]);
      for (const r of [
        await raw(artifactsUrl(s, build.id), { method: 'POST', headers: h }),
        await raw(artifactsUrl(s, build.id), { method: 'POST', headers: { ...h, 'content-type': 'application/zip' }, body: zip }),
        await raw(artifactsUrl(s, build.id), { method: 'POST', headers: { ...h, 'content-type': asField.contentType }, body: asField.body }),
        await raw(artifactsUrl(s, build.id), { method: 'POST', headers: { ...h, 'content-type': otherName.contentType }, chunks: pieces(otherName.body, 500) }),
      ]) {
        expect(r.status).toBe(400);
        expect(r.json).toEqual({ message: '400 (Bad request) "Missing artifacts file!" not given' });
      }
      expect((await control(s, `/builds/${build.id}`)).body.artifacts).toBeNull();
    });

    it('a second upload replaces the first (one archive file on disk)', async () => {
      const { build } = await runningBuild(s, {}, 'art-replace');
      const second = await makeZip({ 'second.txt': 'two' });
      await uploadArtifacts(s, build.id, build.token, zip, { filename: 'first.zip' });
      const r = await uploadArtifacts(s, build.id, build.token, second, { filename: 'second.zip' });
      expect(r.json.artifacts_file).toEqual({ filename: 'second.zip', size: second.length });
      const d = await download(s, build.id, build.token);
      expect(d.raw.equals(second)).toBe(true);
      expect(filesIn(s, 'artifacts').filter((f) => f.startsWith(`${build.id}-`))).toHaveLength(1);
    });

    it('gives every written chunk of a large upload back at once (detached), and the archive downloads byte for byte', async () => {
      // Why: server/util/released-buffers.ts; the parser's 64 KiB copies, left to
      // the GC, count against V8's old-generation limit and started a mark-compact every ~9 MB.
      const { build } = await runningBuild(s, {}, 'art-release');
      const archive = crypto.randomBytes(3 * 2 ** 20);
      const written: Buffer[] = [];
      const realWritev = fs.writev;
      fs.writev = ((fd: number, bufs: Buffer[], cb: (err: Error | null, n: number) => void) => {
        written.push(...bufs);
        realWritev(fd, bufs, cb);
      }) as typeof fs.writev;
      let r;
      try {
        // In 64 KiB HTTP chunks, as a runner's io.Copy-sized writes arrive (uploadArtifacts sends 1,000-byte ones).
        const mp = multipart([{ name: 'file', filename: 'big.zip', contentType: 'application/octet-stream', value: archive }]);
        const headers = { 'user-agent': RUNNER_UA, 'content-type': mp.contentType, 'build-token': build.token };
        r = await raw(artifactsUrl(s, build.id), { method: 'POST', headers, chunks: pieces(mp.body, 64 * 1024) });
      } finally {
        fs.writev = realWritev;
      }
      expect(r.status).toBe(201);
      const large = written.filter((b) => b.byteLength >= 4 * 1024 || b.buffer.byteLength === 0);
      const released = large.filter((b) => b.byteLength === 0);
      // Most pieces are whole parser copies; a piece that ends in a partial boundary match is a part-view and stays.
      expect(released.length).toBeGreaterThan(large.length / 2);
      expect((await download(s, build.id, build.token)).raw.equals(archive)).toBe(true);
    });

    it('a client that goes away mid-upload leaves no staged file and no artifact', async () => {
      const { build } = await runningBuild(s, {}, 'art-gone');
      const boundary = 'gone0123456789';
      const req = http.request(artifactsUrl(s, build.id), {
        method: 'POST',
        headers: { 'content-type': `multipart/form-data; boundary=${boundary}`, 'build-token': build.token, 'transfer-encoding': 'chunked' },
      });
      req.on('error', () => undefined);
      req.write(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="a.zip"\r\n\r\n`);
      // Over a write batch, so the staged file exists and has been written to.
      for (let i = 0; i < 8; i++) req.write(crypto.randomBytes(64 * 1024));
      // tmp/ itself, or tmp/<slot>/ for a server sharing its data dir (PostgreSQL).
      const staging = () => (fs.readdirSync(path.join(s.dataDir, 'tmp'), { recursive: true }) as string[]).filter((f) => path.basename(f).startsWith('upload-'));
      await waitUntil('the upload is staged', staging, (f) => f.length > 0);
      req.destroy();
      await waitUntil('the staged file is removed', staging, (f) => f.length === 0);
      expect((await control(s, `/builds/${build.id}`)).body.artifacts).toBeNull();
      expect((await uploadArtifacts(s, build.id, build.token, zip)).status).toBe(201);
    });

    it('a part named after an Object.prototype property: 400, as @fastify/multipart answered', async () => {
      const { build } = await runningBuild(s, {}, 'art-proto');
      for (const name of ['constructor', '__proto__', 'toString']) {
        const mp = multipart([
          { name, value: 'x' },
          { name: 'file', filename: 'a.zip', value: zip },
        ]);
        const r = await raw(artifactsUrl(s, build.id), { method: 'POST', headers: { 'build-token': build.token, 'content-type': mp.contentType }, body: mp.body });
        expect(r.status, name).toBe(400);
        expect(r.json, name).toEqual({ message: '400 prototype property is not allowed as field name' });
      }
      expect((await control(s, `/builds/${build.id}`)).body.artifacts).toBeNull();
    });

    it('never uses the client’s file name as a path', async () => {
      const { build } = await runningBuild(s, {}, 'art-names');
      const r = await uploadArtifacts(s, build.id, build.token, zip, { filename: '../../../escape.zip' });
      expect(r.status).toBe(201);
      expect(r.json.artifacts_file.filename).toBe('escape.zip');
      expect(fs.existsSync(path.join(s.dataDir, 'escape.zip'))).toBe(false);
      expect(fs.existsSync(path.join(path.dirname(s.dataDir), 'escape.zip'))).toBe(false);
    });
  });

  describe('413 over --max-artifact-mb', () => {
    let small: TestServer;
    beforeAll(async () => {
      small = await startServer({ maxArtifactBytes: 10 / 1024 }); // 10 KiB
    });
    afterAll(() => small.close());

    it('refuses an archive at or over the limit, chunked or with Content-Length, and stores nothing', async () => {
      const { build } = await runningBuild(small, {}, 'art-413');
      const big = Buffer.alloc(64 * 1024, 7);
      const chunked = await uploadArtifacts(small, build.id, build.token, big);
      expect(chunked.status).toBe(413);
      expect(chunked.json).toEqual({ message: '413 Request Entity Too Large' });
      const mp = multipart([{ name: 'file', filename: 'big.zip', value: big }]);
      const sized = await raw(artifactsUrl(small, build.id), { method: 'POST', headers: { 'Build-Token': build.token, 'content-type': mp.contentType }, body: mp.body });
      expect(sized.status).toBe(413);
      // GitLab: `file_to_large! unless artifacts.size < max_artifacts_size`, so exactly the limit is too large
      const exact = await uploadArtifacts(small, build.id, build.token, Buffer.alloc(10 * 1024, 1));
      expect(exact.status).toBe(413);
      expect((await control(small, `/builds/${build.id}`)).body.artifacts).toBeNull();
      expect(filesIn(small, 'artifacts')).toEqual([]);
      expect(filesIn(small, 'tmp').filter((f) => f.startsWith('upload-'))).toEqual([]);
      // the server is fine afterwards: one byte under the limit is accepted
      const ok = await uploadArtifacts(small, build.id, build.token, Buffer.alloc(10 * 1024 - 1, 1));
      expect(ok.status).toBe(201);
    });
  });

  describe('GET /builds/:id/artifacts', () => {
    it('200 with the bytes, octet-stream, attachment with the original file name; no running check', async () => {
      const { runner, build } = await runningBuild(s, {}, 'art-get');
      await uploadArtifacts(s, build.id, build.token, zip, { filename: 'real-runner-artifacts.zip' });
      await runnerJson(`${s.url}/ci/api/v1/builds/${build.id}.json`, 'PUT', { token: runner.token, state: 'success' });
      const d = await download(s, build.id, build.token);
      expect(d.status).toBe(200);
      expect(d.headers['content-type']).toBe('application/octet-stream');
      expect(d.headers['content-disposition']).toMatch(/^attachment; filename="?real-runner-artifacts\.zip"?(;|$)/);
      expect(d.headers['content-transfer-encoding']).toBe('binary');
      expect(d.raw.equals(zip)).toBe(true);
    });

    it('gives each 1 MiB read back once the socket has written it, and sends every byte', async () => {
      const { build } = await runningBuild(s, {}, 'art-get-release');
      const archive = crypto.randomBytes(3 * 2 ** 20 + 12345);
      expect((await uploadArtifacts(s, build.id, build.token, archive)).status).toBe(201);
      const reads: Buffer[] = [];
      const realRead = fs.read;
      fs.read = ((fd: number, buffer: Buffer, ...rest: unknown[]) => {
        if (buffer.byteLength >= 2 ** 20) reads.push(buffer);
        return (realRead as (...a: unknown[]) => void)(fd, buffer, ...rest);
      }) as typeof fs.read;
      let d;
      try {
        d = await download(s, build.id, build.token);
      } finally {
        fs.read = realRead;
      }
      expect(d.status).toBe(200);
      expect(d.raw.equals(archive)).toBe(true);
      // Three whole 1 MiB reads given back; the last, short read is a part of its buffer and left to the GC.
      expect(reads.length).toBeGreaterThanOrEqual(3);
      expect(reads.filter((b) => b.byteLength === 0).length).toBeGreaterThanOrEqual(3);
    });

    it('404 unknown build, 403 bad or missing token, 404 "Not Found" when there is no archive', async () => {
      const { project, build } = await runningBuild(s, {}, 'art-get-errors');
      expect((await download(s, 999999, build.token)).status).toBe(404);
      expect((await download(s, 'abc', build.token)).status).toBe(404);
      expect((await download(s, build.id)).status).toBe(403);
      expect((await download(s, build.id, 'nope')).status).toBe(403);
      for (const token of [build.token, project.runners_token, project.ci_token]) {
        const r = await download(s, build.id, token);
        expect(r.status).toBe(404);
        expect(r.json).toEqual({ message: '404 Not Found' });
      }
      await uploadArtifacts(s, build.id, build.token, zip);
      expect((await download(s, build.id, undefined, `?token=${build.token}`)).status).toBe(200);
    });
  });

  describe('DELETE /builds/:id/artifacts', () => {
    it('200, again 200 (idempotent), then GET is 404 and the file is gone', async () => {
      const { build } = await runningBuild(s, {}, 'art-delete');
      await uploadArtifacts(s, build.id, build.token, zip);
      const onDisk = filesIn(s, 'artifacts').filter((f) => f.startsWith(`${build.id}-`));
      expect(onDisk).toHaveLength(1);
      const del = await raw(artifactsUrl(s, build.id), { method: 'DELETE', headers: { 'Build-Token': build.token } });
      expect(del.status).toBe(200);
      expect(del.headers['content-type']).toBe('application/json');
      expect('artifacts_file' in del.json).toBe(false);
      expect((await raw(artifactsUrl(s, build.id, `?token=${build.token}`), { method: 'DELETE' })).status).toBe(200);
      expect((await download(s, build.id, build.token)).status).toBe(404);
      expect(fs.existsSync(path.join(s.dataDir, 'artifacts', onDisk[0]!))).toBe(false);
      expect((await control(s, `/builds/${build.id}`)).body.artifacts).toBeNull();
    });

    it('takes the token from a JSON body; 404 unknown build; 403 bad token', async () => {
      const { build } = await runningBuild(s, {}, 'art-delete-auth');
      await uploadArtifacts(s, build.id, build.token, zip);
      expect((await raw(artifactsUrl(s, 999999), { method: 'DELETE', headers: { 'Build-Token': build.token } })).status).toBe(404);
      expect((await raw(artifactsUrl(s, build.id), { method: 'DELETE', headers: { 'Build-Token': 'nope' } })).status).toBe(403);
      expect((await raw(artifactsUrl(s, build.id), { method: 'DELETE' })).status).toBe(403);
      expect((await download(s, build.id, build.token)).status).toBe(200);
      const json = await raw(artifactsUrl(s, build.id), { method: 'DELETE', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ token: build.token }) });
      expect(json.status).toBe(200);
      expect((await download(s, build.id, build.token)).status).toBe(404);
    });
  });

  describe('depends_on_builds', () => {
    it('lists a dependency with its token and artifacts_file, and its archive downloads with that token', async () => {
      const { project, runner, build: first } = await runningBuild(s, { stage: 'build', name: 'compile' }, 'art-deps');
      await uploadArtifacts(s, first.id, first.token, zip, { filename: 'compiled.zip' });
      await runnerJson(`${s.url}/ci/api/v1/builds/${first.id}.json`, 'PUT', { token: runner.token, state: 'success' });
      const plain = await createBuild(s, project.id, { stage: 'build', name: 'lint' });
      await createBuild(s, project.id, { stage: 'test', name: 'rspec', depends_on: [first.id, plain.id] });
      const lint = await runnerJson(`${s.url}/ci/api/v1/builds/register.json`, 'POST', { token: runner.token });
      expect(lint.json.id).toBe(plain.id);
      const taken = await runnerJson(`${s.url}/ci/api/v1/builds/register.json`, 'POST', { token: runner.token });
      expect(taken.status).toBe(201);
      const deps = taken.json.depends_on_builds;
      expect(deps).toHaveLength(2);
      expect(deps[0]).toMatchObject({ id: first.id, name: 'compile', stage: 'build', token: first.token, artifacts_file: { filename: 'compiled.zip', size: zip.length } });
      expect(Number.isInteger(deps[0].id) && typeof deps[0].tag === 'boolean').toBe(true);
      expect(deps[1].id).toBe(plain.id);
      expect('artifacts_file' in deps[1]).toBe(false);
      const d = await download(s, deps[0].id, deps[0].token);
      expect(d.status).toBe(200);
      expect(d.raw.equals(zip)).toBe(true);
    });
  });

  describe('upload from a shared runner over a slow chunked stream', () => {
    it('works with many small chunks and a User-Agent like the runner’s', async () => {
      const shared = await registerRunner(s);
      const { project } = await runningBuild(s, {}, 'art-shared');
      const b = await createBuild(s, project.id);
      let taken;
      do taken = await runnerJson(`${s.url}/ci/api/v1/builds/register.json`, 'POST', { token: shared.token });
      while (taken.status === 201 && taken.json.id !== b.id);
      expect(taken.json.id).toBe(b.id);
      const big = await makeZip({ 'data.bin': Buffer.alloc(300 * 1024, 3) });
      const mp = multipart([{ name: 'file', filename: 'artifacts.zip', contentType: 'application/octet-stream', value: big }]);
      const r = await raw(artifactsUrl(s, b.id, '?expire_in=1+week'), {
        method: 'POST',
        headers: { 'user-agent': RUNNER_UA, 'Build-Token': b.token, 'content-type': mp.contentType },
        chunks: pieces(mp.body, 333),
      });
      expect(r.status).toBe(201);
      expect((await download(s, b.id, b.token)).raw.equals(big)).toBe(true);
    });
  });
});
