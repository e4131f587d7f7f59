#!/usr/bin/env bash
# 4 concurrent processes x 20 runs each on one cache file, alternating `fusor optimize` (stores a
# session image without a plan) and `fusor bench` (maps it, and adds the plan when it is missing).
# Each process cycles through 4 option sets (4 distinct keys), so writers race for the same
# entries and images, and readers map images while others replace them. Every run must succeed
# without a cache warning, and the cache must verify afterwards (every image section) with
# exactly the 4 entries and their 4 images.
#   concurrent.sh FUSOR MODEL WORKDIR
set -euo pipefail
fusor=$1 model=$2 work=$3
procs=${FUSOR_CACHE_PROCS:-4} runs=${FUSOR_CACHE_RUNS:-20}
rm -rf "$work"
mkdir -p "$work"
db=$work/cache.db
# Built-in passes only (--no-default-rules), so the test does not depend on the shipped rule files.
variants=("--level disabled" "--level basic --no-default-rules" "--level basic --no-default-rules --disable cse"
          "--level extended --no-default-rules")

worker() {
  local p=$1 i v rc
  for ((i = 0; i < runs; i++)); do
    v=${variants[$(((i + p) % ${#variants[@]}))]}
    if ((i % 2 == 0)); then
      cmd=(optimize "$model" -o "$work/out_$p.onnx")
    else
      cmd=(bench "$model" --runs 1 --warmup 0 --threads 1)
    fi
    # shellcheck disable=SC2086
    if ! "$fusor" "${cmd[@]}" --cache "$db" --json $v \
         >"$work/out_${p}_$i.json" 2>"$work/err_${p}_$i.txt"; then
      rc=$?
      echo "process $p run $i ($v) failed with exit $rc:"; cat "$work/err_${p}_$i.txt"
      return 1
    fi
  done
}

start=$(date +%s.%N)
pids=()
for ((p = 0; p < procs; p++)); do
  worker "$p" &
  pids+=($!)
done
failed=0
for pid in "${pids[@]}"; do
  wait "$pid" || failed=1
done
end=$(date +%s.%N)
[ "$failed" = 0 ] || { echo "FAIL: a run failed"; exit 1; }

# Only the cache's warnings count (bench also warns about the model's unset batch dimension).
if grep -l "warn.*cache" "$work"/err_*.txt >/dev/null 2>&1; then
  echo "FAIL: cache warnings:"; grep -h "warn.*cache" "$work"/err_*.txt | sort | uniq -c
  exit 1
fi
hits=$(grep -l '"cache": "hit"' "$work"/out_*.json | wc -l)
misses=$(grep -l '"cache": "miss"' "$work"/out_*.json | wc -l)
total=$((procs * runs))
[ $((hits + misses)) = "$total" ] || { echo "FAIL: $hits hits + $misses misses != $total runs"; exit 1; }

verify=$("$fusor" cache verify --cache "$db" --json)
echo "$verify" | grep -q '"ok": true' || { echo "FAIL: verify: $verify"; exit 1; }
entries=$("$fusor" cache stats --cache "$db" --json | sed -n 's/.*"entries": \([0-9]*\).*/\1/p')
[ "$entries" = "${#variants[@]}" ] || { echo "FAIL: $entries entries, expected ${#variants[@]}"; exit 1; }
[ -z "$(ls "$work" | grep corrupt || true)" ] || { echo "FAIL: a file was moved aside"; exit 1; }
images=$(echo "$verify" | sed -n 's/.*"images": \([0-9]*\).*/\1/p')
[ "$images" = "${#variants[@]}" ] || { echo "FAIL: $images images verified, expected ${#variants[@]}"; exit 1; }
files=$(ls "$db.images" | grep -c '\.fimg$' || true)
[ "$files" = "${#variants[@]}" ] || { echo "FAIL: $files image files, expected ${#variants[@]}"; ls -la "$db.images"; exit 1; }

awk -v s="$start" -v e="$end" -v p="$procs" -v r="$runs" -v h="$hits" -v m="$misses" 'BEGIN {
  printf "PASS: %d processes x %d optimize/bench runs: %d hits, %d misses, %.2f s wall (%.0f ms per run per process)\n",
         p, r, h, m, e - s, (e - s) * 1000 / r }'
