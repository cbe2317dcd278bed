# evtx-twin: the front door. Every target delegates to cargo, `zig build`, evtx-compare or a
# script under .ci/ or compare/; nothing here knows how an engine works or loops over anything.
# `make help` lists the targets.

SHELL := bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help

ZIG        := zig/zigw
CARGO      := cargo
ROOT       := $(abspath .)
REF        := $(ROOT)/target/reference/bin/evtx_dump
REF_VERSION := 0.15.1
# The reference is built as its own benchmarks build it (jemalloc); the stamp names the build.
REF_STAMP  := $(ROOT)/target/reference/.evtx-$(REF_VERSION)-fast-alloc
CBINDGEN   := $(ROOT)/target/tools/bin/cbindgen
CBINDGEN_VERSION := 0.29.4
COMPARE    := $(ROOT)/target/release/evtx-compare
# What every gate against the reference is given: the reference and the committed fixtures.
GATE_ARGS  := --reference $(REF) --fixtures shared-fixtures
CLIS       := zig-out/bin/evtx-rs zig-out/bin/evtx-zig
FIXTURES   := $(ROOT)/target/fixtures
BENCH_LOG  := $(FIXTURES)/security-30mb.evtx
CORPUS_LOG := $(FIXTURES)/corpus-30mb.evtx
TEST_LOG   := $(ROOT)/target/test-steps.log
# LLVM's libFuzzer runtime for the Zig drivers (Debian's libclang-rt-14-dev).
LIBFUZZER  = $(firstword $(wildcard \
             /usr/lib/llvm-*/lib/clang/*/lib/linux/libclang_rt.fuzzer-x86_64.a))
FUZZERS    := $(ROOT)/compare/fuzz/target/x86_64-unknown-linux-gnu/release/rust_api \
              $(ROOT)/compare/fuzz/target/x86_64-unknown-linux-gnu/release/rust_abi \
              $(ROOT)/zig-out/fuzz/fuzz-zig-api $(ROOT)/zig-out/fuzz/fuzz-zig-abi \
              $(ROOT)/zig-out/fuzz/fuzz-cross \
              $(ROOT)/compare/fuzz/target/x86_64-unknown-linux-gnu/release/rust_readers \
              $(ROOT)/zig-out/fuzz/fuzz-zig-readers
FUZZ_FLAGS := -max_len=200000 -rss_limit_mb=1024 -timeout=10
# The smoke's memory bound (memory stays bounded on any input): one input (at most -max_len, far
# below 8 MiB) that makes the engine allocate 64 MiB at once fails it (-malloc_limit_mb, which needs
# a sanitizer's malloc hooks: the Zig `api` driver's own allocator refuses past 64 MiB held at once
# instead, compare/fuzz/zig_driver.zig). The whole process keeps FUZZ_FLAGS' 1024 MiB: libFuzzer's
# RSS is the engine's plus its own in-memory corpus plus, in the cargo-fuzz drivers,
# AddressSanitizer's allocator, shadow and quarantine of freed memory, 52-63 MiB before the first
# mutated input and past 256 MiB after 12,000 runs of rust_api (a fresh-clone run hit 259 MiB), so a
# process limit cannot bound one input. The mutation gate bounds one input's peak RSS of each CLI by
# itself (/usr/bin/time).
# Its hang bound is 30 s, not 10: the seeds damaged/record-output-{large,element}.evtx render
# about 16 MiB each, 2.5-5.7 s an input in the instrumented drivers at load 5 (libFuzzer keeps a
# flag's last value), and a shared machine must not turn a slow seed into a red gate.
FUZZ_SMOKE_FLAGS := $(FUZZ_FLAGS) -malloc_limit_mb=64 -timeout=30
# make fuzz: seconds per target. make test: a deterministic smoke of this many runs per target
# (3,000: about 1.5 minutes for the seven targets, two at a time; 12,000 cost 6 of make test's
# 30 minutes. The long search is make fuzz's.)
FUZZ_SECONDS ?= 300
FUZZ_SMOKE_RUNS ?= 3000

# The public corpus, when present. EVTX_SAMPLES may point elsewhere.
EVTX_SAMPLES ?= $(abspath ../shared/evtx-samples)
# `make test` uses the samples when they are there and otherwise runs on what the repository
# holds, each gate saying loudly what it skipped (`.ci/step` lists every SKIPPED line at the
# end). `EVTX_REQUIRE_SAMPLES=1` (what `.ci/run` sets) makes a missing corpus a failure instead:
# CI must not pass by comparing less.
EVTX_REQUIRE_SAMPLES ?= 0
NO_SAMPLES := every gate below runs on the repository's fixtures only (EVTX_REQUIRE_SAMPLES=1 fails)
# Extra user files for `make compare CORPUS=DIR`.
CORPUS ?=

export EVTX_SAMPLES
export EVTX_REFERENCE := $(REF)
export CBINDGEN

.PHONY: help setup toolchains build test parity abi-parity bench compare fixtures fuzz fuzz-build \
        fuzz-smoke fmt lint clean python python-test system-tools cross test-windows

help:
	@echo "evtx-twin targets:"
	@echo "  make setup     install what the project needs (Zig 0.15.2, reference evtx_dump"
	@echo "                $(REF_VERSION), cbindgen, hyperfine, valgrind)"
	@echo "  make build     build both engines, the C libraries and the harness into zig-out/"
	@echo "  make test      lint, unit tests, ABI checks, cross-language parity (what CI runs)"
	@echo "  make parity    parity of evtx-rs, evtx-zig and the reference over the corpus"
	@echo "  make abi-parity the three C libraries through evtx-bench --parity"
	@echo "  make bench     the evtx-bench harness over the C ABI, then hyperfine of the CLIs"
	@echo "  make compare   the main job: parity + speed + gap report in target/compare/"
	@echo "                (CORPUS=DIR adds files)"
	@echo "  make python    build the Python wheel (python/, evtx_twin) into target/python/dist"
	@echo "                and install it in target/python/venv"
	@echo "  make cross     both CLIs and the three C libraries for Windows x86_64 into"
	@echo "                $(CROSS_DIR)/"
	@echo "  make test-windows both Windows CLIs under Wine over the fixtures, against Linux"
	@echo "  make fixtures  regenerate the 30 MB benchmark logs in target/fixtures/"
	@echo "  make fuzz      libFuzzer on both engines, own API and C ABI"
	@echo "                (FUZZ_SECONDS=$(FUZZ_SECONDS) per target)"
	@echo "  make fmt       format Rust and Zig sources"
	@echo "  make lint      format checks, clippy, header freshness"
	@echo "  make clean     remove build outputs (keeps the cached reference and tools)"

# ---------------------------------------------------------------------------------------------
# Setup: everything a fresh machine needs, installed by the project itself.

setup: toolchains $(REF_STAMP) $(CBINDGEN) system-tools

toolchains:
	@rustc --version
	@$(ZIG) version | sed 's/^/zig /'

# The reference, built once from crates.io with its own published lock file and cached in target/.
$(REF_STAMP):
	@echo "==> building the reference evtx_dump $(REF_VERSION) --features fast-alloc into target/"
	$(CARGO) install --quiet --locked --force --root $(ROOT)/target/reference \
	  evtx --version $(REF_VERSION) --features fast-alloc
	@touch $@

$(CBINDGEN):
	@echo "==> installing cbindgen $(CBINDGEN_VERSION) into target/tools"
	$(CARGO) install --quiet --locked --root $(ROOT)/target/tools \
	  cbindgen --version $(CBINDGEN_VERSION)

# valgrind, hyperfine, GNU time and LLVM's libFuzzer runtime, from Debian's packages when missing.
system-tools:
	@.ci/system-tools

# ---------------------------------------------------------------------------------------------
# Build

build: $(CBINDGEN)
	$(ZIG) build -Doptimize=ReleaseFast
	$(CARGO) build --quiet --locked --release -p evtx-compare -p evtx-fixture-gen

# Both CLIs for Windows x86_64, from this machine: Zig through `zig build cross`, Rust through
# rustup's x86_64-pc-windows-gnu target with Debian's MinGW linker (`apt-get install mingw-w64`).
CROSS_DIR  := zig-out/cross/x86_64-windows
RUST_WIN   := x86_64-pc-windows-gnu

cross:
	$(ZIG) build cross -Doptimize=ReleaseFast
	@command -v x86_64-w64-mingw32-gcc >/dev/null || \
	  { echo "cross: no MinGW linker (apt-get install mingw-w64)" >&2; exit 1; }
	$(CARGO) build --quiet --locked --release --target $(RUST_WIN) -p evtx-rs -p evtx-capi -p evtx-ref
	install -m 755 target/$(RUST_WIN)/release/evtx-rs.exe target/$(RUST_WIN)/release/evtx_rs.dll \
	  target/$(RUST_WIN)/release/evtx_ref.dll $(CROSS_DIR)/

# The Windows CLIs under Wine against the Linux builds of the same engines (stdout and exit
# status byte for byte, every output mode), and the C smoke test against each of the three
# DLLs (compare/windows_parity.sh). Not in `make test` yet.
test-windows: cross build
	compare/windows_parity.sh --reference $(REF) --fixtures shared-fixtures \
	  --samples $(EVTX_SAMPLES) --out target/windows-parity \
	  --pair $(CROSS_DIR)/evtx-zig.exe=zig-out/bin/evtx-zig \
	  --pair $(CROSS_DIR)/evtx-rs.exe=zig-out/bin/evtx-rs \
	  $(foreach lib,evtx_zig evtx_rs evtx_ref,--smoke $(CROSS_DIR)/$(lib).dll)

# ---------------------------------------------------------------------------------------------
# Test: one gate per line, in order; `.ci/step` runs each (every gate runs even when an earlier
# one failed), records pass/FAIL and its seconds in $(TEST_LOG) (the budget is 30 minutes on 2
# cores), and `--summary` ends with `test: N passed, N failed`. The Zig unit tests build in Debug
# (every safety check on, as in ReleaseSafe, and 90 instead of 232 CPU seconds from scratch); the
# CLI they run is evtx-zig-safe, ReleaseSafe as installed.

test: export EVTX_REQUIRE_SAMPLES := $(EVTX_REQUIRE_SAMPLES)
test: export EVTX_REQUIRE_REFERENCE := 1
test: export TEST_LOG := $(TEST_LOG)
test: setup
	@.ci/step --begin
	@[ -d "$(EVTX_SAMPLES)" ] || .ci/step --skip "no public samples at $(EVTX_SAMPLES): $(NO_SAMPLES)"
	@.ci/step format     .ci/tidy
	@.ci/step clippy     $(CARGO) clippy --quiet --workspace --all-targets --locked -- -D warnings
	@.ci/step build      $(MAKE) --no-print-directory build
	@.ci/step cargo-test $(CARGO) test --quiet --workspace --locked
	@.ci/step zig-test   $(ZIG) build test -Doptimize=Debug
	@.ci/step abi        $(ZIG) build test-abi -Doptimize=ReleaseFast
	@.ci/step parity     $(COMPARE) parity $(GATE_ARGS) --out target/parity
	@.ci/step cli-paths  $(COMPARE) cli-paths $(GATE_ARGS) --out target/cli-paths
	@.ci/step abi-parity $(COMPARE) abi-parity --fixtures shared-fixtures --out target/abi-parity
	@.ci/step exit-table $(COMPARE) exit-table $(GATE_ARGS) --out target/exit-table
	@.ci/step filter-parity python3 compare/filter_parity.py --reference $(REF) \
	  --fixtures shared-fixtures --samples $(EVTX_SAMPLES) $(addprefix --engine ,$(CLIS))
	@.ci/step triage-parity python3 compare/triage_parity.py --reference $(REF) \
	  --fixtures shared-fixtures --samples $(EVTX_SAMPLES) $(addprefix --engine ,$(CLIS))
	@.ci/step gates-fail compare/gates/run.sh $(COMPARE) $(REF) $(CLIS)
	@.ci/step instructions $(COMPARE) instructions --baseline compare/baselines/instructions.json
	@.ci/step mutate     $(COMPARE) mutate $(GATE_ARGS) --out target/mutate
	@.ci/step fuzz-smoke $(MAKE) --no-print-directory fuzz-smoke
	@.ci/step python     $(MAKE) --no-print-directory python-test
	@.ci/step --summary

# ---------------------------------------------------------------------------------------------
# Parity, benchmarks, the gap report

# The three libraries through the C ABI (evtx-bench --parity), every variant of
# compare/tool/src/parity/abi_parity.rs.
abi-parity: setup build
	$(COMPARE) abi-parity --fixtures shared-fixtures --out target/abi-parity

parity: setup build
	$(COMPARE) parity $(GATE_ARGS) --out target/parity $(if $(CORPUS),--corpus $(CORPUS))

fixtures: $(BENCH_LOG)
	@if [ -d "$(EVTX_SAMPLES)" ]; then \
	  $(ROOT)/target/release/evtx-fixture-gen corpus --samples "$(EVTX_SAMPLES)" --out $(CORPUS_LOG); \
	else echo "fixtures: no samples at $(EVTX_SAMPLES); skipping the corpus-assembled log"; fi

$(BENCH_LOG):
	$(CARGO) build --quiet --locked --release -p evtx-fixture-gen
	@mkdir -p $(FIXTURES)
	$(ROOT)/target/release/evtx-fixture-gen bench --out $(BENCH_LOG)

bench: setup build fixtures
	$(ZIG) build bench -Doptimize=ReleaseFast
	$(COMPARE) bench-cli --reference $(REF) --out target/bench $(wildcard $(FIXTURES)/*.evtx)

compare: setup build fixtures
	$(COMPARE) all --fixtures shared-fixtures --reference $(REF) --out target/compare \
	  --bench-input $(BENCH_LOG) $(if $(wildcard $(CORPUS_LOG)),--bench-input $(CORPUS_LOG)) \
	  $(if $(CORPUS),--corpus $(CORPUS))

# ---------------------------------------------------------------------------------------------
# The Python package (python/, evtx_twin): pip builds the wheel (cargo for libevtx_rs and
# libevtx_ref, PyPI's ziglang for libevtx_zig) into target/python/dist and installs it in a venv
# under target/ that also holds the test tools; python-test runs its pytest suite against the CLIs.

PY_VENV := $(ROOT)/target/python/venv
PY      := $(PY_VENV)/bin/python

PIP     := $(PY) -m pip --quiet --disable-pip-version-check
# The build requirements of python/pyproject.toml, installed once into the venv: the wheel is
# built without build isolation, so ziglang (about 50 MB) is not fetched again on every run.
PY_BUILD_DEPS := $(PY_VENV)/.build-deps-ziglang-0.15.2

$(PY):
	python3 -m venv $(PY_VENV)
	$(PIP) install pytest pyarrow 'dask[distributed]'

$(PY_BUILD_DEPS): $(PY)
	$(PIP) install 'setuptools>=68' wheel ziglang==0.15.2
	touch $@

python: $(PY_BUILD_DEPS)
	rm -f target/python/dist/evtx_twin-*.whl
	$(PIP) wheel --no-build-isolation --no-deps -w target/python/dist ./python
	$(PIP) install --force-reinstall --no-deps target/python/dist/evtx_twin-*.whl
	$(PIP) install "$$(ls target/python/dist/evtx_twin-*.whl)[test]"

python-test: python
	$(PY) -m pytest -q -rs -p no:cacheprovider python/tests

# ---------------------------------------------------------------------------------------------
# Fuzzing: libFuzzer on the Rust engine (cargo-fuzz targets: own API, C ABI; built by
# compare/fuzz/build.sh as `cargo fuzz build -O -a` would, so debug
# assertions and overflow checks are on) and the Zig engine (drivers built by `zig build
# fuzz-zig`: own API and C ABI, each through a leak-checking DebugAllocator), and
# fuzz-cross: both engines through the C ABI on the same input, any difference a finding (it
# loads zig-out/lib/libevtx_rs.so, so `make build` first). Findings land in target/fuzz/artifacts/.

fuzz-build: system-tools
	compare/fuzz/build.sh
	$(ZIG) build fuzz-zig -Dlibfuzzer=$(LIBFUZZER)

fuzz: export FUZZ_FLAGS := $(FUZZ_FLAGS)
fuzz: fuzz-build
	compare/fuzz/run.sh long $(FUZZ_SECONDS) $(FUZZERS)

# Deterministic (-seed=1, fixed number of runs, a fresh corpus each time), so CI is not flaky.
fuzz-smoke: export FUZZ_FLAGS := $(FUZZ_SMOKE_FLAGS)
fuzz-smoke: fuzz-build
	compare/fuzz/run.sh smoke $(FUZZ_SMOKE_RUNS) $(FUZZERS)

# ---------------------------------------------------------------------------------------------
# Housekeeping

fmt:
	$(CARGO) fmt --all
	$(ZIG) fmt build.zig zig compare

lint: $(CBINDGEN)
	.ci/tidy
	$(CARGO) clippy --quiet --workspace --all-targets --locked -- -D warnings
	$(ZIG) build header-check

clean:
	rm -rf zig-out .zig-cache target/debug target/release target/compare target/parity target/bench \
	  $(FIXTURES)
