//! Point forecasters: naive, seasonal naive, simple exponential smoothing,
//! additive Holt-Winters, and "level with a daily shape".
//!
//! Every model forecasts from an origin: given `y[..origin]` it predicts
//! `y[origin..origin + h]`. Fitted models (SES, Holt-Winters) are fitted once
//! on the training data and then run forward, so forecasts from many origins
//! (rolling-origin validation) cost one pass over the series.

use super::optimize::nelder_mead;

/// A point-forecasting method.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Method {
    /// The last value, repeated.
    Naive,
    /// The value one season earlier (period in steps).
    SeasonalNaive(usize),
    /// The mean of the last `window` steps.
    RecentMean(usize),
    /// The median of the last `window` steps (the last level, robust to blips).
    RecentMedian(usize),
    /// Simple exponential smoothing.
    Ses { alpha: f64 },
    /// Additive Holt-Winters without trend: a level, a season of `period`
    /// steps and, when `period2` is not 0, a second (weekly) season.
    HoltWinters {
        alpha: f64,
        gamma: f64,
        gamma2: f64,
        period: usize,
        period2: usize,
    },
    /// The last value, moved along the average daily shape of the last `days` days.
    LevelProfile { period: usize, days: usize },
    /// Seasonally adjusted exponential smoothing: the series less its
    /// average daily shape (last `days` seasons) and, when `period2` is not
    /// 0, its average weekly shape (last `weeks` of them), smoothed with
    /// `alpha`; the shapes are added back to the smoothed level.
    Deseasonal {
        alpha: f64,
        period: usize,
        days: usize,
        period2: usize,
        weeks: usize,
    },
}

impl Method {
    pub fn describe(&self) -> String {
        match self {
            Method::Naive => "naive (last value)".into(),
            Method::SeasonalNaive(m) => format!("seasonal naive ({m} steps)"),
            Method::RecentMean(w) => format!("mean of the last {w} steps"),
            Method::RecentMedian(w) => format!("median of the last {w} steps"),
            Method::Ses { alpha } => format!("exponential smoothing (alpha {alpha:.2})"),
            Method::HoltWinters {
                alpha,
                gamma,
                gamma2,
                period,
                period2,
            } => {
                if *period2 > 0 {
                    format!(
                        "additive Holt-Winters, {period} and {period2} step seasons (alpha {alpha:.2}, gamma {gamma:.2}/{gamma2:.2})"
                    )
                } else {
                    format!(
                        "additive Holt-Winters, {period} step season (alpha {alpha:.2}, gamma {gamma:.2})"
                    )
                }
            }
            Method::LevelProfile { period, days } => {
                format!("last value with the {period} step shape of the last {days} seasons")
            }
            Method::Deseasonal {
                alpha,
                period,
                period2,
                ..
            } => {
                if *period2 > 0 {
                    format!(
                        "seasonally adjusted smoothing, {period} and {period2} step shapes (alpha {alpha:.2})"
                    )
                } else {
                    format!("seasonally adjusted smoothing, {period} step shape (alpha {alpha:.2})")
                }
            }
        }
    }

    /// Steps of history the method needs before its first forecast.
    pub fn warmup(&self) -> usize {
        match self {
            Method::Naive => 1,
            Method::SeasonalNaive(m) => *m,
            Method::RecentMean(w) | Method::RecentMedian(w) => *w,
            Method::Ses { .. } => 2,
            Method::HoltWinters {
                period, period2, ..
            } => 2 * (*period).max(*period2),
            Method::LevelProfile { period, days } => period * days,
            Method::Deseasonal {
                period,
                days,
                period2,
                weeks,
                ..
            } => (period * days).max(period2 * weeks),
        }
    }
}

