// The V8 flags of a server process, in one list. Plain JS because scripts/launcher.js applies them
// too, before the bundle is even built (it runs before any TypeScript can), and hosts/
// v8-tuning.ts applies them in every host entry; both call this, so the two cannot drift apart.
// Why each flag and value: the comment in v8-tuning.ts.
import v8 from 'node:v8';

/** How long the young generation is held at its initial size; V8's growth comes back after it. */
export const START_UP_MS = 10_000;

/** Sets the flags. Idempotent: the launcher and the host entry may both call it in one process. */
export function applyV8Flags() {
  v8.setFlagsFromString('--semi-space-growth-factor=1');
  setTimeout(() => v8.setFlagsFromString('--semi-space-growth-factor=2'), START_UP_MS).unref();
  v8.setFlagsFromString('--wasm-num-compilation-tasks=1');
  v8.setFlagsFromString('--wasm-tiering-budget=1200000000');
}
