//! Every limit the two engines share, once, each with its reason. cbindgen copies them into
//! `include/evtx.h`; `zig/src/limits.zig` holds the Zig engine's, re-exported by
//! `zig/capi/capi.zig` under these names, so the conformance test
//! (`compare/harness/abi_conformance.zig`) fails to compile when the two sides differ. The Rust
//! engine takes them from here (`rust/evtx-core/src/limits.rs`). Only crafted files reach them.

/// Worker threads at most: each holds a 64 KiB window and a renderer, and more than this
/// cannot be kept busy by one ordered consumer.
pub const EVTX_LIMIT_THREADS: u32 = 256;

/// Rendered bytes of one record past which it fails (contract 12): real records render to a
/// few KiB; a crafted one can repeat a value at every level and grow exponentially.
pub const EVTX_LIMIT_RECORD_OUTPUT_BYTES: u32 = 16 << 20;

/// Rendered bytes of one chunk past which its records fail (contract 12): a chunk's output is
/// held until its last record, and its records share templates that each render near the
/// record limit.
pub const EVTX_LIMIT_CHUNK_OUTPUT_BYTES: u32 = 64 << 20;

/// Tree nodes one record may build (contract 12): instances copy their templates, so a small
/// record can build a tree far larger than itself.
pub const EVTX_LIMIT_RECORD_NODES: u32 = 1 << 18;

/// Open elements in one BinXML stream (contract 6.6), as the reference: deeper fails the record.
pub const EVTX_LIMIT_ELEMENT_DEPTH: u32 = 512;

/// Nested BinXML streams (values and instances inside values, contract 6.6), as the reference.
pub const EVTX_LIMIT_STREAM_NESTING: u32 = 64;

/// Elements the renderers nest, recursing once per level, across nested streams: the
/// reference's tree walkers' cap (its `MAX_RENDER_DEPTH`, equal to the element depth), so the
/// stack stays bounded whatever a crafted record nests.
pub const EVTX_LIMIT_RENDER_DEPTH: u32 = 512;

/// Compiled record programs one renderer keeps across chunks. When full, new shapes are
/// refused (rendered the slow way) and the programs kept stay: the reference's cross-chunk
/// program store also refuses when full, and the first shapes of a log are its common ones.
pub const EVTX_LIMIT_PROGRAMS: u32 = 8192;

/// Bytes of those programs (literal bytes plus 8 per operation), refused past it as above.
pub const EVTX_LIMIT_PROGRAM_BYTES: u32 = 32 << 20;

/// Substitution values a template instance may declare: the reference's preflight limit, so
/// an instance declaring more fails its record as the reference fails it.
pub const EVTX_LIMIT_INSTANCE_VALUES: u32 = 4096;

/// Substitution values one compiled program reads: one instance's cap
/// (`EVTX_LIMIT_INSTANCE_VALUES`). A record with more (nested instances) renders the slow way,
/// to the same bytes.
pub const EVTX_LIMIT_PROGRAM_VALUES: u32 = 4096;

/// Array items one program's signature describes one by one (the Zig engine keeps their
/// emptiness in a 64-bit mask). A longer array renders the slow way, to the same bytes.
pub const EVTX_LIMIT_PROGRAM_ARRAY_ITEMS: u32 = 64;

/// Nested BinXML values whose failure is deferred until the template uses them (the
/// reference's compiled path reads only the values a template uses), as deep as that path
/// follows them.
pub const EVTX_LIMIT_DEFER_DEPTH: u32 = 8;
