//! `capops check` and `capops explain`: evaluate requests against the policy.

use super::{Cli, Io, exit, validate as vcmd};
use crate::diag::{Diagnostic, Severity};
use crate::model::{Document, PolicySpec, Timestamp};
use crate::policy::{self, CheckInput, CheckResult, Outcome};
use crate::report::check::{BaseInfo, Context};
use crate::report::{self, Format, Paths};
use crate::validate::Outcome as Validated;
use crate::validate::base::{self, Base};
use std::path::Path;

/// When `check` fails.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum FailOn {
    /// Exit 1 only when something is denied.
    Denied,
    /// Exit 1 when something is denied or needs approval (default).
    Approval,
    /// Exit 0 whatever the decisions (2 and 3 still report invalid input and git failures).
    Never,
}

/// Reads `--at`: an ISO 8601 date or an RFC 3339 time; now when absent.
pub fn parse_at(at: Option<&str>, io: &mut Io<'_>) -> Result<Timestamp, i32> {
    match at {
        None => Ok(Timestamp(jiff::Timestamp::now())),
        Some(s) => s.parse().map_err(|e: String| {
            let _ = writeln!(io.stderr, "error: --at {e}\n  help: write a date as 2026-12-01 or a time as 2026-12-01T08:00:00Z");
            exit::INVALID
        }),
    }
}

/// Everything `check` and `explain` load before evaluating.
struct Loaded {
    head: Validated,
    base: Option<Base>,
    pack: Option<Document<PolicySpec>>,
}

/// Loads and validates the working tree, the base revision and the default pack.
/// Returns the exit code when it cannot go on.
fn load(
    cli: &Cli,
    path: &Path,
    base_rev: Option<&str>,
    io: &mut Io<'_>,
) -> std::io::Result<Result<Loaded, i32>> {
    let mut head =
        match super::report::load_valid(cli, path, "the policy can judge the repository", io)? {
            Ok(h) => h,
            Err(code) => return Ok(Err(code)),
        };
    let base = match base_rev {
        None => None,
        Some(rev) => match base::load_base(&mut head, path, rev) {
            Ok(b) => Some(b),
            Err(e) => {
                writeln!(io.stderr, "error: {e}")?;
                return Ok(Err(exit::EXTERNAL));
            }
        },
    };
    let pack = policy::default_pack(&mut head.sources);
    Ok(Ok(Loaded { head, base, pack }))
}

fn evaluate(
    loaded: &Loaded,
    at: Timestamp,
    trace: bool,
    analysis: &crate::cost::Analysis<'_>,
) -> Option<CheckResult> {
    let pack = loaded.pack.as_ref()?;
    let none = std::collections::HashSet::new();
    Some(policy::check(&CheckInput {
        head: &loaded.head.repo,
        base: loaded.base.as_ref().map(|b| &b.repo),
        same_files: loaded.base.as_ref().map(|b| &b.same_files).unwrap_or(&none),
        at,
        default_pack: pack,
        trace,
        analysis: Some(analysis),
    }))
}

fn context(
    loaded: &Loaded,
    result: &CheckResult,
    at: Timestamp,
    analysis: Option<&crate::cost::Analysis<'_>>,
) -> Context {
    Context {
        charts: analysis
            .map(|a| report::chart::for_check(a, result))
            .unwrap_or_default(),
        at: at.to_string(),
        base: loaded.base.as_ref().map(|b| BaseInfo {
            rev: b.rev.clone(),
            commit: b.commit.clone(),
        }),
        policy: report::check::policy_label(&result.policy),
    }
}

