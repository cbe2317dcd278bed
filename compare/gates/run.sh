#!/usr/bin/env bash
# Each gate is seen to fail: plants each corruption an audit of the gates found one passing
# in a stand-in engine (stand_in.py around the real CLI, passed as --rust/--zig), runs the gate,
# and checks it goes red with a difference (exit 1; exit 2, a usage or setup error, does not
# count). A control run with no corruption must stay green. Prints how many were caught.
# Besides the engines it plants a stale include/evtx.h (header-check), a GNU time that leaves
# no or an unreadable peak-RSS measurement (the mutation gate), and a C library whose pull API
# flips each record's `recovered` flag, output bytes unchanged (ABI parity, evtx-bench --parity).
# And an instruction baseline 5 % below the measurement (the instruction-count gate), and
# triage reports one count or one gap off (the triage gate, against its oracle).
#
#   compare/gates/run.sh EVTX_COMPARE REFERENCE EVTX_RS EVTX_ZIG
set -u -o pipefail

compare=$(realpath "$1") reference=$(realpath "$2") rust=$(realpath "$3") zig=$(realpath "$4")
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
fixtures=$(cd "$here/../../shared-fixtures" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# Only the inputs named below: no samples, whatever make test requires of the other gates.
unset EVTX_SAMPLES EVTX_REQUIRE_SAMPLES

# A wrapper per (engine, corruption), so evtx-compare can run it as a CLI.
stand_in() { # NAME REAL CORRUPTION
    local bin="$work/bin/$1-$3"
    mkdir -p "$work/bin"
    printf '#!/bin/sh\nexec python3 -S %q %q %q "$@"\n' "$here/stand_in.py" "$2" "$3" > "$bin"
    chmod +x "$bin"
    echo "$bin"
}

# A fixtures directory holding only FILE (and the known gaps, which name it or not).
inputs() { # FILE
    local dir="$work/fixtures-$(basename "$1" .evtx)"
    if [ ! -d "$dir" ]; then
        mkdir -p "$dir/damaged"
        cp "$fixtures/$1" "$dir/damaged/"
        cp -r "$fixtures/known-gaps" "$dir/"
    fi
    echo "$dir"
}

caught=0 planted=0 failed_controls=0
# expect GATE CORRUPTION FILE WHICH: WHICH is both (the same corruption in both engines, so
# rust-zig agrees and only the reference can tell), rust (only evtx-rs corrupted) or reference
# (the engines real, the reference's output changed).
expect() {
    local gate=$1 corruption=$2 file=$3 which=$4 dir rs=$rust zg=$zig ref=$reference status log
    dir=$(inputs "$file")
    case $which in
    reference) ref=$(stand_in reference "$reference" "$corruption") ;;
    both) rs=$(stand_in rust "$rust" "$corruption") zg=$(stand_in zig "$zig" "$corruption") ;;
    rust) rs=$(stand_in rust "$rust" "$corruption") ;;
    esac
    log="$work/$gate-$corruption-$which.log"
    case $gate in
    parity) "$compare" parity --reference "$ref" --rust "$rs" --zig "$zg" \
        --fixtures "$dir" --mode jsonl --mode xml --out "$work/out" > "$log" 2>&1 ;;
    # Every JSON flavour, with and without --recover-records (unused BinXML values).
    parity-json) "$compare" parity --reference "$ref" --rust "$rs" --zig "$zg" \
        --fixtures "$dir" --mode json --mode jsonl --mode jsonl-separate-attributes \
        --mode json-recover --mode jsonl-separate-attributes-recover --out "$work/out" \
        > "$log" 2>&1 ;;
    info) "$compare" parity --reference "$ref" --rust "$rs" --zig "$zg" \
        --fixtures "$dir" --mode info --out "$work/out" > "$log" 2>&1 ;;
    # The triage gate on the one log (no mutants): the JSON against the oracle, Rust == Zig.
    triage) python3 "$root/compare/triage_parity.py" --reference "$ref" --engine "$rs" \
        --engine "$zg" --fixtures "$dir" --no-mutants > "$log" 2>&1 ;;
    mutate) "$compare" mutate --reference "$ref" --rust "$rs" --zig "$zg" \
        --fixtures "$dir" --random 0 --max-mutants 3 --logs-only --out "$work/mutate" \
        > "$log" 2>&1 ;;
    esac
    status=$?
    verdict "$gate" "$corruption" "$which, $file" "$status" "$log"
}

