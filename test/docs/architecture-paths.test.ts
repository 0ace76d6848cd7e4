// docs/architecture.md is where a newcomer learns where things are: every file and folder it names
// in backticks must be there. Names are written as the page reads them, from the root or from the
// folder its section is about (`pg/backend.ts` under store/, a bare `take.ts`), so a name is there when
// a tracked path ends with it; a glob (`journal*.ts`) must match at least one. What the page only
// proposes (the folder a new backend would get) is listed here.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = path.resolve(import.meta.dirname, '../..');
const PROPOSED = new Set(['store/mysql/']);

const tracked = execFileSync('git', ['ls-files'], { cwd: ROOT, encoding: 'utf8' }).split('\n').filter(Boolean);
const folders = [...new Set(tracked.flatMap((f) => f.split('/').slice(0, -1).map((_, i, parts) => parts.slice(0, i + 1).join('/') + '/')))];

/** Backticked words that look like a file or a folder of ours (a bare extension such as `.lua` is neither). */
function namedPaths(markdown: string): string[] {
  const names = [...markdown.matchAll(/`([^`\s]+)`/g)].map((m) => m[1]!);
  return [...new Set(names.filter((n) => /^[\w*-][\w.*-]*(\/[\w.*-]*)*$/.test(n) && (/\.(ts|tsx|js|lua|md)$/.test(n) || (n.endsWith('/') && n.length > 1))))];
}

/** Whether a tracked file (or, for a name ending in /, a folder) is the name or ends with /name. */
function exists(name: string): boolean {
  const pattern = name.replace(/[.+?^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '[^/]*');
  const re = new RegExp(`(^|/)${pattern}$`);
  return PROPOSED.has(name) || (name.endsWith('/') ? folders : tracked).some((f) => re.test(f));
}

describe('docs/architecture.md', () => {
  const doc = fs.readFileSync(path.join(ROOT, 'docs/architecture.md'), 'utf8');
  const named = namedPaths(doc);

  it('names files, and every one of them is in the repository', () => {
    expect(named.length).toBeGreaterThan(50);
    expect(named.filter((n) => !exists(n))).toEqual([]);
  });

  it('would catch a name that is gone', () => {
    expect(exists('store/pg/domain-builds.ts')).toBe(false);
    expect(exists('simulator/virtual-runner.ts')).toBe(true);
    expect(exists('take.ts')).toBe(true);
    expect(exists('sidekiq/scripts/*.lua')).toBe(true);
  });
});
