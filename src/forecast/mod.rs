//! Demand forecasting: quantile forecasts of hourly GPU demand, in pure Rust.
//!
//! GPU demand moves in level shifts (big jobs start and stop), some series sit
//! near zero, and daily and weekly cycles come and go: a forecaster tuned for
//! smooth seasonality loses to the naive model here, and one tuned for level
//! shifts loses on smooth, persistent fleets. So [`hourly`] runs candidates
//! of both kinds over up to 14 rolling origins in the series' own recent
//! history: naive, the means of the last 6, 12 and 24 hours, the medians of the
//! last 6 and 24, seasonal naive at 24 h and 168 h, the last value moved
//! along the recent daily shape, simple exponential smoothing, additive
//! Holt-Winters with a daily and, where the history allows, a weekly season,
//! and the same smoothing on the series less its daily and weekly shapes
//! (parameters fitted by Nelder-Mead on the history before the first
//! origin). [`select`] mixes the best of them per range of leads, anchored on
//! naive. P10 and P90 come from the same validation: per-lead quantiles of
//! the chosen forecast's errors, never narrowing with the lead. Quantiles
//! are never negative and never cross. Short or patchy histories fall back
//! to simpler methods, and the forecast says which method it used and why.
//! Horizons longer than two weeks are forecast on daily means ([`long`]),
//! with bands that keep widening beyond the validated four weeks.

pub mod backtest;
pub mod demand;
pub mod models;
pub mod optimize;
pub mod select;

use models::Method;

/// Rolling validation origins (one season apart) used to choose the method
/// and calibrate the quantiles.
pub const VALIDATION_WINDOWS: usize = 14;
/// Horizons up to this many hours are forecast hour by hour.
pub const HOURLY_LIMIT: usize = 14 * 24;
/// Long horizons are validated this many days ahead; bands widen beyond.
pub const LONG_VALIDATED_DAYS: usize = 28;

/// A quantile forecast.
#[derive(Debug, Clone, PartialEq)]
pub struct Forecast {
    pub p10: Vec<f64>,
    pub p50: Vec<f64>,
    pub p90: Vec<f64>,
    /// What produced the median: one method, or a weighted combination.
    pub method: String,
    /// Why a simpler method was used than the series would otherwise get.
    pub fallback: Option<String>,
    /// Mean absolute error of the median over the validation windows (None when none could be run).
    pub validation_mae: Option<f64>,
}

/// Fills gaps for the models: linear interpolation inside, the nearest value
/// at the edges. Leading gaps are dropped. Returns the values and the offset of
/// the first one kept.
pub fn fill(history: &[Option<f64>]) -> (Vec<f64>, usize) {
    let Some(first) = history.iter().position(Option::is_some) else {
        return (Vec::new(), history.len());
    };
    let h = &history[first..];
    let mut out = Vec::with_capacity(h.len());
    let mut last_known: Option<(usize, f64)> = None;
    let mut pending = 0usize;
    for (i, v) in h.iter().enumerate() {
        match v {
            Some(x) => {
                if pending > 0 {
                    let (li, lv) = last_known.expect("a value precedes every gap");
                    for k in 1..=pending {
                        out.push(lv + (x - lv) * k as f64 / (i - li) as f64);
                    }
                    pending = 0;
                }
                out.push(*x);
                last_known = Some((i, *x));
            }
            None => pending += 1,
        }
    }
    let tail = last_known.map(|(_, v)| v).unwrap_or(0.0);
    out.extend(std::iter::repeat_n(tail, pending));
    (out, first)
}

/// Forecasts the next `horizon` hours of an hourly series (gaps are `None`).
/// Horizons beyond [`HOURLY_LIMIT`] go through [`long`].
pub fn hourly(history: &[Option<f64>], horizon: usize) -> Forecast {
    if horizon > HOURLY_LIMIT {
        return long(history, horizon);
    }
    let (y, offset) = fill(history);
    let observed: Vec<bool> = history[offset..].iter().map(Option::is_some).collect();
    stepwise(&y, &observed, horizon, 24, 168)
}

/// Forecasts many series at once on `threads` worker threads (at least one);
/// the result is in the order of `histories`.
pub fn hourly_many(
    histories: &[Vec<Option<f64>>],
    horizon: usize,
    threads: usize,
) -> Vec<Forecast> {
    let threads = threads.clamp(1, histories.len().max(1));
    let chunk = histories.len().div_ceil(threads).max(1);
    std::thread::scope(|scope| {
        let workers: Vec<_> = histories
            .chunks(chunk)
            .map(|part| {
                scope.spawn(move || part.iter().map(|h| hourly(h, horizon)).collect::<Vec<_>>())
            })
            .collect();
        workers
            .into_iter()
            .flat_map(|w| w.join().expect("a forecast worker never panics"))
            .collect()
    })
}

