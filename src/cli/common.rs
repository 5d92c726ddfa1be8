//! What every command shares: the exit codes as a type, reading `--at` and
//! `--horizon`, loading a valid repository, writing diagnostics, one JSON
//! envelope, and writing files whole or not at all.
//!
//! Commands return [`Outcome`]: `Ok(exit)` when they ran, `Err(Stop)` when
//! they stopped early (with the exit code to report) or could not write
//! their output. Helpers return `Result<T, Stop>`, so a command stops with `?`.

use super::{Cli, Io};
use crate::diag::{Code, Diagnostic, SourceMap, Summary};
use crate::load::files::RootError;
use crate::model::Timestamp;
use crate::output::{self, Format, Paths};
use crate::pipeline::{self, Validated};
use std::path::Path;

/// Exit codes, as documented in the README (ordered: the worse outcome is greater).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Exit {
    /// Success: valid, approved, no drift.
    Ok,
    /// The gate says no: denied, approvals missing, drift.
    Gate,
    /// Invalid input or usage.
    Invalid,
    /// An outside system failed: git, a cluster, GitHub, writing the output.
    External,
}

impl Exit {
    pub fn code(self) -> i32 {
        match self {
            Exit::Ok => 0,
            Exit::Gate => 1,
            Exit::Invalid => 2,
            Exit::External => 3,
        }
    }
}

/// Why a command stopped before it finished.
#[derive(Debug)]
pub enum Stop {
    /// It said why (on stderr) and exits with this code.
    Exit(Exit),
    /// Writing its output failed.
    Io(std::io::Error),
}

impl From<std::io::Error> for Stop {
    fn from(e: std::io::Error) -> Stop {
        Stop::Io(e)
    }
}

/// What a command returns.
pub type Outcome = Result<Exit, Stop>;

/// Writes `error: MESSAGE` (and a `help:` line) and stops with exit 2.
pub fn invalid(io: &mut Io<'_>, message: &str, help: Option<&str>) -> Stop {
    stop(io, Exit::Invalid, message, help)
}

/// Writes `error: MESSAGE` (and a `help:` line) and stops with `exit`.
pub fn stop(io: &mut Io<'_>, exit: Exit, message: &str, help: Option<&str>) -> Stop {
    // Messages carry outside text (paths, branch names, logins): never a
    // control sequence, whatever the colour.
    use crate::output::escape::terminal;
    let written = match help {
        Some(h) => writeln!(
            io.stderr,
            "error: {}\n  help: {}",
            terminal(message),
            terminal(h)
        ),
        None => writeln!(io.stderr, "error: {}", terminal(message)),
    };
    match written {
        Ok(()) => Stop::Exit(exit),
        Err(e) => Stop::Io(e),
    }
}

/// clap value parser for `--at`: an ISO 8601 date or an RFC 3339 time.
pub fn at_arg(s: &str) -> Result<Timestamp, String> {
    crate::model::types::moment(s)
}

/// `--revision`: it is stamped on every object (an annotation) and every
/// cloud resource (a tag AWS limits to 256 characters of letters, digits,
/// spaces and `_ . : / = + - @`), so it is what a commit id or tag is.
pub fn revision_arg(text: &str) -> Result<String, String> {
    let ok = !text.is_empty()
        && text.len() <= 128
        && text
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"._:/=+@-".contains(&b));
    if ok {
        Ok(text.to_string())
    } else {
        Err("a revision is 1 to 128 letters, digits and `. _ : / = + @ -` (a commit id or a tag): it is stamped on every object and cloud resource".into())
    }
}

/// clap value parser for `--horizon`: `72`, `72h`, `14d`, `8w`, up to three years.
pub fn horizon_arg(text: &str) -> Result<i64, String> {
    let t = text.trim();
    let (digits, unit) = match t.find(|c: char| !c.is_ascii_digit()) {
        Some(i) => (&t[..i], &t[i..]),
        None => (t, "h"),
    };
    let n: i64 = digits
        .parse()
        .map_err(|_| "write hours (72h), days (14d) or weeks (8w)".to_string())?;
    let hours = match unit {
        "h" => n,
        "d" => n.saturating_mul(24),
        "w" => n.saturating_mul(24 * 7),
        _ => return Err(format!("unknown unit `{unit}`; use h, d or w")),
    };
    if !(1..=crate::cost::MAX_OUTLOOK_HOURS).contains(&hours) {
        return Err(format!(
            "`{t}` is not between 1 hour and three years (72h, 14d, 8w)"
        ));
    }
    Ok(hours)
}

