// The CPU a process and everything it started have spent: its own and that of every descendant seen
// (Chromium's browser, renderers and GPU process under a Playwright worker, the servers and tools a
// spec starts). /proc's reaped-children counters cannot be summed over a tree: a child reaped by a
// live parent would count twice, one whose parent died before reaping it not at all, and a tree that
// loses a process goes backwards. So the tree is sampled every 200 ms and each process counts with
// the most CPU it was seen with: a process that lived less than a sample is missed.
import fs from 'node:fs';
import { pathToFileURL } from 'node:url';

const TICK_S = 0.01; // clock ticks of 10 ms (USER_HZ)

function readStat(pid: string): { ppid: number; start: string; self: number } | undefined {
  try {
    const f = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return { ppid: Number(f[1]), start: f[19]!, self: (Number(f[11]) + Number(f[12])) * TICK_S };
  } catch {
    return undefined; // ended between the listing and the read
  }
}

export class TreeCpu {
  /** Most CPU seen per process, keyed by pid and start time (a pid can be reused). */
  private readonly seen = new Map<string, number>();
  private readonly timer: NodeJS.Timeout;

  constructor(private readonly root = process.pid) {
    this.sample();
    this.timer = setInterval(() => this.sample(), 200).unref();
  }

  sample(): void {
    const stats = new Map<number, { ppid: number; start: string; self: number }>();
    for (const pid of fs.readdirSync('/proc')) {
      if (!/^\d+$/.test(pid)) continue;
      const s = readStat(pid);
      if (s) stats.set(Number(pid), s);
    }
    const kids = new Map<number, number[]>();
    for (const [pid, s] of stats) kids.set(s.ppid, [...(kids.get(s.ppid) ?? []), pid]);
    const todo = [this.root];
    while (todo.length > 0) {
      const pid = todo.pop()!;
      const s = stats.get(pid);
      if (s) {
        const key = `${pid}:${s.start}`;
        this.seen.set(key, Math.max(this.seen.get(key) ?? 0, s.self));
      }
      todo.push(...(kids.get(pid) ?? []));
    }
  }

  /** Seconds of CPU of the tree so far. */
  total(): number {
    this.sample();
    let sum = 0;
    for (const v of this.seen.values()) sum += v;
    return sum;
  }

  stop(): void {
    clearInterval(this.timer);
  }
}

/** `node --import tsx test/helpers/tree-cpu.ts <command...>`: runs the command and prints the CPU
 *  its process tree spent (daemons that leave the tree, as pg_ctl's postmaster does, are not in it). */
if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const { spawn } = await import('node:child_process');
  const [cmd, ...args] = process.argv.slice(2);
  if (!cmd) throw new Error('usage: tree-cpu.ts <command...>');
  const t0 = performance.now();
  const child = spawn(cmd, args, { stdio: 'inherit' });
  const tree = new TreeCpu(child.pid);
  child.on('exit', (code) => {
    const wall = (performance.now() - t0) / 1000;
    console.log(`[tree-cpu] ${tree.total().toFixed(1)} core-s in ${wall.toFixed(1)} s wall (load average at the end ${fs.readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')})`);
    tree.stop();
    process.exitCode = code ?? 1;
  });
}
