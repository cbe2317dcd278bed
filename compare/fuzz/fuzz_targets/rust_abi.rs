//! The Rust engine through the C ABI, as an embedder calls it: open a buffer, pull every
//! record, free. `EVTX_STATUS_INTERNAL` means a panic was caught at the boundary: a finding.
#![no_main]

use evtx_rs::abi::{evtx_options, evtx_record, evtx_status};
use evtx_rs::ffi::{
    evtx_options_init_v1, evtx_parser, evtx_parser_free, evtx_parser_next, evtx_parser_open_buffer,
};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    for format in [0u32, 2] {
        let mut options = std::mem::MaybeUninit::<evtx_options>::uninit();
        let mut parser: *mut evtx_parser = std::ptr::null_mut();
        // SAFETY: evtx_options_init_v1 fills the whole struct it is given; `data` outlives
        // the parser, which is freed before this iteration ends.
        unsafe {
            evtx_options_init_v1(options.as_mut_ptr());
            let mut options = options.assume_init();
            options.format = format;
            options.threads = 1;
            let opened = evtx_parser_open_buffer(data.as_ptr(), data.len(), &options, &mut parser);
            assert_ne!(opened as u32, evtx_status::Internal as u32, "evtx_parser_open_buffer: \
                EVTX_STATUS_INTERNAL");
            if !parser.is_null() {
                let mut record = std::mem::zeroed::<evtx_record>();
                loop {
                    let status = evtx_parser_next(parser, &mut record);
                    assert_ne!(status as u32, evtx_status::Internal as u32, "evtx_parser_next: \
                        EVTX_STATUS_INTERNAL");
                    let status = status as u32;
                    if status == evtx_status::End as u32 || (status != 0 && status < 16) {
                        break;
                    }
                }
            }
            evtx_parser_free(parser);
        }
    }
});
