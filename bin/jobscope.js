#!/usr/bin/env node
// The published entry point. Runs hosts/cli.ts bundled on plain node (scripts/launcher.js: rebuilt
// only when a source changed), which keeps `jobscope serve` and `npm run serve` working straight
// after `npm install` with no build step and without tsx's loader thread in the server's memory.
import { runBundled } from '../scripts/launcher.js';

await runBundled('hosts/cli.ts');
