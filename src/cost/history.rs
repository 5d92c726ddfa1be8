//! The usage history's long-range facts: each pool's demand and use month
//! by month over all of its history, from daily roll-ups of the hourly
//! grids ([`Hourly::days`]).
//!
//! Forecasts may read only the recent hours (the Config's
//! `usage.hourlyDays`, [`Analysis::recent`]); these facts read every day
//! measured before `--at`. A team's day is the mean of the hours it was
//! measured (its gaps are not zeros; the hours before its first row or
//! after its last, while the pool was measured, are); a pool's day is the
//! sum of its teams' days (a day one of its teams, between its first row
//! and its last, was not measured at all is left out); a month is the mean
//! of its measured days.
//! Use is capped at the hour's allocation (as in the lookback), and
//! utilization is used over allocated, summed over the team-hours measured
//! both ways: never above 1.

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
    /// Mean GPUs busy over the days where use was measured, each hour capped
    /// at its allocation when that is measured (None: never).
    pub used_mean: Option<f64>,
    /// Used (capped) over allocated, over the hours where both were measured.
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

/// One pool day: allocated and used (None: not measured), teams summed;
/// and the two over the teams measured both ways that day.
#[derive(Clone, Copy, Default)]
struct PoolDay {
    allocated: Option<f64>,
    used: Option<f64>,
    paired_allocated: f64,
    paired_used: f64,
}

fn add(slot: &mut Option<f64>, x: f64) {
    *slot = Some(slot.unwrap_or(0.0) + x);
}

