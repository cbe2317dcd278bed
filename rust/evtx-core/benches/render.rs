//! Criterion benchmarks on `security.evtx` from the shared samples: one chunk, and per record.
//!
//! The samples directory is `$EVTX_SAMPLES` or `<workspace>/../shared/evtx-samples`; without
//! it the benchmarks print a note and measure nothing.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use evtx_core::{dump, ChunkResult, EvtxFile, Format, Options, Renderer};
use std::hint::black_box;
use std::ops::ControlFlow;
use std::path::PathBuf;

fn sample(name: &str) -> Option<Vec<u8>> {
    let dir = std::env::var_os("EVTX_SAMPLES")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/evtx-samples")
        });
    match std::fs::read(dir.join(name)) {
        Ok(data) => Some(data),
        Err(_) => {
            eprintln!("skipping benchmarks: no {name} in {}", dir.display());
            None
        }
    }
}

fn options(format: Format) -> Options {
    Options {
        format,
        threads: 1,
        ..Options::default()
    }
}

fn bench(c: &mut Criterion) {
    let Some(data) = sample("security.evtx") else {
        return;
    };
    let file = EvtxFile::open(&data).expect("security.evtx opens");
    let mut records = 0u64;
    dump(&file, &options(Format::Jsonl), |chunk: &ChunkResult| {
        records += chunk.records.len() as u64;
        ControlFlow::Continue(())
    });

    for (name, format) in [("jsonl", Format::Jsonl), ("xml", Format::Xml)] {
        let opts = options(format);
        // One chunk (slot 0), with a warm renderer (templates known, as in a long run).
        let mut group = c.benchmark_group(format!("chunk/{name}"));
        group.throughput(Throughput::Bytes(65536));
        let mut renderer = Renderer::new(&opts);
        let mut out = ChunkResult::default();
        group.bench_function("security.evtx slot 0", |b| {
            b.iter(|| {
                renderer.render_chunk_into(&file, 0, &mut out);
                black_box(out.bytes.len())
            })
        });
        group.finish();

        // The whole file, reported per record.
        let mut group = c.benchmark_group(format!("record/{name}"));
        group.throughput(Throughput::Elements(records));
        group.bench_function("security.evtx all records", |b| {
            b.iter(|| {
                let mut n = 0usize;
                dump(&file, &opts, |chunk: &ChunkResult| {
                    n += chunk.bytes.len();
                    ControlFlow::Continue(())
                });
                black_box(n)
            })
        });
        group.finish();
    }
}

/// The escaper on Security-like strings (short, paths with backslashes), each inside a larger
/// buffer as in a chunk, so the vector kernel of `evtx_core::simd` reads ahead as it does there.
fn escape(c: &mut Criterion) {
    const STRINGS: [&str; 12] = [
        "-",
        "SYSTEM",
        "NT AUTHORITY",
        "%%1833",
        "DC01.corp.example.com",
        "C:\\Windows\\System32\\svchost.exe",
        "Microsoft-Windows-Security-Auditing",
        "C:\\Windows\\system32\\svchost.exe -k netsvcs -p -s Schedule",
        "192.168.1.23",
        "Kerberos",
        "LAPTOP-9QK2M1",
        "caf\u{e9} \"quoted\" <tag> & more",
    ];
    let mut buf = Vec::new();
    let mut spans = Vec::new();
    for s in STRINGS {
        let start = buf.len();
        buf.extend(s.encode_utf16().flat_map(u16::to_le_bytes));
        spans.push((start, buf.len()));
    }
    buf.extend_from_slice(&[0; 64]);
    let units: usize = spans.iter().map(|(a, b)| (b - a) / 2).sum();
    let mut group = c.benchmark_group("escape");
    group.throughput(Throughput::Elements(units as u64));
    for (name, mode) in [
        ("json", evtx_core::escape::Mode::JsonUpper),
        ("xml text", evtx_core::escape::Mode::XmlText),
        ("xml attr", evtx_core::escape::Mode::XmlAttr),
    ] {
        let mut out = Vec::with_capacity(4096);
        group.bench_function(name, |b| {
            b.iter(|| {
                out.clear();
                for &(start, end) in &spans {
                    evtx_core::escape::write_utf16_in(&mut out, &buf, start, end, mode);
                }
                black_box(out.len())
            })
        });
    }
    group.finish();
}

/// The UTF-8 escaper (`write_str`: ANSI strings, resolved references) on a long message, a path
/// and a short name, whose plain runs `evtx_core::simd::plain_bytes` finds (PERF.md H76), and
/// markup written as text (the ANSI payloads of corpus-30mb: every `<` and `>` an escape, which
/// `evtx_core::simd::escaped_ascii` writes without ending its run, PERF.md H88).
fn escape_utf8(c: &mut Criterion) {
    let message = "The audit policy was changed. Subject: SYSTEM; Category: Logon/Logoff; \
        Changes: Success removed, Failure added."
        .repeat(20);
    let markup = "<GPO ID=\"Local Group Policy\"><Name>Local Group Policy</Name>\
        <Version>0</Version><SOM>Local</SOM><Reason>NOTAPPLIED-EMPTY</Reason></GPO>\r\n"
        .repeat(10);
    let texts = [
        message.as_str(),
        markup.as_str(),
        "C:\\Program Files\\App\\app.exe",
        "Kerberos",
    ];
    let bytes: usize = texts.iter().map(|t| t.len()).sum();
    let mut group = c.benchmark_group("escape utf8");
    group.throughput(Throughput::Bytes(bytes as u64));
    for (name, mode) in [
        ("json", evtx_core::escape::Mode::JsonLower),
        ("xml text", evtx_core::escape::Mode::XmlText),
    ] {
        let mut out = Vec::with_capacity(8192);
        group.bench_function(name, |b| {
            b.iter(|| {
                out.clear();
                for t in texts {
                    evtx_core::escape::write_str(&mut out, t, mode);
                }
                black_box(out.len())
            })
        });
    }
    group.finish();
}

criterion_group!(benches, bench, escape, escape_utf8);
criterion_main!(benches);
