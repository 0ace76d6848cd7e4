// The y axis's top and ticks for what a chart counts: plain numbers (1, 2, 5 × 10^k), durations at
// the steps a clock has (5 s, 15 s, 1 min, 5 min… never "1 m 40 s"), bytes at binary steps (256 KiB,
// 1 MiB… never "0 B, 1 B, 1 B"). Every tick chooser answers 0..max in equal steps of one round size,
// at most MAX_STEPS of them, labelled without decimals that carry nothing ("3", not "3.0").
import { MAX_STEPS, niceCeil, numberAxisMax, yTicks } from './chart-geometry.ts';
import { decimal } from './format.ts';

export type AxisKind = 'number' | 'duration' | 'bytes';

export interface Axis {
  max: number;
  ticks: number[];
  label: (v: number) => string;
}


/** The smallest step of `steps` (ascending) that covers 0..dataMax in at most MAX_STEPS. */
function stepped(dataMax: number, steps: readonly number[], fallback: (m: number) => number): { max: number; ticks: number[] } {
  const m = dataMax > 0 && Number.isFinite(dataMax) ? dataMax : 0;
  const step = steps.find((s) => Math.ceil(m / s - 1e-9) <= MAX_STEPS) ?? fallback(m);
  const n = Math.max(1, Math.ceil(m / step - 1e-9));
  return { max: n * step, ticks: Array.from({ length: n + 1 }, (_, i) => i * step) };
}

const MS = [0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5];
const SECONDS = [1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 10800, 21600, 43200, 86400];
const DAY = 86400;

/** "500 ms", "15 s", "2 min", "1 h 30 min", "2 d": a round duration in its largest whole unit. */
export function durationTick(s: number): string {
  if (s === 0) return '0 s';
  if (s < 1) return `${decimal(s * 1000)} ms`;
  if (s < 60) return `${decimal(s)} s`;
  if (s < 3600) return s % 60 ? `${Math.floor(s / 60)} min ${decimal(s % 60)} s` : `${s / 60} min`;
  if (s < DAY) return s % 3600 ? `${Math.floor(s / 3600)} h ${decimal((s % 3600) / 60)} min` : `${s / 3600} h`;
  return s % DAY ? `${Math.floor(s / DAY)} d ${decimal((s % DAY) / 3600)} h` : `${s / DAY} d`;
}

const UNITS = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
const BYTE_STEPS = UNITS.flatMap((_, k) => [1, 2, 4, 8, 16, 32, 64, 128, 256, 512].map((m) => m * 1024 ** k));

/** "0 B", "512 B", "1 KiB", "1.5 MiB": bytes in the largest unit they reach. */
export function bytesTick(v: number): string {
  let k = 0;
  while (k < UNITS.length - 1 && Math.abs(v) >= 1024 ** (k + 1)) k++;
  return `${decimal(v / 1024 ** k)} ${UNITS[k]}`;
}

// yTicks() rounds to 1e-6: as many decimals as a tick can have, trailing zeros dropped.
const numberTick = (v: number) => decimal(v, 6);

/** The axis for values up to dataMax. `integers`: counts, never a tick between two whole numbers. */
export function axisFor(kind: AxisKind, dataMax: number, integers = false): Axis {
  if (kind === 'duration') {
    return { ...stepped(dataMax, [...MS, ...SECONDS], (m) => DAY * niceCeil(m / DAY / MAX_STEPS)), label: durationTick };
  }
  if (kind === 'bytes') return { ...stepped(dataMax, BYTE_STEPS, (m) => 1024 ** 5 * niceCeil(m / 1024 ** 5 / MAX_STEPS)), label: bytesTick };
  const max = numberAxisMax(dataMax, integers);
  return { max, ticks: yTicks(max), label: numberTick };
}
