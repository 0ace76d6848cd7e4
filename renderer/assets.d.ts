// Vite bundles the stylesheets a component imports for its side effect. TypeScript 6+ checks that
// every side-effect import resolves (noUncheckedSideEffectImports), and a .css file has no types.
declare module '*.css';