/// The pool's days before day `before`, its teams' daily means summed. A
/// team counts from its first row to its last: the hours of a day the pool
/// was measured but the team was not there yet (or any more) are zeros; its
/// gaps are left out of its mean, and a whole day of its span without a
/// measured hour leaves the pool's day out. Use is capped at the hour's allocation
/// when that is measured (as in the lookback), and the paired sums count
/// only the hours measured both ways, so utilization is never above 1.
fn pool_days(series: &[(&Hourly, &Hourly)], before: i64) -> BTreeMap<i64, PoolDay> {
    let spans = series.iter().filter(|(a, _)| a.hours() > 0);
    let start = spans.clone().map(|(a, _)| a.start).min().unwrap_or(0);
    let end = spans.map(|(a, _)| a.end()).max().unwrap_or(0);
    let overlap = |lo: i64, hi: i64, from: i64, to: i64| (hi.min(to) - lo.max(from)).max(0);
    let mut days: BTreeMap<i64, PoolDay> = BTreeMap::new();
    let mut gaps = std::collections::BTreeSet::new();
    for (allocated, used) in series {
        let (from, to) = (allocated.start, allocated.end());
        // The hours a day's mean is over: those measured, and those the pool
        // was measured but the team was not there (zeros).
        let hours = |d: &Day| {
            let (lo, hi) = (d.day * 24, d.day * 24 + 24);
            let absent = overlap(lo, hi, start, end) - overlap(lo, hi, from, to);
            f64::from(d.hours) + absent.max(0) as f64
        };
        let capped = Hourly::new(
            used.start,
            used.values().enumerate().map(|(i, u)| {
                let h = used.start + i as i64;
                u.map(|u| allocated.get(h).map_or(u, |a| u.min(a)))
            }),
        );
        let used: BTreeMap<i64, f64> = capped
            .days()
            .iter()
            .map(|d| (d.day, d.sum / hours(d)))
            .collect();
        // Allocated and (capped) used summed over the hours measured both ways.
        let mut paired: BTreeMap<i64, (f64, f64)> = BTreeMap::new();
        for (i, a) in allocated.values().enumerate() {
            let h = from + i as i64;
            if let (Some(a), Some(u)) = (a, capped.get(h)) {
                let e = paired.entry(h.div_euclid(24)).or_default();
                e.0 += a;
                e.1 += u;
            }
        }
        let measured = allocated.days();
        for d in measured.iter().filter(|d| d.day < before) {
            let day = days.entry(d.day).or_default();
            add(&mut day.allocated, d.sum / hours(d));
            // Utilization weighs team-hours: a day measured five hours
            // counts five hours, not a day's worth.
            if let Some(&(a, u)) = paired.get(&d.day) {
                day.paired_allocated += a;
                day.paired_used += u;
            }
        }
        // A day inside the team's span with no hour of it measured is a gap
        // for the pool: the others' sum would read as a drop in demand.
        if to > from {
            let have: std::collections::BTreeSet<i64> = measured.iter().map(|d| d.day).collect();
            for day in from.div_euclid(24)..=(to - 1).div_euclid(24) {
                if day < before && !have.contains(&day) {
                    gaps.insert(day);
                }
            }
        }
        for (&d, &u) in used.iter().filter(|(d, _)| **d < before) {
            add(&mut days.entry(d).or_default().used, u);
        }
    }
    for day in gaps {
        days.remove(&day);
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
            let ab: f64 = ds.iter().map(|d| d.paired_allocated).sum();
            let ub: f64 = ds.iter().map(|d| d.paired_used).sum();
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
            let series: Vec<(&Hourly, &Hourly)> = p
                .series
                .iter()
                .map(|&id| (a.series.allocated(id), a.series.used(id)))
                .collect();
            let days = pool_days(&series, before);
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

    /// Worked by hand: team a allocates 4 GPUs (2 busy) every hour from
    /// 2026-01-01 00:00 to 01-03 11:00 (the pool's last hour); team b 8
    /// GPUs on 01-02 for 12 hours, its other 12 hours gaps (not zeros), use
    /// never measured; team c 96 GPUs for one hour on 01-02 and nothing
    /// else (its other 23 hours that day it was not there: zeros).
    #[test]
    fn pool_months_sum_team_day_means_and_skip_gaps() {
        let jan1 = Timestamp::from_second(1_767_225_600).unwrap().hour_index();
        assert_eq!(date(jan1 / DAY).to_string(), "2026-01-01");
        let a_alloc = Hourly::new(jan1, (0..60).map(|_| Some(4.0)));
        let a_used = Hourly::new(jan1, (0..60).map(|_| Some(2.0)));
        let b_alloc = Hourly::new(jan1 + DAY, (0..24).map(|h| (h < 12).then_some(8.0)));
        let b_used = Hourly::gaps(jan1 + DAY, 24);
        let c_alloc = Hourly::new(jan1 + DAY + 5, [Some(96.0)]);
        let c_used = Hourly::gaps(jan1 + DAY + 5, 1);
        let all = [
            (&a_alloc, &a_used),
            (&b_alloc, &b_used),
            (&c_alloc, &c_used),
        ];
        let days = pool_days(&all, i64::MAX);
        let alloc: Vec<f64> = days.values().map(|d| d.allocated.unwrap()).collect();
        // Day 3 is the pool's last, half measured: a's 12 hours are its day.
        assert_eq!(alloc, vec![4.0, 4.0 + 8.0 + 96.0 / 24.0, 4.0]);
        let m = months(&days);
        assert_eq!(m.len(), 1);
        let jan = &m[0];
        assert_eq!(jan.month, "2026-01");
        assert_eq!(jan.days, 3);
        assert_eq!(jan.allocated_mean, 8.0);
        assert_eq!(jan.busiest_day, 16.0);
        assert_eq!(jan.used_mean, Some(2.0));
        // Only a was measured both ways: 6 used of 12 allocated.
        assert_eq!(jan.utilization, Some(0.5));
        // Days from `before` on are left out.
        let first_only = pool_days(&all, jan1 / DAY + 1);
        assert_eq!(months(&first_only)[0].allocated_mean, 4.0);
        assert_eq!(months(&first_only)[0].days, 1);
    }

    /// A team that reports more busy GPUs than it holds is capped at its
    /// allocation, hour by hour: 2 held and 3 "used" for 12 hours, then 4
    /// held and 1 used for 12. Used: 2 x 12 + 1 x 12 = 36 GPU-hours of
    /// 2 x 12 + 4 x 12 = 72: utilization 0.5 (uncapped it would be 48 / 72);
    /// used mean 36 / 24 = 1.5. Held 2 and "using" 3 all day: 1.0, not 1.5.
    #[test]
    fn use_above_the_allocation_is_capped_hour_by_hour() {
        let jan1 = Timestamp::from_second(1_767_225_600).unwrap().hour_index();
        let alloc = Hourly::new(jan1, (0..24).map(|h| Some(if h < 12 { 2.0 } else { 4.0 })));
        let used = Hourly::new(jan1, (0..24).map(|h| Some(if h < 12 { 3.0 } else { 1.0 })));
        let m = months(&pool_days(&[(&alloc, &used)], i64::MAX));
        assert_eq!(m[0].allocated_mean, 3.0);
        assert_eq!(m[0].used_mean, Some(1.5));
        assert_eq!(m[0].utilization, Some(0.5));
        let alloc = Hourly::new(jan1, (0..24).map(|_| Some(2.0)));
        let used = Hourly::new(jan1, (0..24).map(|_| Some(3.0)));
        let m = months(&pool_days(&[(&alloc, &used)], i64::MAX));
        assert_eq!(m[0].used_mean, Some(2.0));
        assert_eq!(m[0].utilization, Some(1.0));
    }
}
