#!/usr/bin/env bash
# The test command: type check, lint, every vitest suite, then the Playwright suites in Debian's
# Chromium. Ends with one line "N passed, M failed" summing all of them.
set -uo pipefail
cd "$(dirname "$0")/.."
export NO_COLOR=1 FORCE_COLOR=0
out=.tmp/test-results; rm -rf "$out"; mkdir -p "$out"
status=0; passed=0; failed=0
count() { # name passed failed
  echo "[$1] $2 passed, $3 failed"; passed=$((passed + $2)); failed=$((failed + $3))
}
step() { # name command... : a check that counts as one test
  local name=$1; shift
  if "$@" > "$out/$name.log" 2>&1; then count "$name" 1 0; else cat "$out/$name.log"; count "$name" 0 1; status=1; fi
}

step typecheck npx tsc -p . --noEmit
step lint npx eslint .
# Import cycles, type-only imports included (lazy view imports are not edges: they load on demand).
step cycles npm run -s cycles
# The UI is built first: the packaging check and the browser tests use dist/renderer.
step build-ui npx vite build

npx vitest run --reporter=default --reporter=json --outputFile.json="$out/vitest.json" || status=1
if [ -f "$out/vitest.json" ]; then
  read -r p f < <(node -e 'const r=require(process.argv[1]);console.log(r.numPassedTests, r.numFailedTests + (r.numRuntimeErrors||0))' "$PWD/$out/vitest.json")
  count vitest "$p" "$f"
else count vitest 0 1; status=1; fi

if ls test/e2e/*.spec.ts >/dev/null 2>&1; then
  PLAYWRIGHT_JSON_OUTPUT_NAME="$out/playwright.json" npx playwright test --reporter=list,json || status=1
  if [ -f "$out/playwright.json" ]; then
    read -r p f < <(node -e 'const s=require(process.argv[1]).stats;console.log(s.expected + s.flaky, s.unexpected)' "$PWD/$out/playwright.json")
    count playwright "$p" "$f"
  else count playwright 0 1; status=1; fi
fi

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ] || status=1
exit $status
