//! Correctness: the reference, evtx-rs and evtx-zig compared over a corpus (`cli_parity`, in the
//! output modes of `modes`), the command line (`exit_table`, `input_forms`, `cli_paths`,
//! `shared_log`), the C ABI (`abi_parity`, `shim_parity`), damaged inputs (`mutate`,
//! `mutate_readers`), and what the comparisons read: the CLIs' output (`cli_output`), the
//! template subcommands' forms (`wevt_tools`), the differences (`diff`) and the known gaps
//! (`gaps`).

pub mod abi_parity;
pub mod cli_output;
pub mod cli_parity;
pub mod cli_paths;
pub mod diff;
pub mod exit_table;
pub mod gaps;
pub mod input_forms;
pub mod modes;
pub mod mutate;
pub mod mutate_readers;
pub mod shared_log;
pub mod shim_parity;
pub mod wevt_tools;
