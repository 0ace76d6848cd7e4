// gitlab-behaviour.md B "PATCH /builds/:id/trace.txt": the order of checks (404, 403, 400, 416), the
// 202 answer headers, Ruby to_i on Content-Range, force patches, appends after the build finished,
// Build-Status after a cancel, and which tokens count as build tokens.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestServer } from '../helpers/server.ts';
import { control, patchTrace, raw, runnerJson, runningBuild } from './lib.ts';
import { eachBackend } from './backends.ts';

eachBackend((startServer) => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startServer();
  });
  afterAll(() => s.close());

  const traceOf = async (id: number) => (await control(s, `/builds/${id}/trace`)).raw;

  describe('PATCH /builds/:id/trace.txt: order of checks', () => {
    it('404 for an unknown or non-numeric build, before any token or header check', async () => {
      for (const id of ['999999', 'abc', '-1', '1.5', '12abc']) {
        const r = await patchTrace(s, id, { body: 'x' });
        expect(r.status, id).toBe(404);
        expect(r.json.message).toMatch(/^404 Not [Ff]ound$/);
      }
    });

    it('403 for a missing or wrong build token, even without Content-Range', async () => {
      const { runner, build } = await runningBuild(s, {}, 'trace-403');
      const other = await runningBuild(s, {}, 'trace-403-other');
      for (const token of [undefined, 'nope', runner.token, other.build.token, other.project.runners_token]) {
        for (const range of [undefined, '0-1']) {
          const r = await patchTrace(s, build.id, { token, range, body: 'x' });
          expect(r.status).toBe(403);
          expect(r.json).toEqual({ message: '403 Forbidden' });
        }
      }
      expect((await traceOf(build.id)).length).toBe(0);
    });

    it('400 without Content-Range once authenticated', async () => {
      const { build } = await runningBuild(s, {}, 'trace-400');
      const r = await patchTrace(s, build.id, { token: build.token, body: 'x' });
      expect(r.status).toBe(400);
      expect(JSON.stringify(r.json)).toContain('400 Missing header Content-Range');
      expect((await traceOf(build.id)).length).toBe(0);
    });

    it('416 with Range: 0-<length> when the start is not the current length; the trace is unchanged', async () => {
      const { build } = await runningBuild(s, {}, 'trace-416');
      expect((await patchTrace(s, build.id, { token: build.token, range: '0-5', body: 'hello' })).status).toBe(202);
      for (const range of ['3-8', '6-11', '0-5', '4-5']) {
        const r = await patchTrace(s, build.id, { token: build.token, range, body: 'XXXXX' });
        expect(r.status, range).toBe(416);
        expect(r.headers.range).toBe('0-5');
        expect(r.json.message ?? r.json.error).toBe('416 Range Not Satisfiable');
      }
      expect((await traceOf(build.id)).toString()).toBe('hello');
    });
  });

  describe('PATCH /builds/:id/trace.txt: appending', () => {
    it('202 with Build-Status and Range: 0-<new length>; exclusive (runner) and inclusive (docs) ends both work', async () => {
      const { build } = await runningBuild(s, {}, 'trace-202');
      const part1 = Buffer.from('\u001b[0KRunning with gitlab-ci-multi-runner 1.11.5\n\u001b[32;1m$ echo hello\u001b[0;m\nhello\n');
      const part2 = Buffer.from('ünïcödé and a NUL \u0000 byte\n');
      const a = await patchTrace(s, build.id, { token: build.token, range: `0-${part1.length}`, body: part1 });
      expect(a.status).toBe(202);
      expect(a.headers['build-status']).toBe('running');
      expect(a.headers.range).toBe(`0-${part1.length}`);
      const b = await patchTrace(s, build.id, { token: build.token, range: `${part1.length}-${part1.length + part2.length - 1}`, body: part2 });
      expect(b.status).toBe(202);
      expect(b.headers.range).toBe(`0-${part1.length + part2.length}`);
      expect((await traceOf(build.id)).equals(Buffer.concat([part1, part2]))).toBe(true);
      expect((await control(s, `/builds/${build.id}`)).body.trace_length).toBe(part1.length + part2.length);
    });

    it('reads the body raw whatever its Content-Type (text/plain, urlencoded, JSON, none)', async () => {
      const { build } = await runningBuild(s, {}, 'trace-raw');
      let len = 0;
      const sent: string[] = [];
      for (const [ctype, body] of [
        ['text/plain', 'plain\n'],
        ['application/x-www-form-urlencoded', 'a=b&c=d\n'],
        ['application/json', '{"not":"parsed"\n'],
        [undefined, 'no type\n'],
      ] as const) {
        const headers: Record<string, string> = { 'Build-Token': build.token, 'Content-Range': `${len}-${len + body.length}` };
        if (ctype) headers['content-type'] = ctype;
        const r = await raw(`${s.url}/ci/api/v1/builds/${build.id}/trace.txt`, { method: 'PATCH', headers, body });
        expect(r.status, String(ctype)).toBe(202);
        len += body.length;
        sent.push(body);
      }
      expect((await traceOf(build.id)).toString()).toBe(sent.join(''));
    });

    it('garbage Content-Range parses as start 0 (Ruby to_i): 202 on an empty trace, 416 on a non-empty one', async () => {
      const { build } = await runningBuild(s, {}, 'trace-garbage');
      const first = await patchTrace(s, build.id, { token: build.token, range: 'bytes=abc', body: 'abc' });
      expect([first.status, first.headers.range]).toEqual([202, '0-3']);
      for (const range of ['bytes=abc', '-5', 'abc', '', ' ', 'bytes 3-5/9', '99999999999999999999999-1']) {
        const r = await patchTrace(s, build.id, { token: build.token, range, body: 'zzz' });
        expect(r.status, range).toBe(416);
        expect(r.headers.range).toBe('0-3');
      }
      // to_i reads leading digits: "3abc" is 3
      const ok = await patchTrace(s, build.id, { token: build.token, range: '3abc', body: 'def' });
      expect([ok.status, ok.headers.range]).toEqual([202, '0-6']);
      expect((await traceOf(build.id)).toString()).toBe('abcdef');
    });

    it('an empty body at the current length (force patch) is 202 and changes nothing', async () => {
      const { build } = await runningBuild(s, {}, 'trace-force');
      expect((await patchTrace(s, build.id, { token: build.token, range: '0-0', body: '' })).status).toBe(202);
      await patchTrace(s, build.id, { token: build.token, range: '0-4', body: 'four' });
      const r = await patchTrace(s, build.id, { token: build.token, range: '4-4', body: '' });
      expect([r.status, r.headers.range, r.headers['build-status']]).toEqual([202, '0-4', 'running']);
      expect((await traceOf(build.id)).toString()).toBe('four');
    });

    it('accepts appends after the build finished, and Build-Status reports success / failed', async () => {
      for (const state of ['success', 'failed']) {
        const { runner, build } = await runningBuild(s, {}, `trace-after-${state}`);
        await patchTrace(s, build.id, { token: build.token, range: '0-3', body: 'one' });
        expect((await runnerJson(`${s.url}/ci/api/v1/builds/${build.id}.json`, 'PUT', { token: runner.token, state })).status).toBe(200);
        const r = await patchTrace(s, build.id, { token: build.token, range: '3-6', body: 'two' });
        expect([r.status, r.headers['build-status'], r.headers.range]).toEqual([202, state, '0-6']);
        expect((await traceOf(build.id)).toString()).toBe('onetwo');
      }
    });

    it('says Build-Status: canceled after the control API cancels the build', async () => {
      const { build } = await runningBuild(s, {}, 'trace-cancel');
      await patchTrace(s, build.id, { token: build.token, range: '0-3', body: 'one' });
      expect((await control(s, `/builds/${build.id}/cancel`, { method: 'POST' })).status).toBe(200);
      const r = await patchTrace(s, build.id, { token: build.token, range: '3-6', body: 'two' });
      expect([r.status, r.headers['build-status']]).toEqual([202, 'canceled']);
    });
  });

  describe('PATCH /builds/:id/trace.txt: build tokens', () => {
    it('the build token, the project runners_token and ci_token count, in the BUILD-TOKEN header or the token query', async () => {
      const { project, build } = await runningBuild(s, {}, 'trace-tokens');
      let len = 0;
      const send = async (opts: { token?: string; query?: string; headers?: Record<string, string> }) => {
        const r = await patchTrace(s, build.id, { ...opts, range: `${len}-${len + 2}`, body: 'ab' });
        expect(r.status).toBe(202);
        len += 2;
      };
      await send({ token: build.token });
      await send({ headers: { 'BUILD-TOKEN': project.runners_token } });
      await send({ headers: { 'build-token': project.ci_token } });
      await send({ query: `?token=${build.token}` });
      await send({ query: `?token=${project.runners_token}` });
      await send({ query: `?token=${project.ci_token}` });
      expect((await traceOf(build.id)).length).toBe(12);
    });
  });

  describe('trace size limit', () => {
    it('413 when a part would take the trace over --max-trace-mb; the stored trace stays a prefix', async () => {
      const small = await startServer({ maxTraceBytes: 1 / 1024 }); // 1 KiB
      try {
        const { build } = await runningBuild(small, {}, 'trace-limit');
        expect((await patchTrace(small, build.id, { token: build.token, range: '0-1000', body: Buffer.alloc(1000, 97) })).status).toBe(202);
        const r = await patchTrace(small, build.id, { token: build.token, range: '1000-1100', body: Buffer.alloc(100, 98) });
        expect(r.status).toBe(413);
        expect(r.json.message).toMatch(/^413 /);
        const t = (await (await fetch(`${small.url}/api/v3/sim/builds/${build.id}/trace`, { headers: { 'private-token': small.adminToken } })).arrayBuffer());
        expect(Buffer.from(t).equals(Buffer.alloc(1000, 97))).toBe(true);
      } finally {
        await small.close();
      }
    });

    it('a part over the body limit is 413 JSON, declared (Content-Length) or chunked; a part in many chunks is stored whole', async () => {
      const small = await startServer({ maxTraceBytes: 1 / 1024 }); // 1 KiB
      try {
        const { build } = await runningBuild(small, {}, 'trace-body-limit');
        const url = `${small.url}/ci/api/v1/builds/${build.id}/trace.txt`;
        const headers = { 'build-token': build.token, 'content-type': 'text/plain' };
        const declared = await raw(url, { method: 'PATCH', headers: { ...headers, 'content-range': '0-2000' }, body: Buffer.alloc(2000, 97) });
        expect(declared.status).toBe(413);
        expect(declared.json).toEqual({ message: '413 Request Entity Too Large' });
        const chunked = await raw(url, { method: 'PATCH', headers: { ...headers, 'content-range': '0-2000' }, chunks: Array.from({ length: 4 }, () => Buffer.alloc(500, 98)) });
        expect(chunked.status).toBe(413);
        expect(chunked.json).toEqual({ message: '413 Request Entity Too Large' });
        const stored = async () => Buffer.from(await (await fetch(`${small.url}/api/v3/sim/builds/${build.id}/trace`, { headers: { 'private-token': small.adminToken } })).arrayBuffer()).toString();
        expect(await stored()).toBe('');
        // Under the limit in several chunks: the bytes in order, and a single-chunk part after it.
        const parts = ['ab', 'cd', 'ef', 'gh'].map((x) => Buffer.from(x.repeat(100)));
        const many = await raw(url, { method: 'PATCH', headers: { ...headers, 'content-range': '0-800' }, chunks: parts });
        expect(many.status).toBe(202);
        expect(many.headers.range).toBe('0-800');
        expect((await patchTrace(small, build.id, { token: build.token, range: '800-803', body: 'xyz' })).status).toBe(202);
        expect(await stored()).toBe(Buffer.concat(parts).toString() + 'xyz');
      } finally {
        await small.close();
      }
    });
  });
});
