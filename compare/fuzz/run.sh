#!/usr/bin/env bash
# Runs the libFuzzer targets built by `make fuzz-build`.
#   compare/fuzz/run.sh smoke RUNS FUZZER...    `make test`: deterministic (-seed=1, RUNS runs,
#       a fresh corpus each time), two targets at a time (each is one process on one core);
#       one line per target in the order given; fails when any target found something.
#   compare/fuzz/run.sh long SECONDS FUZZER...  `make fuzz`: SECONDS per target, one after the
#       other, corpus kept in target/fuzz/corpus/, findings in target/fuzz/artifacts/.
# Seeds are the committed fixtures: the logs, or for the side readers' targets (`*_readers`,
# `*-readers`) the generator's `.MTA`, `.wevtcache` and PE files. FUZZ_FLAGS holds libFuzzer's
# limits (the Makefile says why).
set -euo pipefail
mode=$1 amount=$2; shift 2
log_seeds=(shared-fixtures/synthetic shared-fixtures/damaged shared-fixtures/regressions)
reader_seeds=(shared-fixtures/mta shared-fixtures/wevt)
seeds_of() { # FUZZER: its seed directories, in `seeds`
  case "$(basename "$1")" in
    *readers) seeds=("${reader_seeds[@]}") ;;
    *) seeds=("${log_seeds[@]}") ;;
  esac
}
flags=(${FUZZ_FLAGS:--max_len=200000 -rss_limit_mb=1024 -timeout=10})

smoke_one() { # FUZZER DIR: its result line in DIR/result
  local fuzzer=$1 dir=$2 name seeds
  name=$(basename "$fuzzer")
  seeds_of "$fuzzer"
  if "$fuzzer" "$dir/corpus" "${seeds[@]}" -artifact_prefix="$dir/" "${flags[@]}" -seed=1 \
      -runs="$amount" > "$dir/log" 2>&1; then
    echo "fuzz-smoke $name: $(grep -E '^Done' "$dir/log")" > "$dir/result"
  else
    { echo "fuzz-smoke $name: FAILED"; grep -E 'panic|ERROR|SUMMARY|Test unit' "$dir/log" | head -5
    } > "$dir/result"
    return 1
  fi
}

case "$mode" in
  smoke)
    work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
    i=0
    for fuzzer in "$@"; do
      # At most two at once.
      while [ "$(jobs -rp | wc -l)" -ge 2 ]; do wait -n || true; done
      mkdir -p "$work/$i/corpus"
      smoke_one "$fuzzer" "$work/$i" &
      i=$((i + 1))
    done
    wait || true
    status=0
    for ((j = 0; j < i; j++)); do
      cat "$work/$j/result" 2>/dev/null || { echo "fuzz-smoke: target $j gave no result"; status=1; }
      grep -q FAILED "$work/$j/result" 2>/dev/null && status=1
    done
    exit $status ;;
  long)
    for fuzzer in "$@"; do
      name=$(basename "$fuzzer")
      seeds_of "$fuzzer"
      mkdir -p "target/fuzz/corpus/$name" "target/fuzz/artifacts/$name"
      echo "==> $name for ${amount}s"
      "$fuzzer" "target/fuzz/corpus/$name" "${seeds[@]}" \
        -artifact_prefix="target/fuzz/artifacts/$name/" "${flags[@]}" -max_total_time="$amount" -print_final_stats=1 2>&1 \
        | grep -E '^(Done|#[0-9]+ *DONE|SUMMARY|artifact|==)|panic|Test unit' || true
      [ -z "$(ls "target/fuzz/artifacts/$name")" ] \
        || { echo "fuzz: findings in target/fuzz/artifacts/$name"; exit 1; }
    done ;;
  *) echo "usage: compare/fuzz/run.sh smoke RUNS FUZZER... | long SECONDS FUZZER..." >&2; exit 2 ;;
esac