/// The parse cache for the repository at `root` (`--cache-dir`,
/// `CAPOPS_CACHE_DIR`, or the default in its git directory); `None` with
/// `--no-cache`, outside git without a folder named, or when the folder is
/// refused (a warning says why).
pub fn open_cache(
    cli: &Cli,
    root: &Path,
    io: &mut Io<'_>,
) -> std::io::Result<Option<crate::load::cache_dir::Opened>> {
    use crate::load::cache_dir;
    let off = (io.env)("CAPOPS_NO_CACHE").is_some_and(|v| !v.is_empty() && v != "0");
    if cli.no_cache || off {
        return Ok(None);
    }
    let named = cli.cache_dir.clone().or_else(|| {
        (io.env)("CAPOPS_CACHE_DIR")
            .filter(|v| !v.is_empty())
            .map(std::path::PathBuf::from)
    });
    let Some(dir) = named.or_else(|| cache_dir::default_dir(root)) else {
        return Ok(None);
    };
    if let Some(why) = cache_dir::refusal(&dir, root) {
        writeln!(io.stderr, "warning: {why}")?;
        return Ok(None);
    }
    Ok(Some(cache_dir::open(&dir)))
}

/// Saves what a run added to the parse cache. A cache that cannot be
/// written costs the next run a parse, nothing else: the error is dropped.
pub fn save_cache(cache: Option<&crate::load::cache_dir::Opened>) {
    if let Some(c) = cache {
        let _ = c.save();
    }
}

/// Stops with exit 3 when git refuses to open the repository holding
/// `path` (another user's checkout): outside git, the revision stamped on
/// rendered objects is `unversioned` and apply's guard against rolling a
/// cluster back has nothing to compare, so a checkout git will not open is
/// never read as one outside git.
pub fn refuse_unopenable_git(path: &Path, io: &mut Io<'_>) -> Result<(), Stop> {
    match crate::load::git_files::refusal(path) {
        None => Ok(()),
        Some(why) => Err(stop(
            io,
            Exit::External,
            &format!(
                "git refuses to open the repository holding {}: {}",
                path.display(),
                crate::output::redact::scrub_text(&[], &why)
            ),
            Some(
                "if it is another user's checkout (a CI container running as root), mark it safe: git config --global --add safe.directory <its working tree>; capops does not read a repository whose revisions it cannot read",
            ),
        )),
    }
}

/// Loads, validates and lints the repository at `path`; on errors, prints
/// them and stops with exit 2. `what` ends the message: "fix them before WHAT".
pub fn load_valid(cli: &Cli, path: &Path, what: &str, io: &mut Io<'_>) -> Result<Validated, Stop> {
    refuse_unopenable_git(path, io)?;
    let cache = open_cache(cli, path, io)?;
    let head = load_valid_with(cli, path, what, cache.as_ref().map(|c| &c.cache), io);
    save_cache(cache.as_ref());
    head
}

/// [`load_valid`] with a parse cache the caller opened (and saves).
pub fn load_valid_with(
    cli: &Cli,
    path: &Path,
    what: &str,
    cache: Option<&crate::load::cache::Cache>,
    io: &mut Io<'_>,
) -> Result<Validated, Stop> {
    let paths = Paths::new(path);
    let head = match pipeline::validate_dir_cached(path, cache) {
        Ok(o) => o,
        Err(e) => {
            root_error(cli, &e, path, io)?;
            return Err(Stop::Exit(Exit::Invalid));
        }
    };
    if !head.is_valid() {
        write_diagnostics(cli, &head.diagnostics, &head.sources, &paths, io)?;
        // Data formats carry the diagnostics too: automation reads why.
        write_validation(cli, cli.command.name(), &head, &paths, io)?;
        let s = head.summary();
        writeln!(
            io.stderr,
            "error: {} error{} in {}: fix them before {what}",
            s.errors,
            if s.errors == 1 { "" } else { "s" },
            path.display()
        )?;
        return Err(Stop::Exit(Exit::Invalid));
    }
    Ok(head)
}

/// The validation result in a data format (`--format json` or `sarif`); in
/// the others nothing (the diagnostics went to stderr).
pub fn write_validation(
    cli: &Cli,
    command: &'static str,
    outcome: &Validated,
    paths: &Paths,
    io: &mut Io<'_>,
) -> std::io::Result<()> {
    match cli.format {
        Format::Json => {
            let out = output::json::ValidateOutput {
                valid: outcome.is_valid(),
                summary: output::json::ValidateSummary {
                    files: outcome.sources.len(),
                    documents: outcome.documents,
                    counts: outcome.summary(),
                },
                diagnostics: output::json::diagnostics(
                    &outcome.diagnostics,
                    &outcome.sources,
                    paths,
                ),
            };
            write_json(io, command, &out)
        }
        Format::Sarif => write_pretty(
            io,
            &output::sarif::log(&outcome.diagnostics, &outcome.sources, paths),
        ),
        _ => Ok(()),
    }
}

