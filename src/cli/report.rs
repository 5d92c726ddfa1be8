//! `capops report`: the cost and capacity report of a repository.

use super::check::parse_at;
use super::{Cli, Io, exit, validate as vcmd};
use crate::report::{self, Format, Paths};
use crate::validate;
use std::path::Path;

/// Loads and validates a repository for a read-only command; on errors,
/// prints them and returns the exit code.
pub(super) fn load_valid(
    cli: &Cli,
    path: &Path,
    what: &str,
    io: &mut Io<'_>,
) -> std::io::Result<Result<validate::Outcome, i32>> {
    let paths = Paths::new(path);
    let head = match validate::validate_dir(path) {
        Ok(o) => o,
        Err(e) => return vcmd::root_error(cli, &e, path, io).map(Err),
    };
    if !head.is_valid() {
        vcmd::write_diagnostics(cli, &head.diagnostics, &head.sources, &paths, io)?;
        let s = head.summary();
        writeln!(
            io.stderr,
            "error: {} error{} in {}: fix them before {what}",
            s.errors,
            if s.errors == 1 { "" } else { "s" },
            path.display()
        )?;
        return Ok(Err(exit::INVALID));
    }
    Ok(Ok(head))
}

pub fn run(
    cli: &Cli,
    path: &Path,
    at: Option<&str>,
    out: Option<&Path>,
    io: &mut Io<'_>,
) -> std::io::Result<i32> {
    if cli.format == Format::Sarif {
        writeln!(
            io.stderr,
            "error: `capops report` writes human, markdown, json or html, not sarif"
        )?;
        return Ok(exit::INVALID);
    }
    let at = match parse_at(at, io) {
        Ok(t) => t,
        Err(code) => return Ok(code),
    };
    let head = match load_valid(cli, path, "the report can be made", io)? {
        Ok(h) => h,
        Err(code) => return Ok(code),
    };
    // Warnings still show (usage rows that name unknown pools, for instance).
    let mut diagnostics = head.diagnostics.clone();
    let stale = crate::ingest::stale::check(&head.repo, at);
    let stale_error = stale.iter().any(|d| d.is_error());
    diagnostics.extend(stale);
    vcmd::write_diagnostics(cli, &diagnostics, &head.sources, &Paths::new(path), io)?;
    if stale_error {
        writeln!(io.stderr, "error: the usage history is stale (see above)")?;
        return Ok(exit::INVALID);
    }
    let analysis = crate::cost::Analysis::new(&head.repo, at);
    let data = report::costs::build(&analysis);
    let text = match cli.format {
        Format::Json => {
            let mut s = serde_json::to_string_pretty(&data).unwrap_or_default();
            s.push('\n');
            s
        }
        Format::Markdown => report::costs::markdown(&data),
        Format::Html => report::costs::html(&data),
        Format::Human | Format::Sarif => report::costs::text(&data),
    };
    match out {
        Some(file) => {
            if let Err(e) = super::write_atomically(file, text.as_bytes()) {
                writeln!(io.stderr, "error: cannot write {}: {e}", file.display())?;
                return Ok(exit::EXTERNAL);
            }
            writeln!(io.stderr, "wrote {}", file.display())?;
        }
        None => io.stdout.write_all(text.as_bytes())?,
    }
    Ok(exit::OK)
}