/// Forecasts of one method from several origins, computed in one pass.
pub fn forecasts(method: Method, y: &[f64], origins: &[usize], h: usize) -> Vec<Vec<f64>> {
    match method {
        Method::Naive => origins.iter().map(|&o| vec![y[o - 1]; h]).collect(),
        Method::SeasonalNaive(m) => origins
            .iter()
            .map(|&o| (0..h).map(|j| y[o - m + (j % m)]).collect())
            .collect(),
        Method::RecentMean(w) => origins
            .iter()
            .map(|&o| {
                let mean = y[o - w..o].iter().sum::<f64>() / w as f64;
                vec![mean; h]
            })
            .collect(),
        Method::RecentMedian(w) => origins
            .iter()
            .map(|&o| {
                let mut last = y[o - w..o].to_vec();
                last.sort_by(f64::total_cmp);
                vec![super::quantile(&last, 0.5); h]
            })
            .collect(),
        Method::Ses { alpha } => {
            let levels = ses_levels(y, alpha);
            origins.iter().map(|&o| vec![levels[o - 1]; h]).collect()
        }
        Method::HoltWinters {
            alpha,
            gamma,
            gamma2,
            period,
            period2,
        } => {
            let mut stops: Vec<usize> = origins.iter().map(|o| o - 1).collect();
            stops.sort_unstable();
            let mut states: Vec<(usize, HwState)> = Vec::with_capacity(stops.len());
            hw_run(
                y,
                (alpha, gamma, gamma2),
                period,
                period2,
                usize::MAX,
                &stops,
                |t, st| states.push((t, st.clone())),
            );
            origins
                .iter()
                .map(|&o| {
                    let st = &states
                        .iter()
                        .find(|(t, _)| *t == o - 1)
                        .expect("a state for every origin")
                        .1;
                    (0..h).map(|j| st.predict(o + j)).collect()
                })
                .collect()
        }
        Method::LevelProfile { period, days } => origins
            .iter()
            .map(|&o| {
                let profile = shape(&y[..o], period, days);
                let last = y[o - 1];
                let base = last - profile[(o - 1) % period];
                (0..h).map(|j| base + profile[(o + j) % period]).collect()
            })
            .collect(),
        Method::Deseasonal {
            alpha,
            period,
            days,
            period2,
            weeks,
        } => origins
            .iter()
            .map(|&o| {
                let s = Shapes::of(&y[..o], period, days, period2, weeks);
                let level = s.level(&y[..o], alpha);
                (0..h).map(|j| level + s.at(o + j)).collect()
            })
            .collect(),
    }
}

/// A daily and a weekly shape, indexed by absolute step.
struct Shapes {
    daily: Vec<f64>,
    weekly: Vec<f64>,
    /// Steps of smoothing the level runs over (a few seasons).
    span: usize,
}

impl Shapes {
    fn of(y: &[f64], period: usize, days: usize, period2: usize, weeks: usize) -> Shapes {
        let daily = shape(y, period, days);
        let weekly = if period2 > 0 && weeks > 0 {
            // The weekly shape of what the daily shape leaves.
            let adjusted: Vec<f64> = y
                .iter()
                .enumerate()
                .map(|(t, v)| v - daily[t % period])
                .collect();
            shape(&adjusted, period2, weeks)
        } else {
            Vec::new()
        };
        Shapes {
            daily,
            weekly,
            span: 4 * period.max(period2),
        }
    }

    fn at(&self, t: usize) -> f64 {
        let w = if self.weekly.is_empty() {
            0.0
        } else {
            self.weekly[t % self.weekly.len()]
        };
        self.daily[t % self.daily.len()] + w
    }

    /// The smoothed level of the adjusted series at the end of `y`.
    fn level(&self, y: &[f64], alpha: f64) -> f64 {
        let start = y.len().saturating_sub(self.span);
        let mut level = y[start] - self.at(start);
        for (t, v) in y.iter().enumerate().skip(start + 1) {
            level += alpha * (v - self.at(t) - level);
        }
        level
    }

    /// Sum of squared one-step errors of the adjusted level over `y` (after the first span).
    fn sse(&self, y: &[f64], alpha: f64) -> f64 {
        let start = y.len().saturating_sub(self.span * 2);
        let mut level = y[start] - self.at(start);
        let mut sse = 0.0;
        for (t, v) in y.iter().enumerate().skip(start + 1) {
            let e = v - self.at(t) - level;
            sse += e * e;
            level += alpha * e;
        }
        sse
    }
}

/// Fits the smoothing parameter of [`Method::Deseasonal`] on `y`.
pub fn fit_deseasonal(
    y: &[f64],
    period: usize,
    days: usize,
    period2: usize,
    weeks: usize,
) -> Method {
    let s = Shapes::of(y, period, days, period2, weeks);
    let f = |p: &[f64]| s.sse(y, p[0].clamp(0.01, 1.0));
    let best = nelder_mead(&f, &[0.5], &[0.2], 60);
    Method::Deseasonal {
        alpha: best[0].clamp(0.01, 1.0),
        period,
        days,
        period2,
        weeks,
    }
}

/// Levels of simple exponential smoothing; `levels[t]` has seen `y[..=t]`.
fn ses_levels(y: &[f64], alpha: f64) -> Vec<f64> {
    let mut out = Vec::with_capacity(y.len());
    let mut level = y[0];
    for &v in y {
        level += alpha * (v - level);
        out.push(level);
    }
    out
}

