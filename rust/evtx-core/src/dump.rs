//! The file, the per-worker chunk renderer and the ordered multi-threaded driver
//! (contract sections 3, 5.2, 11.2, 12).

use crate::carve;
use crate::chunk::{self, ChunkHeader};
use crate::error::{ErrorKind, Failure, FatalError};
use crate::file_header::{self, FileHeader, CHUNK_SIZE};
use crate::filter::Plan;
use crate::input::{ChunkSlot, ChunkSource};
use crate::limits::{
    record_output_limit, CHUNK_EXTENSION_BYTES_MAX, CHUNK_NODES_MAX, CHUNK_OUTPUT_BYTES_MAX,
    RECORD_OUTPUT_BYTES_MAX,
};
use crate::mta;
use crate::options::{Format, Options};
use crate::pipeline;
use crate::program::{Defs, Program, Programs, Recorder, Sign};
use crate::provenance::{Checksum, Origin};
use crate::records::{self, RecordWalker, WalkItem};
use crate::render_xml::RenderInput;
use crate::template::{Identities, Templates};
use crate::tokens::{self, Parser, Scratch, Source};
use crate::tree::{Names, Tree};
use crate::{render_json, render_xml};
use std::cell::RefCell;
use std::ops::{ControlFlow, Range};

/// What [`Renderer::write_filtered`] returns for a record the filter drops (no record's text
/// starts there).
const SKIPPED: usize = usize::MAX;

/// An EVTX file opened over borrowed bytes (no copy). Its order scan and chunk access are those
/// of [`ChunkSource`], shared with [`crate::Input`] (a file read through windows).
#[derive(Debug, Clone)]
pub struct EvtxFile<'a> {
    data: &'a [u8],
    header: FileHeader,
}

impl<'a> EvtxFile<'a> {
    /// Checks the file header (fatal errors of section 2).
    pub fn open(data: &'a [u8]) -> Result<EvtxFile<'a>, FatalError> {
        let header = FileHeader::parse(data)?;
        Ok(EvtxFile { data, header })
    }

    /// The whole file.
    pub fn data(&self) -> &'a [u8] {
        self.data
    }

    /// The parsed file header.
    pub fn header(&self) -> &FileHeader {
        &self.header
    }

    /// File offset of chunk slot `slot`.
    pub fn chunk_offset(slot: u32) -> u64 {
        file_header::chunk_offset(slot)
    }

    /// The bytes of slot `slot` (shorter than 65536 when the file ends inside it).
    pub fn chunk_bytes(&self, slot: u32) -> &'a [u8] {
        let start = Self::chunk_offset(slot).min(self.data.len() as u64) as usize;
        let end = (start + CHUNK_SIZE).min(self.data.len());
        &self.data[start..end]
    }
}

/// How one record (or chunk) came out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// The record's bytes in [`ChunkResult::bytes`]: banner (if shown), text, trailing
    /// newline(s), exactly as printed.
    Rendered(Range<usize>),
    /// The record or chunk failed.
    Failed(Failure),
}

/// One entry per rendered or failed record, and per chunk error, in output order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordResult {
    /// Record header id, `None` for chunk errors.
    pub record_id: Option<u64>,
    /// Record header FILETIME (0 for chunk errors).
    pub filetime: u64,
    /// Chunk slot number in the file.
    pub chunk_slot: u32,
    /// File offset of the record (or chunk, for chunk errors).
    pub file_offset: u64,
    /// Carved from unallocated space (`--recover-records`); never set on failures.
    pub recovered: bool,
    /// The checksum status of the record's chunk: computed with `--provenance` or
    /// `--validate-checksums`, else `Unchecked`.
    pub checksum: Checksum,
    /// What happened.
    pub outcome: Outcome,
}

/// The output of one chunk slot.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ChunkResult {
    /// Chunk slot number.
    pub slot: u32,
    /// File offset of the chunk.
    pub file_offset: u64,
    /// Rendered bytes of all successful records, back to back.
    pub bytes: Vec<u8>,
    /// Entries in output order.
    pub records: Vec<RecordResult>,
    /// The trailing partial slot (`shared-fixtures/README.md`, "A log cut inside its last
    /// chunk"): its `incomplete chunk` error is ours, not the reference's.
    pub partial: bool,
    /// Entries of `records` that failed, counted by the renderer that filled them.
    failures: usize,
}

impl ChunkResult {
    /// How many entries failed, as [`Renderer::render_chunk_into`] counted them on the
    /// renderer's thread: a sink on another thread (the caller at `-t 2` and up) that asks
    /// this instead of reading every entry leaves the worker's entries in the worker's cache
    /// (PERF.md H174: that walk moved ~20,000 entries a run between the cores). Stale if
    /// `records` is changed after rendering.
    pub fn failures(&self) -> usize {
        self.failures
    }

    /// The first failed entry, if any. The error of a trailing partial slot does not count:
    /// the reference sees no fault there, so `--stop-after-one-error` does not stop at it.
    pub fn first_failure(&self) -> Option<(usize, &RecordResult)> {
        if self.failures == 0 {
            return None;
        }
        self.records.iter().enumerate().find(|(_, r)| {
            matches!(r.outcome, Outcome::Failed(_)) && !(self.partial && r.record_id.is_none())
        })
    }
}

/// A per-worker renderer: owns the name cache, template cache, trees and scratch, reused for
/// every chunk it renders.
pub struct Renderer {
    opts: Options,
    names: Names,
    templates: Templates,
    programs: Programs,
    identities: Identities,
    tree: Tree,
    scratch: Scratch,
    visited: chunk::Visited,
    /// Size of the last chunk's output, to pre-size the next.
    last_output: usize,
    /// Tree nodes built for this chunk's records (see [`CHUNK_NODES_MAX`]).
    chunk_nodes: usize,
    /// This worker's chunk buffer when the source is a file (64 KiB, allocated on first use).
    window: ChunkSlot,
    /// The slow path's recorder, reused by every record it records (PERF.md H153).
    recorder: RefCell<Recorder>,
    /// The checksum status of the chunk being rendered (`RecordResult::checksum`).
    checksum: Checksum,
    /// Whether the run has a filter (`Options::filter`): without one, records take the paths
    /// they took before filters existed.
    filtering: bool,
    /// The filter's scratch: a field's text.
    field_text: Vec<u8>,
    /// `triage` ([`Renderer::collect_fields`]): the fields of the chunk's rendered records.
    fields: Option<Box<crate::triage::FieldLog>>,
}

