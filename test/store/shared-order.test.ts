// The shared runners' project order kept for the rest of a transaction (store/sqlite/builds.ts): a
// dispatch batch's takes reuse it, and nothing a transaction does may make it hide a pending build.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { resolveConfig } from '../../server/config.ts';
import { openStore } from '../../server/store/index.ts';
import type { NewBuild } from '../../server/store/ports/build.ts';

type Store = ReturnType<typeof openStore>;

describe('the shared runners’ project order inside one transaction', () => {
  let dir: string;
  let store: Store;
  const build = (projectId: number): NewBuild => ({ project_id: projectId, name: 'b', stage: 'test', ref: 'main', sha: 'a'.repeat(40), before_sha: '0'.repeat(40), tag: false, commands: 'true', repo_url: null, variables: [], options: {}, timeout: null, tag_list: [], depends_on: [] });
  const sharedRunner = () => store.runners.create({ description: 'shared', is_shared: true, project_id: null, run_untagged: true, locked: false, tag_list: [], info: {} });

  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'jobscope-shared-order-'));
    store = openStore(resolveConfig({ dataDir: dir, logLevel: 'silent' }, {}));
  });
  afterEach(() => {
    store.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('sees a build created after a take in the same transaction, in another project', () => {
    const [p, q] = [store.projects.create({ name: 'p' }), store.projects.create({ name: 'q' })];
    const runner = sharedRunner();
    const first = store.builds.create(build(p.id));
    const { taken, made } = store.tx(() => {
      const a = store.builds.take(runner);
      const b = store.builds.create(build(q.id));
      return { taken: [a?.id, store.builds.take(runner)?.id], made: b.id };
    });
    expect(taken).toEqual([first.id, made]);
  });

  it('hands out nothing once the one project’s last build is taken, and every build of a batch once', () => {
    const p = store.projects.create({ name: 'p' });
    const runner = sharedRunner();
    const ids = [store.builds.create(build(p.id)).id, store.builds.create(build(p.id)).id];
    const taken = store.tx(() => [1, 2, 3].map(() => store.builds.take(runner)?.id));
    expect(taken).toEqual([...ids, undefined]);
  });

  it('is not kept past its transaction: a rolled-back cancel leaves the build pending for the next one', () => {
    const p = store.projects.create({ name: 'p' });
    const runner = sharedRunner();
    const id = store.builds.create(build(p.id)).id;
    expect(() =>
      store.tx(() => {
        expect(store.builds.cancel(id)).toBe(true);
        // Read with nothing pending: an empty order, for the rest of this transaction only.
        expect(store.builds.take(runner)).toBeUndefined();
        throw new Error('rolled back');
      }),
    ).toThrow('rolled back');
    expect(store.tx(() => store.builds.take(runner)?.id)).toBe(id);
  });

  it('with two projects competing, still takes the fairer project’s build at every take of a batch', () => {
    const [p, q] = [store.projects.create({ name: 'p' }), store.projects.create({ name: 'q' })];
    const runner = sharedRunner();
    const p1 = store.builds.create(build(p.id)).id;
    const p2 = store.builds.create(build(p.id)).id;
    const q1 = store.builds.create(build(q.id)).id;
    // p's oldest first; then q, which has none running; then p again.
    expect(store.tx(() => [1, 2, 3, 4].map(() => store.builds.take(runner)?.id))).toEqual([p1, q1, p2, undefined]);
  });
});
