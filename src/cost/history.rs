//! The usage history's long-range facts: each pool's demand and use month
//! by month over all of its history, from daily roll-ups of the hourly
//! grids ([`Hourly::days`]).
//!
//! Forecasts may read only the recent hours (the Config's
//! `usage.hourlyDays`, [`Analysis::recent`]); these facts read every day
//! measured before `--at`. A team's day is the mean of the hours it was
//! measured (its gaps are not zeros); a pool's day is the sum of its teams'
//! days; a month is the mean of its measured days. Utilization is the used
//! mean over the allocated mean of the days where both were measured.

use super::Analysis;
use crate::model::Timestamp;
use crate::model::hourly::{Day, Hourly};
use serde::Serialize;
use std::collections::BTreeMap;

/// One calendar month (UTC) of a pool's history.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct MonthRow {
    /// `YYYY-MM`.
    pub month: String,
    /// Days with a measured allocation.
    pub days: u32,
    /// Mean GPUs allocated over those days.
    pub allocated_mean: f64,
    /// Mean GPUs busy over the days where use was measured (None: never).
    pub used_mean: Option<f64>,
    /// Used over allocated, over the days where both were measured.
    pub utilization: Option<f64>,
    /// The busiest day's mean allocation.
    pub busiest_day: f64,
}

/// A pool's whole measured history, by month.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PoolHistory {
    pub cluster: String,
    pub pool: String,
    /// The first and last day (UTC) with a measured allocation, `YYYY-MM-DD`.
    pub first_day: String,
    pub last_day: String,
    /// Days with a measured allocation.
    pub days: u32,
    /// Days of hourly history the forecasts read (None: all of it).
    pub hourly_days: Option<u32>,
    pub months: Vec<MonthRow>,
}

/// One pool day: allocated and used (None: not measured), teams summed.
#[derive(Clone, Copy, Default)]
struct PoolDay {
    allocated: Option<f64>,
    used: Option<f64>,
}

fn add(slot: &mut Option<f64>, x: f64) {
    *slot = Some(slot.unwrap_or(0.0) + x);
}

/// The pool's days before day `before`, its teams' daily means summed.
fn pool_days<'a>(
    series: impl Iterator<Item = (&'a Hourly, &'a Hourly)>,
    before: i64,
) -> BTreeMap<i64, PoolDay> {
    let mut days: BTreeMap<i64, PoolDay> = BTreeMap::new();
    for (allocated, used) in series {
        let mut put = |d: &Day, pick: fn(&mut PoolDay) -> &mut Option<f64>| {
            if d.day < before {
                add(pick(days.entry(d.day).or_default()), d.mean());
            }
        };
        for d in allocated.days() {
            put(&d, |p| &mut p.allocated);
        }
        for d in used.days() {
            put(&d, |p| &mut p.used);
        }
    }
    days
}

fn date(day: i64) -> jiff::civil::Date {
    Timestamp::from_second(day * 86_400)
        .map(|t| t.date())
        .unwrap_or_default()
}

/// Months of pool days.
fn months(days: &BTreeMap<i64, PoolDay>) -> Vec<MonthRow> {
    let mut by_month: BTreeMap<(i16, i8), Vec<PoolDay>> = BTreeMap::new();
    for (&day, &d) in days {
        let date = date(day);
        by_month
            .entry((date.year(), date.month()))
            .or_default()
            .push(d);
    }
    let mean = |xs: &[f64]| xs.iter().sum::<f64>() / xs.len().max(1) as f64;
    by_month
        .into_iter()
        .filter_map(|((y, m), ds)| {
            let allocated: Vec<f64> = ds.iter().filter_map(|d| d.allocated).collect();
            if allocated.is_empty() {
                return None;
            }
            let used: Vec<f64> = ds.iter().filter_map(|d| d.used).collect();
            let both: Vec<(f64, f64)> = ds
                .iter()
                .filter_map(|d| Some((d.allocated?, d.used?)))
                .collect();
            let (ab, ub) = both
                .iter()
                .fold((0.0, 0.0), |(a, u), (x, y)| (a + x, u + y));
            Some(MonthRow {
                month: format!("{y:04}-{m:02}"),
                days: allocated.len() as u32,
                allocated_mean: round(mean(&allocated)),
                used_mean: (!used.is_empty()).then(|| round(mean(&used))),
                utilization: (ab > 0.0).then(|| round(ub / ab)),
                busiest_day: round(allocated.iter().copied().fold(0.0, f64::max)),
            })
        })
        .collect()
}

fn round(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

/// Every pool with a measured allocation before `at`, by cluster and pool.
pub fn build(a: &Analysis) -> Vec<PoolHistory> {
    // Days that start before `at`.
    let before = (a.at.as_second() + 86_399).div_euclid(86_400);
    a.pools
        .iter()
        .filter_map(|((cluster, pool), p)| {
            let series = p
                .series
                .iter()
                .map(|&id| (a.series.allocated(id), a.series.used(id)));
            let days = pool_days(series, before);
            let measured: Vec<i64> = days
                .iter()
                .filter(|(_, d)| d.allocated.is_some())
                .map(|(day, _)| *day)
                .collect();
            let (first, last) = (*measured.first()?, *measured.last()?);
            Some(PoolHistory {
                cluster: cluster.clone(),
                pool: pool.clone(),
                first_day: date(first).to_string(),
                last_day: date(last).to_string(),
                days: measured.len() as u32,
                hourly_days: a.config.usage.hourly_days,
                months: months(&days),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const DAY: i64 = 24;

    /// Worked by hand: team a allocates 4 GPUs (2 busy) every hour of
    /// January 2026's first two days, team b 8 GPUs on day 2 for 12 hours
    /// only (its other hours are gaps, not zeros) and nothing measured used.
    #[test]
    fn pool_months_sum_team_day_means_and_skip_gaps() {
        let jan1 = Timestamp::from_second(1_767_225_600).unwrap().hour_index();
        assert_eq!(date(jan1 / DAY).to_string(), "2026-01-01");
        let a_alloc = Hourly::new(jan1, (0..48).map(|_| Some(4.0)));
        let a_used = Hourly::new(jan1, (0..48).map(|_| Some(2.0)));
        let b_alloc = Hourly::new(jan1 + DAY, (0..24).map(|h| (h < 12).then_some(8.0)));
        let b_used = Hourly::gaps(jan1 + DAY, 24);
        let days = pool_days(
            [(&a_alloc, &a_used), (&b_alloc, &b_used)].into_iter(),
            i64::MAX,
        );
        assert_eq!(days.len(), 2);
        let m = months(&days);
        assert_eq!(m.len(), 1);
        let jan = &m[0];
        assert_eq!(jan.month, "2026-01");
        assert_eq!(jan.days, 2);
        // Day 1: 4; day 2: 4 + 8 (b's mean over its 12 measured hours).
        assert_eq!(jan.allocated_mean, 8.0);
        assert_eq!(jan.busiest_day, 12.0);
        assert_eq!(jan.used_mean, Some(2.0));
        // Both measured on both days: 4 used of 16 allocated.
        assert_eq!(jan.utilization, Some(0.25));
        // Days from `before` on are left out.
        let first_only = pool_days(
            [(&a_alloc, &a_used), (&b_alloc, &b_used)].into_iter(),
            jan1 / DAY + 1,
        );
        assert_eq!(months(&first_only)[0].allocated_mean, 4.0);
    }
}
