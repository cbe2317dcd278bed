//! The Rust engine through its own API: open, then dump in every mode that changes the code
//! path. Any panic is a finding (the engine must turn all bad input into error entries).
#![no_main]

use evtx_core::{dump, EvtxFile, Format, Options};
use libfuzzer_sys::fuzz_target;
use std::ops::ControlFlow;

fuzz_target!(|data: &[u8]| {
    let Ok(file) = EvtxFile::open(data) else { return };
    let modes = [
        (Format::Xml, false, false),
        (Format::Jsonl, false, false),
        (Format::Jsonl, true, true),
    ];
    for (format, separate_json_attributes, validate_checksums) in modes {
        let options = Options {
            format,
            separate_json_attributes,
            validate_checksums,
            threads: 1,
            ..Options::default()
        };
        let mut bytes = 0usize;
        dump(&file, &options, |chunk| {
            bytes += chunk.bytes.len();
            ControlFlow::Continue(())
        });
        std::hint::black_box(bytes);
    }
});
