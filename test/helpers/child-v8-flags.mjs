// Preloaded (`node --import`) into the `jobscope` child processes the tests start (cli-process.ts):
// the V8 flags of hosts/v8-tuning.ts, set before anything loads, as scripts/launcher.js sets
// them for the `jobscope` bin. The tests spawn the bundle itself, where v8-tuning.ts runs only with the
// bundle's body: after the packages left outside it (node-sqlite3-wasm among them, whose WebAssembly
// then compiles and tiers up under V8's defaults) have already been evaluated. So a test child ran
// differently from the bin, and cost more: a `serve` start to "listening" and SIGTERM took 1.34-1.46 s
// of CPU without, 1.08-1.13 s with (user+sys, 2 sets of 3 alternating rounds, load ~7-12, at 2bebfbb).
// A V8 code cache for the CommonJS packages on top of this (a Module._compile hook) gained nothing
// measurable once the launcher bundled the packages in (1.09 s).
// The flags are the launcher's own (tuneV8Early), not a copy of them.
import { tuneV8Early } from '../../scripts/launcher.js';

tuneV8Early();
