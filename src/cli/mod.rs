//! The command line: arguments, dispatch and exit codes.
//!
//! [`main`] reads the process's environment and clock once and hands them to
//! [`run`], which parses the arguments with clap, checks that the command
//! writes the chosen `--format`, and runs it. Commands build their result in
//! the pipeline's stages, format it with [`crate::output`], and write it
//! through [`Io`], so tests run them in-process with their own stdout,
//! stderr, environment and clock.

// An edge: it reads files, git, the environment or the clock (see clippy.toml).
#![allow(clippy::disallowed_methods, clippy::disallowed_types)]

mod check;
pub mod common;
mod effects;
mod forecast;
mod github;
mod github_common;
mod github_queue;
mod info;
pub mod inventory;
mod output_edits;
mod render;
mod render_out;
mod report;
mod sync;
mod sync_apply;
mod sync_planfile;
mod sync_revision;
mod sync_support;
mod test;
pub mod usage;
mod validate;
mod watchdog;

pub use check::FailOn;
pub use common::Exit;

use crate::model::Timestamp;
use crate::output::Format;
use clap::{Parser, Subcommand};
use common::{Outcome, Stop};
use std::ffi::OsString;
use std::io::Write;
use std::path::PathBuf;

/// GPU capacity governance as code.
#[derive(Debug, Parser)]
#[command(name = "capops", version, about, long_about = None)]
pub struct Cli {
    /// Output format (each command lists the ones it writes).
    #[arg(long, global = true, value_enum, default_value_t = Format::Human)]
    pub format: Format,
    /// Colour in human output: auto (when stderr is a terminal and NO_COLOR is unset), always, never.
    #[arg(long, global = true, value_enum, default_value_t = ColorChoice::Auto)]
    pub color: ColorChoice,
    /// Folder of the parse cache (env CAPOPS_CACHE_DIR; default capops/parse-cache in the repository's git directory).
    #[arg(long, global = true, value_name = "DIR")]
    pub cache_dir: Option<PathBuf>,
    /// Parse every file; neither read nor write the parse cache (env CAPOPS_NO_CACHE=1).
    #[arg(long, global = true)]
    pub no_cache: bool,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ColorChoice {
    Auto,
    Always,
    Never,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Load and validate a capacity repository; report every problem at once.
    Validate {
        /// The repository root (the folder holding capops.yaml).
        #[arg(default_value = ".")]
        path: PathBuf,
    },
    /// Print the JSON Schema of a document kind (for editors), or list the kinds.
    Schema {
        /// Config, Team, Cluster, CapacityRequest, PriorityClass, Reservation, ApprovalPolicy or PriceCatalog.
        kind: Option<String>,
    },
    /// Show the built-in GPU catalog: models, memory, MIG profiles and placements.
    Catalog {
        /// One model (id or name); all models when omitted.
        model: Option<String>,
    },
    /// Validate, then judge requests, reservations and teams against the approval policy.
    ///
    /// With --base, only what changed since that git revision is judged, and the
    /// policy and Config are read from the base: a change cannot rewrite the
    /// rules that judge it.
    Check(check::CheckArgs),
    /// Show how the policy reached its decision for one request: every tier and
    /// rule, the facts it read and the result.
    Explain(check::ExplainArgs),
    /// Run policy test cases: each case file states documents (or a change to a
    /// base) and the decisions the policy must reach.
    Test {
        /// A folder of case files, or a capacity repository whose cases are in tests/.
        #[arg(default_value = ".")]
        path: PathBuf,
    },
    /// Demand forecasts of the repository's pools (P10/P50/P90, with a sparkline;
    /// --svg for a chart), or `forecast backtest` on a CSV.
    #[command(args_conflicts_with_subcommands = true)]
    Forecast {
        #[command(subcommand)]
        action: Option<ForecastAction>,
        #[command(flatten)]
        args: forecast::PoolArgs,
    },
    /// Costs, budgets, chargeback, utilization, idle and stranded capacity, and
    /// recommendations (--format human|markdown|json|html; --out FILE).
    Report(report::ReportArgs),
    /// Render what clusters and clouds should hold at --at: ResourceQuotas,
    /// PriorityClasses, Kueue objects, MIG and time-slicing ConfigMaps, the
    /// node-label plan, and Terraform JSON for reservations.
    Render(render::RenderArgs),
    /// Diff the rendered state against live clusters: + create, ~ update, - delete, ! conflict.
    Plan(sync::PlanArgs),
    /// Server-side apply to live clusters in dependency order, prune what this
    /// repository owns, relabel MIG nodes (--wait for the MIG manager).
    Apply(sync_apply::ApplyArgs),
    /// Report live clusters that differ from the repository (exit 1 on drift).
    Drift(sync_support::Common),
    /// Compare what the nodes advertise (GPU model, count, MIG layout) with the pools (exit 1 on mismatch).
    Verify(sync_support::Common),
    /// A node's GPUs through NVML (model, UUID, memory, MIG mode and devices),
    /// compared with the pool it belongs to (--cluster C --pool P, or --label).
    Inventory(inventory::InventoryArgs),
    /// Usage history: `usage pull` refreshes usage/*.csv from Prometheus.
    Usage {
        #[command(subcommand)]
        action: usage::UsageAction,
    },
}

#[derive(Debug, Subcommand)]
pub enum ForecastAction {
    /// Rolling-origin evaluation of the forecaster on a CSV of hourly series.
    Backtest(forecast::BacktestArgs),
}

impl Command {
    /// The command's name, as typed.
    pub fn name(&self) -> &'static str {
        match self {
            Command::Validate { .. } => "validate",
            Command::Schema { .. } => "schema",
            Command::Catalog { .. } => "catalog",
            Command::Check(_) => "check",
            Command::Explain(_) => "explain",
            Command::Test { .. } => "test",
            Command::Forecast {
                action: Some(ForecastAction::Backtest(_)),
                ..
            } => "forecast backtest",
            Command::Forecast { .. } => "forecast",
            Command::Report(_) => "report",
            Command::Render(_) => "render",
            Command::Plan(_) => "plan",
            Command::Apply(_) => "apply",
            Command::Drift(_) => "drift",
            Command::Verify(_) => "verify",
            Command::Inventory(_) => "inventory",
            Command::Usage { .. } => "usage pull",
        }
    }

