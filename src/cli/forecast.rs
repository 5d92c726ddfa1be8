//! `capops forecast backtest`: rolling-origin accuracy of the forecaster on a CSV.

use super::{Io, exit};
use crate::forecast::backtest::{self, Expr};
use crate::model::Timestamp;
use std::path::Path;

#[derive(Debug, clap::Args)]
pub struct BacktestArgs {
    /// CSV of hourly samples: a timestamp column, a series column, value columns.
    #[arg(long)]
    pub csv: std::path::PathBuf,
    /// The value: a column, or columns combined with + - * / (e.g. "running_gpus + pending_gpus").
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
    /// Where to write the forecasts (series,cutoff,timestamp,p10,p50,p90).
    #[arg(long)]
    pub out: Option<std::path::PathBuf>,
    /// Name of the timestamp column.
    #[arg(long, default_value = "timestamp")]
    pub time_column: String,
    /// Name of the series column (without it, the file is one series).
    #[arg(long, default_value = "series")]
    pub series_column: String,
}

fn hour_text(hour: i64) -> String {
    Timestamp::from_second(hour * 3600)
        .map(|t| t.to_string())
        .unwrap_or_default()
}

pub fn backtest(a: &BacktestArgs, io: &mut Io<'_>) -> std::io::Result<i32> {
    let fail = |io: &mut Io<'_>, msg: String| -> std::io::Result<i32> {
        writeln!(io.stderr, "error: {msg}")?;
        Ok(exit::INVALID)
    };
    if a.horizon == 0 || a.windows == 0 {
        return fail(io, "--horizon and --windows must be at least 1".into());
    }
    let expr = match Expr::parse(&a.value) {
        Ok(e) => e,
        Err(e) => return fail(io, e),
    };
    let text = match read_limited(&a.csv) {
        Ok(t) => t,
        Err(e) => return fail(io, format!("{}: {e}", a.csv.display())),
    };
    let series = match backtest::read_csv(&text, &a.time_column, Some(&a.series_column), &expr) {
        Ok(s) => s,
        Err(e) => return fail(io, format!("{}: {e}", a.csv.display())),
    };
    let step = a.step.unwrap_or(a.horizon).max(1);
    let results: Vec<(String, Result<Vec<backtest::Window>, String>, i64)> = {
        use rayon::prelude::*;
        series
            .par_iter()
            .map(|s| {
                (
                    s.name.clone(),
                    backtest::evaluate(s, a.horizon, a.windows, step),
                    s.start_hour,
                )
            })
            .collect()
    };
    let mut csv_out = String::from("series,cutoff,timestamp,p10,p50,p90\n");
    writeln!(
        io.stdout,
        "{} series; {} windows of {} h, step {} h; metrics are means over windows\n",
        series.len(),
        a.windows,
        a.horizon,
        step
    )?;
    writeln!(
        io.stdout,
        "{:<28} {:>7} {:>7} {:>9} {:>9} {:>9} {:>9}  method (last window)",
        "series", "MASE", "sMAPE", "coverage", "pinball10", "pinball50", "pinball90"
    )?;
    let mut failed = false;
    for (name, result, _) in &results {
        let windows = match result {
            Ok(w) => w,
            Err(e) => {
                writeln!(io.stderr, "error: {e}")?;
                failed = true;
                continue;
            }
        };
        for w in windows {
            for j in 0..a.horizon {
                csv_out.push_str(&format!(
                    "{name},{},{},{:.4},{:.4},{:.4}\n",
                    hour_text(w.cutoff_hour),
                    hour_text(w.cutoff_hour + 1 + j as i64),
                    w.forecast.p10[j],
                    w.forecast.p50[j],
                    w.forecast.p90[j]
                ));
            }
        }
        let m = backtest::mean(&windows.iter().map(|w| w.metrics).collect::<Vec<_>>());
        let last = windows
            .last()
            .map(|w| w.forecast.method.clone())
            .unwrap_or_default();
        writeln!(
            io.stdout,
            "{name:<28} {:>7.3} {:>7.3} {:>9.3} {:>9.3} {:>9.3} {:>9.3}  {last}",
            m.mase, m.smape, m.coverage, m.pinball10, m.pinball50, m.pinball90
        )?;
    }
    if let Some(out) = &a.out
        && let Err(e) = crate::cli::write_atomically(out, csv_out.as_bytes())
    {
        writeln!(io.stderr, "error: cannot write {}: {e}", out.display())?;
        return Ok(exit::EXTERNAL);
    }
    Ok(if failed { exit::INVALID } else { exit::OK })
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
