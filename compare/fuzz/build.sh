#!/usr/bin/env bash
# Builds the Rust libFuzzer targets (rust_api, rust_abi, rust_readers) exactly as
# `cargo fuzz build -O -a` of cargo-fuzz 0.13.1 does: the same RUSTFLAGS, target and profile
# (its src/project.rs), without installing cargo-fuzz, whose own build cost `make test` a minute
# and a half on two cores. -O: release; -a: debug assertions (and with them overflow checks) on;
# AddressSanitizer; one codegen unit, because the sancov passes otherwise keep ThinLTO from
# importing anything.
# The binaries land where cargo-fuzz puts them: compare/fuzz/target/<triple>/release/.
set -euo pipefail
cd "$(dirname "$0")"
triple=x86_64-unknown-linux-gnu
flags=(
  -Cpasses=sancov-module
  -Cllvm-args=-sanitizer-coverage-level=4
  -Cllvm-args=-sanitizer-coverage-inline-8bit-counters
  -Cllvm-args=-sanitizer-coverage-pc-table
  -Cllvm-args=-sanitizer-coverage-trace-compares
  --cfg fuzzing
  -Cllvm-args=-simplifycfg-branch-fold-threshold=0
  -Zsanitizer=address
  -Cllvm-args=-sanitizer-coverage-stack-depth
  -Cdebug-assertions
  -Ccodegen-units=1
)
# -Zsanitizer is unstable: RUSTC_BOOTSTRAP lets the stable toolchain take it, as before.
RUSTC_BOOTSTRAP=1 RUSTFLAGS="${flags[*]}" cargo build --quiet --locked --bins \
  --target "$triple" --release --config 'profile.release.debug="line-tables-only"'