/// Forecasts with `period` (and `long_period`) seasons, on filled values `y`.
fn stepwise(
    y: &[f64],
    observed: &[bool],
    horizon: usize,
    period: usize,
    long_period: usize,
) -> Forecast {
    let n = y.len();
    if n == 0 {
        return flat(
            0.0,
            horizon,
            "no data",
            Some("the series has no values: forecast 0".into()),
        );
    }
    if n < 2 * period {
        return short(y, horizon, period);
    }
    let h = horizon.max(1);
    // Validation origins, one season apart, each followed by `h` observed steps.
    let mut candidates = vec![
        Method::Naive,
        Method::RecentMean(period),
        Method::SeasonalNaive(period),
    ];
    // Means of the last quarter and half season: naive with the noise
    // smoothed; medians of the last quarter and whole season: the last level
    // without its blips.
    for w in [period / 4, period / 2] {
        if w >= 2 && !candidates.contains(&Method::RecentMean(w)) {
            candidates.push(Method::RecentMean(w));
        }
    }
    for w in [period / 4, period] {
        if w >= 3 {
            candidates.push(Method::RecentMedian(w));
        }
    }
    let seasons = n / period;
    if seasons >= 3 {
        candidates.push(Method::LevelProfile {
            period,
            days: (seasons - 1).min(7),
        });
    }
    let min_origin = period + 1;
    let origins: Vec<usize> = (0..VALIDATION_WINDOWS)
        .rev()
        .filter_map(|k| n.checked_sub(h + k * period))
        .filter(|&o| o >= min_origin)
        .collect();
    if origins.len() < 2 {
        return short(y, horizon, period);
    }
    let first_origin = origins[0];
    if first_origin > long_period {
        candidates.push(Method::SeasonalNaive(long_period));
    }
    // Fitted models see only what precedes the first validation origin.
    // Smoothing with alpha near 1 is naive again: left out, not counted twice.
    let ses = models::fit_ses(&y[..first_origin]);
    if !matches!(ses, Method::Ses { alpha } if alpha > 0.98) {
        candidates.push(ses);
    }
    if first_origin >= 4 * period {
        let weekly = if first_origin >= 2 * long_period {
            long_period
        } else {
            0
        };
        candidates.push(models::fit_holt_winters(&y[..first_origin], period, weekly));
        let days = (first_origin / period - 1).min(7);
        let weeks = if weekly > 0 {
            (first_origin / long_period).min(4)
        } else {
            0
        };
        candidates.push(models::fit_deseasonal(
            &y[..first_origin],
            period,
            days,
            weekly,
            weeks,
        ));
    }
    let scored: Vec<select::Scored> = candidates
        .iter()
        .map(|m| {
            let f = models::forecasts(*m, y, &origins, h);
            select::Scored {
                method: *m,
                mae: mean_abs_error(y, observed, &origins, &f),
                validation: f,
            }
        })
        .collect();
    let err = |f: &[Vec<f64>], leads: select::Leads| {
        let (mut sum, mut count) = (0.0, 0usize);
        for (o, f) in origins.iter().zip(f) {
            for j in leads.clone() {
                let t = o + j;
                if t < y.len() && observed[t] {
                    sum += (y[t] - f[j]).abs();
                    count += 1;
                }
            }
        }
        if count == 0 {
            f64::INFINITY
        } else {
            sum / count as f64
        }
    };
    let plan = select::plan(&scored, h, origins.len(), &err);
    let validation: Vec<Vec<f64>> = (0..origins.len())
        .map(|w| plan.apply(|i| scored[i].validation[w].clone(), h))
        .collect();
    let mae = mean_abs_error(y, observed, &origins, &validation);
    let mut finals: std::collections::HashMap<usize, Vec<f64>> = Default::default();
    for i in plan.methods() {
        finals.insert(i, models::forecasts(scored[i].method, y, &[n], h).remove(0));
    }
    let p50 = plan.apply(|i| finals[&i].clone(), h);
    let method = plan.describe(&scored);
    let fallback = if n < 2 * long_period + h {
        Some(format!(
            "{n} steps of history: too short for a weekly season, daily only"
        ))
    } else {
        None
    };
    let bands = error_bands(y, observed, &origins, &validation, h);
    finish(p50, &bands, horizon, method, fallback, Some(mae))
}

