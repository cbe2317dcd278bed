//! The exports of include/evtx.h over the evtx crate: the table of `evtx_abi::exports!`, the
//! same thin wrappers around `evtx_abi::front` as `rust/capi/src/ffi.rs`, whose doc comments
//! are their contracts.

pub use evtx_abi::front::evtx_parser;

evtx_abi::exports!(define crate::backend::Backend);
