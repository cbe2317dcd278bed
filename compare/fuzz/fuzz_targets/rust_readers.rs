//! The Rust engine's side readers (a damaged side file is an error, never a crash): the input bytes
//! as an `.MTA` file, as a `.wevtcache`, as a CRIM manifest (each TEMP translated, as the cache
//! path does) and as a PE image (each `WEVT_TEMPLATE` blob's manifest parsed). Every fault must be
//! an error value; a panic, a hang or an allocation past libFuzzer's bound is a finding. The Zig
//! twin is compare/fuzz/zig_driver.zig's `readers` target.
#![no_main]

use evtx_core::mta::{EventFields, MtaFile, DEFAULT_PUBLISHER};
use evtx_core::pe::wevt_template_resources;
use evtx_core::wevt_cache::{parse_crim, translate, WevtCache};
use libfuzzer_sys::fuzz_target;
use std::path::Path;

fuzz_target!(|data: &[u8]| {
    if let Ok(mta) = MtaFile::parse(data) {
        // Lookups walk the tables the parse built: a few record numbers and names.
        for (number, provider) in [(1, DEFAULT_PUBLISHER), (2, "Mta-Alpha"), (7, "mta-beta")] {
            let event = EventFields {
                provider: provider.to_string(),
                event_record_id: number,
                level: 4,
                task: 1,
                opcode: 1,
                keywords: u64::MAX,
                ..EventFields::default()
            };
            std::hint::black_box(mta.rendering_info(number, &event));
        }
    }
    if let Ok(cache) = WevtCache::parse(data, Path::new("fuzz.wevtcache")) {
        std::hint::black_box(cache.len());
    }
    crim(data);
    if let Ok(blobs) = wevt_template_resources(data) {
        for blob in blobs {
            crim(blob);
        }
    }
});

/// A CRIM manifest: its templates, each translated into a chunk-style definition.
fn crim(blob: &[u8]) {
    let Ok(temps) = parse_crim(blob) else { return };
    let mut ext = Vec::new();
    for t in temps {
        if let Some(temp) = blob.get(t.offset..t.offset + t.size) {
            std::hint::black_box(translate(temp, &mut ext));
        }
    }
}
