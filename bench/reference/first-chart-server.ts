// The bare reference for the first chart (bench/ui.ts, first_chart_ms): a plain node:http server
// whose one page has an inline script that fetches a small JSON history, strokes it on a 2D canvas
// and then appends the same kind of marker the dashboard's chart leaves (an <li> inside the canvas
// of [data-testid="chart-workers"]). No framework, no bundle, no fonts, no CSS file, no auth: what
// Chromium itself costs from "server listening" to "a chart is there" for a fresh page of a new
// site (a new renderer process, the navigation, one fetch, one stroke). In-process, as the bench
// runs our server in-process (buildServer), so both are timed from the same kind of "listening".
import http from 'node:http';

/** As the dashboard's first history: a few series of the chart's 600 points. */
const SERIES = 4;
const POINTS = 600;

const PAGE = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>bare chart</title></head>
<body><div data-testid="chart-workers"><canvas class="series-canvas" width="1200" height="240"></canvas></div>
<script>
fetch('/history.json').then((r) => r.json()).then((h) => {
  const canvas = document.querySelector('canvas');
  const ctx = canvas.getContext('2d');
  const W = canvas.width, H = canvas.height;
  let max = 1;
  for (const s of h.series) for (const v of s.values) if (v > max) max = v;
  const ul = document.createElement('ul');
  for (const s of h.series) {
    ctx.beginPath();
    s.values.forEach((v, i) => { const x = (i / (s.values.length - 1)) * W, y = H - (v / max) * H; if (i === 0) ctx.moveTo(x, y); else ctx.lineTo(x, y); });
    ctx.strokeStyle = '#3b82f6'; ctx.stroke();
    const li = document.createElement('li'); li.textContent = s.name; ul.appendChild(li);
  }
  canvas.appendChild(ul);
});
</script></body></html>`;

function history(): string {
  const to = Date.now();
  let seed = 7;
  const rand = () => ((seed = (seed * 1664525 + 1013904223) >>> 0) / 2 ** 32);
  const series = Array.from({ length: SERIES }, (_, s) => {
    let v = 10;
    return { name: `queue-${s}`, values: Array.from({ length: POINTS }, () => (v = Math.max(0, v + (rand() - 0.5) * 4))) };
  });
  return JSON.stringify({ from: to - 15 * 60_000, to, series });
}

export async function startFirstChartReference(): Promise<{ url: string; close: () => Promise<void> }> {
  const server = http.createServer((req, res) => {
    if (req.url === '/') return void res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(PAGE);
    if (req.url === '/history.json') return void res.writeHead(200, { 'content-type': 'application/json' }).end(history());
    res.writeHead(404, { 'content-type': 'application/json' }).end('{"message":"not found"}');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    close: () => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()); }),
  };
}
