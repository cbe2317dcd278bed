#!/usr/bin/env bash
# Windows parity under Wine: each Windows CLI (`make cross`) is run over the committed fixtures
# (and the public samples when given) in every output mode, and its stdout and exit status are
# compared byte for byte with the Linux build of the same engine, which the parity gate holds
# to the reference. Agreement with the reference itself is counted for both, so a difference
# the Linux build has on purpose (shared-fixtures/README.md) shows as the same count on both.
#
#   compare/windows_parity.sh --reference REF --fixtures DIR [--samples DIR] [--out DIR]
#                             [--pair WINDOWS.exe=LINUX_CLI ...] [--smoke LIBRARY.dll ...]
#
# Each --smoke DLL gets compare/capi-tests/smoke.c, built by MinGW against it and run under Wine
# beside it over the synthetic, damaged and regression fixtures (as `zig build test-abi-smoke`
# runs it on Linux); it must end with `smoke: N passed, 0 failed`.
#
# stderr is never compared: Wine writes its own lines there (`wine: created the configuration
# directory ...` on a new prefix, `fixme:` lines unless WINEDEBUG says otherwise), so each run's
# stderr is kept in a file of the case and only counted. WINEDEBUG=-all silences the fixmes.
# Without Wine the script says SKIPPED and exits 0, or 1 when WINDOWS_PARITY_REQUIRE=1.
set -euo pipefail

reference='' fixtures='' samples='' out=target/windows-parity
pairs=() smokes=()
while [ $# -gt 0 ]; do
  case "$1" in
    --reference) reference=$2; shift 2 ;;
    --fixtures) fixtures=$2; shift 2 ;;
    --samples) samples=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --pair) pairs+=("$2"); shift 2 ;;
    --smoke) smokes+=("$2"); shift 2 ;;
    *) echo "windows_parity: unknown argument $1" >&2; exit 2 ;;
  esac
