//! `capops usage pull`: refresh `usage/*.csv` from Prometheus.
//!
//! Glue only: read the arguments, the clock, the token and the CA file; plan
//! with `ingest::plan`; fetch with `ingest::prometheus`; make rows and files
//! with `ingest::rows` and `ingest::history`; write the files atomically and
//! print a summary (human on stderr, or JSON on stdout with `--format json`).
//! Nothing is written unless every query succeeded.

// An edge: it reads the CA file and writes the history (see clippy.toml).
#![allow(clippy::disallowed_methods, clippy::disallowed_types)]

use super::common::{Exit, Outcome, Stop, at_arg, horizon_arg, invalid, load_valid, stop};
use super::{Cli, Io};
use crate::ingest::Metric;
use crate::ingest::history::{self, UsageFile};
use crate::ingest::plan::{self, PlanError, Range};
use crate::ingest::prometheus::{self, FetchError, Options, Traffic};
use crate::ingest::rows::{self, Answers, Attribution, Stats};
use crate::model::Timestamp;
use crate::output::Format;
use serde::Serialize;
use std::path::PathBuf;
use std::time::Duration;

#[derive(Debug, clap::Subcommand)]
pub enum UsageAction {
    /// Append the hours after the last committed one to usage/<cluster>.<YYYY-MM>.csv,
    /// from Prometheus (kube-state-metrics and dcgm-exporter).
    Pull(PullArgs),
}

#[derive(Debug, clap::Args)]
pub struct PullArgs {
    /// The repository root (the folder holding capops.yaml).
    #[arg(default_value = ".")]
    pub path: PathBuf,
    /// Prometheus URL for clusters without one of their own (overrides `usage.prometheus.url`).
    #[arg(long)]
    pub prometheus: Option<String>,
    /// How far back to start when the history is older or empty: hours (72h), days (90d), weeks (8w).
    #[arg(long, conflicts_with_all = ["from", "rewrite_from"], value_parser = horizon_arg)]
    pub since: Option<i64>,
    /// First hour to pull, when the history is older or empty (a date or an RFC 3339 time).
    #[arg(long, conflicts_with = "rewrite_from", value_parser = at_arg)]
    pub from: Option<Timestamp>,
    /// End of the pull, exclusive (default: the start of the current hour; of the previous one
    /// in an hour's first 15 minutes).
    #[arg(long, value_parser = at_arg)]
    pub to: Option<Timestamp>,
    /// Replace committed rows from this hour on (a history rewrite the gate judges).
    #[arg(long, value_parser = at_arg)]
    pub rewrite_from: Option<Timestamp>,
    /// Only this cluster.
    #[arg(long)]
    pub cluster: Option<String>,
    /// Print the summary, write nothing.
    #[arg(long)]
    pub dry_run: bool,
}

/// How long after an hour ends it is pulled by default.
const SETTLE_SECONDS: i64 = 15 * 60;

pub fn run(cli: &Cli, action: &UsageAction, io: &mut Io<'_>) -> Outcome {
    match action {
        UsageAction::Pull(args) => pull(cli, args, io),
    }
}

/// One cluster's part of the summary.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ClusterSummary {
    cluster: String,
    url: String,
    /// Files written (or that would be, with --dry-run).
    files: Vec<String>,
    /// Hours asked for, `[from, to)`; None when up to date.
    from: Option<String>,
    to: Option<String>,
    /// First and last hour written.
    first: Option<String>,
    last: Option<String>,
    added: usize,
    removed: usize,
    #[serde(flatten)]
    stats: Stats,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Summary {
    dry_run: bool,
    clusters: Vec<ClusterSummary>,
    traffic: Traffic,
}

fn stamp(hour: i64) -> String {
    Timestamp::from_second(hour * 3600)
        .map(|t| t.to_string())
        .unwrap_or_default()
}

fn plan_error(e: &PlanError, json: bool, io: &mut Io<'_>) -> Stop {
    coded(io, json, Exit::Invalid, e.code(), &e.to_string(), &e.help())
}

/// A failure with its stable code (docs/usage.md): `error[code]: ...` on
/// stderr, and with `--format json` also `{"error": {code, message, help}}`
/// on stdout, so a script reads what went wrong from the output it parses.
fn coded(io: &mut Io<'_>, json: bool, exit: Exit, code: &str, message: &str, help: &str) -> Stop {
    if json {
        let body = serde_json::json!({
            "error": {"code": code, "message": message, "help": help, "exit": exit.code()}
        });
        if let Err(e) = super::common::write_json(io, "usage pull", &body) {
            return Stop::Io(e);
        }
    }
    use crate::output::escape::terminal;
    match writeln!(
        io.stderr,
        "error[{code}]: {}\n  help: {}",
        terminal(message),
        terminal(help)
    ) {
        Ok(()) => Stop::Exit(exit),
        Err(e) => Stop::Io(e),
    }
}

