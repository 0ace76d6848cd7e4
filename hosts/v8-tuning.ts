// V8 tuning for a server process, applied by importing this module FIRST in every host entry
// (hosts/cli.ts, scripts/start.ts, electron/main.ts): the flags must be set before SQLite's
// WebAssembly is compiled, which happens when the store's module is first evaluated. This covers the
// packaged desktop app and any plain-node run of the bundle; scripts/launcher.js sets the same flags
// even earlier for the `jobscope` bin and `npm start`.
import { applyV8Flags } from './v8-flags.js';

/**
 * Start-up allocates mostly long-lived objects (modules, routes, schemas, the job system), and V8
 * answers a high survival rate by doubling the young generation up to its 2 × 16 MiB limit, which it
 * then keeps: ~28 MiB of RSS for an idle server (bench/footprint.ts). A growth factor of 1 holds it at
 * its initial size through start-up; V8's default comes back when start-up has ended (ServerHost calls
 * endStartUp once its server listens and Ajv has warmed up; a first start's code cache is saved before it,
 * since V8 keys the cache by its flags), at the latest after START_UP_MS (v8-flags.js, which sets the
 * flags), so a server under load grows it as before (held small under load it cost 30–60% more CPU
 * per request here). The end was a fixed 10 s: the bench's dispatch line, 5–8 s after the start, ran
 * inside the hold with a scavenge every ~25 ms (docs/benchmark-bounds.md, "Paced p99: the young
 * generation").
 * --max-semi-space-size would cap it for good, but only from node's command line, which the
 * `jobscope` bin cannot carry portably; this flag is read at run time, so setting it here works.
 *
 * SQLite's WebAssembly is compiled, and its warm functions tiered up to TurboFan, by several
 * background tasks at once; each one's scratch memory lands in its thread's glibc arena and stays
 * there (RSS) after the compile. One task at a time: ~12 MiB less at idle and ~20 MiB less under
 * load, the same code in the end (CPU per trace part and per dispatched build unchanged; tier-up of
 * the hottest functions is queued rather than parallel during warm-up).
 * The tiering budget (V8's default 1.8 M) is spent by Liftoff code per function call and loop
 * iteration in proportion to the function's size, so SQLite's two largest functions (the parser,
 * 39 kB of code, and the VDBE interpreter, 60 kB) spend it fastest: a start on a new data dir spent
 * 720-810 M of the parser's alone (--trace-wasm-compilation-times: a TurboFan compile of it during
 * start at a budget of 720 M, none at 810 M), and at the former 180 M both tiered up at start or
 * just after, 14 + 28 MB of TurboFan scratch, 4-12 MiB of it left in a worker's malloc arena
 * (20.2 MB mapped), and 100-150 ms of background CPU before the listening line. 1,200 M leaves
 * start-up and idle on Liftoff code: idle 74-76 MiB instead of 84-96 (bench/footprint.ts' split:
 * the anonymous part only). Under steady SQL the interpreter still tiers up within ~2 s, the parser
 * and the small hot functions within 5-15 s instead of 2-5 (a loop of inserts and aggregate reads,
 * 15 s: the same number of statements at 180 M and at 1,200 M). --liftoff-only never tiers up: SQL
 * ~20% slower, compound_metrics' p99 under the demo load 1.5–3× worse.
 *
 * --no-parallel-scavenge: a scavenge of the young generation runs on the thread that allocates, not
 * split over V8's helper threads. On two cores under load the parallel scavenger's pause waits for
 * helpers that find no free core (the bench's pollers, the other V8 threads hold them), and a
 * server's young generation has few survivors, which is all a scavenge copies: one thread is enough.
 * `bench/experiments/dispatch-tail.ts 6 3`, 8 alternating pairs at load 10–15: GC pauses in the
 * paced window 22–231 ms (median 65) against 65–404 (median 165), lower in 7 pairs of 8; server CPU
 * per dispatched build unchanged (`dispatch-ab.ts`, 0.128–0.133 ms against 0.125–0.135). It is read
 * at each scavenge, so setting it at run time works (unlike --single-threaded-gc, which crashed).
 */
applyV8Flags();
