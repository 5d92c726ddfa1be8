//! `capops forecast`: demand forecasts of a repository's pools, and
//! `capops forecast backtest`: rolling-origin accuracy of the forecaster on a CSV.

use super::common::{Exit, Outcome, invalid, load_valid, stop, write_atomically, write_json};
use super::{Cli, Io};
use crate::forecast::backtest::{self, Expr};
use crate::model::Timestamp;
use crate::output::Format;
use std::path::{Path, PathBuf};

#[derive(Debug, clap::Args)]
pub struct BacktestArgs {
    /// CSV of hourly samples: a timestamp column, a series column, value columns. One
    /// value per series and hour (a repeated identical row is one; another value for
    /// the same hour is refused), each within ±1e15.
    #[arg(long)]
    pub csv: std::path::PathBuf,
    /// The value: a column, or columns combined with + - * / and parentheses (e.g.
    /// "running_gpus + pending_gpus"), at most 512 parts. All series together may
    /// span at most 5,000,000 hours or four times the CSV's rows, one series at most 20 years.
    #[arg(long)]
    pub value: String,
    /// Hours forecast from each cutoff.
    #[arg(long, default_value_t = 24)]
    pub horizon: usize,
    /// Evaluation windows, the last one ending at the end of each series.
    #[arg(long, default_value_t = 7)]
    pub windows: usize,
    /// Hours between cutoffs (default: the horizon).
    #[arg(long)]
    pub step: Option<usize>,
    /// Where to write the forecasts (series,cutoff,timestamp,p10,p50,p90): a new file, or one that
    /// holds an earlier backtest's forecasts (anything else is refused, exit 2).
    #[arg(long)]
    pub out: Option<std::path::PathBuf>,
    /// Name of the timestamp column.
    #[arg(long, default_value = "timestamp")]
    pub time_column: String,
    /// Name of the series column (without it, the file is one series).
    #[arg(long, default_value = "series")]
    pub series_column: String,
}

/// Whether `backtest --out` may replace `file`: one not there yet, an empty
/// plain file, an earlier backtest's forecasts (its first line is
/// [`BACKTEST_HEADER`](crate::output::forecast::BACKTEST_HEADER)), or a
/// stream (`/dev/stdout`, a FIFO: written through, never replaced; a FIFO
/// with no reader waits for one). Links are followed, so a link to a Config
/// is a Config.
fn replaceable(file: &std::path::Path) -> Result<(), String> {
    use std::io::Read as _;
    #[allow(clippy::disallowed_methods)]
    let meta = match std::fs::metadata(file) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(e.to_string()),
        Ok(m) => m,
    };
    if meta.is_dir() {
        return Err("it is a folder".into());
    }
    if !meta.is_file() {
        // A stream (`/dev/stdout`, a FIFO a reader waits on) is written
        // through; a disk or a socket is nothing to write forecasts to.
        #[cfg(unix)]
        {
            use std::os::unix::fs::FileTypeExt;
            let t = meta.file_type();
            if !(t.is_fifo() || t.is_char_device()) {
                return Err("it is a block device or a socket, not a file".into());
            }
        }
        return Ok(());
    }
    if meta.len() == 0 {
        return Ok(());
    }
    let header = crate::output::forecast::BACKTEST_HEADER;
    let mut first = vec![0; header.len() + 2];
    #[allow(clippy::disallowed_methods)]
    let n = std::fs::File::open(file)
        .and_then(|f| f.take(first.len() as u64).read(&mut first))
        .map_err(|e| e.to_string())?;
    let first = &first[..n];
    let line = first.split(|b| *b == b'\n').next().unwrap_or_default();
    if line.strip_suffix(b"\r").unwrap_or(line) == header.as_bytes() {
        return Ok(());
    }
    Err("it is there and is not a backtest's forecasts (they start with the line `series,cutoff,timestamp,p10,p50,p90`), which is all --out replaces".into())
}

