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

# The four static steps read the sources and write only their own log (and vite, dist/renderer), so
# they run at the same time: tsc and eslint are single-threaded, and one after the other they left a
# core idle for their whole length. Their results are reported in this order once all have ended.
begin() { # name command... : a check that counts as one test, started in the background
  local name=$1; shift
  ( "$@" > "$out/$name.log" 2>&1; echo $? > "$out/$name.rc" ) &
}
end() { # name : counts a check begin started, once it has ended
  if [ "$(cat "$out/$1.rc" 2>/dev/null)" = 0 ]; then count "$1" 1 0; else cat "$out/$1.log"; count "$1" 0 1; status=1; fi
}
begin typecheck npx tsc -p . --noEmit
begin lint npx eslint .
# Import cycles, type-only imports included (lazy view imports are not edges: they load on demand).
begin cycles npm run -s cycles
# The UI is built before the suites: the packaging check and the browser tests use dist/renderer.
begin build-ui npx vite build
wait
for name in typecheck lint cycles build-ui; do end "$name"; done

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
