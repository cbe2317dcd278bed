//! C ABI over evtx-core; the header include/evtx.h is generated from this crate by cbindgen.