# verdict GATE CORRUPTION WHAT STATUS LOG: a control (corruption none) must pass (exit 0), a
# planted corruption must fail with a difference (exit 1).
verdict() {
    local gate=$1 corruption=$2 what=$3 status=$4 log=$5
    if [ "$corruption" = none ]; then
        if [ $status -eq 0 ]; then
            echo "control $gate ($what): green"
        else
            echo "CONTROL $gate ($what): red without a corruption (exit $status):"
            tail -n 5 "$log"
            failed_controls=$((failed_controls + 1))
        fi
        return
    fi
    planted=$((planted + 1))
    if [ $status -eq 1 ]; then
        caught=$((caught + 1))
        echo "caught  $gate $corruption ($what): $(grep -m1 -E '^DIFF|^FAIL|^STALE|is stale|OUTPUT DIFFERS:|: FAIL ' "$log" | cut -c1-240)"
    else
        echo "MISSED  $gate $corruption ($what): exit $status"
        tail -n 5 "$log"
    fi
}

expect parity none damaged/unsupported-types.evtx both
expect parity none damaged/bad-records.evtx both
expect parity reverse-records damaged/bad-records.evtx both
expect parity junk-before-first-record damaged/bad-records.evtx both
expect parity jsonl-trailing-space damaged/bad-records.evtx both
expect parity exit-134 damaged/bad-records.evtx both
expect parity exit-134 damaged/bad-records.evtx rust
expect parity exit-134-at-t2 damaged/bad-records.evtx both
expect parity drop-error-line damaged/bad-records.evtx both
expect parity invent-error-lines damaged/bad-records.evtx both
expect parity drop-error-invent-another damaged/bad-records.evtx both
expect parity drop-error-line damaged/unsupported-types.evtx both
expect parity drop-error-invent-another damaged/unsupported-types.evtx both
expect parity xml-only-fail-record-2 damaged/unsupported-types.evtx both
expect mutate garbage synthetic/basic.evtx both
# Unused BinXML values in JSON (shared-fixtures/README.md): the engines render records the
# reference's JSON fails or drops, pinned exactly (known-gaps/unused-binxml.json). Dropping
# them (everywhere, or only with --separate-json-attributes, as before the rule), rendering one
# more, or a reference that prints one record fewer must each go red.
expect parity-json none damaged/unused-binxml-json.evtx both
expect parity-json json-drop-unused-binxml damaged/unused-binxml-json.evtx both
expect parity-json separate-drop-unused-binxml damaged/unused-binxml-json.evtx both
expect parity-json json-render-record-6 damaged/unused-binxml-json.evtx both
expect parity-json json-drop-record-7 damaged/unused-binxml-json.evtx reference
# triage: one count off in one engine (Rust != Zig, and the oracle), or in both alike (only the
# oracle can tell).
expect triage none triage/gaps-and-times.evtx both
expect triage triage-records-plus-one triage/gaps-and-times.evtx rust
expect triage triage-records-plus-one triage/gaps-and-times.evtx both
expect triage triage-gap-dropped triage/gaps-and-times.evtx both
expect info none synthetic/basic.evtx both
expect info none damaged/bad-file-magic.evtx both
expect info info-trailing-space synthetic/basic.evtx both
expect info info-exit-1 damaged/bad-records.evtx rust

