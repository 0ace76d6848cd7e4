// Preloaded (`node --import`) into a `serve` child by test/start-phases.test.ts: prints on stderr when
// the V8 tuning lets the young generation grow again (hosts/v8-flags.js), on the child's own clock
// (ms since its start, as the phases of its "Started in" line are).
import v8 from 'node:v8';

const setFlags = v8.setFlagsFromString;
v8.setFlagsFromString = (flags) => {
  if (flags === '--semi-space-growth-factor=2') process.stderr.write(`young generation grows again at ${Math.round(performance.now())} ms\n`);
  return setFlags(flags);
};
