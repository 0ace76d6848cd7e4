// `npm run serve` and `npm start` run this first: builds the UI only when missing or stale (fast no-op otherwise).
import { packageRoot } from '../server/ui/package-root.ts';
import { ensureUiBuilt } from './ui-build.ts';

ensureUiBuilt(packageRoot());
