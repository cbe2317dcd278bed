//! EVTX parsing and rendering, byte-identical to `evtx_dump` 0.15.1.
//!
//! The contract is `shared/docs/evtx-format.md`; conventions shared with the Zig engine (error
//! kinds, the four value types we render where the reference fails) are in
//! `shared-fixtures/README.md`.
//!
//! Typical use:
//!
//! ```no_run
//! use evtx_core::{dump, EvtxFile, Options, Outcome};
//! let data = std::fs::read("security.evtx").unwrap();
//! let file = EvtxFile::open(&data).unwrap();
//! let opts = Options { format: evtx_core::Format::Jsonl, ..Options::default() };
//! dump(&file, &opts, |chunk: &evtx_core::ChunkResult| {
//!     for r in &chunk.records {
//!         if let Outcome::Rendered(range) = &r.outcome {
//!             print!("{}", String::from_utf8_lossy(&chunk.bytes[range.clone()]));
//!         }
//!     }
//!     std::ops::ControlFlow::Continue(())
//! });
//! ```
//!
//! A file on disk is better opened as an [`Input`] (positioned reads into one 64 KiB window per
//! worker, bounded memory, no signal when the file shrinks); both implement [`ChunkSource`].
//!
//! Layout: [`file_header`] and [`chunk`] read the containers, [`records`] walks a chunk's records,
//! [`input`] gives their bytes, [`tokens`] builds element trees from BinXML, [`template`] caches
//! and instantiates template definitions, [`values_decode`] decodes typed values and
//! [`values_format`] writes their text, [`escape`] writes escaped text, [`render_xml`] and
//! [`render_json`] turn trees into text, [`program`] records per-template replay programs (the
//! compiled fast path: most records are produced without building a tree), [`mta`] reads `.MTA`
//! files for `RenderingInfo`, [`wevt_cache`] and [`pe`] read provider templates
//! (`--wevt-cache`), [`template_instances`] reads records and their template instances as the
//! reference's template subcommands do, and [`mod@dump`] drives it all per chunk, in order, on
//! one or more threads ([`pipeline`]).
//!
//! Robustness: every read is bounds-checked, nesting, node counts, definition bytes and output
//! sizes are capped (section 12 of the contract), and the crate has no `unsafe` outside
//! [`simd`] (vector kernels, each with a SAFETY proof and a property test against its scalar
//! twin; PERF.md H18, H155).
#![deny(unsafe_code)]

mod bytes;
pub mod carve;
pub mod chunk;
pub mod dump;
pub mod error;
pub mod escape;
pub mod file_header;
pub mod filter;
pub mod info;
pub mod input;
pub mod limits;
pub mod mta;
pub mod options;
pub mod pe;
pub mod pipeline;
pub mod program;
pub mod provenance;
pub mod reader_error;
pub mod records;
pub mod render_json;
pub mod render_xml;
#[allow(unsafe_code)]
pub mod simd;
pub mod template;
pub mod template_instances;
#[cfg(test)]
mod testing;
pub mod tokens;
pub mod tree;
pub mod triage;
pub mod values_decode;
pub mod values_format;
pub mod wevt_cache;

pub use dump::{dump, dump_before_exit, ChunkResult, EvtxFile, Outcome, RecordResult, Renderer};
pub use encoding_rs::Encoding;
pub use error::{Cause, CauseKind, ErrorKind, Failure, FatalError};
pub use filter::Filter;
pub use input::{ChunkOrder, ChunkSlot, ChunkSource, Input};
pub use options::{parse_ansi_codec, parse_event_ranges, Format, Options};

/// Version of the reference this crate reproduces.
pub const REFERENCE_VERSION: &str = "0.15.1";