impl Renderer {
    /// A renderer for `opts`.
    pub fn new(opts: &Options) -> Renderer {
        Renderer {
            opts: opts.clone(),
            names: Names::default(),
            templates: Templates::default(),
            programs: Programs::default(),
            identities: Identities::default(),
            tree: Tree::default(),
            scratch: Scratch::default(),
            visited: chunk::Visited::default(),
            last_output: 128 << 10,
            chunk_nodes: 0,
            window: ChunkSlot::default(),
            recorder: RefCell::default(),
            checksum: Checksum::Unchecked,
            filtering: !opts.filter.is_empty(),
            field_text: Vec::new(),
            fields: None,
        }
    }

    /// Makes this renderer read the five `System` fields of every record it renders, as the
    /// filters read them, into [`Renderer::fields`] (`crate::triage`), one entry per
    /// `Outcome::Rendered` entry of the chunk, in order. A record whose fields come from its
    /// program's plan is then not replayed where its output is proven within the limits, so
    /// its entry's text is empty; every other record is rendered as without it.
    pub fn collect_fields(&mut self) {
        self.filtering = true;
        self.fields = Some(Box::default());
    }

    /// The fields of the last chunk's rendered records ([`Renderer::collect_fields`]).
    pub fn fields(&self) -> Option<&crate::triage::FieldLog> {
        self.fields.as_deref()
    }

    /// A renderer for `opts` that shares its ids and programs with the other renderers of the
    /// same run through `shared` (PERF.md H95).
    pub fn new_shared(opts: &Options, shared: &std::sync::Arc<crate::program::Shared>) -> Renderer {
        let mut r = Renderer::new(opts);
        r.programs.shared = Some(shared.clone());
        r.identities.shared = Some(shared.clone());
        r
    }

    /// Renders chunk slot `slot` of `file` (3.2, 5.2).
    pub fn render_chunk<S: ChunkSource + ?Sized>(&mut self, file: &S, slot: u32) -> ChunkResult {
        let mut out = ChunkResult::default();
        self.render_chunk_into(file, slot, &mut out);
        out
    }

    /// Like [`Renderer::render_chunk`], reusing the buffers of `out` (its previous content is
    /// discarded). A file source is read into this renderer's own 64 KiB window.
    pub fn render_chunk_into<S: ChunkSource + ?Sized>(
        &mut self,
        file: &S,
        slot: u32,
        out: &mut ChunkResult,
    ) {
        let mut window = std::mem::take(&mut self.window);
        let chunk = file.chunk(slot, &mut window);
        let cut = file.is_cut_slot(slot, chunk);
        self.render_slot(slot, chunk, cut, out);
        self.window = window;
        // Counted here, where the entries were just written (PERF.md H174).
        out.failures = out
            .records
            .iter()
            .filter(|r| matches!(r.outcome, Outcome::Failed(_)))
            .count();
    }

    /// Renders the bytes `chunk` of slot `slot` into `out`.
    /// `cut`: the slot is the cut last chunk ([`ChunkSource::is_cut_slot`]).
    fn render_slot(&mut self, slot: u32, chunk: &[u8], cut: bool, out: &mut ChunkResult) {
        let file_offset = EvtxFile::chunk_offset(slot);
        out.slot = slot;
        out.file_offset = file_offset;
        out.bytes.clear();
        out.records.clear();
        out.partial = false;
        self.checksum = Checksum::Unchecked;
        if let Some(log) = &mut self.fields {
            log.clear();
        }
        let out = &mut *out;
        let chunk_error = |out: &mut ChunkResult, failure: Failure| {
            out.records.push(RecordResult {
                record_id: None,
                filetime: 0,
                chunk_slot: slot,
                file_offset,
                recovered: false,
                checksum: Checksum::Unchecked,
                outcome: Outcome::Failed(failure),
            });
        };
        if cut {
            self.render_partial_chunk(chunk, slot, out);
            return;
        }
        if chunk.len() < CHUNK_SIZE {
            let missing = format!("{} bytes missing", CHUNK_SIZE - chunk.len());
            chunk_error(out, Failure::new(ErrorKind::IncompleteChunk, missing));
            return;
        }
        let Some(header) = ChunkHeader::parse(chunk) else {
            if !crate::bytes::all_zero(chunk) {
                let found = crate::error::hex(&chunk[..8]);
                chunk_error(
                    out,
                    Failure::new(ErrorKind::BadChunkMagic, format!("found {found}")),
                );
            }
            return;
        };
        if self.opts.validate_checksums {
            if let Err(f) = header.validate_checksums(chunk) {
                chunk_error(out, f);
                return;
            }
        }
        if self.opts.validate_checksums || self.opts.provenance.is_some() {
            self.checksum = Checksum::of_chunk(&header, chunk);
        }
        if let Err(f) = chunk::check_string_table(chunk, &mut self.visited) {
            chunk_error(out, f);
            return;
        }
        if let Some(cache) = self.opts.wevt_cache.clone() {
            self.walk_chunk_wevt(&cache, chunk, header, slot, out);
            return;
        }
        let walker = RecordWalker::new(chunk, header, self.opts.recover_records);
        self.walk_chunk(chunk, chunk, slot, walker, out);
    }