# The header check: a copy of include/evtx.h (control), then one missing a field the ABI has.
header() { # CORRUPTION
    local header="$work/evtx-$1.h" log="$work/header-$1.log" status
    case $1 in
    none) cp "$root/include/evtx.h" "$header" ;;
    stale) grep -v 'uint8_t recover_records;' "$root/include/evtx.h" > "$header" ;;
    esac
    (cd "$root" && zig/zigw build header-check -Dheader-check-file="$header") > "$log" 2>&1
    status=$?
    # zig build exits 1 when a step fails; a missing cbindgen fails too, so name the verdict.
    [ $status -ne 0 ] && ! grep -q 'include/evtx.h is stale' "$log" && status=2
    verdict header-check "$1" "include/evtx.h" "$status" "$log"
}
header none
header stale

# The mutation gate's RSS measurement: GNU time replaced by one that writes no measurement, or
# an unreadable one. The real engines; a measurement that cannot be read must fail the gate.
rss() { # CORRUPTION
    local time="$work/bin/time-$1" log="$work/rss-$1.log" dir status
    mkdir -p "$work/bin"
    case $1 in
    none) time=/usr/bin/time ;;
    missing) printf '#!/bin/sh\nshift 4\nexec "$@"\n' > "$time" ;;
    unreadable) printf '#!/bin/sh\necho garbage > "$4"\nshift 4\nexec "$@"\n' > "$time" ;;
    esac
    [ "$1" = none ] || chmod +x "$time"
    dir=$(inputs synthetic/basic.evtx)
    "$compare" mutate --reference "$reference" --rust "$rust" --zig "$zig" --time "$time" \
        --fixtures "$dir" --random 0 --max-mutants 2 --logs-only --out "$work/mutate-rss" \
        > "$log" 2>&1
    status=$?
    verdict mutate-rss "$1" "GNU time, synthetic/basic.evtx" "$status" "$log"
}
rss none
rss missing
rss unreadable

# ABI parity of the per-record fields: libevtx_rs against the reference library, then the same
# library behind flip_recovered.c, on a fixture with carved records (make build made both).
abi() { # CORRUPTION
    local lib="$root/zig-out/lib/libevtx_rs.so" log="$work/abi-$1.log" status
    if [ "$1" = flip-recovered ]; then
        lib="$work/libflip.so"
        gcc -shared -fPIC -I "$root/include" -o "$lib" "$here/flip_recovered.c" -ldl
    fi
    EVTX_SHIM_LIB="$root/zig-out/lib/libevtx_rs.so" "$root/zig-out/bin/evtx-bench" --parity \
        --lib "$root/zig-out/lib/libevtx_ref.so" --lib "$lib" --runs 1 --warmup 0 --format jsonl \
        --api pull --option recover-records "$fixtures/carving/cleared-chunk.evtx" > "$log" 2>&1
    status=$?
    verdict abi-parity "$1" "pull API, --option recover-records" "$status" "$log"
}
abi none
abi flip-recovered

# The instruction-count gate: the committed baseline with every count 5 % lower (a planted rise
# of 5 %, past the 2 % tolerance) must fail. The real engines; the control is make test's own
# `instructions` step against the committed baseline.
instructions() { # CORRUPTION
    local dir="$work/baselines" log="$work/instructions-$1.log" status
    mkdir -p "$dir"
    cp "$root/compare/baselines/"*.evtx "$dir/"
    python3 -S - "$root/compare/baselines/instructions.json" "$dir/instructions.json" <<'PY'
import json, sys
b = json.load(open(sys.argv[1]))
for workloads in b["instructions_per_record"].values():
    for w in workloads:
        workloads[w] *= 0.95
json.dump(b, open(sys.argv[2], "w"))
PY
    "$compare" instructions --baseline "$dir/instructions.json" --rust "$rust" \
        --zig "$(dirname "$zig")/evtx-zig-valgrind" --out "$work/instructions" > "$log" 2>&1
    status=$?
    verdict instructions "$1" "baseline 5 % below the measurement" "$status" "$log"
}
instructions rise-5-percent

echo "gates-fail: $caught of $planted corruptions caught, $failed_controls controls red"
[ "$caught" -eq "$planted" ] && [ "$planted" -gt 0 ] && [ "$failed_controls" -eq 0 ]
