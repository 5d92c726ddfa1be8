//! `capops forecast` for people: one line per pool with a sparkline of two
//! weeks measured and the days ahead.

use super::chart::sparkline;
use crate::cost::chart::thin;
use crate::cost::forecasts::Forecasts;
use std::fmt::Write;

/// The forecast table. `repo` is the repository as given, `svg` the chart file written.
pub fn text(f: &Forecasts, repo: &str, svg: Option<&str>) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "capops forecast: {repo} at {}, {} h ahead ({})\n",
        f.at,
        f.horizon_hours,
        // As the pools were forecast: a pool's forecast runs from its last
        // measured hour, so a short horizon can still need daily means.
        {
            let daily =
                |r: &&crate::cost::forecasts::PoolForecast| r.method.starts_with("daily means");
            let n = f.pools.iter().filter(daily).count();
            if n == 0 && f.horizon_hours <= crate::forecast::HOURLY_LIMIT as i64 {
                "hourly"
            } else if n == f.pools.len() {
                "daily means, spread over the hours by the recent daily shape"
            } else {
                "hourly, or on daily means where a pool's measurements end too long before it (see each method)"
            }
        }
    );
    let name_w = f
        .pools
        .iter()
        .map(|r| r.cluster.len() + r.pool.len() + 1)
        .max()
        .unwrap_or(4)
        .max(4);
    let _ = writeln!(
        out,
        "{:<name_w$}  {:>5}  {:>6}  {:>7}  {:>7}  {:>7}  {:>6}  {:<29}  method",
        "pool", "GPUs", "now", "P10 min", "P50", "P90 max", "over h", "14 days measured │ forecast"
    );
    for r in &f.pools {
        let spark = match &r.chart {
            Some(ch) => {
                let measured: Vec<f64> = ch
                    .days
                    .iter()
                    .filter(|d| d.measured)
                    .map(|d| d.p50)
                    .collect();
                let mut ahead: Vec<f64> = ch
                    .days
                    .iter()
                    .filter(|d| !d.measured)
                    .map(|d| d.p50)
                    .collect();
                if ahead.len() > 14 {
                    ahead = thin(ch, 28)
                        .days
                        .iter()
                        .filter(|d| !d.measured)
                        .map(|d| d.p50)
                        .collect();
                }
                format!(
                    "{}│{}",
                    sparkline(
                        &measured[measured.len().saturating_sub(14)..],
                        r.capacity_gpus
                    ),
                    sparkline(&ahead[..ahead.len().min(14)], r.capacity_gpus)
                )
            }
            None => String::new(),
        };
        let _ = writeln!(
            out,
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
        );
        if let Some(fb) = &r.fallback {
            let _ = writeln!(out, "{:<name_w$}  fallback: {fb}", "");
        }
        if let Some(from) = &r.beyond_history_from {
            let _ = writeln!(
                out,
                "{:<name_w$}  beyond the history: from {from} the forecast reaches further than the {} days of history support; it extrapolates",
                "", r.history_days
            );
        }
        let added = r
            .points
            .iter()
            .map(|p| p.approved.abs())
            .fold(0.0, f64::max);
        if added > 0.0 {
            let _ = writeln!(
                out,
                "{:<name_w$}  approved requests change the demand by up to {added:.1} GPUs over the horizon",
                ""
            );
        }
    }
    if !f.without_usage.is_empty() {
        let _ = writeln!(
            out,
            "\nno usage history (nothing to forecast): {}",
            f.without_usage.join(", ")
        );
    }
    let _ = writeln!(
        out,
        "\nnow: the last measured hour; P50: mean over the horizon; P10 min and P90 max: over the horizon; over h: hours where P90 exceeds the pool's GPUs"
    );
    if let Some(file) = svg {
        let _ = writeln!(out, "chart: {file}");
    }
    out
}

/// The first line of the CSV `forecast backtest --out` writes (and the
/// only kind of file it replaces).
pub const BACKTEST_HEADER: &str = "series,cutoff,timestamp,p10,p50,p90";

/// `capops forecast backtest` for people: the table, the forecasts as CSV,
/// and the series that could not be evaluated.
pub struct Backtest {
    pub table: String,
    pub csv: String,
    pub errors: Vec<String>,
}

/// Formats backtest results: one row per series with its mean metrics.
pub fn backtest(
    results: &[(
        String,
        Result<Vec<crate::forecast::backtest::Window>, String>,
    )],
    windows: usize,
    horizon: usize,
    step: usize,
) -> Backtest {
    use crate::forecast::backtest;
    let hour_text = |hour: i64| {
        crate::model::Timestamp::from_second(hour * 3600)
            .map(|t| t.to_string())
            .unwrap_or_default()
    };
    let mut table = String::new();
    let mut csv = format!("{BACKTEST_HEADER}\n");
    let mut errors = Vec::new();
    let _ = writeln!(
        table,
        "{} series; {windows} windows of {horizon} h, step {step} h; metrics are means over windows\n",
        results.len()
    );
    let _ = writeln!(
        table,
        "{:<28} {:>7} {:>7} {:>9} {:>9} {:>9} {:>9}  method (last window)",
        "series", "MASE", "sMAPE", "coverage", "pinball10", "pinball50", "pinball90"
    );
    for (name, result) in results {
        let ws = match result {
            Ok(w) => w,
            Err(e) => {
                errors.push(e.clone());
                continue;
            }
        };
        for w in ws {
            for j in 0..horizon {
                let _ = writeln!(
                    csv,
                    "{name},{},{},{:.4},{:.4},{:.4}",
                    hour_text(w.cutoff_hour),
                    hour_text(w.cutoff_hour + 1 + j as i64),
                    w.forecast.p10[j],
                    w.forecast.p50[j],
                    w.forecast.p90[j]
                );
            }
        }
        let m = backtest::mean(&ws.iter().map(|w| w.metrics).collect::<Vec<_>>());
        let last = ws
            .last()
            .map(|w| w.forecast.method.clone())
            .unwrap_or_default();
        let _ = writeln!(
            table,
            "{name:<28} {:>7.3} {:>7.3} {:>9.3} {:>9.3} {:>9.3} {:>9.3}  {last}",
            m.mase, m.smape, m.coverage, m.pinball10, m.pinball50, m.pinball90
        );
    }
    Backtest { table, csv, errors }
}