pub fn backtest(a: &BacktestArgs, io: &mut Io<'_>) -> Outcome {
    if a.horizon == 0 || a.windows == 0 || a.step == Some(0) {
        return Err(invalid(
            io,
            "--horizon, --windows and --step must be at least 1",
            None,
        ));
    }
    let expr = Expr::parse(&a.value).map_err(|e| invalid(io, &e, None))?;
    // The forecasts never replace the data they were measured on.
    if let Some(out) = &a.out
        && let (Ok(o), Ok(c)) = (std::fs::canonicalize(out), std::fs::canonicalize(&a.csv))
        && o == c
    {
        return Err(invalid(
            io,
            &format!(
                "--out {} is the input CSV; write the forecasts to another file",
                out.display()
            ),
            None,
        ));
    }
    if let Some(out) = &a.out
        && let Err(why) = replaceable(out)
    {
        return Err(invalid(
            io,
            &format!("--out {}: {why}; nothing was written", out.display()),
            Some(
                "name a new file (or an earlier backtest's forecasts): --out never replaces documents, usage history or anything else",
            ),
        ));
    }
    let text = read_limited(&a.csv)
        .map_err(|e| invalid(io, &format!("{}: {e}", a.csv.display()), None))?;
    let series = backtest::read_csv(&text, &a.time_column, Some(&a.series_column), &expr)
        .map_err(|e| invalid(io, &format!("{}: {e}", a.csv.display()), None))?;
    // Every value a gap (a column always empty, or a division by zero in
    // every row): there is nothing to score, and NaN scores would say so
    // only as NaN.
    if series.iter().all(|s| s.values.iter().all(Option::is_none)) {
        return Err(invalid(
            io,
            &format!(
                "{}: `{}` gives no value in any row",
                a.csv.display(),
                a.value
            ),
            Some(
                "a row's value is a gap where a column it reads is empty or it divides by zero; check the expression's columns",
            ),
        ));
    }
    let step = a.step.unwrap_or(a.horizon);
    let results: Vec<(String, Result<Vec<backtest::Window>, String>)> = {
        use rayon::prelude::*;
        series
            .par_iter()
            .map(|s| {
                (
                    s.name.clone(),
                    backtest::evaluate(s, a.horizon, a.windows, step),
                )
            })
            .collect()
    };
    let report = crate::output::forecast::backtest(&results, a.windows, a.horizon, step);
    io.stdout.write_all(report.table.as_bytes())?;
    for e in &report.errors {
        writeln!(io.stderr, "error: {e}")?;
    }
    // A run with errors leaves the file in place (it is not the backtest
    // asked for); the table above shows what was measured.
    if let Some(out) = &a.out
        && !report.errors.is_empty()
    {
        writeln!(
            io.stderr,
            "error: {} not written: the backtest had errors",
            out.display()
        )?;
    } else if let Some(out) = &a.out
        && let Err(e) = write_atomically(out, report.csv.as_bytes())
    {
        return Err(stop(
            io,
            Exit::External,
            &format!("cannot write {}: {e}", out.display()),
            None,
        ));
    }
    Ok(if report.errors.is_empty() {
        Exit::Ok
    } else {
        Exit::Invalid
    })
}

/// Reads a file of at most 256 MiB.
pub fn read_limited(path: &Path) -> std::io::Result<String> {
    use std::io::Read;
    const LIMIT: u64 = 256 * 1024 * 1024;
    let mut bytes = Vec::new();
    std::fs::File::open(path)?
        .take(LIMIT + 1)
        .read_to_end(&mut bytes)?;
    if bytes.len() as u64 > LIMIT {
        return Err(std::io::Error::other("larger than 256 MiB"));
    }
    String::from_utf8(bytes).map_err(|_| std::io::Error::other("not UTF-8 text"))
}

/// `capops forecast [PATH]`: demand forecasts of the repository's pools.
#[derive(Debug, clap::Args)]
pub struct PoolArgs {
    /// The repository root (the folder holding capops.yaml).
    #[arg(default_value = ".")]
    pub path: PathBuf,
    /// Only these pools, as CLUSTER/POOL (repeatable); all pools with usage when absent.
    #[arg(long = "pool", value_name = "CLUSTER/POOL")]
    pub pools: Vec<String>,
    /// How far ahead: hours (`72`, `72h`), days (`14d`), weeks (`8w`); up to three years.
    #[arg(long, default_value = "14d", value_parser = super::common::horizon_arg)]
    pub horizon: i64,
    /// Time the forecast starts from: a date or an RFC 3339 time; default now.
    #[arg(long, value_parser = super::common::at_arg)]
    pub at: Option<Timestamp>,
    /// Also write an SVG chart of the pools to this file.
    #[arg(long, value_name = "FILE")]
    pub svg: Option<PathBuf>,
}

pub fn pools(cli: &Cli, a: &PoolArgs, io: &mut Io<'_>) -> Outcome {
    let at = a.at.unwrap_or(io.now);
    let head = load_valid(cli, &a.path, "forecasting", io)?;
    let analysis = crate::cost::Analysis::new(&head.repo, at);
    let mut wanted: Vec<(String, String)> = Vec::new();
    for p in &a.pools {
        let Some((c, q)) = p.split_once('/') else {
            return Err(invalid(
                io,
                &format!("--pool `{p}`: write it as CLUSTER/POOL"),
                None,
            ));
        };
        if analysis.pool(c, q).is_none() {
            let known: Vec<String> = analysis
                .pools
                .keys()
                .map(|(c, q)| format!("{c}/{q}"))
                .collect();
            let help = crate::diag::suggest(p, known.iter().map(String::as_str), "pools");
            return Err(invalid(
                io,
                &format!("--pool `{p}` is not a pool of the repository"),
                Some(&help),
            ));
        }
        wanted.push((c.to_string(), q.to_string()));
    }
    if wanted.is_empty() {
        wanted = analysis.pools.keys().cloned().collect();
    }
    let forecasts = crate::cost::forecasts::pools(&analysis, &wanted, a.horizon);
    if let Some(file) = &a.svg {
        let charts: Vec<_> = forecasts
            .pools
            .iter()
            .filter_map(|p| p.chart.clone())
            .collect();
        super::common::write_output(
            io,
            &a.path,
            file,
            crate::output::chart::svg(&charts).as_bytes(),
        )?;
    }
    if cli.format == Format::Json {
        write_json(io, "forecast", &forecasts)?;
    } else {
        let svg = a.svg.as_ref().map(|f| f.display().to_string());
        let text = crate::output::forecast::text(
            &forecasts,
            &a.path.display().to_string(),
            svg.as_deref(),
        );
        io.stdout.write_all(text.as_bytes())?;
    }
    Ok(Exit::Ok)
}
