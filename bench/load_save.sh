#!/usr/bin/env bash
# Load + save of a large model: `fusor optimize --level disabled` against onnx.load + onnx.save in
# Debian's Python, alternated in the same run so both see the same machine state.
#   bench/load_save.sh [MODEL.onnx] [RUNS]
# Default model: convnext_tiny (~110 MB) from scripts/make_test_models.py; default 5 runs each.
# Prints wall time (median, min) and peak RSS (median, from /usr/bin/time) per tool.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
models=${FUSOR_MODELS:-$HOME/.cache/fusor/models}
model=${1:-$models/convnext_tiny.onnx}
runs=${2:-5}
fusor=${FUSOR_BIN:-$here/build/bin/fusor}
py=/usr/bin/python3

[ -f "$model" ] || { echo "no $model: run /usr/bin/python3 scripts/make_test_models.py convnext_tiny" >&2; exit 1; }
[ -x "$fusor" ] || { echo "no $fusor: build first (scripts/setup.sh)" >&2; exit 1; }
[ -x /usr/bin/time ] || { echo "needs /usr/bin/time (Debian package 'time')" >&2; exit 1; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# run NAME CMD...: appends "wall_ms rss_kb" to $tmp/NAME
run() {
  local name=$1; shift
  local t0 t1
  t0=$(date +%s%N)
  /usr/bin/time -f "%M" -o "$tmp/rss" "$@" >/dev/null
  t1=$(date +%s%N)
  echo "$(( (t1 - t0) / 1000000 )) $(cat "$tmp/rss")" >> "$tmp/$name"
}

echo "model: $model ($(du -h "$model" | cut -f1)), $runs runs each, alternated"
# One warm-up of each so both read the file from the page cache.
"$fusor" optimize "$model" -o "$tmp/fusor.onnx" --level disabled >/dev/null
"$py" -c 'import onnx,sys; onnx.save(onnx.load(sys.argv[1]), sys.argv[2])' "$model" "$tmp/py.onnx"
for i in $(seq "$runs"); do
  run fusor "$fusor" optimize "$model" -o "$tmp/fusor.onnx" --level disabled
  run python "$py" -c 'import onnx,sys; onnx.save(onnx.load(sys.argv[1]), sys.argv[2])' "$model" "$tmp/py.onnx"
done

stats() {  # prints "median_ms min_ms median_rss_mb max_rss_mb"
  local f=$1
  local ms rss
  ms=$(cut -d' ' -f1 "$f" | sort -n)
  rss=$(cut -d' ' -f2 "$f" | sort -n)
  local n; n=$(wc -l < "$f")
  local mid=$(( (n + 1) / 2 ))
  printf "%8s %8s %10.1f %10.1f" "$(echo "$ms" | sed -n "${mid}p")" "$(echo "$ms" | head -1)" \
    "$(echo "$rss" | sed -n "${mid}p" | awk '{print $1/1024}')" "$(echo "$rss" | tail -1 | awk '{print $1/1024}')"
}
printf "%-28s %8s %8s %10s %10s\n" "tool" "med ms" "min ms" "med RSS MB" "max RSS MB"
printf "%-28s %s\n" "fusor optimize -l disabled" "$(stats "$tmp/fusor")"
printf "%-28s %s\n" "python onnx.load+onnx.save" "$(stats "$tmp/python")"
cmp -s "$tmp/fusor.onnx" "$tmp/py.onnx" && echo "outputs: byte-identical" || echo "outputs: differ in bytes (fusor's own serialization)"
"$fusor" optimize "$model" -o "$tmp/fusor.onnx" --level disabled --json | grep -E '"(load|save)_ms"' | tr -d ' ,' | tr '\n' ' '
echo "(fusor's own phase timings)"
