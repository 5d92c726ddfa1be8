//! `capops validate [PATH]`.

use super::common::{Exit, Outcome, root_error, write_diagnostics, write_validation};
use super::{Cli, Io};
use crate::diag::Summary;
use crate::output::{Format, Paths};
use crate::pipeline::{self, Validated};
use std::path::Path;

pub fn run(cli: &Cli, path: &Path, io: &mut Io<'_>) -> Outcome {
    let paths = Paths::new(path);
    let cache = super::common::open_cache(cli, path, io)?;
    let outcome = pipeline::validate_dir_cached(path, cache.as_ref().map(|c| &c.cache));
    super::common::save_cache(cache.as_ref());
    let mut outcome = match outcome {
        Ok(o) => o,
        Err(e) => {
            root_error(cli, &e, path, io)?;
            return Ok(Exit::Invalid);
        }
    };
    // Template overrides compile and are bounded, as `render` and `check`
    // would find (what they write is checked when they render).
    let overrides =
        super::render::read_templates(path, &mut outcome.sources, &mut outcome.diagnostics);
    if !overrides.is_empty() {
        crate::render::templates::Templates::new(&overrides, &mut outcome.diagnostics);
    }
    write_diagnostics(cli, &outcome.diagnostics, &outcome.sources, &paths, io)?;
    write_validation(cli, "validate", &outcome, &paths, io)?;
    if !matches!(cli.format, Format::Json | Format::Sarif) {
        writeln!(
            io.stderr,
            "{}",
            summary_line(&outcome, outcome.summary(), path)
        )?;
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