fn pull(cli: &Cli, args: &PullArgs, io: &mut Io<'_>) -> Outcome {
    let now = io.now;
    let to = match &args.to {
        Some(t) => t.hour_index(),
        // Samples of the hour that just ended may still be arriving: in the first
        // minutes of an hour, stop at the previous one.
        None => (now.as_second() - SETTLE_SECONDS).div_euclid(3600),
    };
    let mut range = Range {
        to,
        ..Range::default()
    };
    range.since = args.since;
    range.from = args.from.map(|t| t.hour_index());
    range.rewrite_from = args.rewrite_from.map(|t| t.hour_index());
    if let Some(r) = range.rewrite_from.or(range.from)
        && r >= range.to
    {
        let e = PlanError::EmptyRange {
            flag: if range.rewrite_from.is_some() {
                "--rewrite-from"
            } else {
                "--from"
            },
            from: stamp(r),
            to: stamp(range.to),
        };
        return Err(plan_error(&e, cli.format == Format::Json, io));
    }

    let head = load_valid(cli, &args.path, "usage can be pulled", io)?;
    let repo = &head.repo;
    let settings = repo.config_spec().usage.prometheus.clone();
    let targets = match plan::targets(
        repo,
        &settings,
        args.prometheus.as_deref(),
        args.cluster.as_deref(),
    ) {
        Ok(t) => t,
        Err(e) => return Err(plan_error(&e, cli.format == Format::Json, io)),
    };
    // A usage file that read cleanly keeps a few rows in memory: its whole
    // text is read again here, and a file that changed meanwhile stops the
    // pull (rows are appended to what was read, never to a guess).
    let mut texts = Vec::new();
    for (_, f) in head
        .sources
        .files()
        .filter(|(_, f)| f.path.starts_with("usage/") && f.path.ends_with(".csv"))
    {
        match f.read_text() {
            Some(text) => texts.push((f.path.as_str(), text)),
            None => {
                return Err(invalid(
                    io,
                    &format!(
                        "{} changed or became unreadable while capops read it",
                        f.path
                    ),
                    Some("run `capops usage pull` again once nothing else writes the usage files"),
                ));
            }
        }
    }
    let files: Vec<UsageFile<'_>> = texts
        .iter()
        .map(|(path, text)| UsageFile { path, text })
        .collect();

    // Plan every cluster before asking anything.
    struct Planned {
        target: plan::Target,
        hours: Option<(i64, i64)>,
        committed: history::Committed,
    }
    let mut all_committed = history::committed(&files, range.rewrite_from);
    let mut planned = Vec::new();
    let mut queries = Vec::new();
    for target in targets {
        let committed = all_committed.remove(&target.cluster).unwrap_or_default();
        let hours = plan::window(&range, committed.last_hour);
        if let (Some(from), Some(_)) = (range.rewrite_from, hours) {
            let others = history::rewrite_conflicts(&files, &target.cluster, from);
            if !others.is_empty() {
                let file = history::file_for(&target.cluster, from);
                return Err(invalid(
                    io,
                    &format!(
                        "{} hold rows of cluster `{}` at or after {}; --rewrite-from rewrites only the cluster's monthly files ({file} and later)",
                        others.join(", "),
                        target.cluster,
                        stamp(from)
                    ),
                    Some("move those rows into the monthly files or delete them, then pull again"),
                ));
            }
        }
        if let Some(h) = hours {
            match plan::queries(&target, h, &settings) {
                Ok(q) => queries.extend(q),
                Err(e) => return Err(plan_error(&e, cli.format == Format::Json, io)),
            }
        }
        planned.push(Planned {
            target,
            hours,
            committed,
        });
    }

    let root = &args.path;
    let ca = match &settings.ca_file {
        None => None,
        Some(p) => {
            let file = root.join(&p.value);
            // A FIFO would hold the read forever, a device never end it.
            let plain = match std::fs::metadata(&file) {
                Ok(m) if !m.is_file() => {
                    Err("it is not a regular file (a folder, FIFO, socket or device)".to_string())
                }
                Ok(m) if m.len() > 16 << 20 => Err(format!(
                    "it is {} bytes, more than a CA file holds (at most 16 MiB)",
                    m.len()
                )),
                _ => Ok(()),
            };
            if let Err(why) = plain {
                return Err(invalid(
                    io,
                    &format!("cannot read the CA file {}: {why}", file.display()),
                    Some(
                        "`usage.prometheus.caFile` is a PEM file, relative to the repository root",
                    ),
                ));
            }
            match std::fs::read(&file) {
                Ok(bytes) => Some((file.display().to_string(), bytes)),
                Err(e) => {
                    return Err(invalid(
                        io,
                        &format!("cannot read the CA file {}: {e}", file.display()),
                        Some("`usage.prometheus.caFile` is relative to the repository root"),
                    ));
                }
            }
        }
    };
    let options = Options {
        token: (io.env)(&settings.token_env).filter(|t| !t.is_empty()),
        ca,
        timeout: Duration::from_secs(u64::from(settings.timeout_seconds)),
    };
    let (fetched, traffic) = if queries.is_empty() {
        (Vec::new(), Traffic::default())
    } else {
        match prometheus::fetch_all(&queries, &options) {
            Ok(x) => x,
            Err(e) => return Err(fetch_error(&e, cli.format == Format::Json, io)),
        }
    };

    let mut answers: std::collections::BTreeMap<String, Answers> = Default::default();
    for f in fetched {
        let a = answers.entry(f.cluster).or_default();
        match f.metric {
            Metric::Allocated => a.allocated.extend(f.series),
            Metric::Used => a.used.extend(f.series),
            Metric::Nodes => a.nodes.extend(f.series),
        }
    }

    let mut summary = Summary {
        dry_run: args.dry_run,
        clusters: Vec::new(),
        traffic,
    };
    let mut writes = Vec::new();
    for p in &planned {
        let mut s = ClusterSummary {
            cluster: p.target.cluster.clone(),
            url: plan::redact(&p.target.url),
            files: Vec::new(),
            from: p.hours.map(|h| stamp(h.0)),
            to: p.hours.map(|h| stamp(h.1)),
            first: None,
            last: None,
            added: 0,
            removed: 0,
            stats: Stats::default(),
        };
        if let Some(hours) = p.hours
            && let Some(attr) = Attribution::new(repo, &p.target.cluster)
        {
            let empty = Answers::default();
            let a = answers.get(&p.target.cluster).unwrap_or(&empty);
            let (rows, stats) = rows::build(
                &attr,
                a,
                hours,
                &p.committed.active,
                p.committed.last_hour.is_some(),
            );
            let capacity = |pool: &str| {
                repo.clusters
                    .get(&p.target.cluster)
                    .and_then(|c| {
                        c.spec
                            .node_pools
                            .iter()
                            .find(|x| x.name.value.as_str() == pool)
                    })
                    .map(|x| crate::capacity::pool_gpus(x) as f64)
            };
            if let Some(why) = rows::impossible(&rows, capacity) {
                return Err(stop(
                    io,
                    Exit::External,
                    &format!(
                        "Prometheus' answer for cluster `{}` cannot be its usage: {why}; nothing was written",
                        p.target.cluster
                    ),
                    Some(
                        "check the queries in `usage.prometheus.queries` and the exporters behind them (docs/usage.md says what each must return)",
                    ),
                ));
            }
            s.first = rows.first().map(|r| stamp(r.hour));
            s.last = rows.last().map(|r| stamp(r.hour));
            s.stats = stats;
            // Nothing measured writes nothing, even under --rewrite-from: a Prometheus
            // that lost the hours must not erase them from the history.
            if !rows.is_empty() {
                let targets =
                    history::targets(&files, &p.target.cluster, &rows, range.rewrite_from);
                for (file, month_rows) in targets {
                    let disk = root.join(&file);
                    if let Some(link) = link_on_the_way(root, &file) {
                        return Err(stop(
                            io,
                            Exit::Invalid,
                            &format!(
                                "{link} is a link: capops writes the usage history only to plain files in the repository (it reads no link either)"
                            ),
                            Some("replace the link with the file itself, or remove it"),
                        ));
                    }
                    let existing = match std::fs::read_to_string(&disk) {
                        Ok(t) => Some(t),
                        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
                        Err(e) => {
                            return Err(stop(
                                io,
                                Exit::External,
                                &format!("cannot read {}: {e}", disk.display()),
                                None,
                            ));
                        }
                    };
                    let merged = history::merge(
                        existing.as_deref(),
                        &p.target.cluster,
                        &month_rows,
                        range.rewrite_from,
                    );
                    s.added += merged.added;
                    s.removed += merged.removed;
                    if existing.as_deref() != Some(merged.text.as_str()) {
                        s.files.push(file);
                        writes.push((disk, merged.text));
                    }
                }
            }
        }
        summary.clusters.push(s);
    }

    if !args.dry_run {
        for (disk, text) in &writes {
            let made = disk.parent().map(std::fs::create_dir_all).unwrap_or(Ok(()));
            if let Err(e) =
                made.and_then(|_| super::common::write_atomically(disk, text.as_bytes()))
            {
                return Err(stop(
                    io,
                    Exit::External,
                    &format!("cannot write {}: {e}", disk.display()),
                    None,
                ));
            }
        }
    }
    match cli.format {
        Format::Json => super::common::write_json(io, "usage pull", &summary)?,
        _ => write_summary(&summary, io)?,
    }
    Ok(Exit::Ok)
}

