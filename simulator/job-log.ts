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

const TWO = Array.from({ length: 60 }, (_, n) => String(n).padStart(2, '0'));
const THREE = Array.from({ length: 1000 }, (_, n) => String(n).padStart(3, '0'));

// The UTF-8 size of the last filler line: each is ASCII but for one ✓ or … (3 bytes, 1 UTF-16 unit),
// so it is counted here rather than by Buffer.byteLength on every line (a log is ~300 of them).
let fillerBytes = 0;

// A line of made-up output. The clock reads 12:00:00 plus `t` seconds, and `ms / 1000` is printed
// with three decimals, by integer arithmetic: a Date and toFixed per line were most of a log's cost.
function filler(prng: Prng, t: number): string {
  const ms = prng.int(1, 2500);
  const kind = prng.next();
  let line: string;
  if (kind < 0.08) {
    line = `${YELLOW}warning:${RESET} ${prng.pick(THINGS)} is deprecated, see docs/upgrade.md`;
    fillerBytes = line.length;
    return line;
  }
  if (kind < 0.2) line = `  ${GREEN}✓${RESET} ${prng.pick(THINGS)} (${ms} ms)`;
  else {
    const s = (43200 + t) % 86400;
    line = `[${TWO[Math.floor(s / 3600)]}:${TWO[Math.floor(s / 60) % 60]}:${TWO[s % 60]}] ${prng.pick(WORDS)} ${prng.pick(THINGS)} … done in ${Math.floor(ms / 1000)}.${THREE[ms % 1000]}s`;
  }
  fillerBytes = line.length + 2;
  return line;
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
  let t = 0;
  commands.forEach((cmd, i) => {
    const head = [`${GREEN}$ ${cmd}${RESET}`, ...outputFor(cmd, prng, i + 1)];
    lines.push(...head);
    size += Buffer.byteLength(head.join('\n')) + 1;
    const goal = size + per;
    // Stop short of the target rather than past it: trace_kb 16 in part_kb 4 is then four parts.
    for (;;) {
      const line = filler(prng, t++);
      const next = size + fillerBytes + 1;
      if (next > goal || next > input.targetBytes) break;
      lines.push(line);
      size = next;
    }
  });
  if (input.fails && commands.length) lines.push(`${RED}make: *** [${commands.at(-1)!.split(' ')[0]}] Error 1${RESET}`);
  return Buffer.from([...lines, ...tail].join('\n') + '\n', 'utf8');
}
