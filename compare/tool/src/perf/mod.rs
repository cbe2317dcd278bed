//! Performance: speed runs of the three CLIs and the C ABI harness (`speed`), interleaved
//! rounds (`paired`), the record filters' and triage's runs (`filters`, `triage_speed`), one
//! page-cache state before timing (`settle`), the instruction-count gate (`instructions`),
//! callgrind's phases (`phases`), `make compare`'s report (`report`) and PERF.md's generated
//! block (`perf_page`).

pub mod filters;
pub mod instructions;
pub mod paired;
pub mod perf_page;
pub mod phases;
pub mod report;
pub mod settle;
pub mod speed;
pub mod triage_speed;