    /// The formats the command writes.
    pub fn formats(&self) -> &'static [Format] {
        use Format::*;
        match self {
            Command::Validate { .. } => &[Human, Json, Sarif],
            Command::Check(_) => &[Human, Json, Sarif, Markdown],
            Command::Report(_) => &[Human, Json, Markdown, Html],
            Command::Schema { .. }
            | Command::Catalog { .. }
            | Command::Explain(_)
            | Command::Test { .. }
            | Command::Render(_) => &[Human, Json],
            Command::Forecast {
                action: Some(_), ..
            } => &[Human],
            Command::Forecast { .. } => &[Human, Json],
            Command::Plan(_) | Command::Apply(_) | Command::Verify(_) => &[Human, Json],
            Command::Drift(_) => &[Human, Json, Markdown],
            Command::Inventory(_) | Command::Usage { .. } => &[Human, Json],
        }
    }
}

/// Where a command writes, and what it knows of its environment.
pub struct Io<'a> {
    pub stdout: &'a mut dyn Write,
    pub stderr: &'a mut dyn Write,
    /// Reads an environment variable.
    pub env: &'a dyn Fn(&str) -> Option<String>,
    /// Whether stderr is a terminal (for colour).
    pub stderr_is_terminal: bool,
    /// The time the command runs at: the default of `--at`.
    pub now: Timestamp,
}

impl Io<'_> {
    pub fn color(&self, choice: ColorChoice) -> bool {
        match choice {
            ColorChoice::Always => true,
            ColorChoice::Never => false,
            ColorChoice::Auto => self.stderr_is_terminal && (self.env)("NO_COLOR").is_none(),
        }
    }
}

/// An output whose reader may go away (`capops check | head`): from the
/// first broken pipe on, what is written is dropped, so the command runs to
/// the exit its result decides instead of stopping as if it had succeeded.
struct ReaderGone<W> {
    inner: W,
    gone: bool,
}

impl<W: Write> ReaderGone<W> {
    fn new(inner: W) -> Self {
        ReaderGone { inner, gone: false }
    }

    fn gone<T>(&mut self, r: std::io::Result<T>, dropped: T) -> std::io::Result<T> {
        match r {
            Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {
                self.gone = true;
                Ok(dropped)
            }
            other => other,
        }
    }
}

impl<W: Write> Write for ReaderGone<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if self.gone {
            return Ok(buf.len());
        }
        let r = self.inner.write(buf);
        self.gone(r, buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        if self.gone {
            return Ok(());
        }
        let r = self.inner.flush();
        self.gone(r, ())
    }
}

/// Whether diagnostics on stderr will be drawn in colour, as
/// [`Io::color`] decides it from `--color` once the command line is read:
/// `always`, or `auto` (the default) on a terminal without `NO_COLOR`.
fn colour_on(args: &[OsString], is_term: bool, no_color: bool) -> bool {
    let mut choice: Option<&std::ffi::OsStr> = None;
    for (k, a) in args.iter().enumerate() {
        if let Some(v) = a.to_str().and_then(|a| a.strip_prefix("--color=")) {
            choice = Some(std::ffi::OsStr::new(v));
        } else if a == "--color" {
            choice = args.get(k + 1).map(OsString::as_os_str);
        }
    }
    match choice.and_then(|c| c.to_str()) {
        Some("always") => true,
        Some("never") => false,
        _ => is_term && !no_color,
    }
}