/// Prints diagnostics for people (stderr) and, inside GitHub Actions with
/// human output, as workflow annotations (stdout).
pub fn write_diagnostics(
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
        // Drawn in full: the first few of each code in each file; the rest
        // are counted (a file of 100,000 empty documents is one line, not
        // 100,000 snippets). `--format json` lists every one.
        let mut seen: std::collections::HashMap<(&str, Option<crate::diag::FileId>), usize> =
            std::collections::HashMap::new();
        for d in diags {
            let key = (d.code.as_str(), d.primary.as_ref().map(|p| p.span.file));
            let n = seen.entry(key).or_default();
            *n += 1;
            if *n <= SHOWN_PER_CODE_AND_FILE {
                writeln!(
                    io.stderr,
                    "{}\n",
                    output::human::render(d, sources, paths, color)
                )?;
            }
        }
        let mut more: Vec<_> = seen
            .into_iter()
            .filter(|(_, n)| *n > SHOWN_PER_CODE_AND_FILE)
            .collect();
        more.sort();
        for ((code, file), n) in more {
            let where_ =
                file.map_or_else(String::new, |f| format!(" in {}", paths.file(sources, f)));
            writeln!(
                io.stderr,
                "... and {} more [{code}]{where_} (--format json lists every one)\n",
                n - SHOWN_PER_CODE_AND_FILE
            )?;
        }
    }
    Ok(())
}

/// Diagnostics of one code in one file drawn in full by the human output.
const SHOWN_PER_CODE_AND_FILE: usize = 20;

/// A folder that is not a capacity repository: a diagnostic with no file.
pub fn root_error(cli: &Cli, e: &RootError, path: &Path, io: &mut Io<'_>) -> std::io::Result<()> {
    let d = Diagnostic::new(Code::NoConfig, e.to_string()).help(format!(
        "run capops on the folder that holds capops.yaml, or create {}/capops.yaml with a Config document",
        path.display()
    ));
    let sources = SourceMap::new();
    let paths = Paths::new(path);
    let diags = std::slice::from_ref(&d);
    write_diagnostics(cli, diags, &sources, &paths, io)?;
    match cli.format {
        Format::Json => {
            let out = output::json::ValidateOutput {
                valid: false,
                summary: output::json::ValidateSummary {
                    files: 0,
                    documents: 0,
                    counts: Summary::of(diags),
                },
                diagnostics: output::json::diagnostics(diags, &sources, &paths),
            };
            write_json(io, "validate", &out)
        }
        Format::Sarif => write_pretty(io, &output::sarif::log(diags, &sources, &paths)),
        _ => Ok(()),
    }
}

/// Writes a command's JSON result in the one envelope every command uses.
pub fn write_json<T: serde::Serialize>(
    io: &mut Io<'_>,
    command: &'static str,
    body: &T,
) -> std::io::Result<()> {
    write_pretty(io, &output::json::Envelope::new(command, body))
}

/// Pretty JSON and a newline on stdout, in blocks: stdout is line-buffered,
/// and a check of 20,000 requests writes millions of lines (one system call
/// each, half the run). Flushed before it returns, so what comes after on
/// stderr still comes after.
pub fn write_pretty<T: serde::Serialize>(io: &mut Io<'_>, value: &T) -> std::io::Result<()> {
    use std::io::Write as _;
    let mut out = std::io::BufWriter::with_capacity(1 << 16, &mut *io.stdout);
    serde_json::to_writer_pretty(&mut out, value).map_err(std::io::Error::from)?;
    writeln!(out)?;
    out.flush()
}

/// Writes a file whole or not at all: to a temporary file beside it, then
/// renamed over the target. A target that is there and is not a plain file
/// (a device such as `/dev/stdout`, a FIFO) is written through, never
/// replaced; a symbolic link is followed, and the file it names replaced.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write as _;
    match std::fs::metadata(path) {
        Ok(m) if m.is_dir() => {
            return Err(std::io::Error::other(format!(
                "{} is a directory",
                path.display()
            )));
        }
        Ok(m) if !m.is_file() => {
            let mut f = std::fs::OpenOptions::new().write(true).open(path)?;
            return f.write_all(bytes).and_then(|_| f.flush());
        }
        _ => {}
    }
    if std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink()) {
        return match std::fs::canonicalize(path) {
            Ok(target) => write_atomically(&target, bytes),
            // A link to nothing yet: the file it names is created.
            Err(_) => std::fs::write(path, bytes),
        };
    }
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = dir.join(format!(".{name}.capops-{}", std::process::id()));
    // A write that fails part way (a full disk, a file size limit) leaves
    // neither the old file changed nor a partial temporary file behind.
    std::fs::write(&tmp, bytes)
        .and_then(|()| std::fs::rename(&tmp, path))
        .inspect_err(|_| {
            let _ = std::fs::remove_file(&tmp);
        })
}

