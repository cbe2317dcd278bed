#!/usr/bin/env bash
# Compares evtx-zig with the reference evtx_dump 0.15.1 on every sample file, byte for
# byte, in several output modes. Exits non-zero on any difference and prints the first
# differing record. Skips (exit 0) when the samples or the reference binary are missing.
#
# Usage: zig/tests/reference_parity.sh [ZIG_BIN] [REFERENCE_BIN] [SAMPLES_DIR]
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
zig_bin=${1:-$root/zig-out/bin/evtx-zig}
ref_bin=${2:-$root/target/reference/bin/evtx_dump}
samples=${3:-/work/shared/evtx-samples}

if [ ! -d "$samples" ]; then echo "reference_parity: skipped (no samples at $samples)"; exit 0; fi
if [ ! -x "$ref_bin" ]; then echo "reference_parity: skipped (no reference at $ref_bin)"; exit 0; fi
if [ ! -x "$zig_bin" ]; then echo "reference_parity: $zig_bin not built" >&2; exit 1; fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

modes=(
  "-o jsonl"
  "-o xml"
  "-o xml --no-indent"
  "-o json"
  "-o jsonl --separate-json-attributes"
  "-o jsonl --validate-checksums"
  "-o xml --validate-checksums"
)

failures=0
checks=0
for f in "$samples"/*.evtx; do
  for mode in "${modes[@]}"; do
    checks=$((checks + 1))
    # shellcheck disable=SC2086
    "$ref_bin" -t 1 $mode "$f" >"$tmp/ref" 2>/dev/null
    # shellcheck disable=SC2086
    "$zig_bin" -t 1 $mode "$f" >"$tmp/zig" 2>"$tmp/zig.err"
    if ! cmp -s "$tmp/ref" "$tmp/zig"; then
      failures=$((failures + 1))
      echo "DIFF: $(basename "$f") [$mode]"
      # First differing record: split on record boundaries and show a short diff.
      diff <(tr '\n' '\n' <"$tmp/ref") "$tmp/zig" | head -8 | cut -c1-400
    fi
  done
done
echo "reference_parity: $((checks - failures))/$checks file x mode combinations identical"
[ "$failures" -eq 0 ]
