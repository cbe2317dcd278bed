//! What `evtx-rs` does beyond `evtx_dump` 0.15.1, only where the reference refuses the command
//! line (README, "Extensions"): the filters and `--provenance` (hidden options), two or more
//! INPUTs, and the `help extensions` page. evtx-zig's twin is `zig/cli/extensions.zig`.
//!
//! The command line is read in two passes. First as the reference reads it (`Cli`): what it
//! accepts runs exactly as today, what it refuses for help or version prints that. Only a line
//! it refuses is read again with the extensions (`ExtCli`), and the second pass decides only
//! when the line names an extension option (`--event-id`, ...: then its own errors are ours),
//! or parses with two or more inputs none of which the reference would take for a subcommand.
//! Any other refused line gets the reference's error, tip and `Usage:` line: the hidden
//! options are never a "similar argument" for a typo of the reference's (clap suggests among
//! every long option of the command it parses, hidden ones included, so they live only in
//! the second).

use clap::{ArgAction, Args};
use evtx_core::filter::{self, Filter};
use std::ffi::OsString;

/// The extension options' long names, as `named` looks for them.
const NAMES: [&str; 7] = [
    "event-id",
    "provider",
    "channel",
    "level",
    "since",
    "until",
    "provenance",
];

/// The reference's subcommands (and clap's `help`): a line without `--` whose inputs name one
/// keeps the reference's error.
const SUBCOMMANDS: [&str; 5] = [
    "extract-wevt-templates",
    "dump-template-instances",
    "apply-wevt-cache",
    "info",
    "help",
];

/// The page of `help extensions` (the same text in both CLIs, one file).
pub const HELP: &str = include_str!("../../../include/help_extensions.txt");

/// The extension options, hidden from every help page of the reference's (`help extensions`
/// lists them). Each value is read by the engine's `Filter` parsers, whose errors clap prints
/// as `invalid value 'V' for '--OPTION <VALUE>': <why>`.
#[derive(Debug, Args)]
#[group(skip)]
pub struct Extensions {
    #[arg(long = "event-id", value_name = "LIST", value_parser = event_ids, hide = true)]
    event_ids: Option<Ranges>,
    #[arg(long, value_name = "NAME", action = ArgAction::Append, value_parser = name, hide = true)]
    provider: Vec<String>,
    #[arg(long, value_name = "NAME", action = ArgAction::Append, value_parser = name, hide = true)]
    channel: Vec<String>,
    #[arg(long, value_name = "LIST", value_parser = levels, hide = true)]
    level: Option<Ranges>,
    #[arg(long, value_name = "TIME", value_parser = time, hide = true)]
    since: Option<u64>,
    #[arg(long, value_name = "TIME", value_parser = time, hide = true)]
    until: Option<u64>,
    #[arg(long, hide = true)]
    pub provenance: bool,
}

#[derive(Debug, Clone)]
struct Ranges(Vec<(u32, u32)>);

fn event_ids(text: &str) -> Result<Ranges, String> {
    filter::parse_list(text).map(Ranges)
}

fn levels(text: &str) -> Result<Ranges, String> {
    filter::parse_list(text).map(Ranges)
}

fn name(text: &str) -> Result<String, String> {
    filter::parse_name(text)
}

fn time(text: &str) -> Result<u64, String> {
    filter::parse_time(text)
}

impl Extensions {
    /// The filter the options ask for (empty without any).
    pub fn filter(&self) -> Filter {
        Filter {
            event_ids: self.event_ids.clone().map_or_else(Vec::new, |r| r.0),
            levels: self.level.clone().map_or_else(Vec::new, |r| r.0),
            providers: self.provider.clone(),
            channels: self.channel.clone(),
            since: self.since,
            until: self.until,
        }
    }
}

/// Ends the run with a usage error no single option's parser can see (`Filter::check`): the
/// same words and status in evtx-zig (`filterUsageError` in `zig/cli/cli.zig`).
#[cold]
pub fn usage_error(why: &str) -> ! {
    eprint!("error: {why}\n\nFor more information, try '--help'.\n");
    std::process::exit(2)
}

/// Whether `args` (after the program's name) names an extension option before `--`: `--NAME`
/// or `--NAME=VALUE`.
pub fn named(args: &[OsString]) -> bool {
    args.iter()
        .map(|a| a.to_string_lossy())
        .take_while(|a| a != "--")
        .any(|a| {
            let name = a.strip_prefix("--").unwrap_or("");
            let name = name.split_once('=').map_or(name, |(n, _)| n);
            NAMES.contains(&name)
        })
}

/// Whether the second pass may run `inputs`, read from `args`, where no extension option is
/// named: two or more, and, on a line without `--`, none named as a reference subcommand
/// (the reference took it for one, and its error stands).
pub fn many_inputs(args: &[OsString], inputs: &[String]) -> bool {
    let escaped = args.iter().any(|a| a == "--");
    inputs.len() >= 2 && (escaped || !inputs.iter().any(|i| SUBCOMMANDS.contains(&i.as_str())))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(line: &str) -> Vec<OsString> {
        line.split(' ').map(OsString::from).collect()
    }

    #[test]
    fn an_extension_is_named_before_the_end_of_options() {
        assert!(named(&args("-t 1 --event-id 4624 a.evtx")));
        assert!(named(&args("--since=2024-01-01T00:00:00Z a.evtx")));
        assert!(named(&args("--provenance")));
        assert!(!named(&args("-- --provenance")));
        assert!(!named(&args("--provenanc a.evtx")));
        assert!(!named(&args("---provenance a.evtx")));
        assert!(!named(&args("-f --levels a.evtx")));
    }

    #[test]
    fn many_inputs_unless_one_is_a_subcommand() {
        let two = ["a".to_string(), "b".to_string()];
        assert!(many_inputs(&args("a b"), &two));
        assert!(!many_inputs(&args("a"), &two[..1]));
        let info = ["a".to_string(), "info".to_string()];
        assert!(!many_inputs(&args("a info"), &info));
        assert!(many_inputs(&args("a -- info"), &info));
    }
}
