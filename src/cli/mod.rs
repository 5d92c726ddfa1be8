//! The command line: arguments, dispatch and exit codes.
//!
//! [`main`] parses arguments with clap and runs one command. Commands write
//! through [`Io`] so tests can run them in-process and read what they print.
//! The environment is read here (GitHub Actions, colour), never in the core.

mod check;
pub mod exit;
mod forecast;
mod info;
pub mod inventory;
mod render;
mod report;
pub mod usage;
mod validate;

pub use check::FailOn;

use crate::report::Format;
use clap::{Parser, Subcommand};
use std::ffi::OsString;
use std::io::Write;
use std::path::PathBuf;

/// GPU capacity governance as code.
#[derive(Debug, Parser)]
#[command(name = "capops", version, about, long_about = None)]
pub struct Cli {
    /// Output format.
    #[arg(long, global = true, value_enum, default_value_t = Format::Human)]
    pub format: Format,
    /// Colour in human output: auto (when stderr is a terminal and NO_COLOR is unset), always, never.
    #[arg(long, global = true, value_enum, default_value_t = ColorChoice::Auto)]
    pub color: ColorChoice,
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
    Check {
        /// The repository root (the folder holding capops.yaml).
        #[arg(default_value = ".")]
        path: PathBuf,
        /// Git revision to compare with (a branch, tag or commit).
        #[arg(long)]
        base: Option<String>,
        /// Time of evaluation: a date (2026-12-01) or an RFC 3339 time; default now.
        #[arg(long)]
        at: Option<String>,
        /// When to exit with 1.
        #[arg(long, value_enum, default_value_t = FailOn::Approval)]
        fail_on: FailOn,
    },
    /// Show how the policy reached its decision for one request: every tier and
    /// rule, the facts it read and the result.
    Explain {
        /// The request (or reservation, or team) to explain.
        name: String,
        /// The repository root.
        #[arg(long, default_value = ".")]
        path: PathBuf,
        /// Git revision to compare with.
        #[arg(long)]
        base: Option<String>,
        /// Time of evaluation; default now.
        #[arg(long)]
        at: Option<String>,
    },
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
    Report {
        /// The repository root (the folder holding capops.yaml).
        #[arg(default_value = ".")]
        path: PathBuf,
        /// Time of the report: a date or an RFC 3339 time; default now.
        #[arg(long)]
        at: Option<String>,
        /// Write the report to this file (atomically) instead of stdout.
        #[arg(long)]
        out: Option<PathBuf>,
    },
    /// Render what clusters and clouds should hold at --at: ResourceQuotas,
    /// PriorityClasses, Kueue objects, MIG and time-slicing ConfigMaps, the
    /// node-label plan, and Terraform JSON for reservations.
    Render {
        /// The repository root (the folder holding capops.yaml).
        #[arg(default_value = ".")]
        path: PathBuf,
        /// The moment to render: a date or an RFC 3339 time; default now.
        #[arg(long)]
        at: Option<String>,
        /// Output folder (default PATH/rendered); `-` writes one YAML stream to stdout.
        #[arg(long)]
        out: Option<PathBuf>,
        /// Only this cluster (no cloud files).
        #[arg(long)]
        cluster: Option<String>,
        /// Revision to stamp on objects instead of the one read from git.
        #[arg(long)]
        revision: Option<String>,
    },
    /// Not implemented yet: diff against live clusters.
    Plan(Unimplemented),
    /// Not implemented yet: apply to live clusters.
    Apply(Unimplemented),
    /// Not implemented yet: report drift of live clusters.
    Drift(Unimplemented),
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

/// Arguments of a command that is not built yet (accepted so the error is precise).
#[derive(Debug, clap::Args)]
pub struct Unimplemented {
    #[arg(trailing_var_arg = true, allow_hyphen_values = true, hide = true)]
    pub rest: Vec<String>,
}

/// Where a command writes, and what it knows of its environment.
pub struct Io<'a> {
    pub stdout: &'a mut dyn Write,
    pub stderr: &'a mut dyn Write,
    /// Reads an environment variable.
    pub env: &'a dyn Fn(&str) -> Option<String>,
    /// Whether stderr is a terminal (for colour).
    pub stderr_is_terminal: bool,
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

/// Runs the command line with the process's stdout, stderr and environment.
pub fn main(args: Vec<OsString>) -> i32 {
    use std::io::IsTerminal;
    let stdout = std::io::stdout();
    let stderr = std::io::stderr();
    let is_term = stderr.is_terminal();
    let mut out = stdout.lock();
    let mut err = stderr.lock();
    let env = |k: &str| std::env::var(k).ok();
    let mut io = Io {
        stdout: &mut out,
        stderr: &mut err,
        env: &env,
        stderr_is_terminal: is_term,
    };
    run(args, &mut io)
}

/// Runs a command line and returns its exit code.
pub fn run(args: Vec<OsString>, io: &mut Io<'_>) -> i32 {
    let cli = match Cli::try_parse_from(args) {
        Ok(cli) => cli,
        Err(e) => {
            let code = if e.use_stderr() {
                exit::INVALID
            } else {
                exit::OK
            };
            let text = e.render().to_string();
            let _ = if e.use_stderr() {
                io.stderr.write_all(text.as_bytes())
            } else {
                io.stdout.write_all(text.as_bytes())
            };
            return code;
        }
    };
    if cli.format == Format::Html && !matches!(cli.command, Command::Report { .. }) {
        let _ = writeln!(
            io.stderr,
            "error: --format html is only for `capops report`\n  help: use human, json, sarif or markdown"
        );
        return exit::INVALID;
    }
    let result = match &cli.command {
        Command::Validate { path } => validate::run(&cli, path, io),
        Command::Schema { kind } => info::schema(kind.as_deref(), io),
        Command::Catalog { model } => info::catalog(&cli, model.as_deref(), io),
        Command::Check {
            path,
            base,
            at,
            fail_on,
        } => check::check(&cli, path, base.as_deref(), at.as_deref(), *fail_on, io),
        Command::Explain {
            name,
            path,
            base,
            at,
        } => check::explain(&cli, name, path, base.as_deref(), at.as_deref(), io),
        Command::Test { path } => info::test(&cli, path, io),
        Command::Forecast { action, args } => match action {
            Some(ForecastAction::Backtest(a)) => forecast::backtest(a, io),
            None => forecast::pools(&cli, args, io),
        },
        Command::Report { path, at, out } => {
            report::run(&cli, path, at.as_deref(), out.as_deref(), io)
        }
        Command::Render {
            path,
            at,
            out,
            cluster,
            revision,
        } => render::run(
            &cli,
            &render::Args {
                path,
                at: at.as_deref(),
                out: out.as_deref(),
                cluster: cluster.as_deref(),
                revision: revision.as_deref(),
            },
            io,
        ),
        Command::Plan(_) => unimplemented("plan", io),
        Command::Apply(_) => unimplemented("apply", io),
        Command::Drift(_) => unimplemented("drift", io),
        Command::Inventory(args) => inventory::run(&cli, args, io),
        Command::Usage { action } => usage::run(&cli, action, io),
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            let _ = writeln!(io.stderr, "error: cannot write output: {e}");
            exit::EXTERNAL
        }
    }
}

fn unimplemented(name: &str, io: &mut Io<'_>) -> std::io::Result<i32> {
    writeln!(
        io.stderr,
        "error: `capops {name}` is not implemented yet\n  help: see the README's \"Status\" section for what works today"
    )?;
    Ok(exit::INVALID)
}

/// Writes a file whole or not at all: to a temporary file beside it, then renamed.
pub fn write_atomically(path: &std::path::Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(std::path::Path::new("."));
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = dir.join(format!(".{name}.capops-{}", std::process::id()));
    std::fs::write(&tmp, bytes)?;
    std::fs::rename(&tmp, path).inspect_err(|_| {
        let _ = std::fs::remove_file(&tmp);
    })
}
