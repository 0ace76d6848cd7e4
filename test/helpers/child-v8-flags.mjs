// Preloaded (`node --import`) into the `jobscope` child processes the tests start (cli-process.ts):
// the V8 flags of hosts/v8-tuning.ts, set before anything loads, as scripts/launcher.js sets
// them for the `jobscope` bin. The tests spawn the bundle itself, where v8-tuning.ts runs only with the
// bundle's body: after the packages left outside it (node-sqlite3-wasm among them, whose WebAssembly
// then compiles and tiers up under V8's defaults) have already been evaluated. So a test child ran
// differently from the bin, and cost more CPU to start (docs/benchmark-bounds.md, "npm test"). A V8
// code cache for the CommonJS packages on top of this gained nothing measurable once the launcher
// bundled the packages in.
// The flags are the launcher's own (tuneV8Early), not a copy of them.
import { tuneV8Early } from '../../scripts/launcher.js';

tuneV8Early();
