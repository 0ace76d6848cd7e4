// V8 tuning for a server process, applied by importing this module FIRST in every host entry
// (server/cli.ts, scripts/start.ts, electron/main.ts): the flags must be set before SQLite's
// WebAssembly is compiled, which happens when the store's module is first evaluated. This covers the
// packaged desktop app and any plain-node run of the bundle; scripts/launcher.js sets the same flags
// even earlier for the `jobscope` bin and `npm start`.
import v8 from 'node:v8';

/**
 * Start-up allocates mostly long-lived objects (modules, routes, schemas, the job system), and V8
 * answers a high survival rate by doubling the young generation up to its 2 × 16 MiB limit, which it
 * then keeps: ~28 MiB of RSS for an idle server (bench/footprint.ts). A growth factor of 1 holds it at
 * its initial size through start-up; V8's default comes back after START_UP_MS, so a server under
 * load grows it as before (held small under load it cost 30–60% more CPU per request here).
 * --max-semi-space-size would cap it for good, but only from node's command line, which the
 * `jobscope` bin cannot carry portably; this flag is read at run time, so setting it here works.
 *
 * SQLite's WebAssembly is compiled, and its warm functions tiered up to TurboFan, by several
 * background tasks at once; each one's scratch memory lands in its thread's glibc arena and stays
 * there (RSS) after the compile. One task at a time: ~12 MiB less at idle and ~20 MiB less under
 * load, the same code in the end (CPU per trace part and per dispatched build unchanged; tier-up of
 * the hottest functions is queued rather than parallel during warm-up). A tiering budget 100× the
 * default keeps start-up's few queries on baseline (Liftoff) code: no TurboFan compile, ~10 MiB less
 * at idle; under load the hot functions still tier up within about a second of steady SQL
 * (compound_metrics p99, CPU per trace part and per build unchanged). --liftoff-only or a budget
 * 1,000× the default would save ~10 MiB more, but they never tier up: SQL ~20% slower, and
 * compound_metrics' p99 under the demo load 1.5–3× worse.
 */
const START_UP_MS = 10_000;

v8.setFlagsFromString('--semi-space-growth-factor=1');
setTimeout(() => v8.setFlagsFromString('--semi-space-growth-factor=2'), START_UP_MS).unref();
v8.setFlagsFromString('--wasm-num-compilation-tasks=1');
v8.setFlagsFromString('--wasm-tiering-budget=180000000');
