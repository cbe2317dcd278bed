//! evtx-core behind the `Engine` trait of `ffi.rs`.
//!
//! evtx-core's public API is still being written; until it lands, every open reports
//! `EVTX_STATUS_NOT_IMPLEMENTED` so embedders and the harness see a clear status.

use crate::abi::evtx_status;
use crate::ffi::{Engine, Failure, Input, Item, Settings};
use std::ffi::CStr;

pub(crate) struct Backend {
    _settings: Settings,
}

impl Engine for Backend {
    const NAME: &'static CStr = c"rust";
    const VERSION: &'static CStr = {
        match CStr::from_bytes_with_nul(concat!(env!("CARGO_PKG_VERSION"), "\0").as_bytes()) {
            Ok(version) => version,
            Err(_) => panic!("the package version contains a NUL"),
        }
    };

    fn open(_input: Input<'_>, _settings: Settings) -> Result<Self, Failure> {
        Err(Failure::new(
            evtx_status::NotImplemented,
            "libevtx_rs: evtx-core does not expose a rendering API yet",
        ))
    }

    fn next(&mut self) -> Result<Option<Item<'_>>, Failure> {
        Err(Failure::new(evtx_status::NotImplemented, "not implemented"))
    }
}
