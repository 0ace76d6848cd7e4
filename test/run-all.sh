#!/usr/bin/env bash
# The test command: type check, lint, import cycles, the UI build, every vitest suite and the
# Playwright suites in Debian's Chromium. Ends with one line "N passed, M failed" summing all of them.
#
# The static checks run beside everything else, and vitest beside Playwright: the Playwright specs
# mostly wait (for the browser, for samples, for the UI), so run after vitest they left the CPU half
# idle for minutes. Only the UI build goes first (the packaging check and the browser tests use it).
# On a machine already busy (half its cores or more busy, measured over a second before they start)
# the two suites run one after the other, as before: sharing what little CPU is left, vitest's CPU-bound files (model, crash, fleet,
# hostile) ran past their timeouts. TEST_SUITES=together|serial chooses. vitest's output streams;
# the other logs are printed once all have ended, then every result in one fixed order.
set -uo pipefail
cd "$(dirname "$0")/.."
export NO_COLOR=1 FORCE_COLOR=0
out=.tmp/test-results; rm -rf "$out"; mkdir -p "$out"
# tsc's and eslint's caches: a rerun checks again only what changed (tsc tracks what each file's
# types depend on; eslint's rules here read one file at a time). A fresh checkout runs them in full.
cache=node_modules/.cache/jobscope-test; mkdir -p "$cache"
status=0; passed=0; failed=0
count() { # name passed failed
  echo "[$1] $2 passed, $3 failed"; passed=$((passed + $2)); failed=$((failed + $3))
}
begin() { # name command... : a check that counts as one test, started in the background
  local name=$1; shift
  ( "$@" > "$out/$name.log" 2>&1; echo $? > "$out/$name.rc" ) &
}
end() { # name : counts a check begin started, once it has ended
  if [ "$(cat "$out/$1.rc" 2>/dev/null)" = 0 ]; then count "$1" 1 0; else cat "$out/$1.log"; count "$1" 0 1; status=1; fi
}

# How busy the CPUs are before this run adds anything, in cores, over one second of /proc/stat (the
# load average lags by minutes: right after `npm ci` it still read above 2 on an idle CI machine).
# Read first: once the static checks below start, every core is busy with this run's own work.
busy_cores() {
  local a b
  a=$(head -1 /proc/stat); sleep 1; b=$(head -1 /proc/stat)
  awk -v a="$a" -v b="$b" -v cores="$(nproc)" 'BEGIN {
    split(a, x); split(b, y); total = 0; for (i = 2; i <= 9; i++) total += y[i] - x[i]
    idle = (y[5] + y[6]) - (x[5] + x[6]); printf "%.1f", (total > 0 ? cores * (1 - idle / total) : 0) }'
}
together=${TEST_SUITES:-}
busy=$(busy_cores)
begin typecheck npx tsc -p . --noEmit --incremental --tsBuildInfoFile "$cache/tsc.tsbuildinfo"
begin lint npx eslint --cache --cache-strategy content --cache-location "$cache/eslint" .
# Import cycles, type-only imports included (lazy view imports are not edges: they load on demand).
begin cycles npm run -s cycles
# The suites use the built UI (the packaging check, the browser tests): it is built before they start.
npx vite build > "$out/build-ui.log" 2>&1; echo $? > "$out/build-ui.rc"

if [ -z "$together" ]; then
  together=$(awk -v busy="$busy" -v cores="$(nproc)" 'BEGIN { print (busy < cores / 2) ? "together" : "serial" }')
fi
echo "[suites] vitest and Playwright: $together ($busy of $(nproc) cores busy before this run; load average $(cut -d' ' -f1-3 /proc/loadavg))"

e2e=0
playwright() {
  PLAYWRIGHT_JSON_OUTPUT_NAME="$out/playwright.json" npx playwright test --reporter=list,json > "$out/playwright.log" 2>&1
  echo $? > "$out/playwright.rc"
}
if ls test/e2e/*.spec.ts >/dev/null 2>&1; then e2e=1; fi
[ "$e2e" = 1 ] && [ "$together" = together ] && playwright &

npx vitest run --reporter=default --reporter=json --outputFile.json="$out/vitest.json" 2>&1 | tee "$out/vitest.log" || status=1
[ "$e2e" = 1 ] && [ "$together" != together ] && playwright
wait # the static checks and Playwright
[ "$e2e" = 1 ] && cat "$out/playwright.log"

for name in typecheck lint cycles build-ui; do end "$name"; done
if [ -f "$out/vitest.json" ]; then
  read -r p f < <(node -e 'const r=require(process.argv[1]);console.log(r.numPassedTests, r.numFailedTests + (r.numRuntimeErrors||0))' "$PWD/$out/vitest.json")
  count vitest "$p" "$f"
else count vitest 0 1; status=1; fi
if [ "$e2e" = 1 ]; then
  [ "$(cat "$out/playwright.rc" 2>/dev/null)" = 0 ] || status=1
  if [ -f "$out/playwright.json" ]; then
    read -r p f < <(node -e 'const s=require(process.argv[1]).stats;console.log(s.expected + s.flaky, s.unexpected)' "$PWD/$out/playwright.json")
    count playwright "$p" "$f"
  else count playwright 0 1; status=1; fi
fi

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ] || status=1
exit $status
