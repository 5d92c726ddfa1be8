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

/// `capops forecast [PATH]`: demand forecasts of the repository's pools.
#[derive(Debug, clap::Args)]
pub struct PoolArgs {
    /// The repository root (the folder holding capops.yaml).
    #[arg(default_value = ".")]
    pub path: std::path::PathBuf,
    /// Only these pools, as CLUSTER/POOL (repeatable); all pools with usage when absent.
    #[arg(long = "pool", value_name = "CLUSTER/POOL")]
    pub pools: Vec<String>,
    /// How far ahead: hours (`72`, `72h`), days (`14d`), weeks (`8w`); up to three years.
    #[arg(long, default_value = "14d")]
    pub horizon: String,
    /// Time the forecast starts from: a date or an RFC 3339 time; default now.
    #[arg(long)]
    pub at: Option<String>,
    /// Also write an SVG chart of the pools to this file.
    #[arg(long, value_name = "FILE")]
    pub svg: Option<std::path::PathBuf>,
}

/// Reads a horizon: `72`, `72h`, `14d`, `8w`.
pub fn parse_horizon(text: &str) -> Result<i64, String> {
    let t = text.trim();
    let (digits, unit) = match t.find(|c: char| !c.is_ascii_digit()) {
        Some(i) => (&t[..i], &t[i..]),
        None => (t, "h"),
    };
    let n: i64 = digits.parse().map_err(|_| {
        format!("`{text}` is not a horizon: write hours (72h), days (14d) or weeks (8w)")
    })?;
    let hours = match unit {
        "h" => n,
        "d" => n * 24,
        "w" => n * 24 * 7,
        _ => return Err(format!("`{text}`: unknown unit `{unit}`; use h, d or w")),
    };
    if !(1..=crate::cost::MAX_OUTLOOK_HOURS).contains(&hours) {
        return Err(format!(
            "`{text}`: the horizon must be between 1 hour and three years"
        ));
    }
    Ok(hours)
}

/// One pool's forecast, as printed and as JSON.
#[derive(Debug, serde::Serialize)]
#[serde(rename_all = "camelCase")]
struct PoolForecast {
    cluster: String,
    pool: String,
    capacity_gpus: f64,
    history_end: String,
    method: String,
    fallback: Option<String>,
    last_measured: Option<f64>,
    mean_p50: f64,
    min_p10: f64,
    peak_p90: f64,
    /// Hours where P90 demand exceeds the pool's GPUs.
    hours_over_capacity: usize,
    /// Hourly quantiles (horizons up to 31 days), else daily means.
    points: Vec<Point>,
}

#[derive(Debug, serde::Serialize)]
struct Point {
    time: String,
    p10: f64,
    p50: f64,
    p90: f64,
}

fn r2(x: f64) -> f64 {
    (x * 100.0).round() / 100.0
}

