// Draws a chart's series on a 2D canvas: one path per series, a gap (null: a failed or missing
// sample) ends a run and the line starts again after it; it is never drawn as zero. Why a canvas
// and not an SVG path per series: at 50 series × 1,000 points the SVG paths cost ~55 ms a redraw
// (building 50 path strings, the browser parsing them back, SVG layout), the canvas a few ms
// (bench/ui.ts). Apart from React, against a minimal context interface, so it is unit-tested.
// Where several samples fall into one device-pixel column they are reduced M4-style (first, min,
// max, last of the column, in their order): the drawn shape, peaks included, is the same.
// A run narrower than one CSS pixel (a lone sample between gaps, the first sample of a fresh
// history) would be an invisible zero-length line: it is drawn as a dot instead.
import type { SeriesKind } from './chart-geometry.ts';

/** The part of CanvasRenderingContext2D the drawing uses. */
export interface Pen {
  beginPath(): void;
  moveTo(x: number, y: number): void;
  lineTo(x: number, y: number): void;
  closePath(): void;
  arc(x: number, y: number, radius: number, startAngle: number, endAngle: number): void;
  stroke(): void;
  fill(): void;
  strokeStyle: unknown;
  fillStyle: unknown;
  lineWidth: number;
  globalAlpha: number;
  lineJoin: CanvasLineJoin;
}

export interface DrawSeries {
  name: string;
  values: (number | null)[];
  color: string;
  kind?: SeriesKind;
}

/** What was drawn for one series, counted by the drawing loop itself (tests and the page read it). */
export interface DrawnSeries {
  name: string;
  kind: 'line' | 'area' | 'step';
  color: string;
  /** Samples with a value that the lines pass through. */
  points: number;
  /** Unbroken runs: 1 plus the gaps inside the data. */
  segments: number;
  /** Vertices handed to the canvas after the per-column reduction. */
  vertices: number;
  /** Runs narrower than a pixel, drawn as a dot. */
  dots: number;
  /** Where the first and last drawn sample sit, CSS pixels from the plot's left edge (0.1 px). */
  x0: number;
  x1: number;
}

/** Radius of the dot a run narrower than a pixel is drawn as, in CSS pixels. */
export const DOT_RADIUS = 2.5;

export interface Frame {
  /** Plot area size in CSS pixels; y = 0 is the top of the plot. */
  width: number;
  height: number;
  /** Extra CSS pixels above the plot so a line at the maximum is not cut in half. */
  top: number;
  from: number;
  to: number;
  yMax: number;
  /** Device pixels per CSS pixel: the reduction works per device-pixel column. */
  dpr: number;
}

/** Streams one run's vertices to the pen, merging the samples of one pixel column M4-style. */
class Run {
  private col = NaN;
  private n = 0;
  // The current column's first, min, max and last sample (x, y, order within the column).
  private fx = 0; private fy = 0;
  private mnx = 0; private mny = 0; private mni = 0;
  private mxx = 0; private mxy = 0; private mxi = 0;
  private lx = 0; private ly = 0; private li = 0;
  private started = false;
  private prevY = 0;
  firstX = 0;
  lastX = 0;
  lastY = 0;
  vertices = 0;

  constructor(private readonly pen: Pen, private readonly step: boolean, private readonly baseY: number | null, private readonly dpr: number) {}

  add(x: number, y: number): void {
    const col = Math.floor(x * this.dpr);
    if (col !== this.col) {
      this.flush();
      this.col = col;
      this.n = 0;
      this.fx = this.mnx = this.mxx = this.lx = x;
      this.fy = this.mny = this.mxy = this.ly = y;
      this.mni = this.mxi = this.li = 0;
      this.n = 1;
      return;
    }
    const i = this.n++;
    if (y < this.mny) { this.mny = y; this.mnx = x; this.mni = i; }
    if (y > this.mxy) { this.mxy = y; this.mxx = x; this.mxi = i; }
    this.lx = x; this.ly = y; this.li = i;
  }

