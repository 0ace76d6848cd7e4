// The server log: JSON lines in <data dir>/logs/jobscope.log, rotated by size (jobscope.log.1 … .N).
// Written by hand, synchronously, on purpose: pino's rolling transports run in a worker thread,
// which loses the last lines on kill -9 and does not load from an Electron asar; this is 60 lines.
// Warnings and errors are also copied to stderr when `tee` is set (the headless `serve`).
import fs from 'node:fs';
import path from 'node:path';
import { Writable } from 'node:stream';
import { PRIVATE_FILE_MODE } from '../util/private-files.ts';
import { hideUserinfo } from '../../common/secrets.ts';

export const LOG_FILE = 'jobscope.log';

// Every line passes here, whoever logged it (a request, an error's message, a connection's URL): the
// one place a credential written as URL userinfo (https://oauth2:PASSWORD@…) is cut out of the log.
// Lines without an '@' (nearly all) are passed on untouched, not decoded.
const AT = 0x40;
function withoutUrlPasswords(buf: Buffer): Buffer {
  if (!buf.includes(AT)) return buf;
  const text = buf.toString('utf8');
  const hidden = hideUserinfo(text, '[redacted]');
  return hidden === text ? buf : Buffer.from(hidden);
}

export class RotatingLog extends Writable {
  private fd: number;
  private size: number;
  private readonly file: string;

  constructor(
    private readonly dir: string,
    private readonly opts: { maxBytes: number; files: number; tee?: NodeJS.WritableStream },
  ) {
    super({ decodeStrings: false });
    this.file = path.join(dir, LOG_FILE);
    this.fd = fs.openSync(this.file, 'a', PRIVATE_FILE_MODE);
    this.size = fs.fstatSync(this.fd).size;
  }

  private rotate(): void {
    fs.closeSync(this.fd);
    for (let i = this.opts.files - 1; i >= 1; i--) {
      const from = i === 1 ? this.file : `${this.file}.${i - 1}`;
      if (fs.existsSync(from)) fs.renameSync(from, `${this.file}.${i}`);
    }
    this.fd = fs.openSync(this.file, 'a', PRIVATE_FILE_MODE);
    this.size = 0;
  }

  override _write(chunk: string | Buffer, _enc: BufferEncoding, done: (err?: Error | null) => void): void {
    try {
      const buf = withoutUrlPasswords(typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
      if (this.size + buf.length > this.opts.maxBytes && this.size > 0) this.rotate();
      fs.writeSync(this.fd, buf);
      this.size += buf.length;
      // pino levels: 40 warn, 50 error, 60 fatal.
      if (this.opts.tee && /"level":[456]0/.test(buf.toString('utf8', 0, 40))) this.opts.tee.write(buf);
      done();
    } catch {
      // A full or read-only disk must not take the server down with it: drop the line.
      done();
    }
  }

  override _final(done: (err?: Error | null) => void): void {
    try {
      fs.closeSync(this.fd);
    } catch {
      /* already closed */
    }
    done();
  }
}

/** The last `lines` lines of the log (reading the rotated file too when the current one is short). */
export function tailLog(dir: string, lines: number): string[] {
  const out: string[] = [];
  for (const name of [LOG_FILE, `${LOG_FILE}.1`]) {
    let text = '';
    try {
      const file = path.join(dir, name);
      const size = fs.statSync(file).size;
      const from = Math.max(0, size - lines * 2048);
      const fd = fs.openSync(file, 'r');
      try {
        const buf = Buffer.alloc(size - from);
        fs.readSync(fd, buf, 0, buf.length, from);
        text = buf.toString('utf8');
        if (from > 0) text = text.slice(text.indexOf('\n') + 1);
      } finally {
        fs.closeSync(fd);
      }
    } catch {
      continue;
    }
    out.unshift(...text.split('\n').filter((l) => l.length > 0));
    if (out.length >= lines) break;
  }
  return out.slice(-lines);
}