fn mean_abs_error(y: &[f64], observed: &[bool], origins: &[usize], forecasts: &[Vec<f64>]) -> f64 {
    let mut sum = 0.0;
    let mut count = 0usize;
    for (o, f) in origins.iter().zip(forecasts) {
        for (j, v) in f.iter().enumerate() {
            let t = o + j;
            if t < y.len() && observed[t] {
                sum += (y[t] - v).abs();
                count += 1;
            }
        }
    }
    if count == 0 {
        f64::INFINITY
    } else {
        sum / count as f64
    }
}

/// Offsets of P10 and P90 from the median, per lead: the 10th and 90th
/// percentiles of the validation errors at that lead and its neighbours,
/// never narrowing as the lead grows.
fn error_bands(
    y: &[f64],
    observed: &[bool],
    origins: &[usize],
    forecasts: &[Vec<f64>],
    h: usize,
) -> Vec<(f64, f64)> {
    let mut by_lead: Vec<Vec<f64>> = vec![Vec::new(); h];
    for (o, f) in origins.iter().zip(forecasts) {
        for (j, v) in f.iter().enumerate() {
            let t = o + j;
            if t < y.len() && observed[t] {
                by_lead[j].push(y[t] - v);
            }
        }
    }
    let mut out = Vec::with_capacity(h);
    let (mut lo, mut hi) = (0.0f64, 0.0f64);
    let mut pool = Vec::new();
    for j in 0..h {
        let reach = (j / 8).max(2);
        pool.clear();
        for errors in &by_lead[j.saturating_sub(reach)..(j + reach + 1).min(h)] {
            pool.extend_from_slice(errors);
        }
        if !pool.is_empty() {
            pool.sort_by(f64::total_cmp);
            lo = lo.min(quantile(&pool, 0.10));
            hi = hi.max(quantile(&pool, 0.90));
        }
        out.push((lo, hi));
    }
    out
}

/// Linear-interpolated quantile of sorted values.
pub fn quantile(sorted: &[f64], q: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let pos = q * (sorted.len() - 1) as f64;
    let lo = pos.floor() as usize;
    let hi = pos.ceil() as usize;
    sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - lo as f64)
}

/// Builds the quantiles around the median with per-lead offsets: never
/// negative, never crossing.
fn finish(
    p50: Vec<f64>,
    bands: &[(f64, f64)],
    horizon: usize,
    method: String,
    fallback: Option<String>,
    validation_mae: Option<f64>,
) -> Forecast {
    let mut out = Forecast {
        p10: Vec::with_capacity(horizon),
        p50: Vec::with_capacity(horizon),
        p90: Vec::with_capacity(horizon),
        method,
        fallback,
        validation_mae,
    };
    for (j, m) in p50.iter().take(horizon).enumerate() {
        let (lo, hi) = bands.get(j).or(bands.last()).copied().unwrap_or((0.0, 0.0));
        let mid = m.max(0.0);
        out.p10.push((m + lo.min(0.0)).max(0.0).min(mid));
        out.p50.push(mid);
        out.p90.push((m + hi.max(0.0)).max(mid));
    }
    out
}

fn flat(value: f64, horizon: usize, method: &str, fallback: Option<String>) -> Forecast {
    finish(
        vec![value; horizon],
        &[],
        horizon,
        method.into(),
        fallback,
        None,
    )
}

/// Fewer than two seasons: the last value, with the spread of the recent values around it.
fn short(y: &[f64], horizon: usize, period: usize) -> Forecast {
    let last = *y.last().expect("not empty");
    let recent = &y[y.len().saturating_sub(period)..];
    let mut dev: Vec<f64> = recent.iter().map(|v| v - last).collect();
    dev.sort_by(f64::total_cmp);
    let (lo, hi) = (quantile(&dev, 0.10), quantile(&dev, 0.90));
    let mut f = finish(
        vec![last; horizon],
        &[],
        horizon,
        Method::Naive.describe(),
        Some(format!(
            "only {} steps of history, fewer than two seasons of {period}: the last value, with the spread of the recent values",
            y.len()
        )),
        None,
    );
    for j in 0..horizon {
        f.p10[j] = (last + lo).max(0.0).min(f.p50[j]);
        f.p90[j] = (last + hi).max(f.p50[j]);
    }
    f
}

