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
CBINDGEN   := $(ROOT)/target/tools/bin/cbindgen
CBINDGEN_VERSION := 0.29.4
COMPARE    := $(ROOT)/target/release/evtx-compare
FIXTURES   := $(ROOT)/target/fixtures
BENCH_LOG  := $(FIXTURES)/security-30mb.evtx
CORPUS_LOG := $(FIXTURES)/corpus-30mb.evtx
TEST_LOG   := $(ROOT)/target/test-steps.log

# The public corpus, when present. EVTX_SAMPLES may point elsewhere.
EVTX_SAMPLES ?= $(abspath ../shared/evtx-samples)
# Extra user files for `make compare CORPUS=DIR`.
CORPUS ?=

export EVTX_SAMPLES
export EVTX_REFERENCE := $(REF)
export CBINDGEN

.PHONY: help setup toolchains build test parity bench compare fixtures fmt lint clean

help:
	@echo "evtx-twin targets:"
	@echo "  make setup     install what the project needs (Zig 0.15.2, reference evtx_dump $(REF_VERSION), cbindgen, hyperfine, valgrind)"
	@echo "  make build     build both engines, the C libraries and the harness into zig-out/"
	@echo "  make test      lint, unit tests, ABI checks, cross-language parity (what CI runs)"
	@echo "  make parity    parity of evtx-rs, evtx-zig and the reference over the corpus"
	@echo "  make bench     the evtx-bench harness over the C ABI, then hyperfine of the CLIs"
	@echo "  make compare   the main job: parity + speed + gap report in target/compare/ (CORPUS=DIR adds files)"
	@echo "  make fixtures  regenerate the 30 MB benchmark logs in target/fixtures/"
	@echo "  make fmt       format Rust and Zig sources"
	@echo "  make lint      format checks, clippy, header freshness"
	@echo "  make clean     remove build outputs (keeps the cached reference and tools)"

# ---------------------------------------------------------------------------------------------
# Setup: everything a fresh machine needs, installed by the project itself.

setup: toolchains $(REF) $(CBINDGEN) system-tools

toolchains:
	@rustc --version
	@$(ZIG) version | sed 's/^/zig /'

# The reference, built once from crates.io with its own published lock file and cached in target/.
$(REF):
	@echo "==> building the reference evtx_dump $(REF_VERSION) (cached in target/reference)"
	$(CARGO) install --quiet --locked --root $(ROOT)/target/reference evtx --version $(REF_VERSION)

$(CBINDGEN):
	@echo "==> installing cbindgen $(CBINDGEN_VERSION) into target/tools"
	$(CARGO) install --quiet --locked --root $(ROOT)/target/tools cbindgen --version $(CBINDGEN_VERSION)

# valgrind is needed by the tests (memcheck of the C ABI); hyperfine only by bench/compare.
.PHONY: system-tools
system-tools:
	@missing=""; for t in valgrind hyperfine; do command -v $$t >/dev/null || missing="$$missing $$t"; done; \
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

# step NAME, COMMAND: run COMMAND, record pass/FAIL in $(TEST_LOG).
define step
	@echo "==> $(1)"; if $(2); then echo "pass $(1)" >> $(TEST_LOG); else echo "FAIL $(1)" >> $(TEST_LOG); echo "!!! $(1) failed"; fi
endef

test: setup
	@mkdir -p target; : > $(TEST_LOG)
	$(call step,format,$(CARGO) fmt --all --check && $(ZIG) fmt --check build.zig zig compare)
	$(call step,clippy,$(CARGO) clippy --quiet --workspace --all-targets --locked -- -D warnings)
	$(call step,cargo-test,EVTX_REQUIRE_REFERENCE=1 $(CARGO) test --quiet --workspace --locked)
	$(call step,build,$(MAKE) --no-print-directory build)
	$(call step,zig-test,$(ZIG) build test -Doptimize=ReleaseSafe)
	$(call step,abi,$(ZIG) build test-abi -Doptimize=ReleaseFast)
	$(call step,parity,$(COMPARE) parity --fixtures shared-fixtures --reference $(REF) --out target/parity)
	$(call step,mutate,$(COMPARE) mutate --fixtures shared-fixtures --out target/mutate)
	@passed=$$(grep -c '^pass' $(TEST_LOG) || true); failed=$$(grep -c '^FAIL' $(TEST_LOG) || true); \
	grep '^FAIL' $(TEST_LOG) | sed 's/^FAIL /failed step: /' || true; \
	echo "test: $$passed passed, $$failed failed"; test "$$failed" -eq 0

# ---------------------------------------------------------------------------------------------
# Parity, benchmarks, the gap report

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
# Housekeeping

fmt:
	$(CARGO) fmt --all
	$(ZIG) fmt build.zig zig compare

lint: $(CBINDGEN)
	$(CARGO) fmt --all --check
	$(ZIG) fmt --check build.zig zig compare
	$(CARGO) clippy --quiet --workspace --all-targets --locked -- -D warnings
	$(ZIG) build header

clean:
	rm -rf zig-out .zig-cache target/debug target/release target/compare target/parity target/bench $(FIXTURES)
