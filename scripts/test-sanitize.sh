#!/usr/bin/env bash
# test-sanitize.sh (make test-sanitize): the tests under the sanitizers, in builds of their own at
# -Og with line tables (cmake/bsw.cmake, BSW_SANITIZE; -Og compiles an instrumented
# operator/adapters/kube/client.cc in 10.5 s, -O1 in 18.3 s):
#   build-asan  AddressSanitizer (with LeakSanitizer) and UndefinedBehaviorSanitizer: every label
#               that needs no cluster (unit, e2e, trainer, dashboard)
#   build-tsan  ThreadSanitizer: the threaded adapters, that is every test of the Kubernetes
#               client's unit tests (the informer, the work queue, leader election among them) and
#               of the observability tests (the health and metrics servers), the only tests built
# Any finding fails. Every process writes its reports under <build>/sanitizer-logs, trial processes
# included (a sweep would count a trial ended by a finding as a failed trial, not fail the test),
# and a report there fails the run once ctest is done.
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=${JOBS:-$(nproc)}

# build BUILD_DIR SANITIZERS [TARGET...]: configures once, then builds the targets (default all).
build() {
  local dir=$1 sanitizers=$2
  shift 2
  echo "== stage ${dir#build-}-build $(date +%s)"  # for scripts/test-stages.py
  [ -f "$dir/build.ninja" ] || cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-Og -g1 -DNDEBUG" -DBSW_SANITIZE="$sanitizers" \
    -DCMAKE_CXX_COMPILER_LAUNCHER=ccache
  cmake --build "$dir" -j "$jobs" ${1:+--target "$@"}
}

# run_tests BUILD_DIR CTEST_ARGS...: ctest, then the reports under BUILD_DIR/sanitizer-logs.
run_tests() {
  local dir=$1 rc=0 report
  shift
  echo "== stage ${dir#build-}-tests $(date +%s)"
  rm -rf "$dir/sanitizer-logs"
  mkdir -p "$dir/sanitizer-logs"
  ctest --test-dir "$dir" --output-on-failure -j "$jobs" "$@" || rc=$?
  for report in "$dir"/sanitizer-logs/*; do
    [ -e "$report" ] || continue
    echo "== $report"
    cat "$report"
    rc=1
  done
  return "$rc"
}

logs=$PWD/build-asan/sanitizer-logs
# halt_on_error: the first finding ends the process (UBSan also needs -fno-sanitize-recover).
# detect_leaks: a leak is a finding too (at exit; processes killed by a signal are not checked).
export ASAN_OPTIONS="halt_on_error=1:detect_leaks=1:check_initialization_order=1:log_path=$logs/asan"
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1:log_path=$logs/ubsan"
build build-asan address,undefined
asan_rc=0
run_tests build-asan -L '^(unit|e2e|trainer|dashboard)$' || asan_rc=$?

logs=$PWD/build-tsan/sanitizer-logs
export TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1:log_path=$logs/tsan:suppressions=$PWD/tests/sanitizer/tsan.supp"
build build-tsan thread kube_client_unit_test observability_test
tsan_rc=0
run_tests build-tsan -L '^unit$' || tsan_rc=$?

[ "$asan_rc" -eq 0 ] && [ "$tsan_rc" -eq 0 ]
