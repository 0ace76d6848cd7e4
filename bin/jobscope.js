#!/usr/bin/env node
// The published entry point: registers tsx so the TypeScript sources run as they are,
// which keeps `npm run serve` and `jobscope serve` working straight after `npm install`.
import { register } from 'tsx/esm/api';

register();
await import('../server/cli.ts');