pub fn check(
    cli: &Cli,
    path: &Path,
    base_rev: Option<&str>,
    at: Option<&str>,
    fail_on: FailOn,
    io: &mut Io<'_>,
) -> std::io::Result<i32> {
    let at = match parse_at(at, io) {
        Ok(t) => t,
        Err(code) => return Ok(code),
    };
    let loaded = match load(cli, path, base_rev, io)? {
        Ok(l) => l,
        Err(code) => return Ok(code),
    };
    let analysis = crate::cost::Analysis::new(&loaded.head.repo, at);
    let Some(result) = evaluate(&loaded, at, cli.format == Format::Markdown, &analysis) else {
        writeln!(
            io.stderr,
            "error: the built-in policy pack could not be read (a capops bug)"
        )?;
        return Ok(exit::INVALID);
    };
    let paths = Paths::new(path);
    let mut diagnostics: Vec<Diagnostic> = loaded.head.diagnostics.clone();
    diagnostics.extend(result.diagnostics.iter().cloned());
    // Usage history: stale numbers, and (against a base) rewritten hours.
    let mut usage = crate::ingest::stale::check(&loaded.head.repo, at);
    if loaded.base.is_some() {
        usage.extend(crate::ingest::rewrite::check(
            &loaded.head.repo,
            &loaded.head.sources,
        ));
    }
    let usage_error = usage.iter().any(|d| d.is_error());
    diagnostics.extend(usage);
    let policy_broken = usage_error
        || result
            .diagnostics
            .iter()
            .any(|d| d.severity == Severity::Error);
    let gate = result.evaluated.iter().any(|e| match fail_on {
        FailOn::Denied => e.decision.outcome == Outcome::Denied,
        FailOn::Approval => e.decision.outcome != Outcome::Approved,
        FailOn::Never => false,
    });
    let code = if policy_broken {
        exit::INVALID
    } else if gate {
        exit::GATE
    } else {
        exit::OK
    };
    let charted = matches!(cli.format, Format::Json | Format::Markdown);
    let ctx = context(&loaded, &result, at, charted.then_some(&analysis));
    let sources = &loaded.head.sources;
    vcmd::write_diagnostics(cli, &diagnostics, sources, &paths, io)?;
    if report::github::in_actions(io.env) && cli.format == Format::Human {
        for line in report::check::annotations(&result, sources, &paths) {
            writeln!(io.stdout, "{line}")?;
        }
    }
    match cli.format {
        Format::Human | Format::Html => io
            .stdout
            .write_all(report::check::human(&result, &ctx, sources, &paths).as_bytes())?,
        Format::Json => {
            let out = report::check::json(&result, &ctx, &diagnostics, code, sources, &paths);
            serde_json::to_writer_pretty(&mut *io.stdout, &out)?;
            writeln!(io.stdout)?;
        }
        Format::Sarif => {
            let log = report::check::sarif(&result, &diagnostics, sources, &paths);
            serde_json::to_writer_pretty(&mut *io.stdout, &log)?;
            writeln!(io.stdout)?;
        }
        Format::Markdown => {
            let links = report::markdown::Links::from_env(io.env);
            io.stdout.write_all(
                report::markdown::comment(&result, &ctx, sources, &paths, &links).as_bytes(),
            )?;
        }
    }
    // Freeing ten thousand decisions one by one takes longer than the process
    // exit that follows; the memory is the operating system's to reclaim.
    std::mem::forget(result);
    std::mem::forget(loaded);
    Ok(code)
}

pub fn explain(
    cli: &Cli,
    name: &str,
    path: &Path,
    base_rev: Option<&str>,
    at: Option<&str>,
    io: &mut Io<'_>,
) -> std::io::Result<i32> {
    let at = match parse_at(at, io) {
        Ok(t) => t,
        Err(code) => return Ok(code),
    };
    let loaded = match load(cli, path, base_rev, io)? {
        Ok(l) => l,
        Err(code) => return Ok(code),
    };
    let analysis = crate::cost::Analysis::new(&loaded.head.repo, at);
    let Some(result) = evaluate(&loaded, at, true, &analysis) else {
        writeln!(
            io.stderr,
            "error: the built-in policy pack could not be read (a capops bug)"
        )?;
        return Ok(exit::INVALID);
    };
    let paths = Paths::new(path);
    let sources = &loaded.head.sources;
    let found = result.evaluated.iter().find(|e| e.name == name);
    let Some(e) = found else {
        let known: Vec<&str> = loaded
            .head
            .repo
            .requests
            .keys()
            .map(String::as_str)
            .collect();
        let why = if loaded.head.repo.requests.contains_key(name) {
            "did not change since the base revision, so it is not judged".to_string()
        } else {
            format!(
                "is not a request, reservation or team of the repository; {}",
                crate::diag::suggest(name, known, "requests")
            )
        };
        writeln!(io.stderr, "error: `{name}` {why}")?;
        return Ok(exit::INVALID);
    };
    vcmd::write_diagnostics(cli, &result.diagnostics, sources, &paths, io)?;
    let ctx = context(&loaded, &result, at, None);
    match cli.format {
        Format::Json => {
            let mut v =
                serde_json::to_value(report::check::decision_json(e, sources, &paths, true))
                    .unwrap_or_default();
            v["version"] = serde_json::json!(report::json::OUTPUT_VERSION);
            v["command"] = serde_json::json!("explain");
            v["at"] = serde_json::json!(ctx.at);
            v["policy"] = serde_json::json!(ctx.policy);
            serde_json::to_writer_pretty(&mut *io.stdout, &v)?;
            writeln!(io.stdout)?;
        }
        _ => io
            .stdout
            .write_all(report::explain::human(e, &ctx, sources, &paths).as_bytes())?,
    }
    Ok(exit::OK)
}