    /// `--wevt-cache` (hook into `crate::wevt_cache`): walks the chunk; when definitions failed
    /// whose GUIDs the cache holds, appends their translations after the chunk's bytes and
    /// walks it again over `chunk ++ appended`, those offsets redirected. Each round adds at
    /// least one template, so it ends.
    #[cold]
    fn walk_chunk_wevt(
        &mut self,
        cache: &crate::wevt_cache::WevtCache,
        chunk: &[u8],
        header: chunk::ChunkHeader,
        slot: u32,
        out: &mut ChunkResult,
    ) {
        let mut ext: Vec<u8> = Vec::new();
        let mut tried: Vec<u32> = Vec::new();
        self.templates.fallback.clear();
        loop {
            let data = if ext.is_empty() { chunk } else { &ext[..] };
            out.bytes.clear();
            out.records.clear();
            let walker = RecordWalker::new(chunk, header, self.opts.recover_records);
            self.walk_chunk(chunk, data, slot, walker, out);
            let failed = self.templates.failed_offsets();
            let before = self.templates.fallback.len();
            for off in failed {
                if tried.contains(&off) {
                    continue;
                }
                tried.push(off);
                let o = off as usize;
                let Some(guid) = chunk.get(o + 4..o + 20).filter(|_| o + 24 <= chunk.len()) else {
                    continue;
                };
                let guid: [u8; 16] = guid.try_into().expect("16 bytes");
                let Some(temp) = cache.temp(&guid) else {
                    continue;
                };
                if ext.is_empty() {
                    ext.extend_from_slice(chunk);
                }
                if ext.len() + 2 * temp.len() > CHUNK_EXTENSION_BYTES_MAX {
                    continue;
                }
                if let Some(def) = crate::wevt_cache::translate(temp, &mut ext) {
                    self.templates.fallback.insert(off, def);
                }
            }
            if self.templates.fallback.len() == before {
                break;
            }
        }
        self.templates.fallback.clear();
    }

    /// Renders the records `walker` yields from `chunk` (slot `slot`) onto `out`.
    /// `data` is what records read by offset: `chunk`, or with `--wevt-cache` `chunk` followed
    /// by translated templates.
    fn walk_chunk(
        &mut self,
        chunk: &[u8],
        data: &[u8],
        slot: u32,
        mut walker: RecordWalker<'_>,
        out: &mut ChunkResult,
    ) {
        self.names.clear();
        self.templates.clear();
        self.identities.new_chunk();
        self.programs.new_chunk();
        self.chunk_nodes = 0;
        out.bytes.reserve(self.last_output + self.last_output / 4);
        let cx = Source {
            chunk: data,
            codec: self.opts.ansi_codec,
        };
        while let Some(item) = walker.next() {
            match item {
                WalkItem::Error { offset, kind, id } => {
                    out.records
                        .push(Self::record_error(chunk, slot, offset, kind, id));
                }
                WalkItem::Record(rec) => {
                    self.render_record(cx, slot, &rec, false, &mut walker, out)
                }
                WalkItem::Carved(rec) => self.render_record(cx, slot, &rec, true, &mut walker, out),
            }
        }
        self.last_output = out.bytes.len().max(4096);
    }

    /// The entry of a record the walker could not frame: its detail names what the walker saw.
    #[cold]
    fn record_error(
        chunk: &[u8],
        slot: u32,
        offset: u32,
        kind: ErrorKind,
        id: Option<u64>,
    ) -> RecordResult {
        RecordResult {
            record_id: id,
            filetime: 0,
            chunk_slot: slot,
            file_offset: EvtxFile::chunk_offset(slot) + u64::from(offset),
            recovered: false,
            checksum: Checksum::Unchecked,
            outcome: Outcome::Failed(Failure::new(
                kind,
                crate::error::record_detail(kind, chunk, offset as usize),
            )),
        }
    }

    /// Renders one framed record onto `out.bytes` and adds its entry: rendered, failed, or
    /// (excluded by `--events`, or carved noise) none.
    #[inline(always)]
    fn render_record(
        &mut self,
        cx: Source<'_>,
        slot: u32,
        rec: &records::RecordHeader,
        recovered: bool,
        walker: &mut RecordWalker<'_>,
        out: &mut ChunkResult,
    ) {
        let start = out.bytes.len();
        let result = if self.filtering {
            self.write_filtered(cx, rec, recovered, &mut out.bytes)
        } else {
            self.write_record(cx, rec, recovered, &mut out.bytes)
        };
        let file_offset = EvtxFile::chunk_offset(slot) + u64::from(rec.offset);
        let checksum = self.checksum;
        let entry = |outcome| RecordResult {
            record_id: Some(rec.id),
            filetime: rec.filetime,
            chunk_slot: slot,
            file_offset,
            recovered,
            checksum,
            outcome,
        };
        match result {
            Ok(SKIPPED) => out.bytes.truncate(start),
            Ok(body) => {
                if recovered {
                    carve::mark_recovered(&mut out.bytes, body, self.opts.format == Format::Xml);
                }
                if let Some(p) = &self.opts.provenance {
                    let origin = Origin {
                        chunk: slot,
                        offset: file_offset,
                        recovered,
                        checksum,
                    };
                    p.mark(
                        &mut out.bytes,
                        body,
                        self.opts.format == Format::Xml,
                        origin,
                    );
                }
                if self.opts.wants_record(rec.id) {
                    let end = out.bytes.len();
                    out.records.push(entry(Outcome::Rendered(start..end)));
                } else {
                    out.bytes.truncate(start);
                }
            }
            Err(f) => {
                out.bytes.truncate(start);
                if recovered {
                    // Carved noise: dropped silently (5.4).
                    walker.rescan_after(rec);
                } else {
                    out.records.push(entry(Outcome::Failed(f)));
                }
            }
        }
    }

    /// The trailing partial slot (`shared-fixtures/README.md`): one `incomplete chunk` error,
    /// then, with `--recover-records`, its complete records carved as recovered.
    #[cold]
    fn render_partial_chunk(&mut self, chunk: &[u8], slot: u32, out: &mut ChunkResult) {
        out.partial = true;
        out.records.push(RecordResult {
            record_id: None,
            filetime: 0,
            chunk_slot: slot,
            file_offset: EvtxFile::chunk_offset(slot),
            recovered: false,
            checksum: Checksum::Unchecked,
            outcome: Outcome::Failed(Failure::new(
                ErrorKind::IncompleteChunk,
                format!("{} bytes missing", CHUNK_SIZE - chunk.len()),
            )),
        });
        if !self.opts.recover_records || self.opts.validate_checksums {
            return;
        }
        if let Some(header) = ChunkHeader::parse(chunk) {
            self.walk_chunk(
                chunk,
                chunk,
                slot,
                RecordWalker::carve_only(chunk, header),
                out,
            );
        }
    }

