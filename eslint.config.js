// Lint: typescript-eslint's recommended rules everywhere, React's hooks rules in the renderer, and
// the direction of dependence (docs/architecture.md draws it):
//   hosts/, electron/ ─► server/ ─► common/      server/ never imports hosts/, electron/, renderer/, scripts/
//   contract/ ─► common/ only                     renderer/ ─► contract/ (types), common/
//   inside server/: everything above the store reaches it through store/ports/ (and store/index.ts);
//   store/ never imports the layers above it; one adapter folder never imports another.
// typescript-eslint's no-restricted-imports (core's, plus allowTypeImports); a later block's options
// replace an earlier one's for the files both match, so each block lists all that applies to it.
import tseslint from 'typescript-eslint';
import reactHooks from 'eslint-plugin-react-hooks';

const RESTRICT = '@typescript-eslint/no-restricted-imports';
const restrict = (patterns, paths = []) => ({ 'no-restricted-imports': 'off', [RESTRICT]: ['error', { paths, patterns }] });

const noElectronPackage = [{ name: 'electron', message: 'server/ runs outside Electron too: pass what you need in from electron/.' }];
// What server/ (the engine every host runs) may never reach.
const engineBoundaries = [
  { regex: '(^|/)electron(/|$)', message: 'server/ must not import electron/: the dependence goes electron/ → server/.' },
  { regex: '(^|/)renderer(/|$)', message: 'server/ must not import renderer/: the renderer talks to it over HTTP only.' },
  { regex: '(^|/)scripts/', message: 'server/ must not import scripts/: dev tooling (vite, Electron binaries) stays out of the engine.' },
  { regex: '(^|/)hosts/', message: 'server/ must not import hosts/: the hosts compose a server, not the other way round.' },
];
// Above the store: the ports, not an adapter. app.ts is where the backends are chosen.
const noAdapters = {
  regex: '(^|/)store/(sqlite|files|pg|redis|rows)/',
  message: 'outside server/store/, storage is reached through the ports (store/ports/, store/index.ts): the adapters are chosen in server/app.ts.',
};
// The store is the bottom layer: it implements ports, it never calls up. The job backend port it
// implements is jobs/backend.ts with its types (jobs/types.ts, jobs/entry-key.ts).
const storeBoundaries = [
  { regex: '(^|/)(http|runner-api|control-api|metrics-api|app-api|settings-api|simulator-api|monitor)/', message: 'store/ is the bottom layer: it never imports the HTTP or monitor layers above it.' },
  { regex: '(^|/)jobs/(?!(backend|types|entry-key)\\.ts$)', message: 'store/ implements the job backend port (jobs/backend.ts, types.ts, entry-key.ts) and imports nothing else of jobs/.' },
];
/** One adapter folder never imports another: what two adapters share lives in store/ports/ or store/rows/. */
const noSiblingAdapters = (self) => ({
  regex: `^\\.\\./(${['sqlite', 'files', 'pg', 'redis'].filter((a) => a !== self).join('|')})/`,
  message: `store/${self}/ is one adapter: it never imports another adapter's folder (shared code goes to store/ports/ or store/rows/).`,
});

