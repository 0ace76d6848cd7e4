// A build's job log, written the way gitlab-ci-multi-runner 1.11.5 with the shell executor writes
// it (see the capture in shared/spec/real-runner-requests.md): the same banner, colours and
// "$ command" lines, then made-up but plausible output for each command. Nothing is executed.
import type { Prng } from '../common/prng.ts';

const ESC = '\x1b';
const GREEN = `${ESC}[32;1m`;
const RED = `${ESC}[31;1m`;
const YELLOW = `${ESC}[0;33m`;
const RESET = `${ESC}[0;m`;
const CLEAR = `${ESC}[0K`;

export interface JobLogInput {
  buildId: number;
  projectId: number;
  sha: string;
  ref: string;
  commands: string;
  runnerName: string;
  runnerToken: string;
  host: string;
  /** Approximate total size; output lines are added until it is reached. */
  targetBytes: number;
  fails: boolean;
  artifacts: { name: string; bytes: number } | null;
}

const WORDS = ['compiling', 'linking', 'resolving', 'checking', 'bundling', 'fetching', 'caching', 'indexing', 'writing', 'verifying'];
const THINGS = ['src/core/queue.ts', 'src/api/runner.ts', 'lib/trace.rb', 'vendor/gems', 'node_modules/.cache', 'build/app.js', 'spec/models', 'assets/ui.css', 'pkg/store', 'docs/index.md'];

