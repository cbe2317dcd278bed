#!/usr/bin/env bash
# Compares evtx-zig with the reference evtx_dump 0.15.1, byte for byte, on every sample
# file and every shared fixture, in several output modes; the number of error lines on
# stderr must equal the reference's number of failures. Exits non-zero on any difference
# and prints the first differing lines. Skips (exit 0) when the reference binary is
# missing; the public samples are optional (only the committed fixtures are used then).
# damaged/unsupported-types.evtx is compared with its expected ".ours" outputs instead
# (shared-fixtures/README.md, "Where we differ from the reference"). A log cut inside its
# last chunk (shared-fixtures/README.md, "Record recovery") gives one `incomplete chunk`
# line the reference does not print and, with --recover-records, records it does not carve:
# those are allowed as additions, nothing else.
#
# Usage: zig/tests/reference_parity.sh [ZIG_BIN] [REFERENCE_BIN] [SAMPLES_DIR]
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
zig_bin=${1:-$root/zig-out/bin/evtx-zig}
ref_bin=${2:-$root/target/reference/bin/evtx_dump}
samples=${3:-/work/shared/evtx-samples}
fixtures=$root/shared-fixtures

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
  "-o jsonl --recover-records"
  "-o xml --recover-records"
  "-o json --separate-json-attributes --recover-records"
)

files=()
if [ -d "$samples" ]; then
  files+=("$samples"/*.evtx)
else
  echo "reference_parity: no samples at $samples; fixtures only"
fi
for f in "$fixtures"/synthetic/*.evtx "$fixtures"/damaged/*.evtx; do
  [ "$(basename "$f")" = unsupported-types.evtx ] || files+=("$f")
done

failures=0
checks=0
report() {
  failures=$((failures + 1))
  echo "DIFF: $1"
  diff "$2" "$3" | head -6 | cut -c1-300
}
for f in "${files[@]}"; do
  for mode in "${modes[@]}"; do
    checks=$((checks + 1))
    # shellcheck disable=SC2086
    "$ref_bin" -t 1 $mode "$f" >"$tmp/ref" 2>"$tmp/ref.err"
    # shellcheck disable=SC2086
    "$zig_bin" -t 1 $mode "$f" >"$tmp/zig" 2>"$tmp/zig.err"
    cut=$(grep -c ": incomplete chunk: [0-9]* bytes missing$" "$tmp/zig.err")
    if ! cmp -s "$tmp/ref" "$tmp/zig"; then
      # The records of a cut last chunk may only be added.
      if [ "$cut" = 0 ] || diff "$tmp/ref" "$tmp/zig" | grep -q '^<'; then
        report "$(basename "$f") [$mode]" "$tmp/ref" "$tmp/zig"
        continue
      fi
    fi
    ref_errors=$(grep -c "Failed to dump the next record" "$tmp/ref.err")
    zig_errors=$(($(grep -c "^error: " "$tmp/zig.err") - cut))
    if [ "$ref_errors" != "$zig_errors" ]; then
      failures=$((failures + 1))
      echo "DIFF: $(basename "$f") [$mode]: $zig_errors error lines, reference $ref_errors"
    fi
  done
done

# Our rendering of the four value types the reference fails on.
ours=$fixtures/damaged/unsupported-types.evtx
for pair in "jsonl:-o jsonl" "xml:-o xml" "sep.jsonl:-o jsonl --separate-json-attributes"; do
  checks=$((checks + 1))
  expected=$fixtures/expected/unsupported-types.ours.${pair%%:*}
  # shellcheck disable=SC2086
  "$zig_bin" -t 1 ${pair#*:} "$ours" >"$tmp/zig" 2>/dev/null
  cmp -s "$expected" "$tmp/zig" || report "unsupported-types.evtx [${pair#*:}]" "$expected" "$tmp/zig"
done

echo "reference_parity: $((checks - failures))/$checks file x mode combinations identical"
[ "$failures" -eq 0 ]
