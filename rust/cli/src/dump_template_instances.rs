//! `dump-template-instances` of `evtx_dump` 0.15.1: each record's N-th top-level template
//! instance as one JSON line (texts, options and exit statuses:
//! `shared-fixtures/generator/wevt-format.md`). The records, the reference's failures and the
//! instances are the engine's (`evtx_core::template_instances`); this parses the options and
//! prints. Zig's mirror: `zig/cli/dump_template_instances.zig`.

use crate::{fatal, help};
use clap::Args;
use evtx_core::template_instances::{read_records, Record, Step};
use evtx_core::values_format::{write_filetime_trimmed, write_guid_upper};
use evtx_core::Input;
use std::io::Write;
use std::ops::ControlFlow;
use std::process::ExitCode;

/// `dump-template-instances`' options (the reference's; texts in `help`).
#[derive(Debug, Args)]
#[command(about = help::DUMP_ABOUT, long_about = help::DUMP_LONG_ABOUT)]
#[group(skip)]
pub struct DumpArgs {
    #[arg(
        short = 'i',
        long = "input",
        value_name = "EVTX",
        required = true,
        help = help::EVTX_INPUT
    )]
    input: String,
    #[arg(long = "record-id", value_name = "ID", help = help::DUMP_RECORD_ID)]
    record_id: Option<u64>,
    #[arg(
        long = "template-instance-index",
        value_name = "N",
        default_value_t = 0,
        help = help::DUMP_TEMPLATE_INSTANCE_INDEX
    )]
    template_instance_index: usize,
}

/// `dump-template-instances`: one JSON line per record holding the selected instance, one
/// stderr line per record or chunk the reference's iterator fails on.
pub fn run(args: &DumpArgs) -> ExitCode {
    let input = match open_log(&args.input) {
        Ok(input) => input,
        Err(e) => return fatal(e),
    };
    let mut out = std::io::stdout().lock();
    let mut result: Result<(), String> = Ok(());
    read_records(&input, |step| {
        let record = match step {
            Step::Failed { line, .. } => {
                eprintln!("{line}");
                return ControlFlow::Continue(());
            }
            Step::Record(record) => record,
        };
        if args.record_id.is_some_and(|want| want != record.id) {
            return ControlFlow::Continue(());
        }
        match print_instance(&mut out, args, &record) {
            // A record without the selected instance prints nothing, and the search goes on.
            Ok(false) => ControlFlow::Continue(()),
            Ok(true) if args.record_id.is_none() => ControlFlow::Continue(()),
            Ok(true) => ControlFlow::Break(()),
            Err(e) => {
                result = e.map_or(Ok(()), Err);
                ControlFlow::Break(())
            }
        }
    });
    let _ = out.flush();
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => fatal(e),
    }
}

/// The selected instance of `record` as one line, when the record has it (Zig
/// `printInstance`). Fails with the error that ends the dump, or none when stdout is closed.
fn print_instance(
    out: &mut impl Write,
    args: &DumpArgs,
    record: &Record<'_>,
) -> Result<bool, Option<String>> {
    let instances = record.instances().map_err(|e| Some(format!("{e:?}")))?;
    let Some(t) = instances.get(args.template_instance_index) else {
        return Ok(false);
    };
    let json = |s: &str| serde_json::to_string(s).expect("a string serializes");
    let text = |write: &dyn Fn(&mut Vec<u8>)| {
        let mut text = Vec::new();
        write(&mut text);
        json(&String::from_utf8_lossy(&text))
    };
    let subs: Vec<String> = t.values.iter().map(|v| json(v)).collect();
    let line = format!(
        "{{\"source\":{},\"record_id\":{},\"timestamp\":{},\
         \"template_instance_index\":{},\"template_id\":{},\
         \"template_def_offset\":{},\"template_guid\":{},\"substitutions\":[{}]}}",
        json(&args.input),
        record.id,
        text(&|out| write_filetime_trimmed(out, record.filetime)),
        args.template_instance_index,
        t.template_id,
        t.def_offset,
        t.guid
            .map_or("null".to_string(), |g| text(&|out| write_guid_upper(
                out, &g
            ))),
        subs.join(","),
    );
    writeln!(out, "{line}").map_err(|_| None)?;
    Ok(true)
}

/// Opens the log at `path` as the reference's `EvtxParser::from_path` does, failing with its
/// text (`apply-wevt-cache --evtx` opens its log so too).
pub fn open_log(path: &str) -> Result<Input, String> {
    crate::open_input::open_path(path, None)
}
