//! evtx-fixture-gen: a deterministic EVTX writer and the fixtures of evtx-twin.

pub mod bench;
pub mod carving;
pub mod cli_cases;
pub mod code_pages;
pub mod corpus;
pub mod damaged;
pub mod dsl;
pub mod expected;
pub mod fixtures;
pub mod log;
pub mod manifest;
pub mod more;
pub mod mta_fixtures;
pub mod rng;
pub mod sparse;
pub mod triage_fixtures;
pub mod unused_json;
pub mod wevt_fixtures;
pub mod windows;
pub mod writer;
