#!/usr/bin/env bash
# The test command: type check, lint, import cycles, the UI build, every vitest suite and the
# Playwright suites in Debian's Chromium. Ends with one line "N passed, M failed" summing all of them.
#
# The static checks run beside the suites; only the UI build goes first (the packaging check and the
# browser tests use it). vitest and Playwright run side by side, vitest at a lower CPU priority
# (TEST_SUITES=overlap, the default): the browser suite mostly waits (quiet, alone: 219 s wall for
# 139 s of CPU), and niced, vitest takes the CPU it leaves idle, on three workers because its files
# wait too (child processes, clusters starting). Overlapped on three workers with the temp dirs on
# /dev/shm was the fastest schedule measured (docs/benchmark-bounds.md, "npm test"); TEST_SUITES=serial
# and =together (same priority) stay for comparison. vitest's output streams; the other logs are printed once all have ended, then
# every result in one fixed order.
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

together=${TEST_SUITES:-overlap}
# Test data dirs, clusters and sockets in memory when /dev/shm is a writable tmpfs (a kill -9 test
# needs no disk: the page cache outlives the process; the disk-full tests mount their own tmpfs).
if [ -z "${TMPDIR:-}" ] && [ -d /dev/shm ] && [ -w /dev/shm ]; then export TMPDIR=/dev/shm; fi
[ "$together" = overlap ] && : "${VITEST_WORKERS:=3}"
# `npm run typecheck`: TypeScript 7 (the native compiler, the typescript7 alias), single-threaded: its
# default four checkers repeat work (about twice the CPU) and this suite is CPU-bound. Cold: ~8 core-s
# against TypeScript 5.9's ~42. typescript (5.9) stays for typescript-eslint, dpdm and editors.
begin typecheck npm run -s typecheck -- --incremental --tsBuildInfoFile "$cache/tsc7.tsbuildinfo"
begin lint npx eslint --cache --cache-strategy content --cache-location "$cache/eslint" .
# Import cycles, type-only imports included (lazy view imports are not edges: they load on demand).
begin cycles npm run -s cycles
# The suites use the built UI (the packaging check, the browser tests): it is built before they start.
npx vite build > "$out/build-ui.log" 2>&1; echo $? > "$out/build-ui.rc"

echo "[suites] vitest and Playwright: $together (TEST_SUITES; vitest workers ${VITEST_WORKERS:-2}; TMPDIR ${TMPDIR:-/tmp}; load average $(cut -d' ' -f1-3 /proc/loadavg), $(nproc) cores)"

e2e=0
playwright() {
  PLAYWRIGHT_JSON_OUTPUT_NAME="$out/playwright.json" npx playwright test --reporter=list,json > "$out/playwright.log" 2>&1
  echo $? > "$out/playwright.rc"
}
if ls test/e2e/*.spec.ts >/dev/null 2>&1; then e2e=1; fi
nice=()
[ "$together" = overlap ] && nice=(nice -n 10)
[ "$e2e" = 1 ] && [ "$together" != serial ] && playwright &

"${nice[@]}" npx vitest run ${VITEST_WORKERS:+--maxWorkers=$VITEST_WORKERS} --reporter=default --reporter=json --outputFile.json="$out/vitest.json" 2>&1 | tee "$out/vitest.log" || status=1
[ "$e2e" = 1 ] && [ "$together" = serial ] && playwright
wait # the static checks and Playwright
[ "$e2e" = 1 ] && cat "$out/playwright.log"

for name in typecheck lint cycles build-ui; do end "$name"; done
if [ -f "$out/vitest.json" ]; then
  # A file whose hook failed has no failed test, only tests it never ran (reported as skipped):
  # those count as failed, at least one a file, so the line says what the exit status says.
  read -r p f < <(node -e 'const r=require(process.argv[1]);const unrun=r.testResults.filter((t)=>t.status==="failed"&&!t.assertionResults.some((a)=>a.status==="failed")).reduce((n,t)=>n+Math.max(1,t.assertionResults.filter((a)=>a.status!=="passed").length),0);console.log(r.numPassedTests, r.numFailedTests + (r.numRuntimeErrors||0) + unrun)' "$PWD/$out/vitest.json")
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
