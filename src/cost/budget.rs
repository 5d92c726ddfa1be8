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
//! below zero in any hour; a team whose rows stop a week or more before the
//! pool's last measured hour has left it, and its requests alone project it
//! from then on; where the pool's teams are projected to hold more
//! than it has, every team's projected hours there are scaled down by the
//! same factor (as measured ones are). Each hour is priced at the pool's blended price
//! in force then (reservations that start or end in the month change it), as
//! in chargeback; a projected hour after `--at` never below the price at
//! `--at`, as in a request's cost. In a pool where the team has no usage history, its
//! requests alone make the projection. Alerts fire at the Config's budget
//! levels (default 80%, 100%, 120%): a month's alert is the highest level
//! its spend reaches.

use super::{Analysis, BUDGET_MONTHS, approved, prices};
use crate::capacity::{self, Hours};
use crate::model::*;
use rust_decimal::Decimal;

/// A team's projected spend in one month.
#[derive(Clone, Debug, PartialEq)]
pub struct MonthSpend {
    pub year: i16,
    pub month: i8,
    /// Hours `[start, end)` of the month.
    start: i64,
    pub end: i64,
    pub spend: Decimal,
    /// The part of `spend` from measured hours.
    pub measured: Decimal,
    pub budget: Option<Decimal>,
    /// `spend / budget` (none for a budget of 0 that is spent: no number).
    pub share: Option<f64>,
    /// The highest alert level reached (`0.8`, `1.0`, `1.2`; the highest
    /// for a budget of 0 that is spent).
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
    // Times are judged within 2000-2099; clamped so no caller can leave jiff's calendar.
    let first = jiff::civil::date(year.clamp(1, 9998) as i16, month as i8, 1);
    let ts = jiff::tz::TimeZone::UTC
        .to_timestamp(first.to_datetime(jiff::civil::Time::midnight()))
        .expect("a month within jiff's range");
    ts.as_second().div_euclid(3600)
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
    for (cluster, pool) in team_pools(a, team) {
        let Some(entry) = a.pool(&cluster, &pool) else {
            for m in &mut months {
                m.unpriced = true;
            }
            continue;
        };
        let ph = team_pool_hours(a, team, entry, &cluster, &pool);
        let scale = a.budget_scale(&cluster, &pool);
        // Projected hours after `--at` cost no less than the pool does at
        // `--at`, as a request's do: a discounted term that ends makes hours
        // dearer; one that ends at the on-demand rate (a capacity
        // reservation) leaves its nodes at the catalog's committed fallback,
        // which is no cheaper price anyone has bought.
        let floor = entry.price.blended;
        let at_hour = a.at.hour_index();
        for m in &mut months {
            // Each hour at the price in force then: a reservation that starts
            // or ends within the month changes the pool's blended price there,
            // as in chargeback.
            let segments = prices::pool_segments(a.repo, entry.cluster, entry.pool, m.start, m.end);
            for (k, &(from, price, _)) in segments.iter().enumerate() {
                let to = segments.get(k + 1).map_or(m.end, |next| next.0);
                let Some(price) = price else {
                    m.unpriced = true;
                    continue;
                };
                let (mut measured, mut total) = (0.0, 0.0);
                for h in from.max(ph.start)..to.min(ph.start + ph.values.len() as i64) {
                    let i = (h - ph.start) as usize;
                    let x = ph.values[i];
                    if ph.measured[i] {
                        measured += x;
                        total += x;
                    } else {
                        total += x * scale.get(i).copied().unwrap_or(1.0);
                    }
                }
                let projected_price = match floor {
                    Some(f) if from >= at_hour => price.max(f),
                    _ => price,
                };
                m.spend += prices::decimal(measured) * price
                    + prices::decimal(total - measured) * projected_price;
                m.measured += prices::decimal(measured) * price;
            }
        }
    }
    for m in &mut months {
        m.spend = m.spend.round_dp(2);
        m.measured = m.measured.round_dp(2);
        match budget {
            Some(b) if !b.is_zero() => {
                let share = m.spend / b;
                m.share = Some(prices::float(share));
                m.alert = levels.iter().copied().filter(|l| share >= *l).max();
            }
            // A budget of nothing: any spend is over every level (its share
            // has no number; none at all is within it).
            Some(_) if m.spend > Decimal::ZERO => {
                m.alert = levels.iter().copied().max();
            }
            Some(_) => m.share = Some(0.0),
            None => {}
        }
    }
    months
}

/// One team's GPU-hours in one pool, hour by hour over the budget months
/// (from the first hour of the month of `--at`).
#[derive(Clone, Debug)]
struct PoolHours {
    /// The hour of `values[0]`.
    start: i64,
    /// GPUs allocated: measured (scaled down, as chargeback does, in hours
    /// the pool's teams hold more than it has), else projected.
    values: Vec<f64>,
    /// Whether each hour was measured.
    measured: Vec<bool>,
}

