//! Pool forecasts as `capops forecast` shows them: for each pool, the last
//! measured hour, P10/P50/P90 over the horizon (the history's forecast plus
//! what the approved requests change), hours where P90 demand exceeds the
//! pool's GPUs, where the forecast reaches beyond what the history supports,
//! and the points to print (hourly up to 31 days, daily means beyond).

use super::Analysis;
use super::chart::{self, PoolChart};
use crate::model::Timestamp;
use serde::Serialize;

/// Horizons up to this many hours get hourly points; longer ones daily means.
pub const HOURLY_POINTS_HOURS: i64 = 31 * 24;

/// One pool's forecast.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PoolForecast {
    pub cluster: String,
    pub pool: String,
    pub capacity_gpus: f64,
    pub history_end: String,
    pub method: String,
    pub fallback: Option<String>,
    /// `history` or `requests` (no usage history: the approved requests alone).
    pub basis: String,
    /// Days of usage history behind the forecast.
    pub history_days: f64,
    /// The first hour beyond the Config's history multiple times the history's
    /// length, when the horizon reaches it: from there the forecast extrapolates.
    pub beyond_history_from: Option<String>,
    pub last_measured: Option<f64>,
    pub mean_p50: f64,
    pub min_p10: f64,
    pub peak_p90: f64,
    /// Hours where P90 demand exceeds the pool's GPUs.
    pub hours_over_capacity: usize,
    /// Hourly quantiles (horizons up to 31 days), else daily means.
    pub points: Vec<Point>,
    /// Two weeks measured, then the horizon, by day (for charts).
    #[serde(skip)]
    pub chart: Option<PoolChart>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Point {
    pub time: String,
    pub p10: f64,
    pub p50: f64,
    pub p90: f64,
    /// GPUs the approved requests add (or remove) in the P50 (0 when measured).
    pub approved: f64,
}

/// The forecasts of a set of pools.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Forecasts {
    pub at: String,
    pub horizon_hours: i64,
    pub pools: Vec<PoolForecast>,
    /// Pools without usage history (nothing to forecast), as `cluster/pool`.
    pub without_usage: Vec<String>,
}

fn r2(x: f64) -> f64 {
    (x * 100.0).round() / 100.0
}

pub(super) fn hour_text(hour: i64) -> String {
    Timestamp::from_second(hour * 3600)
        .map(|t| t.to_string())
        .unwrap_or_default()
}

/// Forecasts `pools` (cluster, pool) of the analysis `horizon` hours ahead of its time.
pub fn pools(a: &Analysis<'_>, pools: &[(String, String)], horizon: i64) -> Forecasts {
    let at_hour = a.at.hour_index();
    let mut out = Forecasts {
        at: a.at.to_string(),
        horizon_hours: horizon,
        pools: Vec::new(),
        without_usage: Vec::new(),
    };
    for (c, q) in pools {
        let Some(entry) = a.pool(c, q) else {
            continue;
        };
        let Some(o) = a.outlook_until(c, q, at_hour + horizon) else {
            out.without_usage.push(format!("{c}/{q}"));
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
        let approved = |h: i64| -> f64 {
            match (o.at(h), o.trend_at(h)) {
                (Some(x), Some(t)) if !x.measured => x.p50 - t.p50,
                _ => 0.0,
            }
        };
        let point = |h: i64, x: crate::forecast::demand::Quantiles, added: f64| Point {
            time: hour_text(h),
            p10: r2(x.p10),
            p50: r2(x.p50),
            p90: r2(x.p90),
            approved: r2(added),
        };
        let points: Vec<Point> = if horizon <= HOURLY_POINTS_HOURS {
            (from..to)
                .filter_map(|h| Some(point(h, o.at(h)?, approved(h))))
                .collect()
        } else {
            o.daily(from, to)
                .into_iter()
                .map(|(h, x)| {
                    let added = (h..(h + 24).min(to)).map(approved).sum::<f64>()
                        / ((h + 24).min(to) - h).max(1) as f64;
                    point(h, x, added)
                })
                .collect()
        };
        // An outlook reaches a bounded time past the history's end; an `--at`
        // beyond it has no forecast, which is said, not shown as zeros.
        let fallback = if points.is_empty() && (from..to).all(|h| o.at(h).is_none()) {
            Some(format!(
                "no forecast: --at is beyond the furthest an outlook reaches past the history's end ({})",
                hour_text(o.forecast_start - 1)
            ))
        } else {
            o.forecast.fallback.clone()
        };
        let supported = o.supported_until(a.history_multiple());
        out.pools.push(PoolForecast {
            cluster: c.clone(),
            pool: q.clone(),
            capacity_gpus: capacity,
            history_end: hour_text(o.forecast_start - 1),
            method: o.forecast.method.clone(),
            fallback,
            basis: o.basis.as_str().to_string(),
            history_days: r2(o.history_hours() as f64 / 24.0),
            beyond_history_from: (o.basis == crate::forecast::demand::Basis::History
                && supported < to)
                .then(|| hour_text(supported.max(from))),
            last_measured: o.history.last_observed().and_then(|h| o.history.get(h)),
            mean_p50: r2(s.mean_p50),
            min_p10: r2(if min_p10.is_finite() { min_p10 } else { 0.0 }),
            peak_p90: r2(s.peak_p90),
            hours_over_capacity: over,
            points,
            chart: chart::pool_chart(a, c, q, at_hour - 14 * 24, to),
        });
    }
    out
}
