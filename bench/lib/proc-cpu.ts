import fs from 'node:fs';

/** User + system CPU seconds of a process so far (/proc/<pid>/stat, in clock ticks of 1/100 s). */
export function cpuSeconds(pid: number): number {
  const f = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(f[11]) + Number(f[12])) / 100;
}
