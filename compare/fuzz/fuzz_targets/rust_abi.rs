//! The Rust engine through the C ABI, as an embedder calls it: open a buffer, pull every
//! record, free; in XML, jsonl, and jsonl with the record filter and carving.
//! `EVTX_STATUS_INTERNAL` means a panic was caught at the boundary: a finding.
#![no_main]

use evtx_rs::abi::{evtx_options, evtx_record, evtx_status, evtx_value_range};
use std::ffi::c_char;
use evtx_rs::ffi::{
    evtx_options_init_v1, evtx_parser, evtx_parser_free, evtx_parser_next, evtx_parser_open_buffer,
};
use libfuzzer_sys::fuzz_target;

/// A filter on all five System fields that the fixtures' Security and System records partly
/// pass, so both the skip and the kept paths run on mutated bytes (as the Zig driver's).
const EVENT_IDS: [evtx_value_range; 2] = [
    evtx_value_range { first: 0, last: 4700 },
    evtx_value_range {
        first: 7000,
        last: 7045,
    },
];
const LEVELS: [evtx_value_range; 1] = [evtx_value_range { first: 0, last: 4 }];
const PROVIDERS: [&std::ffi::CStr; 3] = [
    c"Microsoft-Windows-Security-Auditing",
    c"service control manager",
    c"Microsoft-Windows-Eventlog",
];
const CHANNELS: [&std::ffi::CStr; 2] = [c"Security", c"SYSTEM"];
/// 2000-01-01T00:00:00Z in FILETIME ticks.
const SINCE: u64 = 125_911_584_000_000_000;

fuzz_target!(|data: &[u8]| {
    let providers = PROVIDERS.map(|p| p.as_ptr());
    let channels: [*const c_char; 2] = CHANNELS.map(|c| c.as_ptr());
    for (format, filter) in [(0u32, false), (2, false), (2, true)] {
        let mut options = std::mem::MaybeUninit::<evtx_options>::uninit();
        let mut parser: *mut evtx_parser = std::ptr::null_mut();
        // SAFETY: evtx_options_init_v1 fills the whole struct it is given; `data` and the
        // filter's arrays outlive the parser, which is freed before this iteration ends.
        unsafe {
            evtx_options_init_v1(options.as_mut_ptr());
            let mut options = options.assume_init();
            options.format = format;
            options.threads = 1;
            if filter {
                options.recover_records = 1;
                options.event_ids = EVENT_IDS.as_ptr();
                options.event_ids_count = EVENT_IDS.len();
                options.levels = LEVELS.as_ptr();
                options.levels_count = LEVELS.len();
                options.providers = providers.as_ptr();
                options.providers_count = providers.len();
                options.channels = channels.as_ptr();
                options.channels_count = channels.len();
                options.since = SINCE;
                options.since_set = 1;
            }
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
