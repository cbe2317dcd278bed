# evtx-twin: the front door. Every target delegates to cargo, `zig build` or the compare tool;
# nothing here knows how an engine works. `make help` lists the targets.

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
FIXTURES   := $(ROOT)/target/fixtures
BENCH_LOG  := $(FIXTURES)/security-30mb.evtx
CORPUS_LOG := $(FIXTURES)/corpus-30mb.evtx
TEST_LOG   := $(ROOT)/target/test-steps.log
CARGO_FUZZ := $(ROOT)/target/tools/bin/cargo-fuzz
CARGO_FUZZ_VERSION := 0.13.1
# LLVM's libFuzzer runtime for the Zig drivers (Debian's libclang-rt-14-dev).
LIBFUZZER  = $(firstword $(wildcard /usr/lib/llvm-*/lib/clang/*/lib/linux/libclang_rt.fuzzer-x86_64.a))
FUZZERS    := $(ROOT)/compare/fuzz/target/x86_64-unknown-linux-gnu/release/rust_api \
              $(ROOT)/compare/fuzz/target/x86_64-unknown-linux-gnu/release/rust_abi \
              $(ROOT)/zig-out/fuzz/fuzz-zig-api $(ROOT)/zig-out/fuzz/fuzz-zig-abi \
              $(ROOT)/zig-out/fuzz/fuzz-cross
FUZZ_SEEDS := $(ROOT)/shared-fixtures/synthetic $(ROOT)/shared-fixtures/damaged $(ROOT)/shared-fixtures/regressions
FUZZ_FLAGS := -max_len=200000 -rss_limit_mb=1024 -timeout=10
# The smoke's memory bound (issue 13 item 7): one input (at most -max_len, far below 8 MiB) that
# makes the engine allocate 64 MiB at once fails it (-malloc_limit_mb). The whole process keeps
# FUZZ_FLAGS' 1024 MiB: libFuzzer's RSS is the engine's plus its own in-memory corpus plus, in the
# cargo-fuzz drivers, AddressSanitizer's allocator, shadow and quarantine of freed memory, 52-63
# MiB before the first mutated input and past 256 MiB after 12,000 runs of rust_api (a fresh-clone
# run hit 259 MiB), so a process limit cannot bound one input. The mutation gate bounds one
# input's peak RSS of each CLI by itself (/usr/bin/time).
FUZZ_SMOKE_FLAGS := $(FUZZ_FLAGS) -malloc_limit_mb=64
# make fuzz: seconds per target. make test: a deterministic smoke of this many runs per target.
FUZZ_SECONDS ?= 300
FUZZ_SMOKE_RUNS ?= 12000

# The public corpus, when present. EVTX_SAMPLES may point elsewhere.
EVTX_SAMPLES ?= $(abspath ../shared/evtx-samples)
# `make test` fails when the samples are missing (every gate says how many inputs it compared);
# `make test EVTX_REQUIRE_SAMPLES=0` runs without them, each gate saying loudly what it skipped.
EVTX_REQUIRE_SAMPLES ?= 1
# Extra user files for `make compare CORPUS=DIR`.
CORPUS ?=

export EVTX_SAMPLES
export EVTX_REFERENCE := $(REF)
export CBINDGEN

.PHONY: help setup toolchains build test parity bench compare fixtures fuzz fuzz-build fuzz-smoke fmt lint clean python python-test

help:
	@echo "evtx-twin targets:"
	@echo "  make setup     install what the project needs (Zig 0.15.2, reference evtx_dump $(REF_VERSION), cbindgen, hyperfine, valgrind)"
	@echo "  make build     build both engines, the C libraries and the harness into zig-out/"
	@echo "  make test      lint, unit tests, ABI checks, cross-language parity (what CI runs)"
	@echo "  make parity    parity of evtx-rs, evtx-zig and the reference over the corpus"
	@echo "  make bench     the evtx-bench harness over the C ABI, then hyperfine of the CLIs"
	@echo "  make compare   the main job: parity + speed + gap report in target/compare/ (CORPUS=DIR adds files)"
	@echo "  make python    build the Python wheel (python/, evtx_twin) into target/python/dist and install it in target/python/venv"
	@echo "  make fixtures  regenerate the 30 MB benchmark logs in target/fixtures/"
	@echo "  make fuzz      libFuzzer on both engines, own API and C ABI (FUZZ_SECONDS=$(FUZZ_SECONDS) per target)"
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
	@echo "==> building the reference evtx_dump $(REF_VERSION) --features fast-alloc (cached in target/reference)"
	$(CARGO) install --quiet --locked --force --root $(ROOT)/target/reference evtx --version $(REF_VERSION) --features fast-alloc
	@touch $@

$(CBINDGEN):
	@echo "==> installing cbindgen $(CBINDGEN_VERSION) into target/tools"
	$(CARGO) install --quiet --locked --root $(ROOT)/target/tools cbindgen --version $(CBINDGEN_VERSION)

$(CARGO_FUZZ):
	@echo "==> installing cargo-fuzz $(CARGO_FUZZ_VERSION) into target/tools"
	$(CARGO) install --quiet --locked --root $(ROOT)/target/tools cargo-fuzz --version $(CARGO_FUZZ_VERSION)

# valgrind is needed by the tests (memcheck of the C ABI); hyperfine only by bench/compare.
.PHONY: system-tools
system-tools:
	@missing=""; for t in valgrind hyperfine; do command -v $$t >/dev/null || missing="$$missing $$t"; done; \
	[ -x /usr/bin/time ] || missing="$$missing time"; \
	[ -n "$(LIBFUZZER)" ] || missing="$$missing libclang-rt-14-dev"; \
	if [ -n "$$missing" ]; then \
	  echo "==> installing$$missing from Debian's packages"; \
	  apt-get update -qq >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >/dev/null; \
	fi

# ---------------------------------------------------------------------------------------------
# Build

build: $(CBINDGEN)
	$(ZIG) build -Doptimize=ReleaseFast
	$(CARGO) build --quiet --locked --release -p evtx-compare -p evtx-fixture-gen

# ---------------------------------------------------------------------------------------------
# Test: every gate runs even when an earlier one failed; one summary line at the end.

# step NAME, COMMAND: run COMMAND, record pass/FAIL and its seconds in $(TEST_LOG) (the budget
# is 30 minutes on 2 cores; the times say where it goes).
define step
	@echo "==> $(1)"; t0=$$(date +%s); if $(2); then r=pass; else r=FAIL; echo "!!! $(1) failed"; fi; \
	echo "$$r $(1) ($$(( $$(date +%s) - t0 )) s)" >> $(TEST_LOG)
endef

test: export EVTX_REQUIRE_SAMPLES := $(EVTX_REQUIRE_SAMPLES)
test: setup
	@mkdir -p target; : > $(TEST_LOG)
	$(call step,format,$(CARGO) fmt --all --check && $(ZIG) fmt --check build.zig zig compare)
	$(call step,clippy,$(CARGO) clippy --quiet --workspace --all-targets --locked -- -D warnings)
	$(call step,cargo-test,EVTX_REQUIRE_REFERENCE=1 $(CARGO) test --quiet --workspace --locked)
	$(call step,build,$(MAKE) --no-print-directory build)
	$(call step,zig-test,EVTX_REQUIRE_REFERENCE=1 $(ZIG) build test -Doptimize=ReleaseSafe)
	$(call step,abi,$(ZIG) build test-abi -Doptimize=ReleaseFast)
	$(call step,parity,$(COMPARE) parity --fixtures shared-fixtures --reference $(REF) --out target/parity)
	$(call step,cli-paths,$(COMPARE) cli-paths --reference $(REF) --fixtures shared-fixtures --out target/cli-paths)
	$(call step,abi-parity,$(MAKE) --no-print-directory abi-parity)
	$(call step,exit-table,$(COMPARE) exit-table --reference $(REF) --fixtures shared-fixtures --out target/exit-table)
	$(call step,gates-fail,compare/gates/run.sh $(COMPARE) $(REF) zig-out/bin/evtx-rs zig-out/bin/evtx-zig)
	$(call step,instructions,$(COMPARE) instructions --baseline compare/baselines/instructions.json)
	$(call step,mutate,$(COMPARE) mutate --reference $(REF) --fixtures shared-fixtures --out target/mutate)
	$(call step,fuzz-smoke,$(MAKE) --no-print-directory fuzz-smoke)
	$(call step,python,$(MAKE) --no-print-directory python-test)
	@passed=$$(grep -c '^pass' $(TEST_LOG) || true); failed=$$(grep -c '^FAIL' $(TEST_LOG) || true); \
	sed 's/^/step: /' $(TEST_LOG); \
	echo "test: $$passed passed, $$failed failed"; test "$$failed" -eq 0

# ---------------------------------------------------------------------------------------------
# Parity, benchmarks, the gap report

# The three libraries through the C ABI on every input that opens (the two fatal-header
# fixtures are the smoke test's job), the reference library as the baseline: evtx-bench --parity
# fails when an output hash, the per-record fields (record id, FILETIME, offset, chunk, status),
# the counts or the final status differ, when a library is missing or says NOT_IMPLEMENTED.
# Every format with the push and the pull API, then the option variants. unsupported-types.evtx
# is where the engines render what the reference fails (shared-fixtures/README.md): there the
# two engines are compared with each other only. `recover_records` runs with the push and the
# pull API (the pull API compares each record's `recovered` flag too).
# Where our rules differ from the reference (shared-fixtures/README.md: the four value types, the
# cut last chunk's error line), the two engines are held to each other only.
ABI_PARITY_OURS   = shared-fixtures/damaged/unsupported-types.evtx shared-fixtures/damaged/header-count-large.evtx \
                    shared-fixtures/carving/cut-last-chunk.evtx
ABI_PARITY_INPUTS = $(filter-out %/bad-file-magic.evtx %/short-file.evtx $(ABI_PARITY_OURS),$(wildcard shared-fixtures/*/*.evtx)) \
                    $(wildcard $(EVTX_SAMPLES)/*.evtx)
ABI_LIBS          = --lib zig-out/lib/libevtx_ref.so --lib zig-out/lib/libevtx_rs.so --lib zig-out/lib/libevtx_zig.so
ABI_VARIANTS      = "jsonl push" "json push" "xml push" "jsonl pull" "json pull" "xml pull" \
                    "xml pull --option no-indent" "xml pull --option dont-show-record-number" \
                    "json pull --option separate-json-attributes --option dont-show-record-number" \
                    "jsonl pull --option validate-checksums" "xml pull --option events" \
                    "jsonl push --option stop-after-one-error" "jsonl push --option events" \
                    "jsonl push --threads 2" "xml pull --threads 2" \
                    "jsonl push --option recover-records" "xml push --option recover-records" \
                    "jsonl pull --option recover-records" "xml pull --option recover-records" \
                    "json pull --option recover-records --threads 2"

.PHONY: abi-parity
abi-parity:
	@if [ "$(EVTX_REQUIRE_SAMPLES)" = 1 ] && [ -z "$(wildcard $(EVTX_SAMPLES)/*.evtx)" ]; then \
	  echo "abi-parity: EVTX_REQUIRE_SAMPLES=1 but no samples at $(EVTX_SAMPLES)"; exit 1; fi
	@n=0; for variant in $(ABI_VARIANTS); do set -- $$variant; format=$$1 api=$$2; shift 2; \
	  log=target/abi-parity-$$n.txt; n=$$((n + 1)); \
	  for libs in "$(ABI_LIBS) $(ABI_PARITY_INPUTS)" "--lib zig-out/lib/libevtx_rs.so --lib zig-out/lib/libevtx_zig.so $(ABI_PARITY_OURS)"; do \
	    zig-out/bin/evtx-bench --parity $$libs --runs 1 --warmup 0 --format $$format --api $$api "$$@" > $$log 2>&1 \
	    || { grep -E 'differs|DIFFERS|FAILED|evtx-bench:' $$log | head -5; exit 1; }; \
	    echo "abi-parity $$format $$api $$*: $$(tail -n 1 $$log)"; done; done

parity: setup build
	$(COMPARE) parity --fixtures shared-fixtures --reference $(REF) --out target/parity $(if $(CORPUS),--corpus $(CORPUS))

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

$(PY):
	python3 -m venv $(PY_VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check pytest pyarrow 'dask[distributed]'

python: $(PY)
	rm -f target/python/dist/evtx_twin-*.whl
	$(PY) -m pip wheel --quiet --disable-pip-version-check --no-deps -w target/python/dist ./python
	$(PY) -m pip install --quiet --disable-pip-version-check --force-reinstall --no-deps target/python/dist/evtx_twin-*.whl

python-test: python
	$(PY) -m pytest -q -p no:cacheprovider python/tests

# ---------------------------------------------------------------------------------------------
# Fuzzing: libFuzzer on the Rust engine (cargo-fuzz: own API, C ABI; built -O -a, so debug
# assertions and overflow checks are on) and the Zig engine (drivers built by `zig build
# fuzz-zig`: own API and C ABI, each through a leak-checking DebugAllocator), and
# fuzz-cross: both engines through the C ABI on the same input, any difference a finding (it
# loads zig-out/lib/libevtx_rs.so, so `make build` first). Findings land in target/fuzz/artifacts/.

fuzz-build: $(CARGO_FUZZ) system-tools
	cd compare/fuzz && PATH="$(ROOT)/target/tools/bin:$$PATH" RUSTC_BOOTSTRAP=1 $(CARGO) fuzz build --fuzz-dir . -O -a
	$(ZIG) build fuzz-zig -Dlibfuzzer=$(LIBFUZZER)

fuzz: fuzz-build
	@for f in $(FUZZERS); do n=$$(basename $$f); mkdir -p target/fuzz/corpus/$$n target/fuzz/artifacts/$$n; \
	  echo "==> $$n for $(FUZZ_SECONDS)s"; \
	  $$f target/fuzz/corpus/$$n $(FUZZ_SEEDS) -artifact_prefix=target/fuzz/artifacts/$$n/ $(FUZZ_FLAGS) \
	    -max_total_time=$(FUZZ_SECONDS) -print_final_stats=1 2>&1 | grep -E '^(Done|#[0-9]+ *DONE|SUMMARY|artifact|==)|panic|Test unit' || true; \
	  test -z "$$(ls target/fuzz/artifacts/$$n)" || { echo "fuzz: findings in target/fuzz/artifacts/$$n"; exit 1; }; done

# Deterministic (-seed=1, fixed number of runs, a fresh corpus each time), so CI is not flaky.
fuzz-smoke: fuzz-build
	@for f in $(FUZZERS); do n=$$(basename $$f); d=$$(mktemp -d); \
	  if $$f $$d $(FUZZ_SEEDS) -artifact_prefix=$$d/ $(FUZZ_SMOKE_FLAGS) -seed=1 -runs=$(FUZZ_SMOKE_RUNS) > $$d/log 2>&1; \
	  then echo "fuzz-smoke $$n: $$(grep -E '^Done' $$d/log)"; rm -rf $$d; \
	  else echo "fuzz-smoke $$n: FAILED"; grep -E 'panic|ERROR|SUMMARY|Test unit' $$d/log | head -5; exit 1; fi; done

# ---------------------------------------------------------------------------------------------
# Housekeeping

fmt:
	$(CARGO) fmt --all
	$(ZIG) fmt build.zig zig compare

lint: $(CBINDGEN)
	$(CARGO) fmt --all --check
	$(ZIG) fmt --check build.zig zig compare
	$(CARGO) clippy --quiet --workspace --all-targets --locked -- -D warnings
	$(ZIG) build header-check

clean:
	rm -rf zig-out .zig-cache target/debug target/release target/compare target/parity target/bench $(FIXTURES)
