// Lint: typescript-eslint's recommended rules everywhere, React's hooks rules in the renderer, and
// the direction of dependence. server/ is the engine every host runs; it must never reach into
// electron/ or renderer/, nor load Electron (which would try to download its binary in plain Node).
import tseslint from 'typescript-eslint';
import reactHooks from 'eslint-plugin-react-hooks';

// The engine's boundaries, shared by the rule for all of server/ and the stricter one outside store/
// (a later block's no-restricted-imports replaces an earlier one's for the files both match).
const engineNoElectron = [{ name: 'electron', message: 'server/ runs outside Electron too: pass what you need in from electron/.' }];
const engineBoundaries = [
  { group: ['**/electron/**', '**/electron'], message: 'server/ must not import electron/: the dependence goes electron/ → server/.' },
  { group: ['**/renderer/**', '**/renderer'], message: 'server/ must not import renderer/: the renderer talks to it over HTTP only.' },
  { group: ['**/scripts/**'], message: 'server/ must not import scripts/: dev tooling (vite, Electron binaries) stays out of the engine.' },
];

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
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: engineNoElectron,
          patterns: engineBoundaries,
        },
      ],
    },
  },
  {
    // Outside store/, server code reaches storage through the ports (store/index.ts, ports.ts,
    // monitor-ports.ts, jobs/backend.ts): no adapter class, no database handle. Types of stored
    // records (Build, Runner…) may still be imported from the adapters' modules.
    files: ['server/**/*.ts'],
    ignores: ['server/store/**'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: engineNoElectron,
          patterns: [
            ...engineBoundaries,
            {
              regex: '(^|/)store/(db|sqlite-[^/]+|monitor-(alerts|connections|history|store)|builds|runners|projects|users|secrets|traces|artifacts|artifact-listings)\\.ts$',
              allowTypeImports: true,
              message: 'outside server/store/, storage is reached through the ports (store/index.ts, ports.ts, monitor-ports.ts): import only types from an adapter or the database module.',
            },
          ],
        },
      ],
    },
  },
  {
    // The simulator is an HTTP client of any coordinator (ours or a real GitLab): it may know the
    // server's contract (types, schemas) and common/, never the server's internals.
    files: ['simulator/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: [{ name: 'electron', message: 'the simulator runs in plain Node.' }],
          patterns: [
            { regex: '(^|/)server/(?!contract/)', message: 'the simulator talks to a server over HTTP; import only contract/ (and common/).' },
            { regex: '(^|/)(electron|renderer|scripts|bench|test)(/|$)', message: 'the simulator depends only on contract/, common/ and npm packages.' },
          ],
        },
      ],
    },
  },
  {
    // Shared by server/ and simulator/, so it may depend on neither.
    files: ['common/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', { patterns: [{ regex: '^\\.\\./', message: 'common/ imports only itself and npm packages.' }] }],
    },
  },
  {
    files: ['renderer/**/*.ts', 'renderer/**/*.tsx'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: [{ name: 'electron', message: 'the renderer reaches native features through the preload bridge only.' }],
          patterns: [
            // A regex, not a glob: gitignore-style globs cannot re-include contract/ under an excluded server/.
            { regex: '(^|/)server/(?!contract/)', message: 'the renderer reaches the backend over HTTP; import only types from contract/.' },
            { group: ['**/electron/**'], message: 'the renderer must not import electron/ code.' },
          ],
        },
      ],
    },
  },
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
