//! Every explicit limit of the two engines, once. cbindgen copies each into `include/evtx.h`
//! as an `EVTX_LIMIT_*` constant; `zig/src/limits.zig` holds the Zig engine's and
//! `zig/src/capi.zig` re-exports them under these names, so the conformance test
//! (`compare/harness/abi_conformance.zig`) fails to compile when the two sides differ.