/// Why an output file beside a repository is refused: a link inside the
/// repository on the way to it (a pull request could aim it at any file or
/// folder the job can write), or a path where capops reads: a document, a
/// usage file, a template, a policy test case, rendered output, git's own.
pub fn refuse_output(repo: &Path, out: &Path) -> Option<String> {
    let root = std::fs::canonicalize(repo).ok()?;
    let folder = |p: &Path| -> std::path::PathBuf {
        p.parent()
            .filter(|d| !d.as_os_str().is_empty())
            .unwrap_or(Path::new("."))
            .to_path_buf()
    };
    for step in out.ancestors().filter(|a| !a.as_os_str().is_empty()) {
        let link = std::fs::symlink_metadata(step).is_ok_and(|m| m.file_type().is_symlink());
        if link && std::fs::canonicalize(folder(step)).is_ok_and(|d| d.starts_with(&root)) {
            return Some(format!(
                "{} is a symbolic link inside the repository; capops does not write through links there (a change could aim one at any file)",
                step.display()
            ));
        }
    }
    // Where it would land: its longest existing ancestor, canonical, and
    // the rest as written (a folder that does not exist yet is created).
    let target = {
        let mut existing = out.to_path_buf();
        let mut rest: Vec<std::ffi::OsString> = Vec::new();
        loop {
            if let Ok(c) = std::fs::canonicalize(&existing) {
                break rest.into_iter().rev().fold(c, |p, n| p.join(n));
            }
            match (
                existing.file_name().map(|n| n.to_os_string()),
                existing.parent(),
            ) {
                (Some(n), Some(parent)) => {
                    rest.push(n);
                    existing = if parent.as_os_str().is_empty() {
                        Path::new(".").to_path_buf()
                    } else {
                        parent.to_path_buf()
                    };
                }
                _ => return None,
            }
        }
    };
    let rel = target.strip_prefix(&root).ok()?;
    let rel = rel.to_string_lossy().replace('\\', "/");
    let first = rel.split('/').next().unwrap_or("");
    let output_folder = render_folder(&root);
    let folder_prefix = format!("{}/", output_folder.trim_end_matches('/'));
    let read = rel == crate::load::files::CONFIG_FILE
        || crate::load::files::classify(&rel).is_some()
        || first == ".git"
        || crate::load::files::SKIPPED_DIRS.contains(&first)
        || rel.starts_with(&folder_prefix);
    read.then(|| {
        format!(
            "{} is `{rel}` in the repository, where capops reads documents, usage, templates, test cases or rendered output; write the output elsewhere",
            out.display()
        )
    })
}

/// The Config's `render.outputFolder` (`rendered` when it names none or
/// does not read), read straight from `capops.yaml`.
fn render_folder(root: &Path) -> String {
    use crate::load::yaml;
    let text =
        std::fs::read_to_string(root.join(crate::load::files::CONFIG_FILE)).unwrap_or_default();
    let parsed = yaml::parse(&text, crate::diag::FileId(0));
    parsed
        .documents
        .iter()
        .filter(|d| d.get("kind").and_then(|(_, v)| v.as_str()) == Some("Config"))
        .find_map(|d| {
            let folder = d
                .get("spec")?
                .1
                .get("render")?
                .1
                .get("outputFolder")?
                .1
                .as_str()?;
            Some(folder.trim_start_matches("./").to_string())
        })
        .filter(|f| !f.is_empty())
        .unwrap_or_else(|| "rendered".into())
}

/// Writes `bytes` to `out` (see [`write_atomically`]) unless
/// [`refuse_output`] refuses it (exit 2); a write that fails exits 3.
pub fn write_output(io: &mut Io<'_>, repo: &Path, out: &Path, bytes: &[u8]) -> Result<(), Stop> {
    if let Some(why) = refuse_output(repo, out) {
        return Err(stop(io, Exit::Invalid, &why, None));
    }
    if let Err(e) = write_atomically(out, bytes) {
        return Err(stop(
            io,
            Exit::External,
            &format!("cannot write {}: {e}", out.display()),
            None,
        ));
    }
    Ok(())
}

/// Writes `text` to `out` atomically (saying so on stderr), or to stdout;
/// `repo` is the repository the text was made from ([`refuse_output`]).
pub fn write_text(
    io: &mut Io<'_>,
    repo: &Path,
    out: Option<&Path>,
    text: &str,
) -> Result<(), Stop> {
    // `-` is stdout, as for `render --out -` (not a file named `-`).
    match out.filter(|o| o.as_os_str() != "-") {
        Some(file) => {
            write_output(io, repo, file, text.as_bytes())?;
            writeln!(io.stderr, "wrote {}", file.display())?;
        }
        None => io.stdout.write_all(text.as_bytes())?,
    }
    Ok(())
}
