// The V8 flags of a server process, in one list. Plain JS because scripts/launcher.js applies them
// too, before the bundle is even built (it runs before any TypeScript can), and hosts/
// v8-tuning.ts applies them in every host entry; both call this, so the two cannot drift apart.
// Why each flag and value: the comment in v8-tuning.ts.
import v8 from 'node:v8';

/**
 * The latest the young generation is held at its initial size; V8's growth comes back after it even
 * when no host says its start-up ended (endStartUp).
 */
export const START_UP_MS = 10_000;

/**
 * The hold is one per process, but this file may be loaded more than once in it (the launcher's copy,
 * the bundle's, the packaged stub's own bundled copy for scripts/code-cache.js), so its state lives
 * on the global object, where every copy finds the same one (and scripts/code-cache.js its `hold`).
 * @type {{ holds: number, timer: ReturnType<typeof setTimeout> | undefined, ended: boolean, startUpEnded: boolean, hold?: () => () => void }}
 */
const state = (globalThis[Symbol.for('jobscope.v8-start-up-hold')] ??= { holds: 0, timer: undefined, ended: false, startUpEnded: false });

function release() {
  if (state.ended || --state.holds > 0) return;
  state.ended = true;
  clearTimeout(state.timer);
  v8.setFlagsFromString('--semi-space-growth-factor=2');
}

/** Sets the flags. Idempotent: the launcher and the host entry may both call it in one process. */
export function applyV8Flags() {
  if (state.timer === undefined && !state.ended) {
    v8.setFlagsFromString('--semi-space-growth-factor=1');
    state.holds += 1; // start-up's own, ended by endStartUp
    state.timer = setTimeout(() => {
      state.holds = 1;
      release();
    }, START_UP_MS).unref();
  }
  v8.setFlagsFromString('--wasm-num-compilation-tasks=1');
  v8.setFlagsFromString('--wasm-tiering-budget=1200000000');
  v8.setFlagsFromString('--no-parallel-scavenge');
}

/** Start-up has ended (the server listens and has warmed up): the young generation may grow again. Once. */
export function endStartUp() {
  if (state.startUpEnded) return;
  state.startUpEnded = true;
  release();
}

/**
 * Keeps the young generation held past endStartUp until the returned function is called (once),
 * for work of the start that must run under the start-up flags (the code cache's save: V8 keys the
 * data by its flags). No hold is taken once start-up has ended.
 * @returns {() => void}
 */
function holdStartUp() {
  if (state.ended || state.timer === undefined) return () => {};
  state.holds += 1;
  let done = false;
  return () => {
    if (done) return;
    done = true;
    release();
  };
}

state.hold ??= holdStartUp;

