//! Monthly spend projections against team budgets, with alerts.
//!
//! A team's spend in a calendar month (UTC) is the GPU-hours allocated to it
//! in each pool times the pool's blended price. Hours up to its last usage
//! sample are measured (scaled down, as chargeback does, in hours where the
//! pool's teams report more GPUs than it has); later hours are its allocation
//! forecast (P50), plus the requests that start after the measurements end
//! (their GPUs are not in the measured level yet), minus the requests
//! running when they ended, from the hour each of those ends (their GPUs
//! are; never more than the team held when the measurements ended), never
//! below zero in any hour. Each hour is priced at the pool's blended price
//! in force then (reservations that start or end in the month change it), as
//! in chargeback. In a pool where the team has no usage history, its
//! requests alone make the projection. Alerts fire at the Config's budget
//! levels (default 80%, 100%, 120%): a month's alert is the highest level
//! its spend reaches.

use super::{Analysis, BUDGET_MONTHS, approved, prices};
use crate::capacity::{self, Hours};
use crate::forecast::demand::Outlook;
use crate::model::*;
use rust_decimal::Decimal;

/// A team's projected spend in one month.
#[derive(Clone, Debug, PartialEq)]
pub struct MonthSpend {
    pub year: i16,
    pub month: i8,
    /// Hours `[start, end)` of the month.
    pub start: i64,
    pub end: i64,
    pub spend: Decimal,
    /// The part of `spend` from measured hours.
    pub measured: Decimal,
    pub budget: Option<Decimal>,
    /// `spend / budget`.
    pub share: Option<f64>,
    /// The highest alert level reached (`0.8`, `1.0`, `1.2`).
    pub alert: Option<Decimal>,
    /// A pool the team uses or asks for has no price; its GPUs are left out.
    pub unpriced: bool,
}

impl MonthSpend {
    /// `2026-11`.
    pub fn label(&self) -> String {
        format!("{:04}-{:02}", self.year, self.month)
    }
}

/// Hour index of the first hour of the month `k` months after the month of `at`.
pub fn month_start_hour(at: Timestamp, k: i32) -> i64 {
    let d = at.date();
    let total = d.year() as i32 * 12 + (d.month() as i32 - 1) + k;
    let (year, month) = (total.div_euclid(12), total.rem_euclid(12) + 1);
    let first = jiff::civil::date(year as i16, month as i8, 1);
    let ts = jiff::tz::TimeZone::UTC
        .to_timestamp(first.to_datetime(jiff::civil::Time::midnight()))
        .expect("a month within jiff's range");
    ts.as_second().div_euclid(3600)
}

fn overlap(a: (i64, i64), b: (i64, i64)) -> i64 {
    (a.1.min(b.1) - a.0.max(b.0)).max(0)
}