    /// Writes one record with its framing (11.2) onto `buf`: replays a program when one
    /// matches the record's signature, else renders the slow way (recording a program when the
    /// shape allows).
    /// Returns where the record's text starts in `buf` (after the banner).
    #[inline(always)]
    fn write_record(
        &mut self,
        cx: Source<'_>,
        rec: &records::RecordHeader,
        recovered: bool,
        buf: &mut Vec<u8>,
    ) -> Result<usize, Failure> {
        let (bstart, bend) = Self::binxml_window(rec)?;
        let sign = self.sign(cx, bstart, bend);
        if let Sign::Hit { program } = sign {
            self.banner(buf, rec.id, recovered);
            return self.replay_record(cx, program, buf);
        }
        self.write_slow(cx, rec, recovered, sign, buf)
            .map(|(body, _)| body)
    }

    /// [`Renderer::write_record`] under a filter (`Options::filter`, with `--events`): the
    /// same text and errors for the records it keeps, [`SKIPPED`] for the others. A skipped
    /// record still fails as it would unfiltered (`shared-fixtures/README.md`, "Filters"): on
    /// the slow path it is rendered, then dropped; on the fast path it is decided from the
    /// program's plan and its values, and replayed (then dropped) only when its output could
    /// pass a limit. Cold: the unfiltered path keeps its code as it was.
    #[cold]
    fn write_filtered(
        &mut self,
        cx: Source<'_>,
        rec: &records::RecordHeader,
        recovered: bool,
        buf: &mut Vec<u8>,
    ) -> Result<usize, Failure> {
        if self.fields.is_some() {
            return self.write_fields(cx, rec, recovered, buf);
        }
        let (bstart, bend) = Self::binxml_window(rec)?;
        let wanted = self.opts.wants_record(rec.id);
        let sign = self.sign(cx, bstart, bend);
        if let Sign::Hit { program } = sign {
            let keep = wanted && self.decide_hit(cx, program, bstart, bend);
            if !keep && self.replay_cannot_fail(program, buf.len()) {
                return Ok(SKIPPED);
            }
            self.banner(buf, rec.id, recovered);
            let body = self.replay_record(cx, program, buf)?;
            return Ok(if keep { body } else { SKIPPED });
        }
        let (body, root) = self.write_slow(cx, rec, recovered, sign, buf)?;
        let keep = wanted
            && self.opts.filter.decide_tree(
                cx.chunk,
                cx.codec,
                &self.names,
                &self.tree,
                root,
                &mut self.field_text,
            );
        Ok(if keep { body } else { SKIPPED })
    }

    /// [`Renderer::write_record`] for `triage` ([`Renderer::collect_fields`]): the same
    /// errors, and the record's fields added to the log when it renders. A record that replays
    /// a program takes its fields from the plan (or its tree, where the plan needs it) and is
    /// replayed only when its output could pass a limit; its entry's text is empty otherwise.
    #[cold]
    fn write_fields(
        &mut self,
        cx: Source<'_>,
        rec: &records::RecordHeader,
        recovered: bool,
        buf: &mut Vec<u8>,
    ) -> Result<usize, Failure> {
        let (bstart, bend) = Self::binxml_window(rec)?;
        let sign = self.sign(cx, bstart, bend);
        if let Sign::Hit { program } = sign {
            let Some(log) = self.fields.as_deref_mut() else {
                unreachable!("write_fields runs with a log");
            };
            let plan = self.programs.plan(program);
            if !crate::triage::read_plan(plan, self.programs.slots(), cx.chunk, cx.codec, log) {
                let root = self.parse_tree_uncounted(cx, bstart, bend).ok();
                let log = self.fields.as_deref_mut().expect("a log");
                crate::triage::read_tree(cx.chunk, cx.codec, &self.names, &self.tree, root, log);
            }
            if self.replay_cannot_fail(program, buf.len()) {
                return Ok(buf.len());
            }
            self.banner(buf, rec.id, recovered);
            return self.replay_record(cx, program, buf).inspect_err(|_| {
                self.fields.as_deref_mut().expect("a log").pop();
            });
        }
        let (body, root) = self.write_slow(cx, rec, recovered, sign, buf)?;
        let log = self.fields.as_deref_mut().expect("a log");
        crate::triage::read_tree(cx.chunk, cx.codec, &self.names, &self.tree, Some(root), log);
        Ok(body)
    }

    /// The fast path's decision for a record that replays `program`: from the program's plan
    /// and the record's values, or, where the plan needs it, from the record's tree (built
    /// outside the chunk's node budget, which counts the trees the unfiltered run builds).
    fn decide_hit(&mut self, cx: Source<'_>, program: Program, bstart: usize, bend: usize) -> bool {
        let decided = self.opts.filter.decide_plan(
            self.programs.plan(program),
            self.programs.slots(),
            cx.chunk,
            cx.codec,
            &mut self.field_text,
        );
        decided.unwrap_or_else(|| self.decide_by_tree(cx, bstart, bend))
    }

    #[cold]
    fn decide_by_tree(&mut self, cx: Source<'_>, bstart: usize, bend: usize) -> bool {
        let Ok(root) = self.parse_tree_uncounted(cx, bstart, bend) else {
            // Not seen: a record that replays a program parses. Kept, as unfiltered.
            return true;
        };
        self.opts.filter.decide_tree(
            cx.chunk,
            cx.codec,
            &self.names,
            &self.tree,
            root,
            &mut self.field_text,
        )
    }

    /// Whether replaying `program` after `len` bytes of the chunk's output cannot pass an
    /// output limit ([`Programs::replay_bound`]; 64 bytes for the banner).
    fn replay_cannot_fail(&self, program: Program, len: usize) -> bool {
        let bound = self.programs.replay_bound(program);
        bound <= RECORD_OUTPUT_BYTES_MAX && len + bound + 64 <= CHUNK_OUTPUT_BYTES_MAX
    }

    /// The record's BinXML window, which the reference refuses empty (a record of exactly 28
    /// bytes).
    #[inline(always)]
    fn binxml_window(rec: &records::RecordHeader) -> Result<(usize, usize), Failure> {
        let (bstart, bend) = rec.binxml_window();
        if bstart == bend {
            return Err(Failure::binxml("empty BinXML window"));
        }
        Ok((bstart, bend))
    }