  private vertex(x: number, y: number): void {
    if (!this.started) {
      this.started = true;
      this.firstX = x;
      if (this.baseY !== null) {
        this.pen.moveTo(x, this.baseY);
        this.pen.lineTo(x, y);
      } else this.pen.moveTo(x, y);
    } else {
      if (this.step) this.pen.lineTo(x, this.prevY);
      this.pen.lineTo(x, y);
    }
    this.prevY = y;
    this.lastX = x;
    this.lastY = y;
    this.vertices++;
  }

  private flush(): void {
    if (this.n === 0) return;
    this.vertex(this.fx, this.fy);
    // min and max in the order they came, each only if it is not the first or last sample itself.
    if (this.mni < this.mxi) {
      if (this.mni !== 0) this.vertex(this.mnx, this.mny);
      if (this.mxi !== this.li) this.vertex(this.mxx, this.mxy);
    } else if (this.mxi < this.mni) {
      if (this.mxi !== 0) this.vertex(this.mxx, this.mxy);
      if (this.mni !== this.li) this.vertex(this.mnx, this.mny);
    } else if (this.mni !== 0 && this.mni !== this.li) this.vertex(this.mnx, this.mny);
    if (this.li !== 0) this.vertex(this.lx, this.ly);
    this.n = 0;
  }

  end(): void {
    this.flush();
    if (this.started && this.baseY !== null) {
      this.pen.lineTo(this.lastX, this.baseY);
      this.pen.lineTo(this.firstX, this.baseY);
      this.pen.closePath();
    }
  }
}

/** Draws every shown series and returns what it drew, in series order (hidden or empty ones left out). */
export function drawSeries(pen: Pen, t: number[], series: DrawSeries[], hidden: ReadonlySet<number>, f: Frame): DrawnSeries[] {
  const drawn: DrawnSeries[] = [];
  if (!(f.width > 0 && f.height > 0 && f.to > f.from && f.yMax > 0)) return drawn;
  const kx = f.width / (f.to - f.from);
  const ky = f.height / f.yMax;
  const y0 = f.top + f.height;
  pen.lineJoin = 'miter';
  const dots: number[] = []; // x, y of each run narrower than a pixel, per series
  for (let k = 0; k < series.length; k++) {
    if (hidden.has(k)) continue;
    const s = series[k]!;
    const kind = s.kind ?? 'line';
    const area = kind === 'area';
    const values = s.values;
    const n = Math.min(t.length, values.length);
    let points = 0;
    let segments = 0;
    let vertices = 0;
    let run: Run | null = null;
    dots.length = 0;
    let x0 = 0;
    let x1 = 0;
    const endRun = (r: Run) => {
      r.end();
      vertices += r.vertices;
      if (r.lastX - r.firstX < 1) dots.push(r.lastX, r.lastY);
      if (segments === 1) x0 = r.firstX;
      x1 = r.lastX;
    };
    pen.beginPath();
    for (let i = 0; i < n; i++) {
      const v = values[i];
      if (v === null || v === undefined) {
        if (run) {
          endRun(run);
          run = null;
        }
        continue;
      }
      if (!run) {
        run = new Run(pen, kind === 'step', area ? y0 : null, f.dpr);
        segments++;
      }
      run.add((t[i]! - f.from) * kx, y0 - v * ky);
      points++;
    }
    if (run) endRun(run);
    if (points === 0) continue;
    if (area) {
      pen.fillStyle = s.color;
      pen.globalAlpha = 0.2;
      pen.fill();
      pen.globalAlpha = 1;
    }
    pen.strokeStyle = s.color;
    pen.lineWidth = 1;
    pen.stroke();
    if (dots.length) {
      pen.beginPath();
      for (let d = 0; d < dots.length; d += 2) {
        pen.moveTo(dots[d]! + DOT_RADIUS, dots[d + 1]!);
        pen.arc(dots[d]!, dots[d + 1]!, DOT_RADIUS, 0, 2 * Math.PI);
      }
      pen.fillStyle = s.color;
      pen.fill();
    }
    drawn.push({ name: s.name, kind, color: s.color, points, segments, vertices, dots: dots.length / 2, x0: Math.round(x0 * 10) / 10, x1: Math.round(x1 * 10) / 10 });
  }
  return drawn;
}
