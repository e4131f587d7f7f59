#!/usr/bin/env bash
# Fuzzes fusor's entry points with libFuzzer under AddressSanitizer + UndefinedBehaviorSanitizer
# (tests/fuzz/README.md). Builds the fuzz targets with clang 14 into DIR (-DFUSOR_FUZZ=ON,
# -fsanitize=address,undefined, -O1 -g1) unless --no-build, then runs each target for SECONDS
# from the seeds in the repository plus the corpus grown by earlier runs (DIR/fuzz-corpus/TARGET,
# outside the repository).
#   scripts/fuzz.sh [--time SECONDS] [--jobs N] [--no-build] [TARGET...]
# TARGET: model rules provider tensor (default: all four). --time: per target (default 600).
# --jobs: targets fuzzed at once (default 1). Findings (crash-*, oom-*, timeout-*, leak-*) are
# written to DIR/fuzz-findings/TARGET; the script exits 1 when there is any. Each target's
# executions and last status line (cov: edges, ft: features, corp: corpus) are printed at the end.
# Environment: FUSOR_FUZZ_DIR (DIR, default build-fuzz), FUSOR_JOBS (build jobs, default 2).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"
time_s=600
jobs=1
build=1
targets=()
while [ $# -gt 0 ]; do
  case "$1" in
    --time) time_s=$2; shift 2 ;;
    --jobs) jobs=$2; shift 2 ;;
    --no-build) build=0; shift ;;
    model|rules|provider|tensor) targets+=("$1"); shift ;;
    *) echo "fuzz.sh: unknown argument '$1' (see the header of scripts/fuzz.sh)" >&2; exit 1 ;;
  esac
done
[ ${#targets[@]} -gt 0 ] || targets=(model rules provider tensor)
dir=${FUSOR_FUZZ_DIR:-build-fuzz}

if [ "$build" = 1 ]; then
  command -v clang++-14 >/dev/null || { echo "fuzz.sh: needs clang++-14 (scripts/setup.sh installs it)" >&2; exit 1; }
  export CCACHE_BASEDIR="$here" CCACHE_NOHASHDIR=true
  cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=Sanitize -DCMAKE_CXX_FLAGS_SANITIZE="-O1 -g1" \
    -DCMAKE_CXX_COMPILER=clang++-14 -DFUSOR_SANITIZE=address,undefined -DFUSOR_FUZZ=ON \
    -DFUSOR_BUILD_BENCH=OFF -DFUSOR_BUILD_PYTHON=OFF \
    $(command -v ccache >/dev/null && echo -DCMAKE_CXX_COMPILER_LAUNCHER=ccache) >/dev/null
  cmake --build "$dir" -j"${FUSOR_JOBS:-2}" --target "${targets[@]/#/fuzz_}"
fi

# Seeds per target: the committed corpora, the files the project ships, and every regression
# (the same list as tests/CMakeLists.d/fuzz.cmake's FuzzReplay tests).
seeds() {
  case "$1" in
    model) echo tests/fuzz/corpus/model tests/fuzz/regressions ;;
    rules) echo rules examples/custom_fusion tests/dsl/golden tests/fuzz/regressions ;;
    provider) echo providers tests/dsl/golden tests/fuzz/regressions ;;
    tensor) echo tests/fuzz/corpus/tensor tests/fuzz/regressions ;;
  esac
}

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:allocator_may_return_null=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}
status=0
run_one() {
  local t=$1
  local corpus="$dir/fuzz-corpus/$t" findings="$dir/fuzz-findings/$t" log="$dir/fuzz-$t.log"
  mkdir -p "$corpus" "$findings"
  # -timeout: one input taking over 20 s is a finding (a hang); -rss_limit_mb: 2.5 GB.
  # shellcheck disable=SC2046
  "$dir/bin/fuzz_$t" "$corpus" $(seeds "$t") -max_total_time="$time_s" -timeout=20 -rss_limit_mb=2560 \
    -max_len=65536 -print_final_stats=1 -artifact_prefix="$findings/" >"$log" 2>&1
}
pids=()
for t in "${targets[@]}"; do
  run_one "$t" &
  pids+=($!)
  while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n || true; done
done
for p in "${pids[@]}"; do wait "$p" || true; done

for t in "${targets[@]}"; do
  log="$dir/fuzz-$t.log"
  last=$(grep -E '^#[0-9]+' "$log" | tail -1 || true)
  execs=$(grep -E '^stat::number_of_executed_units' "$log" | tail -1 | awk '{print $2}' || true)
  echo "fuzz_$t: ${execs:-?} executions in ${time_s} s; last status: ${last:-none}"
  if ls "$dir/fuzz-findings/$t"/* >/dev/null 2>&1 || grep -qE 'ERROR: (AddressSanitizer|libFuzzer|LeakSanitizer)|runtime error:|fuzz: (internal error|undocumented)' "$log"; then
    echo "fuzz_$t: FINDINGS (see $log and $dir/fuzz-findings/$t)"
    status=1
  fi
done
exit $status