    /// The record's signature: a program to replay, or the slow path.
    #[inline(always)]
    fn sign(&mut self, cx: Source<'_>, bstart: usize, bend: usize) -> Sign {
        let mut defs = Defs {
            names: &mut self.names,
            scratch: &mut self.scratch,
            templates: &mut self.templates,
            identities: &mut self.identities,
        };
        // With `--mta` every record is rendered from its tree, which `RenderingInfo` reads.
        if self.opts.mta.is_some() {
            Sign::Unsupported
        } else {
            self.programs.sign(cx, &mut defs, bstart, bend)
        }
    }

    /// The slow path: the record's tree, rendered (and recorded into a program when `sign`
    /// is a miss). Returns where the record's text starts and the tree's root.
    #[inline(always)]
    fn write_slow(
        &mut self,
        cx: Source<'_>,
        rec: &records::RecordHeader,
        recovered: bool,
        sign: Sign,
        buf: &mut Vec<u8>,
    ) -> Result<(usize, u32), Failure> {
        let (bstart, bend) = rec.binxml_window();
        let root = self.parse_tree(cx, bstart, bend)?;
        self.banner(buf, rec.id, recovered);
        let body = buf.len();
        let recorder = (sign == Sign::Miss).then(|| {
            self.recorder.borrow_mut().restart(buf.len());
            &self.recorder
        });
        self.render_tree(cx, root, recorder, body, buf)?;
        if let Some(mta) = &self.opts.mta {
            self.add_rendering_info(mta, cx, root, rec.id, body, buf);
        }
        let end = buf.len();
        buf.push(b'\n');
        if recorder.is_some() {
            let plan = self
                .filtering
                .then(|| Plan::of_tree(cx.chunk, cx.codec, &self.names, &self.tree, root));
            self.programs.store(self.recorder.get_mut(), buf, plan);
        }
        Self::check_size(buf.len(), body, end).map(|()| (body, root))
    }

    /// The fast path: a compiled program's literal bytes and value slots, read from the
    /// record's bytes without a tree. Returns where the record's text starts.
    #[inline(always)]
    fn replay_record(
        &mut self,
        cx: Source<'_>,
        program: Program,
        buf: &mut Vec<u8>,
    ) -> Result<usize, Failure> {
        let body = buf.len();
        // The program's tail ends with the record's newline (`store` takes it), which the
        // record's limit does not count.
        if !self
            .programs
            .replay(buf, cx, program, record_output_limit(body) + 1)
        {
            return Err(Failure::binxml("record output too large"));
        }
        debug_assert_eq!(buf.last(), Some(&b'\n'));
        Self::check_size(buf.len(), body, buf.len() - 1).map(|()| body)
    }

    /// The slow path's first half: the record's token stream into `self.tree`, bounded by the
    /// chunk's node budget. Returns the root element.
    #[inline(always)]
    fn parse_tree(&mut self, cx: Source<'_>, bstart: usize, bend: usize) -> Result<u32, Failure> {
        if self.chunk_nodes > CHUNK_NODES_MAX {
            return Err(Failure::binxml("too many nodes in chunk"));
        }
        let parsed = self.parse_tree_uncounted(cx, bstart, bend);
        self.chunk_nodes += self.tree.nodes.len() + self.tree.elems.len();
        parsed
    }

    /// [`Renderer::parse_tree`] without the chunk's node budget.
    #[inline(always)]
    fn parse_tree_uncounted(
        &mut self,
        cx: Source<'_>,
        bstart: usize,
        bend: usize,
    ) -> Result<u32, Failure> {
        // Unused BinXML values (shared-fixtures/README.md): the reference's XML programs read
        // only the values a template uses, and so do we in every output format (its JSON
        // programs refuse more templates, and fail those records). Not with `--mta`: the
        // template subcommands read records that way, as the reference's iterators do.
        self.scratch.defer_unused = self.opts.mta.is_none();
        let mut parser = Parser {
            src: cx,
            names: &mut self.names,
            s: &mut self.scratch,
            tree: &mut self.tree,
            templates: Some(&mut self.templates),
        };
        let parsed = tokens::parse_record(&mut parser, bstart, bend);
        parsed.map_err(|e| e.into_failure(cx.chunk.len()))
    }

    /// The slow path's second half: the tree in the chosen format, recorded into a program
    /// when `recorder` is given.
    #[inline(always)]
    fn render_tree(
        &self,
        cx: Source<'_>,
        root: u32,
        recorder: Option<&RefCell<Recorder>>,
        body: usize,
        buf: &mut Vec<u8>,
    ) -> Result<(), Failure> {
        let rcx = RenderInput {
            chunk: cx.chunk,
            codec: cx.codec,
            names: &self.names,
            tree: &self.tree,
            rec: recorder,
            limit: record_output_limit(body),
        };
        match self.opts.format {
            Format::Xml => render_xml::render_record(buf, &rcx, root, self.opts.indent),
            Format::Json | Format::Jsonl => {
                render_json::render_record(buf, &rcx, root, self.opts.separate_json_attributes)
            }
        }
        .map_err(|e| e.into_failure(cx.chunk.len()))
    }

    /// `--mta`: splices the record's `RenderingInfo` into its rendered text (`body` on).
    #[cold]
    fn add_rendering_info(
        &self,
        mta: &mta::MtaFile,
        cx: Source<'_>,
        root: u32,
        id: u64,
        body: usize,
        buf: &mut Vec<u8>,
    ) {
        let fields = mta::event_fields(cx.chunk, cx.codec, &self.names, &self.tree, root);
        if let Some(info) = fields.and_then(|f| mta.rendering_info(id, &f)) {
            let json = self.opts.format != Format::Xml;
            let spliced = mta::splice(buf, body, &info, json, self.opts.indent);
            debug_assert!(spliced, "a rendered Event ends with its closing");
        }
    }

