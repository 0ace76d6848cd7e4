// The server log never keeps a credential written as URL userinfo, whoever logged the line: every
// line passes through the log file's writer (a real file in a temp dir here).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { RotatingLog } from '../../server/http/log-file.ts';

const write = (log: RotatingLog, line: string) => new Promise<void>((resolve, reject) => log.write(line, (err) => (err ? reject(err) : resolve())));

describe('the server log', () => {
  it('cuts URL passwords out of every line, plain, in JSON and with escaped slashes; other lines byte for byte', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'jobscope-log-'));
    const log = new RotatingLog(dir, { maxBytes: 1 << 20, files: 2 });
    const lines = [
      '{"level":50,"msg":"clone of https://oauth2:s3cret-PW@gitlab.example.com/group/app.git failed"}\n',
      '{"level":40,"err":{"message":"connect ECONNREFUSED redis://:hunter2@127.0.0.1:6390/0"}}\n',
      '{"level":30,"repo_url":"https:\\/\\/gitlab-ci-token:tok-123@git.example.com\\/a.git"}\n',
      '{"level":30,"msg":"mail to ops@example.com, no URL here"}\n',
    ];
    for (const l of lines) await write(log, l);
    log.end();
    const text = fs.readFileSync(path.join(dir, 'jobscope.log'), 'utf8');
    for (const secret of ['s3cret-PW', 'hunter2', 'tok-123']) expect(text).not.toContain(secret);
    expect(text).toContain('https://oauth2:[redacted]@gitlab.example.com/group/app.git');
    expect(text).toContain('redis://:[redacted]@127.0.0.1:6390/0');
    expect(text).toContain(lines[3]);
    fs.rmSync(dir, { recursive: true, force: true });
  });
});