/// The pools a team has usage in or asks for.
fn team_pools(a: &Analysis<'_>, team: &str) -> Vec<(String, String)> {
    let mut pools: Vec<(String, String)> = a
        .team_series
        .get(team)
        .map(|v| {
            v.iter()
                .map(|s| (s.cluster.clone(), s.pool.clone()))
                .collect()
        })
        .unwrap_or_default();
    for r in a.team_requests(team) {
        let key = (r.spec.cluster.value.clone(), r.spec.pool.value.clone());
        if !pools.contains(&key) {
            pools.push(key);
        }
    }
    pools
}

/// How long the pool is measured without a team's rows before the team
/// counts as having left it: a week (a weekend without rows is not leaving).
pub(super) const LEFT_AFTER_HOURS: i64 = 7 * 24;

/// A team's hours in one pool: the allocation (measured, then forecast),
/// plus the requests' adjustment after the measurements end, never below
/// zero in any hour; in a pool where the team has no usage history, its
/// requests alone. Worked out where it is needed, not kept (a year of hours
/// per team and pool adds up): the pool's scale and the team's budget each
/// work it out once.
fn team_pool_hours(
    a: &Analysis<'_>,
    team: &str,
    entry: &super::PoolEntry<'_>,
    cluster: &str,
    pool: &str,
) -> PoolHours {
    let (first, end) = (month_start_hour(a.at, 0), a.budget_end);
    let series = a
        .team_series
        .get(team)
        .and_then(|v| v.iter().find(|s| s.cluster == cluster && s.pool == pool));
    let outlook = series.and_then(|s| a.team_outlook(s));
    let n = (end - first).max(0) as usize;
    let mut values = Vec::with_capacity(n);
    let mut measured = Vec::with_capacity(n);
    // The team's requests in the pool, sized: the projection of a team
    // without usage history there, or one that has left the pool.
    let sized: Vec<(Hours, f64)> = a
        .team_requests(team)
        .iter()
        .filter(|r| r.spec.cluster.value == cluster && r.spec.pool.value == pool)
        .map(|r| {
            let gpus = capacity::size(&r.spec, Some((entry.pool, &entry.cluster.spec))).gpus;
            (Hours::of_request(&r.spec), gpus)
        })
        .collect();
    let requested = |h: i64| -> f64 {
        sized
            .iter()
            .filter(|(w, _)| w.start <= h && h < w.end)
            .map(|(_, g)| g)
            .sum()
    };
    match series.zip(outlook.as_ref()) {
        Some((s, o)) => {
            // What the requests add to the forecast from the end of the
            // measurements: those starting later add their GPUs, those
            // running then take theirs away from their end, never more
            // than the team held at that hour of the week before the
            // measurements ended (as in the pool's outlook).
            let e = o.forecast_start;
            // A team whose rows stop a week or more before the pool's
            // measurements do has left the pool (a team counts only between
            // its first and its last sample, as in the pool's demand; a
            // weekend without rows is not leaving): the hours measured
            // without it are zeros, and from the end of the pool's
            // measurements its requests alone project it, as for a team
            // without usage history there.
            let pool_end = a
                .outlook(cluster, pool)
                .map_or(e, |p| p.forecast_start.max(e));
            let gone = pool_end - e >= LEFT_AFTER_HOURS;
            let allocated = a.series.allocated(s.id);
            let adjust = approved::Approved::new(
                entry
                    .requests
                    .iter()
                    .chain(&entry.gone)
                    .filter(|r| r.team == team),
                e,
                |_| Some(approved::Held::of([allocated], e)),
            );
            for h in first..end {
                let q = o.at(h);
                let (x, m) = if let Some(q) = q.filter(|q| q.measured) {
                    (q.p50 * a.allocation_scale(cluster, pool, h), true)
                } else if gone && h < pool_end {
                    (0.0, true)
                } else if gone {
                    (requested(h), false)
                } else if h >= e {
                    ((q.map_or(0.0, |q| q.p50) + adjust.at(h)).max(0.0), false)
                } else {
                    (q.map_or(0.0, |q| q.p50), false)
                };
                values.push(x);
                measured.push(m);
            }
        }
        None => {
            for h in first..end {
                values.push(requested(h));
                measured.push(false);
            }
        }
    }
    PoolHours {
        start: first,
        values,
        measured,
    }
}