/// Sum of squared one-step errors of SES.
fn ses_sse(y: &[f64], alpha: f64) -> f64 {
    let mut level = y[0];
    let mut sse = 0.0;
    for &v in &y[1..] {
        let e = v - level;
        sse += e * e;
        level += alpha * e;
    }
    sse
}

/// Fits SES's alpha by minimising one-step squared errors.
pub fn fit_ses(y: &[f64]) -> Method {
    let f = |p: &[f64]| ses_sse(y, p[0].clamp(0.01, 1.0));
    let best = nelder_mead(&f, &[0.5], &[0.2], 60);
    Method::Ses {
        alpha: best[0].clamp(0.01, 1.0),
    }
}

/// Holt-Winters' state: the level and one or two seasons, each indexed by
/// absolute step modulo its period.
#[derive(Clone)]
struct HwState {
    level: f64,
    daily: Vec<f64>,
    weekly: Vec<f64>,
}

impl HwState {
    fn predict(&self, t: usize) -> f64 {
        let w = if self.weekly.is_empty() {
            0.0
        } else {
            self.weekly[t % self.weekly.len()]
        };
        self.level + self.daily[t % self.daily.len()] + w
    }
}

/// Initial state: the level and daily season from the first (up to four)
/// seasons, the weekly season from what the daily one leaves in the first
/// (up to two) weeks.
fn hw_init(y: &[f64], period: usize, period2: usize) -> HwState {
    let seasons = (y.len() / period).clamp(1, 4);
    let span = &y[..(seasons * period).min(y.len())];
    let level = span.iter().sum::<f64>() / span.len() as f64;
    let mut daily = vec![0.0; period];
    let mut count = vec![0usize; period];
    for (i, v) in span.iter().enumerate() {
        daily[i % period] += v - level;
        count[i % period] += 1;
    }
    for (d, c) in daily.iter_mut().zip(&count) {
        *d /= (*c).max(1) as f64;
    }
    let mut weekly = Vec::new();
    if period2 > 0 {
        weekly = vec![0.0; period2];
        let weeks = (y.len() / period2).clamp(1, 2);
        let span = &y[..(weeks * period2).min(y.len())];
        let mut count = vec![0usize; period2];
        for (i, v) in span.iter().enumerate() {
            weekly[i % period2] += v - level - daily[i % period];
            count[i % period2] += 1;
        }
        for (w, c) in weekly.iter_mut().zip(&count) {
            *w /= (*c).max(1) as f64;
        }
    }
    HwState {
        level,
        daily,
        weekly,
    }
}

/// Runs additive Holt-Winters over `y`. Calls `at(t, state)` after each step
/// `t` whose index is in `stops` (sorted), and returns the sum of squared
/// one-step errors after the first `skip` steps.
fn hw_run(
    y: &[f64],
    params: (f64, f64, f64),
    period: usize,
    period2: usize,
    skip: usize,
    stops: &[usize],
    mut at: impl FnMut(usize, &HwState),
) -> f64 {
    let (alpha, gamma, gamma2) = params;
    let mut st = hw_init(y, period, period2);
    let mut sse = 0.0;
    let mut next_stop = 0;
    for (t, &v) in y.iter().enumerate() {
        let d = st.daily[t % period];
        let w = if period2 > 0 {
            st.weekly[t % period2]
        } else {
            0.0
        };
        if t >= skip {
            let e = v - (st.level + d + w);
            sse += e * e;
        }
        let new_level = alpha * (v - d - w) + (1.0 - alpha) * st.level;
        st.daily[t % period] = gamma * (v - new_level - w) + (1.0 - gamma) * d;
        if period2 > 0 {
            st.weekly[t % period2] = gamma2 * (v - new_level - d) + (1.0 - gamma2) * w;
        }
        st.level = new_level;
        while next_stop < stops.len() && stops[next_stop] == t {
            at(t, &st);
            next_stop += 1;
        }
    }
    sse
}

/// Fits Holt-Winters' smoothing parameters by minimising one-step squared
/// errors (Nelder-Mead). `period2` is the weekly season, 0 for none.
pub fn fit_holt_winters(y: &[f64], period: usize, period2: usize) -> Method {
    let clamp = |p: &[f64]| {
        (
            p[0].clamp(0.01, 0.99),
            p[1].clamp(0.0, 0.99),
            p.get(2).copied().unwrap_or(0.0).clamp(0.0, 0.99),
        )
    };
    let skip = period.max(period2);
    let f = |p: &[f64]| hw_run(y, clamp(p), period, period2, skip, &[], |_, _| {});
    let best = if period2 > 0 {
        nelder_mead(&f, &[0.3, 0.1, 0.1], &[0.2, 0.1, 0.1], 120)
    } else {
        nelder_mead(&f, &[0.3, 0.1], &[0.2, 0.1], 80)
    };
    let (alpha, gamma, gamma2) = clamp(&best);
    Method::HoltWinters {
        alpha,
        gamma,
        gamma2,
        period,
        period2,
    }
}