/// Forecasts a long horizon (hours) on daily means with a weekly season, then
/// spreads each day over its hours with the recent daily shape.
pub fn long(history: &[Option<f64>], horizon: usize) -> Forecast {
    let days_needed = horizon.div_ceil(24);
    // Daily means, from days with at least half the hours a day of this
    // series usually has observed (half of 24 for hourly rows; half of 8
    // for rows every 3 hours, which would otherwise leave no day at all).
    let enough = day_quorum(history);
    // Days end where the history ends: the last day is the last 24 hours,
    // whole. (Days counted from the history's first hour left a part-day
    // at the end whose mean was only its hours', so the outlook moved with
    // the hour of day the history started, which is `--at`'s.) The hours
    // before the first whole day are left out.
    let daily: Vec<Option<f64>> = history[history.len() % 24..]
        .chunks(24)
        .map(|day| {
            let seen: Vec<f64> = day.iter().flatten().copied().collect();
            (!seen.is_empty() && seen.len() * 2 >= enough.min(day.len()))
                .then(|| seen.iter().sum::<f64>() / seen.len() as f64)
        })
        .collect();
    let (y, offset) = fill(&daily);
    let observed: Vec<bool> = daily[offset..].iter().map(Option::is_some).collect();
    let validated = days_needed.min(LONG_VALIDATED_DAYS);
    let mut f = stepwise(&y, &observed, validated, 7, 28);
    // Beyond four weeks, the last predicted week repeats, and the bands keep
    // widening: their offsets from the median grow with the square root of
    // the lead over the four weeks the validation measured (as a random
    // walk's spread does), so a year out is about 3.6 times as wide.
    let mut d = f.p50.len();
    while d < days_needed {
        let k = d - 7.min(d);
        let grow = ((d + 1) as f64 / validated.max(1) as f64).sqrt()
            / ((k + 1) as f64 / validated.max(1) as f64).sqrt().max(1.0);
        let mid = f.p50[k];
        f.p10
            .push((mid - (mid - f.p10[k]) * grow).max(0.0).min(mid));
        f.p50.push(mid);
        f.p90.push(mid + (f.p90[k] - mid) * grow);
        d += 1;
    }
    let profile = intraday_shape(history);
    let mut out = Forecast {
        p10: Vec::with_capacity(horizon),
        p50: Vec::with_capacity(horizon),
        p90: Vec::with_capacity(horizon),
        method: format!("daily means: {}", f.method),
        fallback: f.fallback.clone(),
        validation_mae: f.validation_mae,
    };
    for hour in 0..horizon {
        let d = hour / 24;
        let phase = (history.len() + hour) % 24;
        let shift = profile[phase];
        let mid = (f.p50[d] + shift).max(0.0);
        out.p50.push(mid);
        out.p10.push((f.p10[d] + shift).max(0.0).min(mid));
        out.p90.push((f.p90[d] + shift).max(mid));
    }
    out
}

/// The hours a day of the series usually has observed: the median count
/// over the days with any (24 for complete hourly rows, 8 for rows every 3
/// hours, 1 for daily rows).
fn day_quorum(history: &[Option<f64>]) -> usize {
    let mut counts: Vec<usize> = history[history.len() % 24..]
        .chunks(24)
        .map(|day| day.iter().flatten().count())
        .filter(|&n| n > 0)
        .collect();
    if counts.is_empty() {
        return 24;
    }
    counts.sort_unstable();
    counts[counts.len() / 2]
}

/// Mean deviation of each hour of the day from its day's mean, over the last 14 days.
fn intraday_shape(history: &[Option<f64>]) -> Vec<f64> {
    let enough = day_quorum(history);
    let mut sum = [0.0; 24];
    let mut count = [0usize; 24];
    let start = history.len().saturating_sub(14 * 24);
    let start = start + (history.len() - start) % 24;
    for day_start in (start..history.len()).step_by(24) {
        let day = &history[day_start..(day_start + 24).min(history.len())];
        let seen: Vec<f64> = day.iter().flatten().copied().collect();
        if seen.is_empty() || seen.len() * 2 < enough {
            continue;
        }
        let mean = seen.iter().sum::<f64>() / seen.len() as f64;
        for (i, v) in day.iter().enumerate() {
            if let Some(v) = v {
                let phase = (day_start + i) % 24;
                sum[phase] += v - mean;
                count[phase] += 1;
            }
        }
    }
    (0..24)
        .map(|i| {
            if count[i] == 0 {
                0.0
            } else {
                sum[i] / count[i] as f64
            }
        })
        .collect()
}

#[cfg(test)]
mod tests;
