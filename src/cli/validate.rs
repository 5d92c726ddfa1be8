//! `capops validate [PATH]`.

use super::common::{Exit, Outcome, root_error, write_diagnostics, write_json, write_pretty};
use super::{Cli, Io};
use crate::diag::Summary;
use crate::output::{self, Format, Paths};
use crate::pipeline::{self, Validated};
use std::path::Path;

pub fn run(cli: &Cli, path: &Path, io: &mut Io<'_>) -> Outcome {
    let paths = Paths::new(path);
    let outcome = match pipeline::validate_dir(path) {
        Ok(o) => o,
        Err(e) => {
            root_error(cli, &e, path, io)?;
            return Ok(Exit::Invalid);
        }
    };
    write_diagnostics(cli, &outcome.diagnostics, &outcome.sources, &paths, io)?;
    let summary = outcome.summary();
    match cli.format {
        Format::Json => {
            let out = output::json::ValidateOutput {
                valid: outcome.is_valid(),
                summary: output::json::ValidateSummary {
                    files: outcome.sources.len(),
                    documents: outcome.documents,
                    counts: summary,
                },
                diagnostics: output::json::diagnostics(
                    &outcome.diagnostics,
                    &outcome.sources,
                    &paths,
                ),
            };
            write_json(io, "validate", &out)?;
        }
        Format::Sarif => write_pretty(
            io,
            &output::sarif::log(&outcome.diagnostics, &outcome.sources, &paths),
        )?,
        _ => writeln!(io.stderr, "{}", summary_line(&outcome, summary, path))?,
    }
    Ok(if outcome.is_valid() {
        Exit::Ok
    } else {
        Exit::Invalid
    })
}

fn summary_line(outcome: &Validated, s: Summary, path: &Path) -> String {
    let files = outcome.sources.len();
    let docs = outcome.documents;
    if s.errors == 0 {
        let extra = match (s.warnings, s.notes) {
            (0, 0) => String::new(),
            (w, 0) => format!(", {w} warning{}", plural(w)),
            (0, n) => format!(", {n} note{}", plural(n)),
            (w, n) => format!(", {w} warning{}, {n} note{}", plural(w), plural(n)),
        };
        format!(
            "ok: {} is valid ({files} file{}, {docs} document{}{extra})",
            path.display(),
            plural(files),
            plural(docs)
        )
    } else {
        format!(
            "error: {} error{}, {} warning{} in {} ({files} file{}, {docs} document{})",
            s.errors,
            plural(s.errors),
            s.warnings,
            plural(s.warnings),
            path.display(),
            plural(files),
            plural(docs)
        )
    }
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}