done
[ -n "$reference" ] && [ -n "$fixtures" ] && [ $((${#pairs[@]} + ${#smokes[@]})) -gt 0 ] || {
  echo "usage: compare/windows_parity.sh --reference REF --fixtures DIR" \
    "--pair WIN.exe=LINUX_CLI [--samples DIR] [--out DIR]" >&2
  exit 2
}

skip() {
  echo "windows-parity: SKIPPED: $1"
  [ "${WINDOWS_PARITY_REQUIRE:-0}" = 1 ] && exit 1
  exit 0
}
wine=$(command -v wine64 || command -v wine || true)
[ -n "$wine" ] || skip "no wine64 or wine on PATH (apt-get install wine64)"

# A prefix of our own under the output directory, its server kept up for the whole run (one
# process start per case instead of a server start too), and stopped at the end.
mkdir -p "$out"
rm -rf "$out/cases"
out=$(cd "$out" && pwd)
export WINEPREFIX="$out/wineprefix" WINEDEBUG=${WINEDEBUG:--all}
export WINEDLLOVERRIDES='mscoree,mshtml='
wineserver=$(command -v wineserver || echo /usr/lib/wine/wineserver)
# The server first (a client would start one that exits 3 s after its last client: a case
# then raced its shutdown, `wine client error:0: recvmsg: Connection reset by peer`).
mkdir -p "$WINEPREFIX"
"$wineserver" -k 2>/dev/null || true
"$wineserver" -p
trap '"$wineserver" -k 2>/dev/null || true' EXIT
"$wine" cmd /c exit >"$out/wineboot.stderr" 2>&1 || true
# Rust's standard library imports ProcessPrng from bcryptprimitives.dll (Windows 10 and later),
# which Wine before 9.0 lacks: the prefix gets a stand-in (compare/windows/bcryptprimitives.c).
system32="$WINEPREFIX/drive_c/windows/system32"
if [ ! -e "$system32/bcryptprimitives.dll" ]; then
  if command -v x86_64-w64-mingw32-gcc >/dev/null; then
    x86_64-w64-mingw32-gcc -shared -O2 -o "$system32/bcryptprimitives.dll" \
      "$(dirname "$0")/windows/bcryptprimitives.c" -ladvapi32
  else
    echo "windows-parity: no bcryptprimitives.dll in Wine and no MinGW to build one:" \
      "a Rust CLI will not start"
  fi
fi

# Every output mode the parity gate's base modes hold (compare/tool/src/parity/modes.rs), then
# each with --recover-records.
modes=(
  "jsonl|-o jsonl"
  "json|-o json"
  "xml|-o xml"
  "jsonl-separate-attributes|-o jsonl --separate-json-attributes"
  "xml-no-indent|-o xml --no-indent"
  "xml-validate-checksums|-o xml --validate-checksums"
  "jsonl-validate-checksums|-o jsonl --validate-checksums"
)
for m in "${modes[@]}"; do modes+=("${m%%|*}-recover|${m#*|} --recover-records"); done
# Standard input: spooled, then read as a path is.
modes+=("stdin-jsonl|-o jsonl" "stdin-xml|-o xml")

logs=()
while IFS= read -r f; do logs+=("$f"); done < <(find "$fixtures" -name '*.evtx' | LC_ALL=C sort)
if [ -n "$samples" ]; then
  if [ -d "$samples" ]; then
    while IFS= read -r f; do logs+=("$f"); done < <(find "$samples" -name '*.evtx' | LC_ALL=C sort)
  else
    echo "windows-parity: SKIPPED: no public samples at $samples (the fixtures only)"
  fi
fi

# Runs one case: `$1` is a prefix for its files, the rest is the command (stdin from
# $stdin_from when set).
run() {
  local stem=$1; shift
  set +e
  if [ -n "${stdin_from:-}" ]; then
    "$@" <"$stdin_from" >"$stem.stdout" 2>"$stem.stderr"
  else
    "$@" >"$stem.stdout" 2>"$stem.stderr" </dev/null
  fi
  echo $? >"$stem.rc"
  set -e
}
same() { cmp -s "$1.stdout" "$2.stdout" && cmp -s "$1.rc" "$2.rc"; }

failed=0
for pair in ${pairs[@]+"${pairs[@]}"}; do
  exe=${pair%%=*} linux=${pair#*=}
  name=$(basename "$exe" .exe)
  [ -f "$exe" ] || { echo "windows-parity: $exe is missing (make cross)"; exit 1; }
  [ -x "$linux" ] || { echo "windows-parity: $linux is missing (make build)"; exit 1; }
  cases=0 same_linux=0 ref_win=0 ref_linux=0 wine_lines=0 retried=0
  diffs="$out/$name.differences"
  : >"$diffs"
  for log in "${logs[@]}"; do
    for m in "${modes[@]}"; do
      mode=${m%%|*}
      read -r -a args <<<"${m#*|}"
      # One directory per case, the reference's run shared by every pair.
      dir="$out/cases/$(echo "$log" | tr '/' '_')/$mode"
      mkdir -p "$dir"
      # The log named by its path, or on standard input (`-`) for the `stdin-` modes.
      stdin_from='' input=$log
      if [ "${mode#stdin-}" != "$mode" ]; then stdin_from=$log input=-; fi
      run "$dir/$name.windows" "$wine" "$exe" "${args[@]}" "$input"
      run "$dir/$name.linux" "$linux" "${args[@]}" "$input"
      [ -e "$dir/reference.rc" ] || run "$dir/reference" "$reference" "${args[@]}" "$input"
      cases=$((cases + 1))
      # A Windows run that differs is run once more: under load Wine has ended a run with exit
      # status 1 and not a byte written (1 of about 4,000 runs, never twice in a row); the
      # retry is counted and printed, and a real difference differs again.
      if ! same "$dir/$name.windows" "$dir/$name.linux"; then
        mv "$dir/$name.windows.stdout" "$dir/$name.windows.first.stdout"
        mv "$dir/$name.windows.stderr" "$dir/$name.windows.first.stderr"
        mv "$dir/$name.windows.rc" "$dir/$name.windows.first.rc"
        run "$dir/$name.windows" "$wine" "$exe" "${args[@]}" "$input"
        retried=$((retried + 1))
        echo "windows-parity $name: retried $log $mode (first run: exit" \
          "$(cat "$dir/$name.windows.first.rc"), $(wc -c <"$dir/$name.windows.first.stdout")" \
          "bytes out, $(head -c 200 "$dir/$name.windows.first.stderr" | tr '\n' ' '))"
      fi
      if same "$dir/$name.windows" "$dir/$name.linux"; then
        same_linux=$((same_linux + 1))
      else
        echo "$log $mode: windows rc $(cat "$dir/$name.windows.rc")," \
          "linux rc $(cat "$dir/$name.linux.rc") ($dir)" >>"$diffs"
      fi
      same "$dir/$name.windows" "$dir/reference" && ref_win=$((ref_win + 1))
      same "$dir/$name.linux" "$dir/reference" && ref_linux=$((ref_linux + 1))
      # Lines Wine wrote that the Linux run did not: the only stderr difference expected.
      wine_lines=$((wine_lines + $(diff "$dir/$name.linux.stderr" "$dir/$name.windows.stderr" \
        | grep -c '^>' || true)))
    done
  done
  echo "windows-parity $name: $same_linux/$cases cases identical to the Linux build" \
    "(stdout and exit status); the reference agrees with windows $ref_win/$cases," \
    "with linux $ref_linux/$cases; $wine_lines stderr lines differ (not compared);" \
    "$retried retried"
  if [ "$same_linux" -ne "$cases" ]; then
    failed=1
    head -20 "$diffs"
  fi
done

# The C smoke test against each DLL, the DLL beside the program as Windows finds it; winpthread
# linked in, so that nothing but the DLL under test is needed beside it.
smoke_inputs=()
for sub in synthetic damaged regressions; do
  while IFS= read -r f; do smoke_inputs+=("$f"); done \
    < <(find "$fixtures/$sub" -maxdepth 1 -name '*.evtx' 2>/dev/null | LC_ALL=C sort)
done
root=$(cd "$(dirname "$0")/.." && pwd)
for dll in ${smokes[@]+"${smokes[@]}"}; do
  name=$(basename "$dll" .dll)
  dir="$out/smoke-$name"
  mkdir -p "$dir"
  cp "$dll" "$dir/"
  if ! x86_64-w64-mingw32-gcc -std=c99 -O2 -I "$root/include" -o "$dir/evtx-smoke.exe" \
      "$root/compare/capi-tests/smoke.c" "$dir/$(basename "$dll")" \
      -static-libgcc -Wl,-Bstatic -lpthread -Wl,-Bdynamic \
      >"$dir/build.log" 2>&1; then
    echo "windows-smoke $name: FAILED to build (MinGW): $(head -3 "$dir/build.log")"
    failed=1
    continue
  fi
  set +e
  "$wine" "$dir/evtx-smoke.exe" "${smoke_inputs[@]}" >"$dir/stdout" 2>"$dir/stderr"
  rc=$?
  set -e
  summary=$(grep -a '^smoke: [0-9]* passed' "$dir/stdout" "$dir/stderr" | tail -1 | sed 's/^[^:]*://')
  echo "windows-smoke $name: ${summary:-no summary} (exit $rc, ${#smoke_inputs[@]} inputs)"
  [ "$rc" -eq 0 ] || { failed=1; grep -a 'FAIL' "$dir/stderr" | head -10; }
done
exit $failed
