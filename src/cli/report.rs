//! `capops report`: the cost and capacity report of a repository.

use super::common::{Exit, Outcome, load_valid, write_diagnostics, write_text};
use super::{Cli, Io};
use crate::model::Timestamp;
use crate::output::{self, Format, Paths};
use std::path::PathBuf;

#[derive(Debug, clap::Args)]
pub struct ReportArgs {
    /// The repository root (the folder holding capops.yaml).
    #[arg(default_value = ".")]
    pub path: PathBuf,
    /// Time of the report: a date or an RFC 3339 time; default now.
    #[arg(long, value_parser = super::common::at_arg)]
    pub at: Option<Timestamp>,
    /// Write the report to this file (atomically) instead of stdout (`-` is stdout).
    #[arg(long)]
    pub out: Option<PathBuf>,
}

pub fn run(cli: &Cli, args: &ReportArgs, io: &mut Io<'_>) -> Outcome {
    let at = args.at.unwrap_or(io.now);
    let head = load_valid(cli, &args.path, "the report can be made", io)?;
    // Warnings still show (usage rows that name unknown pools, for instance).
    let mut diagnostics = head.diagnostics.clone();
    let stale = crate::ingest::stale::check(&head.repo, at);
    let stale_error = stale.iter().any(|d| d.is_error());
    diagnostics.extend(stale);
    write_diagnostics(
        cli,
        &diagnostics,
        &head.sources,
        &Paths::new(&args.path),
        io,
    )?;
    if stale_error {
        return Err(super::common::invalid(
            io,
            "the usage history is stale (see above)",
            Some(
                "run `capops usage pull` and commit the result, or lower `usage-stale` in the Config's severities",
            ),
        ));
    }
    let analysis = crate::cost::Analysis::new(&head.repo, at);
    let data = crate::cost::report::build(&analysis);
    let text = match cli.format {
        Format::Json => {
            // Warnings go into the data (stderr carries nothing in JSON):
            // a pipeline reading the numbers sees what qualifies them.
            #[derive(serde::Serialize)]
            struct WithDiagnostics<'a, T: serde::Serialize> {
                #[serde(flatten)]
                report: &'a T,
                diagnostics: Vec<output::json::JsonDiagnostic>,
            }
            let body = WithDiagnostics {
                report: &data,
                diagnostics: output::json::diagnostics(
                    &diagnostics,
                    &head.sources,
                    &Paths::new(&args.path),
                ),
            };
            let mut s = serde_json::to_string_pretty(&output::json::Envelope::new("report", &body))
                .map_err(std::io::Error::other)?;
            s.push('\n');
            s
        }
        Format::Markdown => output::report::markdown(&data),
        Format::Html => output::report::html(&data),
        _ => output::report::text(&data),
    };
    write_text(io, &args.path, args.out.as_deref(), &text)?;
    Ok(Exit::Ok)
}