    fn banner(&self, buf: &mut Vec<u8>, id: u64, recovered: bool) {
        if self.opts.banner() {
            buf.extend_from_slice(b"Record ");
            crate::values_format::write_int(buf, id);
            if recovered {
                buf.extend_from_slice(carve::BANNER_SUFFIX);
            }
            buf.push(b'\n');
        }
    }

    /// Fails the record whose text is `body..end` past its limit (`record_output_limit`: its
    /// banner and newline not counted), or the chunk's output, `len` bytes, past its own.
    /// The Zig engine's `Renderer.checkSize`.
    fn check_size(len: usize, body: usize, end: usize) -> Result<(), Failure> {
        debug_assert!(body <= end && end <= len);
        if end > record_output_limit(body) || len > CHUNK_OUTPUT_BYTES_MAX {
            return Err(Failure::binxml("record output too large"));
        }
        Ok(())
    }
}

/// Renders every chunk of `file` in output order (3.3) with `opts.threads` workers and hands
/// each chunk's result to `sink`, strictly in order. `sink` returning `Break` stops the dump.
/// With one thread everything runs inline on the caller's thread.
///
/// Memory is bounded whatever the file size: each worker reads one chunk at a time into its own
/// window (for a file source), and at most `4 * threads` rendered chunks wait for the sink
/// ([`crate::pipeline`]).
pub fn dump<S, F>(file: &S, opts: &Options, sink: F)
where
    S: ChunkSource + ?Sized,
    F: FnMut(&ChunkResult) -> ControlFlow<()>,
{
    dump_with(file, opts, pipeline::Teardown::Free, sink);
}

/// [`dump`] for a process that exits right after (the CLI): the renderers, their results and
/// the shared table are left to the exit instead of being freed one by one (PERF.md H164).
/// Only for a `main` about to return: the memory is never given back otherwise.
pub fn dump_before_exit<S, F>(file: &S, opts: &Options, sink: F)
where
    S: ChunkSource + ?Sized,
    F: FnMut(&ChunkResult) -> ControlFlow<()>,
{
    dump_with(file, opts, pipeline::Teardown::Skip, sink);
}