/// Runs the command line with the process's stdout, stderr, environment and clock.
pub fn main(args: Vec<OsString>) -> i32 {
    use std::io::IsTerminal;
    let stdout = std::io::stdout();
    let stderr = std::io::stderr();
    let is_term = stderr.is_terminal();
    // No escape sequences from documents reach a terminal or a CI log:
    // stdout never carries capops' own, stderr only when colour is on
    // (diagnostics escape theirs then, `output::human`).
    let coloured = colour_on(&args, is_term, std::env::var_os("NO_COLOR").is_some());
    let mut out = ReaderGone::new(crate::output::escape::Terminal::new(stdout.lock()));
    let mut plain_err;
    let mut raw_err;
    let err: &mut dyn Write = if coloured {
        raw_err = ReaderGone::new(stderr.lock());
        &mut raw_err
    } else {
        plain_err = ReaderGone::new(crate::output::escape::Terminal::new(stderr.lock()));
        &mut plain_err
    };
    let env = |k: &str| std::env::var(k).ok();
    // A value that is not a limit is refused by the commands that run
    // policies (`run`); the others never start a policy.
    watchdog::start(
        watchdog::limit(env("CAPOPS_POLICY_SECONDS").as_deref()).unwrap_or(
            std::time::Duration::from_secs_f64(watchdog::DEFAULT_SECONDS),
        ),
    );
    let mut io = Io {
        stdout: &mut out,
        stderr: err,
        env: &env,
        stderr_is_terminal: is_term,
        now: Timestamp(jiff::Timestamp::now()),
    };
    run(args, &mut io)
}

/// Runs a command line and returns its exit code.
pub fn run(args: Vec<OsString>, io: &mut Io<'_>) -> i32 {
    let cli = match Cli::try_parse_from(args) {
        Ok(cli) => cli,
        Err(e) => {
            let text = e.render().to_string();
            let (stream, code): (&mut dyn Write, Exit) = if e.use_stderr() {
                (io.stderr, Exit::Invalid)
            } else {
                (io.stdout, Exit::Ok)
            };
            let _ = stream.write_all(text.as_bytes());
            return code.code();
        }
    };
    // The policy time limit a user set is the terms the gate runs under:
    // one capops would ignore is refused where policies run (check,
    // explain, test), and is nobody's business elsewhere.
    if matches!(cli.command.name(), "check" | "explain" | "test")
        && let Err(text) = watchdog::limit((io.env)("CAPOPS_POLICY_SECONDS").as_deref())
    {
        let _ = io.stderr.write_all(text.as_bytes());
        return Exit::Invalid.code();
    }
    let result = if cli.command.formats().contains(&cli.format) {
        dispatch(&cli, io)
    } else {
        let names: Vec<&str> = cli.command.formats().iter().map(|f| f.name()).collect();
        Err(common::invalid(
            io,
            &format!(
                "`capops {}` does not write {}",
                cli.command.name(),
                cli.format.name()
            ),
            Some(&format!("use --format {}", names.join(", --format "))),
        ))
    };
    let exit = match result {
        Ok(exit) | Err(Stop::Exit(exit)) => exit,
        // A reader that went away (`capops report | head`) is not a failure.
        Err(Stop::Io(e)) if e.kind() == std::io::ErrorKind::BrokenPipe => Exit::Ok,
        Err(Stop::Io(e)) => {
            let _ = writeln!(io.stderr, "error: cannot write output: {e}");
            Exit::External
        }
    };
    exit.code()
}

fn dispatch(cli: &Cli, io: &mut Io<'_>) -> Outcome {
    match &cli.command {
        Command::Validate { path } => validate::run(cli, path, io),
        Command::Schema { kind } => info::schema(cli, kind.as_deref(), io),
        Command::Catalog { model } => info::catalog(cli, model.as_deref(), io),
        Command::Check(args) if args.github.github => github::run(cli, args, io),
        Command::Check(args) => check::check(cli, args, io),
        Command::Explain(args) => check::explain(cli, args, io),
        Command::Test { path } => test::run(cli, path, io),
        Command::Forecast { action, args } => match action {
            Some(ForecastAction::Backtest(a)) => forecast::backtest(a, io),
            None => forecast::pools(cli, args, io),
        },
        Command::Report(args) => report::run(cli, args, io),
        Command::Render(args) => render::run(cli, args, io),
        Command::Plan(a) => sync::plan(cli, a, io),
        Command::Apply(a) => sync_apply::apply(cli, a, io),
        Command::Drift(a) => sync::drift(cli, a, io),
        Command::Verify(a) => sync::verify(cli, a, io),
        Command::Inventory(args) => inventory::run(cli, args, io),
        Command::Usage { action } => usage::run(cli, action, io),
    }
}
