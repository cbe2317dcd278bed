//! Criterion benchmarks on `security.evtx` from the shared samples: one chunk, and per record.
//!
//! The samples directory is `$EVTX_SAMPLES` or `<workspace>/../shared/evtx-samples`; without
//! it the benchmarks print a note and measure nothing.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use evtx_core::{dump, ChunkOutput, EvtxFile, Format, Options, Renderer};
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
    dump(&file, &options(Format::Jsonl), |chunk: &ChunkOutput| {
        records += chunk.records.len() as u64;
        ControlFlow::Continue(())
    });

    for (name, format) in [("jsonl", Format::Jsonl), ("xml", Format::Xml)] {
        let opts = options(format);
        // One chunk (slot 0), with a warm renderer (templates known, as in a long run).
        let mut group = c.benchmark_group(format!("chunk/{name}"));
        group.throughput(Throughput::Bytes(65536));
        let mut renderer = Renderer::new(&opts);
        let mut out = ChunkOutput::default();
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
                dump(&file, &opts, |chunk: &ChunkOutput| {
                    n += chunk.bytes.len();
                    ControlFlow::Continue(())
                });
                black_box(n)
            })
        });
        group.finish();
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
