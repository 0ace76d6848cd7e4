// The "New build" form's body and its refusals (renderer/views/builds/new-build-form.ts), sent
// through the renderer's own Client to a real server: what the form builds is what the server
// stores, and each server refusal comes back tied to its field in plain words.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiError, Client, type BuildView, type CreatedBuilds } from '../../renderer/api/client.ts';
import { EMPTY_FORM, FieldError, fieldErrorOf, toNewBuild, type BuildForm } from '../../renderer/views/builds/new-build-form.ts';
import { startServer, type TestServer } from '../helpers/server.ts';

let s: TestServer;
let client: Client;
let projectId: number;
beforeAll(async () => {
  s = await startServer();
  client = new Client(s.url, s.adminToken);
  projectId = (await client.createProject({ name: 'form' })).id;
});
afterAll(() => s.close());

const form = (f: Partial<BuildForm>): BuildForm => ({ ...EMPTY_FORM, ...f });

/** The server's refusal of the form's body, as the form shows it. */
async function refusal(f: Partial<BuildForm>) {
  const e = await client.createBuild(projectId, toNewBuild(form(f))).then(
    () => undefined,
    (err: unknown) => err,
  );
  expect(e).toBeInstanceOf(ApiError);
  expect((e as ApiError).status).toBe(400);
  return fieldErrorOf((e as ApiError).serverMessage!);
}

describe('toNewBuild', () => {
  it('an empty form sends nothing, so every server default applies', async () => {
    expect(toNewBuild(EMPTY_FORM)).toEqual({});
    const b = (await client.createBuild(projectId, toNewBuild(EMPTY_FORM))) as BuildView;
    expect(b).toMatchObject({ name: 'test', stage: 'test', ref: 'master', variables: [], tag_list: [], options: {}, depends_on: [] });
  });

  it('every field reaches the stored build: variables, tags, artifacts merged into options, depends_on, count', async () => {
    const dep = (await client.createBuild(projectId, {})) as BuildView;
    const body = toNewBuild(
      form({
        name: ' rspec ',
        stage: 'verify',
        ref: 'main',
        commands: 'make\r\nmake test',
        variables: [
          { key: 'A', value: '1', public: true },
          { key: '', value: '', public: true },
          { key: 'B', value: 'two words', public: false },
        ],
        tags: 'docker, linux',
        artifactPaths: 'coverage/\nlog/, tmp/x',
        artifactExpire: '2 days',
        dependsOn: `${dep.id}`,
        count: '2',
        sha: 'abcdef0123',
        tag: true,
        repoUrl: 'file:///srv/r.git',
        timeout: '90',
        options: '{"image": "ruby:2.3", "artifacts": {"name": "cov"}}',
      }),
    );
    const created = (await client.createBuild(projectId, body)) as CreatedBuilds;
    expect(created.count).toBe(2);
    const b = await client.build(created.ids[1]!);
    expect(b).toMatchObject({
      name: 'rspec',
      stage: 'verify',
      ref: 'main',
      commands: 'make\nmake test',
      variables: [
        { key: 'A', value: '1', public: true },
        { key: 'B', value: 'two words', public: false },
      ],
      tag_list: ['docker', 'linux'],
      options: { image: 'ruby:2.3', artifacts: { name: 'cov', paths: ['coverage/', 'log/', 'tmp/x'], expire_in: '2 days' } },
      depends_on: [dep.id],
      sha: 'abcdef0123',
      tag: true,
      repo_url: 'file:///srv/r.git',
      timeout: 90,
    });
  });

  it('refuses what cannot be sent as typed, naming the field', () => {
    const refuse = (f: Partial<BuildForm>) => {
      try {
        toNewBuild(form(f));
      } catch (e) {
        expect(e).toBeInstanceOf(FieldError);
        return { field: (e as FieldError).field, text: (e as FieldError).message };
      }
      throw new Error('not refused');
    };
    expect(refuse({ options: '{"image": ' })).toMatchObject({ field: 'options', text: expect.stringMatching(/^Other options are not JSON/) });
    expect(refuse({ options: '[1]' })).toEqual({ field: 'options', text: 'Other options must be a JSON object, like {"image": "ruby:2.3"}' });
    expect(refuse({ dependsOn: '3, first' })).toEqual({ field: 'depends_on', text: 'Depends on takes build ids (numbers); "first" is not one' });
    expect(refuse({ variables: [{ key: ' ', value: 'x', public: true }] })).toEqual({ field: 'variables', text: 'Variable 1 has a value but no key' });
  });
});

describe("the server's refusals, beside their field in plain words", () => {
  it('pattern, range, length and type errors', async () => {
    expect(await refusal({ sha: 'not-hex' })).toEqual({ field: 'sha', text: 'SHA must be 8 to 64 hexadecimal characters (0-9, a-f)' });
    expect(await refusal({ count: '10001' })).toEqual({ field: 'count', text: 'Count must be at most 10000' });
    expect(await refusal({ count: '0' })).toEqual({ field: 'count', text: 'Count must be at least 1' });
    expect(await refusal({ count: '1.5' })).toEqual({ field: 'count', text: 'Count must be a whole number' });
    expect(await refusal({ name: 'x'.repeat(256) })).toEqual({ field: 'name', text: 'Name must be at most 255 characters long' });
    expect(await refusal({ timeout: '0' })).toEqual({ field: 'timeout', text: 'Timeout must be at least 1' });
    expect(await refusal({ tags: Array.from({ length: 101 }, (_, i) => `t${i}`).join(',') })).toEqual({ field: 'tags', text: 'Tags takes at most 100 entries' });
  });

  it('depends_on naming a build that does not exist: beside the field, saying what to name', async () => {
    expect(await refusal({ dependsOn: '987654' })).toEqual({ field: 'depends_on', text: 'Depends on names build 987654 that does not exist; name existing builds of this project' });
  });

  it('a refusal that names no field stays whole (413 for a batch too large)', async () => {
    const e = (await client.createBuild(projectId, toNewBuild(form({ count: '10000', commands: 'x'.repeat(4000) }))).catch((err: unknown) => err)) as ApiError;
    expect(e.status).toBe(413);
    expect(fieldErrorOf(e.serverMessage!)).toBeUndefined();
  });
});
