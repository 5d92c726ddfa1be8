//! `capops validate [PATH]`.

use super::{Cli, Io, exit};
use crate::diag::{Code, Diagnostic, SourceMap, Summary};
use crate::load::files::RootError;
use crate::output::{self, Format, Paths};
use crate::pipeline::{self, Validated as Outcome};
use std::path::Path;

pub fn run(cli: &Cli, path: &Path, io: &mut Io<'_>) -> std::io::Result<i32> {
    let paths = Paths::new(path);
    let outcome = match pipeline::validate_dir(path) {
        Ok(o) => o,
        Err(e) => return root_error(cli, &e, path, io),
    };
    write_diagnostics(cli, &outcome.diagnostics, &outcome.sources, &paths, io)?;
    let summary = outcome.summary();
    match cli.format {
        Format::Json => {
            let out = output::json::ValidateOutput {
                version: output::json::OUTPUT_VERSION,
                command: "validate",
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
            serde_json::to_writer_pretty(&mut *io.stdout, &out)?;
            writeln!(io.stdout)?;
        }
        Format::Sarif => {
            let log = output::sarif::log(&outcome.diagnostics, &outcome.sources, &paths);
            serde_json::to_writer_pretty(&mut *io.stdout, &log)?;
            writeln!(io.stdout)?;
        }
        Format::Human | Format::Markdown | Format::Html => {
            writeln!(io.stderr, "{}", summary_line(&outcome, summary, path))?;
        }
    }
    Ok(if outcome.is_valid() {
        exit::OK
    } else {
        exit::INVALID
    })
}

/// Prints diagnostics for people (human format) and, inside GitHub Actions, annotations.
pub(super) fn write_diagnostics(
    cli: &Cli,
    diags: &[Diagnostic],
    sources: &SourceMap,
    paths: &Paths,
    io: &mut Io<'_>,
) -> std::io::Result<()> {
    // Annotations share stdout with the human report; data formats keep stdout clean.
    if output::github::in_actions(io.env) && cli.format == Format::Human {
        for d in diags {
            if let Some(line) = output::github::annotation(d, sources, paths) {
                writeln!(io.stdout, "{line}")?;
            }
        }
    }
    if matches!(cli.format, Format::Human | Format::Markdown | Format::Html) {
        let color = io.color(cli.color);
        for d in diags {
            writeln!(
                io.stderr,
                "{}\n",
                output::human::render(d, sources, paths, color)
            )?;
        }
    }
    Ok(())
}

fn summary_line(outcome: &Outcome, s: Summary, path: &Path) -> String {
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

/// A folder that is not a capacity repository: a diagnostic with no file, exit 2.
pub(super) fn root_error(
    cli: &Cli,
    e: &RootError,
    path: &Path,
    io: &mut Io<'_>,
) -> std::io::Result<i32> {
    let d = Diagnostic::new(Code::NoConfig, e.to_string()).help(format!(
        "run capops on the folder that holds capops.yaml, or create {}/capops.yaml with a Config document",
        path.display()
    ));
    let sources = SourceMap::new();
    let paths = Paths::new(path);
    write_diagnostics(cli, std::slice::from_ref(&d), &sources, &paths, io)?;
    match cli.format {
        Format::Json => {
            let out = output::json::ValidateOutput {
                version: output::json::OUTPUT_VERSION,
                command: "validate",
                valid: false,
                summary: output::json::ValidateSummary {
                    files: 0,
                    documents: 0,
                    counts: Summary::of(std::slice::from_ref(&d)),
                },
                diagnostics: output::json::diagnostics(std::slice::from_ref(&d), &sources, &paths),
            };
            serde_json::to_writer_pretty(&mut *io.stdout, &out)?;
            writeln!(io.stdout)?;
        }
        Format::Sarif => {
            let log = output::sarif::log(std::slice::from_ref(&d), &sources, &paths);
            serde_json::to_writer_pretty(&mut *io.stdout, &log)?;
            writeln!(io.stdout)?;
        }
        _ => {}
    }
    Ok(exit::INVALID)
}