/// The average shape of the last `days` seasons: deviation of each phase from
/// its season's mean, indexed by absolute step modulo the period.
fn shape(y: &[f64], period: usize, days: usize) -> Vec<f64> {
    let mut sum = vec![0.0; period];
    let mut count = vec![0usize; period];
    let start = y.len().saturating_sub(period * days);
    // Whole seasons only, aligned to the end.
    let start = start + (y.len() - start) % period;
    for chunk_start in (start..y.len()).step_by(period) {
        let chunk = &y[chunk_start..(chunk_start + period).min(y.len())];
        if chunk.len() < period {
            continue;
        }
        let mean = chunk.iter().sum::<f64>() / period as f64;
        for (i, v) in chunk.iter().enumerate() {
            let phase = (chunk_start + i) % period;
            sum[phase] += v - mean;
            count[phase] += 1;
        }
    }
    sum.iter()
        .zip(&count)
        .map(|(s, &c)| if c == 0 { 0.0 } else { s / c as f64 })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn naive_and_seasonal_naive() {
        let y: Vec<f64> = (0..48).map(|i| (i % 24) as f64).collect();
        let f = forecasts(Method::Naive, &y, &[48], 3);
        assert_eq!(f[0], vec![23.0, 23.0, 23.0]);
        let f = forecasts(Method::SeasonalNaive(24), &y, &[48], 26);
        assert_eq!(f[0][0], 0.0);
        assert_eq!(f[0][23], 23.0);
        assert_eq!(f[0][25], 1.0);
    }

    #[test]
    fn holt_winters_recovers_a_clean_season() {
        let y: Vec<f64> = (0..24 * 14)
            .map(|i| 50.0 + 10.0 * (2.0 * std::f64::consts::PI * (i % 24) as f64 / 24.0).sin())
            .collect();
        let m = fit_holt_winters(&y, 24, 0);
        let f = forecasts(m, &y, &[y.len()], 24);
        for (j, v) in f[0].iter().enumerate() {
            let truth = 50.0 + 10.0 * (2.0 * std::f64::consts::PI * j as f64 / 24.0).sin();
            assert!((v - truth).abs() < 0.5, "step {j}: {v} vs {truth}");
        }
    }

    #[test]
    fn level_profile_follows_the_shape_from_the_last_value() {
        // Seven days of a 10/20 day, then a day that is 30 higher throughout.
        let mut y: Vec<f64> = (0..24 * 7)
            .map(|i| if i % 24 < 12 { 10.0 } else { 20.0 })
            .collect();
        y.extend((0..24).map(|i| if i < 12 { 40.0 } else { 50.0 }));
        let f = forecasts(
            Method::LevelProfile {
                period: 24,
                days: 7,
            },
            &y,
            &[y.len()],
            24,
        );
        // The new level is kept, with the same shape.
        assert!((f[0][0] - 40.0).abs() < 1e-9, "{:?}", f[0]);
        assert!((f[0][12] - 50.0).abs() < 1e-9, "{:?}", f[0]);
    }

    #[test]
    fn seasonally_adjusted_smoothing_keeps_both_shapes_after_a_level_shift() {
        // A daily wave, weekends 5 lower, and a level that jumps by 20 three
        // weeks before the end: from the last two weeks' shapes, the forecast
        // keeps the new level and both shapes.
        let truth = |t: usize| {
            let daily = 10.0 * (2.0 * std::f64::consts::PI * (t % 24) as f64 / 24.0).sin();
            let weekend = if (t / 24) % 7 >= 5 { -5.0 } else { 0.0 };
            daily + weekend
        };
        let n = 24 * 35;
        let y: Vec<f64> = (0..n)
            .map(|t| truth(t) + if t >= n - 21 * 24 { 70.0 } else { 50.0 })
            .collect();
        let m = fit_deseasonal(&y, 24, 7, 168, 2);
        let f = forecasts(m, &y, &[n], 48);
        for (j, v) in f[0].iter().enumerate() {
            let want = 70.0 + truth(n + j);
            assert!((v - want).abs() < 1.5, "step {j}: {v} vs {want} ({m:?})");
        }
    }
}