/// Projects a team's spend for [`BUDGET_MONTHS`] months from the month of `at`.
pub fn project(a: &Analysis<'_>, team: &str) -> Vec<MonthSpend> {
    let budget = a
        .repo
        .teams
        .get(team)
        .and_then(|t| t.spec.monthly_budget.as_ref())
        .map(|b| b.value.0);
    let levels: Vec<Decimal> = a
        .config
        .thresholds
        .budget_alerts
        .iter()
        .map(|r| r.0)
        .collect();
    let mut months: Vec<MonthSpend> = (0..BUDGET_MONTHS as i32)
        .map(|k| {
            let start = month_start_hour(a.at, k);
            let end = month_start_hour(a.at, k + 1);
            let d = jiff::Timestamp::from_second(start * 3600)
                .map(|t| jiff::tz::TimeZone::UTC.to_datetime(t).date())
                .unwrap_or_default();
            MonthSpend {
                year: d.year(),
                month: d.month(),
                start,
                end,
                spend: Decimal::ZERO,
                measured: Decimal::ZERO,
                budget,
                share: None,
                alert: None,
                unpriced: false,
            }
        })
        .collect();
    // The pools the team has usage in or asks for.
    let mut pools: Vec<(String, String)> = a
        .team_series
        .get(team)
        .map(|v| {
            v.iter()
                .map(|s| (s.cluster.clone(), s.pool.clone()))
                .collect()
        })
        .unwrap_or_default();
    let requests = a.team_requests(team);
    for r in requests {
        let key = (r.spec.cluster.value.clone(), r.spec.pool.value.clone());
        if !pools.contains(&key) {
            pools.push(key);
        }
    }
    for (cluster, pool) in pools {
        let Some(entry) = a.pool(&cluster, &pool) else {
            for m in &mut months {
                m.unpriced = true;
            }
            continue;
        };
        let sized: Vec<(Hours, f64)> = requests
            .iter()
            .filter(|r| r.spec.cluster.value == cluster && r.spec.pool.value == pool)
            .map(|r| {
                let gpus = capacity::size(&r.spec, Some((entry.pool, &entry.cluster.spec))).gpus;
                (Hours::of_request(&r.spec), gpus)
            })
            .collect();
        let series = a
            .team_series
            .get(team)
            .and_then(|v| v.iter().find(|s| s.cluster == cluster && s.pool == pool));
        let outlook = series.and_then(|s| a.team_outlook(s));
        // What the requests add to the forecast from the end of the
        // measurements: those starting later add their GPUs, those running
        // then take theirs away from their end, never more than the team
        // held when the measurements ended (as in the pool's outlook).
        let adjust = series.zip(outlook.as_ref()).map(|(s, o)| {
            let e = o.forecast_start;
            let allocated = a.series.allocated(s.id);
            let seen: Vec<f64> = ((e - 24)..e).filter_map(|h| allocated.get(h)).collect();
            let level = if seen.is_empty() {
                0.0
            } else {
                seen.iter().sum::<f64>() / seen.len() as f64
            };
            approved::Approved::new(entry.requests.iter().filter(|r| r.team == team), e, |_| {
                Some(level)
            })
        });
        for m in &mut months {
            // Each hour at the price in force then: a reservation that starts
            // or ends within the month changes the pool's blended price there,
            // as in chargeback.
            let segments = prices::pool_segments(a.repo, entry.cluster, entry.pool, m.start, m.end);
            for (k, &(from, price)) in segments.iter().enumerate() {
                let to = segments.get(k + 1).map_or(m.end, |next| next.0);
                let Some(price) = price else {
                    m.unpriced = true;
                    continue;
                };
                let (measured, total) = match (&outlook, &adjust) {
                    (Some(o), Some(adjust)) => forecast_gpu_hours(o, adjust, (from, to), |h| {
                        a.allocation_scale(&cluster, &pool, h)
                    }),
                    _ => (0.0, requests_gpu_hours(&sized, (from, to))),
                };
                m.spend += prices::decimal(total) * price;
                m.measured += prices::decimal(measured) * price;
            }
        }
    }
    for m in &mut months {
        m.spend = m.spend.round_dp(2);
        m.measured = m.measured.round_dp(2);
        if let Some(b) = budget.filter(|b| !b.is_zero()) {
            let share = m.spend / b;
            m.share = Some(prices::float(share));
            m.alert = levels.iter().copied().filter(|l| share >= *l).max();
        }
    }
    months
}

/// The team's GPU-hours in the pool over hours `[range.0, range.1)`,
/// measured and in all: the allocation (measured, scaled down as chargeback
/// does in hours the pool's teams hold more than it has; then forecast),
/// plus the requests' adjustment after the measurements end, never below
/// zero in any hour.
fn forecast_gpu_hours(
    o: &Outlook,
    adjust: &approved::Approved,
    range: (i64, i64),
    scale: impl Fn(i64) -> f64,
) -> (f64, f64) {
    let (mut measured, mut total) = (0.0, 0.0);
    for h in range.0..range.1 {
        let q = o.at(h);
        if let Some(q) = q.filter(|q| q.measured) {
            let x = q.p50 * scale(h);
            measured += x;
            total += x;
        } else if h >= o.forecast_start {
            total += (q.map_or(0.0, |q| q.p50) + adjust.at(h)).max(0.0);
        } else if let Some(q) = q {
            total += q.p50;
        }
    }
    (measured, total)
}

/// A team's GPU-hours from its requests alone (no usage history in the pool).
fn requests_gpu_hours(sized: &[(Hours, f64)], range: (i64, i64)) -> f64 {
    sized
        .iter()
        .map(|(w, gpus)| gpus * overlap((w.start, w.end), range) as f64)
        .sum()
}