/// Per hour of the budget months, the share of each team's projected hours
/// in the pool its budget is charged: where the teams' projections add up
/// to more than the pool has (after the hours measured then), each is scaled
/// down by the same factor, so that the budgets never add up to more GPUs
/// than the pool holds; 1 elsewhere. Empty when every hour's factor is 1.
pub fn pool_scale(a: &Analysis<'_>, cluster: &str, pool: &str) -> Vec<f64> {
    let (first, end) = (month_start_hour(a.at, 0), a.budget_end);
    let n = (end - first).max(0) as usize;
    let Some(entry) = a.pool(cluster, pool) else {
        return Vec::new();
    };
    let gpus = capacity::pool_gpus(entry.pool) as f64;
    // The pool's teams: those with usage in it and those asking for it.
    let mut teams: std::collections::BTreeSet<&str> = a
        .team_series
        .iter()
        .filter(|(_, v)| v.iter().any(|s| s.cluster == cluster && s.pool == pool))
        .map(|(t, _)| t.as_str())
        .collect();
    teams.extend(entry.requests.iter().map(|r| r.team.as_str()));
    let (mut held, mut projected) = (vec![0.0f64; n], vec![0.0f64; n]);
    for team in teams {
        let ph = team_pool_hours(a, team, entry, cluster, pool);
        for (i, (&x, &m)) in ph.values.iter().zip(&ph.measured).enumerate() {
            if m {
                held[i] += x;
            } else {
                projected[i] += x;
            }
        }
    }
    let scale: Vec<f64> = held
        .iter()
        .zip(&projected)
        .map(|(&m, &f)| {
            if f > gpus - m && f > 0.0 {
                (gpus - m).max(0.0) / f
            } else {
                1.0
            }
        })
        .collect();
    // A pool never over its GPUs keeps no hours (a year of them for each
    // of 1,500 pools is 100 MB): every hour's factor is 1.
    if scale.iter().all(|&x| x == 1.0) {
        Vec::new()
    } else {
        scale
    }
}

impl Analysis<'_> {
    /// Per hour of the budget months, the factor each team's projected
    /// hours in the pool are charged at (see [`pool_scale`]).
    pub fn budget_scale(&self, cluster: &str, pool: &str) -> &[f64] {
        match self.pool(cluster, pool) {
            Some(p) => p
                .budget_scale
                .get_or_init(|| pool_scale(self, cluster, pool)),
            None => &[],
        }
    }
}

impl super::Analysis<'_> {
    /// What a team's measured allocation is scaled by in hour `h`, as
    /// chargeback scales it: the pool's GPUs over the allocation of its
    /// teams whose allocation is known then (or filled, between two of a
    /// team's samples), when that is more (an hour over capacity), else 1.
    pub fn allocation_scale(&self, cluster: &str, pool: &str, h: i64) -> f64 {
        let Some(p) = self.pool(cluster, pool) else {
            return 1.0;
        };
        let gpus = crate::capacity::pool_gpus(p.pool) as f64;
        let (start, values) = p.measured_allocation.get_or_init(|| {
            // What was measured before `--at` only, as the teams' outlooks
            // read: a sample after it does not fill (or scale) an hour
            // before it.
            let cut = self.at.hour_index();
            let spans: Vec<usize> = p
                .series
                .iter()
                .copied()
                .filter(|&id| {
                    let x = self.series.allocated(id);
                    x.hours() > 0 && x.start < cut
                })
                .collect();
            let Some(start) = spans
                .iter()
                .map(|&id| self.series.allocated(id).start)
                .min()
            else {
                return (0, Vec::new());
            };
            let end = spans
                .iter()
                .map(|&id| self.series.allocated(id).end().min(cut))
                .max()
                .unwrap_or(start);
            let mut values = vec![0.0; (end - start) as usize];
            for &id in &spans {
                let x = self.series.allocated(id);
                // An hour missing between two samples counts at the level the
                // budgets fill it with (linearly between them), as a
                // reported one does: a team's gap does not leave the others
                // unscaled in an hour the pool is over capacity.
                let mut last: Option<(i64, f64)> = None;
                for h in x.start..x.end().min(cut) {
                    let Some(v) = x.get(h) else { continue };
                    let v = v.max(0.0);
                    if let Some((h0, v0)) = last.filter(|(h0, _)| h - h0 > 1) {
                        for g in h0 + 1..h {
                            let filled = v0 + (v - v0) * (g - h0) as f64 / (h - h0) as f64;
                            values[(g - start) as usize] += filled;
                        }
                    }
                    values[(h - start) as usize] += v;
                    last = Some((h, v));
                }
            }
            (start, values)
        });
        match usize::try_from(h - start).ok().and_then(|i| values.get(i)) {
            Some(&total) if total > gpus && total > 0.0 => gpus / total,
            _ => 1.0,
        }
    }
}

/// What a team holds in a pool when the measurements end: nothing once it
/// has left it (its rows stop a week or more before the pool's, as budgets
/// read it), else the most it held on a day of its last measured week (the
/// highest daily mean: a quiet weekend or holiday is not a release).
pub(super) fn held_at_end(allocated: &crate::model::hourly::Hourly, pool_end: Option<i64>) -> f64 {
    let Some(last) = allocated.last_observed() else {
        return 0.0;
    };
    if pool_end.is_some_and(|e| e - (last + 1) >= LEFT_AFTER_HOURS) {
        return 0.0;
    }
    (0..LEFT_AFTER_HOURS / 24)
        .filter_map(|d| {
            let end = last - 24 * d;
            let day: Vec<f64> = (end - 23..=end).filter_map(|h| allocated.get(h)).collect();
            (!day.is_empty()).then(|| day.iter().sum::<f64>() / day.len() as f64)
        })
        .fold(0.0, f64::max)
}