function outputFor(cmd: string, prng: Prng, step: number): string[] {
  const echo = /^echo\s+(.*)$/.exec(cmd);
  if (echo) return [echo[1]!.replace(/^["']|["']$/g, '').replace(/\$\{?CI_[A-Z_]+\}?/g, 'value')];
  if (/^(sleep|mkdir|cd|export|cp|mv|rm)\b/.test(cmd)) return [];
  if (/\b(test|rspec|jest|vitest|pytest)\b/.test(cmd)) {
    const n = prng.int(3, 12);
    return [...Array.from({ length: n }, (_, i) => `  ${GREEN}✓${RESET} ${prng.pick(THINGS)} › case ${step}.${i + 1} (${prng.int(1, 900)} ms)`), `${n} passed`];
  }
  return [`${prng.pick(WORDS)} ${prng.pick(THINGS)}…`];
}

// The log is written as bytes into one buffer, its filler lines (nearly all of it) from pre-encoded
// pieces and digits: building ~300 template strings a log, joining and encoding them was ~0.5 ms of
// the simulator's CPU a build, with its garbage (a cached log in its place: 2.94 → 2.44 ms a build).
// The bytes are what the string version gave (compared on 3,000 logs when this was written).
const bytesOf = (s: string) => new Uint8Array(Buffer.from(s, 'utf8'));
const B_WARNING = bytesOf(`${YELLOW}warning:${RESET} `);
const B_DEPRECATED = bytesOf(' is deprecated, see docs/upgrade.md');
const B_CHECK = bytesOf(`  ${GREEN}✓${RESET} `);
const B_DONE = bytesOf(' … done in ');
const B_WORDS = WORDS.map(bytesOf);
const B_THINGS = THINGS.map(bytesOf);
const NL = 10;

const longest = (xs: Uint8Array[]) => Math.max(...xs.map((x) => x.length));
/** Room enough for any filler line: its longest pieces and 32 bytes of digits and marks. */
const FILLER_MAX = Math.max(B_WARNING.length + B_DEPRECATED.length, B_CHECK.length, B_DONE.length + longest(B_WORDS)) + longest(B_THINGS) + 32;

class LogBytes {
  buf: Buffer;
  n = 0;
  constructor(capacity: number) {
    this.buf = Buffer.allocUnsafe(capacity);
  }
  room(k: number): void {
    if (this.n + k <= this.buf.length) return;
    const bigger = Buffer.allocUnsafe(Math.max(this.buf.length * 2, this.n + k));
    this.buf.copy(bigger, 0, 0, this.n);
    this.buf = bigger;
  }
  line(s: string): void {
    this.room(Buffer.byteLength(s) + 1);
    this.n += this.buf.write(s, this.n, 'utf8');
    this.buf[this.n++] = NL;
  }
}

function put(buf: Uint8Array, n: number, b: Uint8Array): number {
  for (let i = 0; i < b.length; i++) buf[n++] = b[i]!;
  return n;
}

/** A non-negative integer below 10,000, at least `width` digits (zero-padded). */
function digits(buf: Uint8Array, n: number, v: number, width: number): number {
  const w = Math.max(width, v >= 1000 ? 4 : v >= 100 ? 3 : v >= 10 ? 2 : 1);
  for (let i = w - 1; i >= 0; i--) {
    buf[n + i] = 48 + (v % 10);
    v = (v / 10) | 0;
  }
  return n + w;
}

// A line of made-up output, without its newline, at w.n. The clock reads 12:00:00 plus `t`
// seconds, and `ms / 1000` is printed with three decimals.
function filler(w: LogBytes, prng: Prng, t: number): void {
  const ms = prng.int(1, 2500);
  const kind = prng.next();
  w.room(FILLER_MAX);
  const buf = w.buf;
  let n = w.n;
  if (kind < 0.08) {
    n = put(buf, n, B_WARNING);
    n = put(buf, n, B_THINGS[Math.floor(prng.next() * THINGS.length)]!);
    n = put(buf, n, B_DEPRECATED);
  } else if (kind < 0.2) {
    n = put(buf, n, B_CHECK);
    n = put(buf, n, B_THINGS[Math.floor(prng.next() * THINGS.length)]!);
    buf[n++] = 32; // " (N ms)"
    buf[n++] = 40;
    n = digits(buf, n, ms, 1);
    buf[n++] = 32;
    buf[n++] = 109;
    buf[n++] = 115;
    buf[n++] = 41;
  } else {
    const s = (43200 + t) % 86400;
    buf[n++] = 91; // "[hh:mm:ss] "
    n = digits(buf, n, Math.floor(s / 3600), 2);
    buf[n++] = 58;
    n = digits(buf, n, Math.floor(s / 60) % 60, 2);
    buf[n++] = 58;
    n = digits(buf, n, s % 60, 2);
    buf[n++] = 93;
    buf[n++] = 32;
    n = put(buf, n, B_WORDS[Math.floor(prng.next() * WORDS.length)]!);
    buf[n++] = 32;
    n = put(buf, n, B_THINGS[Math.floor(prng.next() * THINGS.length)]!);
    n = put(buf, n, B_DONE);
    n = digits(buf, n, Math.floor(ms / 1000), 1);
    buf[n++] = 46;
    n = digits(buf, n, ms % 1000, 3);
    buf[n++] = 115;
  }
  w.n = n;
}

/** The complete log as bytes (UTF-8, with ANSI escapes): the runner streams prefixes of it. */
export function jobLog(input: JobLogInput, prng: Prng): Buffer {
  const lines: string[] = [];
  const sha8 = input.sha.slice(0, 8);
  const tok8 = input.runnerToken.slice(0, 8);
  lines.push(
    `${CLEAR}Running with gitlab-ci-multi-runner 1.11.5 (cbfcb5c8)`,
    `  on ${input.runnerName} (${tok8})`,
    `${RESET}${CLEAR}Using Shell executor...`,
    `${RESET}Running on ${input.host}...`,
    `${GREEN}Cloning repository...${RESET}`,
    `Cloning into '/builds/${tok8}/0/project-${input.projectId}'...`,
    `${GREEN}Checking out ${sha8} as ${input.ref}...${RESET}`,
    `${GREEN}Skipping Git submodules setup${RESET}`,
  );
  const commands = input.commands.split('\n').map((c) => c.trim()).filter(Boolean);
  const tail: string[] = [];
  if (input.fails) tail.push(`${RED}ERROR: Build failed: exit status 1`, RESET);
  else {
    if (input.artifacts) {
      tail.push(
        `${GREEN}Uploading artifacts...${RESET}`,
        `out/: found ${Math.max(2, Math.ceil(input.artifacts.bytes / 65536) + 1)} matching files`,
        `Uploading artifacts to coordinator... ok        ${CLEAR}id${RESET}=${input.buildId} responseStatus${RESET}=201 Created token${RESET}=xxxxxxxx`,
      );
    }
    tail.push(`${GREEN}Build succeeded${RESET}`);
  }
  let size = Buffer.byteLength(lines.join('\n') + tail.join('\n')) + 2;
  const per = Math.max(0, (input.targetBytes - size) / Math.max(1, commands.length));
  const w = new LogBytes(Math.max(input.targetBytes, size) + 1024);
  for (const l of lines) w.line(l);
  let t = 0;
  commands.forEach((cmd, i) => {
    const head = [`${GREEN}$ ${cmd}${RESET}`, ...outputFor(cmd, prng, i + 1)];
    for (const l of head) w.line(l);
    size += Buffer.byteLength(head.join('\n')) + 1;
    const goal = size + per;
    // Stop short of the target rather than past it: trace_kb 16 in part_kb 4 is then four parts.
    // A line past it is drawn (the draws stay as they were) and taken back.
    for (;;) {
      const at = w.n;
      filler(w, prng, t++);
      const next = size + (w.n - at) + 1;
      if (next > goal || next > input.targetBytes) {
        w.n = at;
        break;
      }
      w.room(1);
      w.buf[w.n++] = NL;
      size = next;
    }
  });
  if (input.fails && commands.length) w.line(`${RED}make: *** [${commands.at(-1)!.split(' ')[0]}] Error 1${RESET}`);
  for (const l of tail) w.line(l);
  return w.buf.subarray(0, w.n);
}