/// The first part of `file` (relative to `root`) that is a symbolic link:
/// writing through it would change a file outside the repository.
fn link_on_the_way(root: &std::path::Path, file: &str) -> Option<String> {
    let mut at = root.to_path_buf();
    let mut shown = Vec::new();
    for part in std::path::Path::new(file).components() {
        at.push(part);
        shown.push(part.as_os_str().to_string_lossy().into_owned());
        if std::fs::symlink_metadata(&at).is_ok_and(|m| m.file_type().is_symlink()) {
            return Some(shown.join("/"));
        }
    }
    None
}

fn fetch_error(e: &FetchError, json: bool, io: &mut Io<'_>) -> Stop {
    let exit = if e.is_input_error() {
        Exit::Invalid
    } else {
        Exit::External
    };
    coded(io, json, exit, e.code(), &e.to_string(), e.help())
}

fn write_summary(s: &Summary, io: &mut Io<'_>) -> std::io::Result<()> {
    let verb = if s.dry_run { "would add" } else { "added" };
    for c in &s.clusters {
        match (&c.first, &c.last) {
            _ if c.from.is_none() => writeln!(io.stderr, "{}: up to date", c.cluster)?,
            (Some(first), Some(last)) => {
                let removed = if c.removed > 0 {
                    format!(", replaced {} committed rows", c.removed)
                } else {
                    String::new()
                };
                writeln!(
                    io.stderr,
                    "{}: {verb} {} rows to {} ({} series, {} hours {first} .. {last}, {} gap hours{removed})",
                    c.cluster,
                    c.added,
                    c.files.join(", "),
                    c.stats.series,
                    c.stats.hours,
                    c.stats.gap_hours
                )?;
            }
            _ => writeln!(
                io.stderr,
                "{}: nothing measured from {} to {} at {}",
                c.cluster,
                c.from.as_deref().unwrap_or(""),
                c.to.as_deref().unwrap_or(""),
                c.url
            )?,
        }
        if c.stats.trailing_unmeasured_hours > 0 && c.stats.hours > 0 {
            writeln!(
                io.stderr,
                "  {} unmeasured hours at the end were left for the next pull",
                c.stats.trailing_unmeasured_hours
            )?;
        }
        for (why, gpu_hours) in &c.stats.unattributed {
            writeln!(io.stderr, "  not counted: {gpu_hours:.1} GPU-hours: {why}")?;
        }
        for p in &c.stats.pools_without_labels {
            writeln!(
                io.stderr,
                "  pool `{p}` has no nodeLabels, so no node is counted to it"
            )?;
        }
        for n in &c.stats.ambiguous_nodes {
            writeln!(
                io.stderr,
                "  node `{n}` matches several pools; counted to the first"
            )?;
        }
        for r in &c.stats.undeclared_resources {
            writeln!(
                io.stderr,
                "  requests of {r}, which the pool does not declare"
            )?;
        }
        if c.stats.unknown_values > 0 {
            writeln!(
                io.stderr,
                "  {} points were NaN or infinite; the cells they fall in are left empty (unknown), not read as 0",
                c.stats.unknown_values
            )?;
        }
        if c.stats.clamped > 0 {
            writeln!(
                io.stderr,
                "  {} rows measured more GPUs used than allocated; used was lowered to allocated",
                c.stats.clamped
            )?;
        }
    }
    for w in &s.traffic.warnings {
        writeln!(io.stderr, "warning: Prometheus: {w}")?;
    }
    writeln!(
        io.stderr,
        "{} queries, {:.1} MB, {:.1} s",
        s.traffic.queries,
        s.traffic.bytes as f64 / 1e6,
        s.traffic.seconds
    )?;
    Ok(())
}