pub fn pools(cli: &super::Cli, a: &PoolArgs, io: &mut Io<'_>) -> std::io::Result<i32> {
    use crate::output::{Format, chart};
    let horizon = match parse_horizon(&a.horizon) {
        Ok(h) => h,
        Err(e) => {
            writeln!(io.stderr, "error: --horizon {e}")?;
            return Ok(exit::INVALID);
        }
    };
    let at = match super::check::parse_at(a.at.as_deref(), io) {
        Ok(t) => t,
        Err(code) => return Ok(code),
    };
    let head = match super::report::load_valid(cli, &a.path, "forecasting", io)? {
        Ok(h) => h,
        Err(code) => return Ok(code),
    };
    let analysis = crate::cost::Analysis::new(&head.repo, at);
    // Which pools.
    let mut wanted: Vec<(String, String)> = Vec::new();
    for p in &a.pools {
        let Some((c, q)) = p.split_once('/') else {
            writeln!(io.stderr, "error: --pool `{p}`: write it as CLUSTER/POOL")?;
            return Ok(exit::INVALID);
        };
        if analysis.pool(c, q).is_none() {
            let known: Vec<String> = analysis
                .pools
                .keys()
                .map(|(c, q)| format!("{c}/{q}"))
                .collect();
            writeln!(
                io.stderr,
                "error: --pool `{p}` is not a pool of the repository; {}",
                crate::diag::suggest(p, known.iter().map(String::as_str), "pools")
            )?;
            return Ok(exit::INVALID);
        }
        wanted.push((c.to_string(), q.to_string()));
    }
    let explicit = !wanted.is_empty();
    if !explicit {
        wanted = analysis.pools.keys().cloned().collect();
    }
    let at_hour = at.hour_index();
    let mut rows = Vec::new();
    let mut charts = Vec::new();
    let mut without = Vec::new();
    for (c, q) in &wanted {
        // Long enough for the horizon.
        let entry = analysis.pool(c, q).expect("checked above");
        let outlook =
            crate::forecast::demand::Outlook::new(analysis.pool_demand(c, q), at_hour + horizon);
        let Some(o) = outlook else {
            without.push(format!("{c}/{q}"));
            continue;
        };
        let capacity = crate::capacity::pool_gpus(entry.pool) as f64;
        let from = at_hour.max(o.forecast_start);
        let to = at_hour + horizon;
        let s = o.over(from, to);
        let mut min_p10 = f64::INFINITY;
        let mut over = 0usize;
        for h in from..to {
            if let Some(x) = o.at(h) {
                min_p10 = min_p10.min(x.p10);
                if x.p90 > capacity + 1e-9 {
                    over += 1;
                }
            }
        }
        let points: Vec<Point> = if horizon <= 31 * 24 {
            (from..to)
                .filter_map(|h| {
                    let x = o.at(h)?;
                    Some(Point {
                        time: hour_text(h),
                        p10: r2(x.p10),
                        p50: r2(x.p50),
                        p90: r2(x.p90),
                    })
                })
                .collect()
        } else {
            o.daily(from, to)
                .into_iter()
                .map(|(h, x)| Point {
                    time: hour_text(h),
                    p10: r2(x.p10),
                    p50: r2(x.p50),
                    p90: r2(x.p90),
                })
                .collect()
        };
        rows.push(PoolForecast {
            cluster: c.clone(),
            pool: q.clone(),
            capacity_gpus: capacity,
            history_end: hour_text(o.forecast_start - 1),
            method: o.forecast.method.clone(),
            fallback: o.forecast.fallback.clone(),
            last_measured: o.history.last_observed().and_then(|h| o.history.get(h)),
            mean_p50: r2(s.mean_p50),
            min_p10: r2(if min_p10.is_finite() { min_p10 } else { 0.0 }),
            peak_p90: r2(s.peak_p90),
            hours_over_capacity: over,
            points,
        });
        if let Some(ch) = chart::pool_chart(&analysis, c, q, at_hour - 14 * 24, to) {
            charts.push(ch);
        }
    }
    if let Some(file) = &a.svg
        && let Err(e) = crate::cli::write_atomically(file, chart::svg(&charts).as_bytes())
    {
        writeln!(io.stderr, "error: cannot write {}: {e}", file.display())?;
        return Ok(exit::EXTERNAL);
    }
    if cli.format == Format::Json {
        let v = serde_json::json!({
            "version": crate::output::json::OUTPUT_VERSION,
            "command": "forecast",
            "at": at.to_string(),
            "horizonHours": horizon,
            "pools": rows,
            "withoutUsage": without,
        });
        serde_json::to_writer_pretty(&mut *io.stdout, &v)?;
        writeln!(io.stdout)?;
    } else {
        writeln!(
            io.stdout,
            "capops forecast: {} at {}, {} h ahead ({})\n",
            a.path.display(),
            at,
            horizon,
            if horizon > crate::forecast::HOURLY_LIMIT as i64 {
                "daily means, spread over the hours by the recent daily shape"
            } else {
                "hourly"
            }
        )?;
        let name_w = rows
            .iter()
            .map(|r| r.cluster.len() + r.pool.len() + 1)
            .max()
            .unwrap_or(4)
            .max(4);
        writeln!(
            io.stdout,
            "{:<name_w$}  {:>5}  {:>6}  {:>7}  {:>7}  {:>7}  {:>6}  {:<29}  method",
            "pool",
            "GPUs",
            "now",
            "P10 min",
            "P50",
            "P90 max",
            "over h",
            "14 days measured │ forecast"
        )?;
        for (r, ch) in rows.iter().zip(&charts) {
            let measured: Vec<f64> = ch
                .days
                .iter()
                .filter(|d| d.measured)
                .map(|d| d.p50)
                .collect();
            let ahead: Vec<f64> = ch
                .days
                .iter()
                .filter(|d| !d.measured)
                .map(|d| d.p50)
                .collect();
            let ahead = if ahead.len() > 14 {
                crate::output::chart::thin(ch, 28)
                    .days
                    .iter()
                    .filter(|d| !d.measured)
                    .map(|d| d.p50)
                    .collect()
            } else {
                ahead
            };
            let spark = format!(
                "{}│{}",
                chart::sparkline(
                    &measured[measured.len().saturating_sub(14)..],
                    r.capacity_gpus
                ),
                chart::sparkline(&ahead[..ahead.len().min(14)], r.capacity_gpus)
            );
            writeln!(
                io.stdout,
                "{:<name_w$}  {:>5}  {:>6}  {:>7}  {:>7}  {:>7}  {:>6}  {:<29}  {}",
                format!("{}/{}", r.cluster, r.pool),
                r.capacity_gpus,
                r.last_measured
                    .map(|v| format!("{v:.1}"))
                    .unwrap_or_else(|| "–".into()),
                format!("{:.1}", r.min_p10),
                format!("{:.1}", r.mean_p50),
                format!("{:.1}", r.peak_p90),
                r.hours_over_capacity,
                spark,
                r.method
            )?;
            if let Some(f) = &r.fallback {
                writeln!(io.stdout, "{:<name_w$}  fallback: {f}", "")?;
            }
        }
        if !without.is_empty() {
            writeln!(
                io.stdout,
                "\nno usage history (nothing to forecast): {}",
                without.join(", ")
            )?;
        }
        writeln!(
            io.stdout,
            "\nnow: the last measured hour; P50: mean over the horizon; P10 min and P90 max: over the horizon; over h: hours where P90 exceeds the pool's GPUs"
        )?;
        if let Some(file) = &a.svg {
            writeln!(io.stdout, "chart: {}", file.display())?;
        }
    }
    Ok(exit::OK)
}