export default tseslint.config(
  { ignores: ['node_modules/**', 'dist/**', 'dist-electron/**', 'release/**', '.tmp/**', 'test-results/**', 'playwright-report/**'] },
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts', '**/*.tsx'],
    languageOptions: { parser: tseslint.parser },
    plugins: { '@typescript-eslint': tseslint.plugin },
    rules: {
      // `const { pid: _pid, ...fields } = x` is how a field is left out of a copy.
      '@typescript-eslint/no-unused-vars': ['error', { ignoreRestSiblings: true }],
      // A `let` that a callback registered earlier reads (`if (!win) return`) cannot be a const
      // declared at its one assignment: the callback would hit the temporal dead zone instead.
      'prefer-const': ['error', { ignoreReadBeforeAssign: true }],
    },
  },
  {
    // The hooks rules and the React Compiler's checks (purity, refs, state in effects). Missing
    // dependencies are errors: a stale closure or a memo that never updates is a bug, not a style.
    files: ['renderer/**/*.ts', 'renderer/**/*.tsx'],
    ...reactHooks.configs.flat.recommended,
    rules: { ...reactHooks.configs.flat.recommended.rules, 'react-hooks/exhaustive-deps': 'error' },
  },
  {
    files: ['server/**/*.ts', 'bench/**/*.ts'],
    rules: restrict(engineBoundaries, noElectronPackage),
  },
  {
    files: ['server/**/*.ts'],
    ignores: ['server/store/**'],
    rules: restrict([...engineBoundaries, noAdapters], noElectronPackage),
  },
  {
    files: ['server/store/**/*.ts'],
    rules: restrict([...engineBoundaries, ...storeBoundaries], noElectronPackage),
  },
  ...['sqlite', 'files', 'pg', 'redis'].map((adapter) => ({
    files: [`server/store/${adapter}/**/*.ts`],
    rules: restrict([...engineBoundaries, ...storeBoundaries, noSiblingAdapters(adapter)], noElectronPackage),
  })),
  {
    // The hosts compose a server for a way of running it (CLI, browser mode, Electron's main): they
    // may wire adapters, never reach into the shell or the UI.
    files: ['hosts/**/*.ts', 'hosts/**/*.js'],
    rules: restrict([
      { regex: '(^|/)electron(/|$)', message: 'hosts/ runs without Electron too: electron/ imports hosts/, not the other way round.' },
      { regex: '(^|/)renderer(/|$)', message: 'hosts/ must not import renderer/: the renderer talks to the server over HTTP only.' },
      { regex: '(^|/)scripts/', message: 'hosts/ must not import scripts/.' },
    ], [{ name: 'electron', message: 'hosts/ runs in plain Node too: pass what you need in from electron/.' }]),
  },
  {
    // The API's shape, shared by the server, the simulator and the renderer: it depends on none of them.
    files: ['contract/**/*.ts'],
    rules: restrict([{ regex: '^\\.\\./(?!common/)', message: 'contract/ imports only itself, common/ and npm packages.' }]),
  },
  {
    // The simulator is an HTTP client of any coordinator (ours or a real GitLab): it may know the
    // API's contract (types, schemas) and common/, never the server's internals.
    files: ['simulator/**/*.ts'],
    rules: restrict([
      { regex: '(^|/)(server|hosts)/', message: 'the simulator talks to a server over HTTP; import only contract/ (and common/).' },
      { regex: '(^|/)(electron|renderer|scripts|bench|test)(/|$)', message: 'the simulator depends only on contract/, common/ and npm packages.' },
    ], [{ name: 'electron', message: 'the simulator runs in plain Node.' }]),
  },
  {
    // Shared by server/, simulator/ and contract/, so it may depend on none of them.
    files: ['common/**/*.ts'],
    rules: restrict([{ regex: '^\\.\\./', message: 'common/ imports only itself and npm packages.' }]),
  },
  // The renderer's own folders are named like some of ours (views/simulator/): what is restricted is
  // a path that climbs out of renderer/ to the repository's top, as many ../ as the file is deep.
  ...['renderer/*', 'renderer/*/*', 'renderer/*/*/**'].map((glob, depth) => ({
    files: [`${glob}.ts`, `${glob}.tsx`],
    rules: restrict([
      { regex: `^(\\.\\./){${depth + 1}}(server|simulator|hosts|scripts|bench|test)/`, message: 'the renderer reaches the backend over HTTP; import only types from contract/ (and common/).' },
      { regex: `^(\\.\\./){${depth + 1}}electron/`, message: 'the renderer must not import electron/ code.' },
      { regex: `^(\\.\\./){${depth + 1}}contract/`, allowTypeImports: true, message: "the renderer imports only types from contract/: the schemas are the server's." },
    ], [{ name: 'electron', message: 'the renderer reaches native features through the preload bridge only.' }]),
  })),
  {
    // The specs share one browser context per worker (playwright.config.ts, reuseContext); the reset
    // Playwright leaves out (permissions, page listeners) lives in fixtures.ts's `test`. Types may
    // still come from Playwright.
    files: ['test/e2e/**/*.spec.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        { paths: [{ name: '@playwright/test', allowTypeImports: true, message: "import test and expect from './fixtures.ts': it resets what the shared context keeps between tests." }] },
      ],
    },
  },
);