fn dump_with<S, F>(file: &S, opts: &Options, teardown: pipeline::Teardown, mut sink: F)
where
    S: ChunkSource + ?Sized,
    F: FnMut(&ChunkResult) -> ControlFlow<()>,
{
    let order = file.chunk_order(opts.validate_checksums);
    let threads = opts.effective_threads().min(order.len().max(1));
    pipeline::run(file, opts, &order, threads, teardown, &mut sink);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::limits::RECORD_OUTPUT_BYTES_MAX;

    /// Renders every chunk of `file` in order with one renderer; every record must render.
    fn render_all(file: &EvtxFile<'_>, r: &mut Renderer, opts: &Options) -> (Vec<u8>, usize) {
        let mut text = Vec::new();
        let mut records = 0;
        let order = file.chunk_order(opts.validate_checksums);
        for slot in (0..order.len()).filter_map(|i| order.get(i)) {
            let c = r.render_chunk(file, slot);
            assert!(
                c.first_failure().is_none(),
                "slot {slot}: {:?}",
                c.first_failure()
            );
            records += c.records.len();
            text.extend_from_slice(&c.bytes);
        }
        (text, records)
    }

    /// The CLI's options for `-o <format>` (with `--separate-json-attributes` when `separate`).
    fn dump_options(format: Format, separate: bool) -> Options {
        Options {
            format,
            separate_json_attributes: separate,
            show_record_number: format != Format::Jsonl,
            indent: format == Format::Xml,
            ..Options::default()
        }
    }

    #[test]
    fn unused_binxml_values_fail_no_format() {
        // `unused-binxml-json`: records 2-5 hold a broken BinXML value no template uses; the
        // reference's JSON fails them, we render them in every format as its XML does
        // (shared-fixtures/README.md, "Unused BinXML values"); expected outputs are the
        // reference's on the fixture's twin (`evtx-fixture-gen expected`).
        let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../../shared-fixtures/");
        let data = std::fs::read(format!("{root}damaged/unused-binxml-json.evtx")).unwrap();
        let file = EvtxFile::open(&data).unwrap();
        for (format, separate, expected) in [
            (Format::Jsonl, false, "unused-binxml-json.ours.jsonl"),
            (Format::Jsonl, true, "unused-binxml-json.ours.sep.jsonl"),
            (Format::Xml, false, "unused-binxml-json.ours.xml"),
        ] {
            let opts = dump_options(format, separate);
            let mut r = Renderer::new(&opts);
            let (mut text, mut failed) = (Vec::new(), Vec::new());
            let order = file.chunk_order(false);
            for slot in (0..order.len()).filter_map(|i| order.get(i)) {
                let c = r.render_chunk(&file, slot);
                text.extend_from_slice(&c.bytes);
                let ids = c
                    .records
                    .iter()
                    .filter(|r| matches!(r.outcome, Outcome::Failed(_)));
                failed.extend(ids.map(|r| r.record_id));
            }
            let want = std::fs::read(format!("{root}expected/{expected}")).unwrap();
            assert_eq!(
                String::from_utf8_lossy(&text),
                String::from_utf8_lossy(&want),
                "{expected}"
            );
            // Record 6 alone fails: its template uses the broken value.
            assert_eq!(failed, [Some(6)], "{expected}");
        }
    }

    #[test]
    fn raw_fragments_replay_the_references_bytes() {
        // `raw-fragments`: records whose BinXML value is a raw element fragment, one shape
        // repeated with other inline values (PERF.md H69); expected outputs are the
        // reference's (`evtx-fixture-gen expected`).
        let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../../shared-fixtures/");
        let data = std::fs::read(format!("{root}synthetic/raw-fragments.evtx")).unwrap();
        let file = EvtxFile::open(&data).unwrap();
        let cases = [
            (Format::Jsonl, false, "raw-fragments.jsonl"),
            (Format::Jsonl, true, "raw-fragments.sep.jsonl"),
            (Format::Xml, false, "raw-fragments.xml"),
        ];
        for (format, separate, expected) in cases {
            let opts = dump_options(format, separate);
            let mut r = Renderer::new(&opts);
            let (text, records) = render_all(&file, &mut r, &opts);
            let want = std::fs::read(format!("{root}expected/{expected}")).unwrap();
            assert_eq!(
                String::from_utf8_lossy(&text),
                String::from_utf8_lossy(&want)
            );
            assert_eq!(records, 8);
            // One program for each shape (records 1-4, 5-6, 7-8): the others replayed it. A
            // scan that gave up would store none, a signature the scan does not find again one
            // per record.
            let programs = r.programs.programs_len();
            assert_eq!(programs, 3, "{expected}: programs for 8 records");
        }
    }

    /// Every record of a one-chunk log with one renderer (XML without banners, or JSONL), each
    /// record's text, and the renderer (its programs).
    fn record_texts(data: &[u8], format: Format) -> (Vec<String>, Renderer) {
        let file = EvtxFile::open(data).unwrap();
        let opts = Options {
            format,
            show_record_number: false,
            ..Options::default()
        };
        let mut r = Renderer::new(&opts);
        let c = r.render_chunk(&file, 0);
        let texts = c
            .records
            .iter()
            .map(|rec| match &rec.outcome {
                Outcome::Rendered(range) => String::from_utf8_lossy(&c.bytes[range.clone()]).into(),
                Outcome::Failed(f) => panic!("record {:?}: {f:?}", rec.record_id),
            })
            .collect();
        (texts, r)
    }

    #[test]
    fn raw_fragment_references_replay_as_rendered() {
        // PERF.md H150: entity and character references in a raw fragment are signed by their
        // name's text and their code. Each record is rendered once alone (the slow path: the
        // first record of a renderer has no program) and once in a log of all of them, where
        // a record whose shape came before replays its program. The records differ in their
        // values only, or also in a reference's name or code (which must not share a program).
        use evtx_fixture_gen::dsl::{e, inst_record, text, v_u16};
        use evtx_fixture_gen::writer::{ty, Name, Tok, Val};
        let def = || {
            e("Event")
                .kid(e("System").kid(e("EventID").sub(0, ty::U16)))
                .kid(e("UserData").opt(1, ty::BINXML))
        };
        let ent = |name: &str| Tok::EntRef(Name::from(name));
        let fragment = |entity: &str, code: u16, a: &str, b: &str| {
            e("Headers")
                .kid(
                    e("Header")
                        .text(a)
                        .push(ent(entity))
                        .text(b)
                        .push(ent(entity)),
                )
                .kid(
                    e("Via")
                        .attr("proxy", vec![text(a), ent("amp"), Tok::CharRef(code)])
                        .push(Tok::CharRef(code))
                        .text(b),
                )
                .kid(e("Only").push(ent("lt")).push(ent("nbsp")))
                .stream()
        };
        let rows = [
            ("quot", 0x41, "GET /a", "x"),
            ("quot", 0x41, "GET /longer/path", "y & z"),
            ("apos", 0x41, "GET /a", "x"),
            ("quot", 0x263a, "GET /a", "<x>"),
            ("quot", 0x41, "", ""),
            ("gt", 0x41, "c", "d"),
            ("quot", 0x41, "\"q\"", "tail"),
        ];
        let record = |k: usize, (entity, code, a, b): (&str, u16, &str, &str)| {
            let values = vec![v_u16(k as u16), Val::Xml(fragment(entity, code, a, b))];
            inst_record("refs", def(), values)
        };
        let mut all = evtx_fixture_gen::log::Log::new();
        for (k, row) in rows.into_iter().enumerate() {
            all.rec(record(k, row));
        }
        let all = all.into_file();
        for format in [Format::Xml, Format::Jsonl] {
            let (texts, r) = record_texts(&all, format);
            assert_eq!(texts.len(), rows.len());
            for (k, row) in rows.into_iter().enumerate() {
                let mut alone = evtx_fixture_gen::log::Log::new();
                alone.rec(record(k, row));
                let (want, _) = record_texts(&alone.into_file(), format);
                assert_eq!(texts[k], want[0], "{format:?} record {k}");
            }
            // Rows 0, 1 and 6 share a shape (with escapes in their values); empty texts make
            // row 4's, a reference's name rows 2 and 5 and its code row 3. A scan that gave up
            // on references would store none; one that left the name or code out, fewer.
            assert_eq!(r.programs.programs_len(), 5, "{format:?}: programs");
        }
    }

    #[test]
    fn binxml_values_are_listed_as_their_slots() {
        // PERF.md H131: the scan lists each instance's BinXML values as it reads them and
        // `scan_nested` takes them from that list; `Programs::check_binxml_list` compares the
        // list with the instance's BinXML slots (the simple path) on every instance scanned.
        // Here every synthetic log is rendered so that check runs on instances with BinXML
        // values (nested ones in `nested.evtx`), raw fragments and instances without any.
        let dir = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../shared-fixtures/synthetic"
        );
        let mut checked = 0;
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_none_or(|x| x != "evtx") {
                continue;
            }
            let data = std::fs::read(&path).unwrap();
            let Ok(file) = EvtxFile::open(&data) else {
                continue;
            };
            let opts = Options::default();
            let mut r = Renderer::new(&opts);
            let order = file.chunk_order(false);
            for slot in (0..order.len()).filter_map(|i| order.get(i)) {
                r.render_chunk(&file, slot);
            }
            checked += r.programs.binxml_checked;
        }
        assert!(checked >= 20, "{checked} BinXML values checked");
    }

    #[test]
    fn filtered_replay_bounds_cover_their_steps() {
        // PERF.md H201: under a filter a program's replay bound counts each of the record's
        // values as often as its busiest value is written; `Programs::check_replay_bound`
        // holds it to the bound per step on every record the filter decides from a program.
        // A filter that keeps nothing decides every record of the benchmark log that way.
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../compare/baselines/security-2mb.evtx"
        );
        let data = std::fs::read(path).unwrap();
        let file = EvtxFile::open(&data).unwrap();
        for format in [Format::Jsonl, Format::Xml] {
            let opts = Options {
                format,
                filter: crate::filter::Filter {
                    event_ids: vec![(1, 1)],
                    ..Default::default()
                },
                ..Options::default()
            };
            let mut r = Renderer::new(&opts);
            let order = file.chunk_order(false);
            for slot in (0..order.len()).filter_map(|i| order.get(i)) {
                assert!(r.render_chunk(&file, slot).records.is_empty());
            }
            let checked = r.programs.bounds_checked.get();
            assert!(checked > 2_600, "{format:?}: {checked} bounds checked");
        }
    }

    fn utf16(text: &[u8]) -> Vec<u8> {
        text.iter().flat_map(|&c| [c, 0]).collect()
    }

    #[test]
    fn shared_programs_render_as_a_lone_renderer() {
        // PERF.md H95: renderer `b` renders every synthetic log after renderer `a` with the
        // ids and programs they share, so it replays what `a` learnt. Both must write what a
        // renderer of its own writes, and `b` must have learnt (stored) nothing itself.
        let dir = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../shared-fixtures/synthetic"
        );
        let mut paths: Vec<_> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|x| x == "evtx"))
            .collect();
        paths.sort();
        assert!(paths.len() >= 10, "{dir}: synthetic logs");
        let logs: Vec<Vec<u8>> = paths.iter().map(|p| std::fs::read(p).unwrap()).collect();
        for format in [Format::Jsonl, Format::Xml] {
            let opts = Options {
                format,
                ..Options::default()
            };
            let shared = std::sync::Arc::default();
            let mut a = Renderer::new_shared(&opts, &shared);
            let mut b = Renderer::new_shared(&opts, &shared);
            let render = |r: &mut Renderer, file: &EvtxFile<'_>| {
                let order = file.chunk_order(opts.validate_checksums);
                let mut text = Vec::new();
                for slot in (0..order.len()).filter_map(|i| order.get(i)) {
                    text.extend_from_slice(&r.render_chunk(file, slot).bytes);
                }
                text
            };
            let mut replayed = 0;
            for (path, data) in paths.iter().zip(&logs) {
                let Ok(file) = EvtxFile::open(data) else {
                    continue;
                };
                let want = render(&mut Renderer::new(&opts), &file);
                let stored = b.programs.stores;
                assert!(
                    render(&mut a, &file) == want,
                    "{path:?} {format:?}: renderer a"
                );
                assert!(
                    render(&mut b, &file) == want,
                    "{path:?} {format:?}: renderer b"
                );
                assert_eq!(
                    b.programs.stores, stored,
                    "{path:?}: b learnt a program itself"
                );
                replayed += a.programs.stores;
            }
            assert!(replayed > 10, "{format:?}: programs learnt by a");
            assert_eq!(b.programs.programs_len(), a.programs.programs_len());
            // PERF.md H137: what `b` did not learn itself it replays from `a`'s bodies
            // themselves, not from copies of them.
            let b_imported = b.programs.programs_len() - b.programs.stores;
            assert!(b_imported > 10, "{format:?}: programs b imported");
            assert_eq!(
                b.programs.shared_bodies(&a.programs),
                b_imported,
                "{format:?}"
            );
            // The same definitions (GUIDs, sizes) with one name's text changed: a new
            // identity, so `b` must not replay `a`'s programs for them.
            let (from, to) = (utf16(b"Data"), utf16(b"Dbta"));
            let mut data = logs[paths
                .iter()
                .position(|p| p.ends_with("basic.evtx"))
                .unwrap()]
            .clone();
            let mut at = 0;
            while let Some(k) = data[at..].windows(from.len()).position(|w| w == from) {
                data[at + k..at + k + to.len()].copy_from_slice(&to);
                at += k + to.len();
            }
            let file = EvtxFile::open(&data).unwrap();
            let want = render(&mut Renderer::new(&opts), &file);
            assert!(
                want.windows(4).any(|w| w == b"Dbta"),
                "{format:?}: the name changed"
            );
            assert!(
                render(&mut b, &file) == want,
                "{format:?}: renamed, renderer b"
            );
        }
    }

    #[test]
    fn a_chunk_result_counts_its_failed_entries() {
        // PERF.md H174: the CLI's sink reads `failures()` instead of every entry, and prints
        // no error lines when it is 0, so it must count exactly the failed entries, for each
        // chunk rendered into the same reused result (a count left from the chunk before, or
        // one that counts rendered entries too, fails here).
        let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../../shared-fixtures/");
        let mut failed_seen = 0;
        for name in [
            "damaged/bad-records",
            "damaged/invalid-binxml",
            "synthetic/basic",
            "damaged/bad-chunks",
        ] {
            let data = std::fs::read(format!("{root}{name}.evtx")).unwrap();
            let file = EvtxFile::open(&data).unwrap();
            let opts = Options::default();
            let mut r = Renderer::new(&opts);
            let mut out = ChunkResult::default();
            for slot in file.chunk_order(false).iter() {
                r.render_chunk_into(&file, slot, &mut out);
                let failed = out
                    .records
                    .iter()
                    .filter(|e| matches!(e.outcome, Outcome::Failed(_)))
                    .count();
                assert_eq!(out.failures(), failed, "{name}, slot {slot}");
                assert_eq!(out.first_failure().is_some(), failed > 0, "{name}");
                failed_seen += failed;
            }
        }
        assert!(failed_seen > 0, "the damaged logs have failed records");
    }

    #[test]
    fn check_size_counts_the_record_text_between_banner_and_newline() {
        // The reference's rule (evtx 0.15.1 `Budget::new` at the text's start, checked before
        // the newline): after `Record 1\n`, 16 MiB of text pass and one byte more fails,
        // whatever the banner and the newline add.
        let body = b"Record 1\n".len();
        let end = body + RECORD_OUTPUT_BYTES_MAX;
        assert!(Renderer::check_size(end + 1, body, end).is_ok());
        assert!(Renderer::check_size(end + 2, body, end + 1).is_err());
        // The chunk's bound counts everything written, newline included.
        let late = CHUNK_OUTPUT_BYTES_MAX - 10;
        assert!(
            Renderer::check_size(CHUNK_OUTPUT_BYTES_MAX, late, CHUNK_OUTPUT_BYTES_MAX - 1).is_ok()
        );
        assert!(
            Renderer::check_size(CHUNK_OUTPUT_BYTES_MAX + 1, late, CHUNK_OUTPUT_BYTES_MAX).is_err()
        );
    }
}
