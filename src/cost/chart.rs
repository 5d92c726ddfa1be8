//! The data of a demand chart: one pool over a range of calendar days (UTC),
//! each day's mean demand (measured, then the P50 forecast with the approved
//! requests and its P10-P90 band), the day's **peak hourly P90** (so a few
//! hours over capacity show even when the day's mean is under it), the
//! forecast from the history alone (without the requests, so the chart shows
//! what the approved timeline adds), against the pool's GPUs, the GPUs its
//! reservations hold and the GPUs its requests commit. Days are calendar
//! days, labelled by their date, and carry their offset from the day of
//! `--at`. Built from the [`Analysis`]; the output layer draws it.

use super::Analysis;
use crate::model::Timestamp;
use serde::Serialize;

/// One day of a chart.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Day {
    /// `2026-11-22`.
    pub date: String,
    /// Days from the day of `--at` (0 is that day).
    pub offset: i64,
    /// Mean demand that day; P10 and P90 equal P50 on measured days.
    pub p10: f64,
    pub p50: f64,
    pub p90: f64,
    /// The highest hourly P90 (measured: the highest hour) of the day.
    pub peak: f64,
    /// Mean P50 of the forecast from the history alone (equals `p50` on
    /// measured days and where no request changes the demand).
    pub trend: f64,
    pub measured: bool,
    /// GPUs committed by requests (the most at any hour of the day).
    pub committed: f64,
    /// GPUs held by reservations on the pool (the most at any hour of the day).
    pub reserved: f64,
}

/// Demand of one pool against its capacity, by day.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PoolChart {
    pub cluster: String,
    pub pool: String,
    /// GPUs the pool has.
    pub capacity: f64,
    pub method: String,
    /// The date of `--at`.
    pub at: String,
    pub days: Vec<Day>,
}

/// The calendar day (UTC) of an hour, as the hour index of its midnight.
fn day_of(hour: i64) -> i64 {
    hour.div_euclid(24) * 24
}

/// Builds the chart of a pool over the calendar days that `[from, to)`
/// (hours) touches; `None` without an outlook.
pub fn pool_chart(
    a: &Analysis<'_>,
    cluster: &str,
    pool: &str,
    from: i64,
    to: i64,
) -> Option<PoolChart> {
    let entry = a.pool(cluster, pool)?;
    let outlook = a.outlook(cluster, pool)?;
    let capacity = crate::capacity::pool_gpus(entry.pool) as f64;
    let ledger_line = committed_line(a, cluster, pool);
    let reservations: Vec<(i64, i64, f64)> = a
        .repo
        .reservations
        .values()
        .filter(|r| r.spec.covers.cluster.value == cluster && r.spec.covers.pool.value == pool)
        .map(|r| {
            let (s, e) = super::reservation::term_hours(&r.spec.term);
            (
                s,
                e,
                crate::cost::prices::reservation_gpus(a.repo, &r.spec) as f64,
            )
        })
        .collect();
    let at_day = day_of(a.at.hour_index());
    let mut days = Vec::new();
    let mut start = day_of(from);
    while start < to {
        let end = start + 24;
        let (mut n, mut measured) = (0usize, true);
        let (mut p10, mut p50, mut p90, mut peak, mut trend) = (0.0, 0.0, 0.0, 0.0f64, 0.0);
        for h in start..end {
            let Some(q) = outlook.at(h) else { continue };
            n += 1;
            measured &= q.measured;
            p10 += q.p10;
            p50 += q.p50;
            p90 += q.p90;
            peak = peak.max(q.p90);
            trend += outlook.trend_at(h).map_or(q.p50, |t| t.p50);
        }
        if n > 0 {
            let nf = n as f64;
            let committed = ledger_line
                .as_ref()
                .map(|t| t.peak(crate::capacity::Hours { start, end }))
                .unwrap_or(0.0);
            let reserved = (start..end)
                .map(|h| {
                    reservations
                        .iter()
                        .filter(|(s, e, _)| *s <= h && h < *e)
                        .map(|r| r.2)
                        .sum::<f64>()
                })
                .fold(0.0, f64::max);
            days.push(Day {
                date: date(start),
                offset: (start - at_day) / 24,
                p10: round1(p10 / nf),
                p50: round1(p50 / nf),
                p90: round1(p90 / nf),
                peak: round1(peak),
                trend: round1(trend / nf),
                measured,
                committed: round1(committed),
                reserved,
            });
        }
        start = end;
    }
    Some(PoolChart {
        cluster: cluster.to_string(),
        pool: pool.to_string(),
        capacity,
        method: outlook.forecast.method.clone(),
        at: date(at_day),
        days,
    })
}

fn date(hour: i64) -> String {
    Timestamp::from_second(hour * 3600)
        .map(|t| t.date().to_string())
        .unwrap_or_default()
}

/// GPUs the pool's requests commit, over time.
fn committed_line(
    a: &Analysis<'_>,
    cluster: &str,
    pool: &str,
) -> Option<crate::capacity::Timeline> {
    let entry = a.pool(cluster, pool)?;
    Some(crate::capacity::Timeline::build(
        entry.requests.iter().map(|r| (r.hours, r.gpus)),
    ))
}

/// The most pools charted for one check.
pub const MAX_CHECK_CHARTS: usize = 8;

/// Charts for the pools that the judged requests and reservations touch:
/// from two weeks before `at` to the end of the last window or term among
/// them (at least 30 days after `at`, at most 180).
pub fn for_subjects<'n>(
    a: &Analysis<'_>,
    subjects: impl IntoIterator<Item = (crate::model::Subject, &'n str)>,
) -> Vec<PoolChart> {
    use crate::model::Subject;
    let at = a.at.hour_index();
    let mut ends: std::collections::BTreeMap<(String, String), i64> =
        std::collections::BTreeMap::new();
    for (subject, name) in subjects {
        let (cluster, pool, end) = match subject {
            Subject::CapacityRequest => match a.repo.requests.get(name) {
                Some(r) => (
                    r.spec.cluster.value.clone(),
                    r.spec.pool.value.clone(),
                    r.spec
                        .window
                        .as_ref()
                        .map(|w| super::reservation::term_hours(w).1),
                ),
                None => continue,
            },
            Subject::Reservation => match a.repo.reservations.get(name) {
                Some(r) => (
                    r.spec.covers.cluster.value.clone(),
                    r.spec.covers.pool.value.clone(),
                    Some(super::reservation::term_hours(&r.spec.term).1),
                ),
                None => continue,
            },
            _ => continue,
        };
        let end = end
            .unwrap_or(at + 90 * 24)
            .clamp(at + 30 * 24, at + 180 * 24);
        let slot = ends.entry((cluster, pool)).or_insert(end);
        *slot = (*slot).max(end);
    }
    ends.into_iter()
        .filter_map(|((c, p), end)| pool_chart(a, &c, &p, at - 14 * 24, end))
        .take(MAX_CHECK_CHARTS)
        .collect()
}

fn round1(x: f64) -> f64 {
    (x * 10.0).round() / 10.0
}

/// Averages consecutive days into groups when there are more than `max`
/// days (peaks, commitments and reservations keep their highest value).
pub fn thin(chart: &PoolChart, max: usize) -> PoolChart {
    if chart.days.len() <= max {
        return chart.clone();
    }
    let per = chart.days.len().div_ceil(max);
    let days = chart
        .days
        .chunks(per)
        .map(|c| {
            let n = c.len() as f64;
            let mean = |f: fn(&Day) -> f64| round1(c.iter().map(f).sum::<f64>() / n);
            let max = |f: fn(&Day) -> f64| c.iter().map(f).fold(0.0, f64::max);
            Day {
                date: c[0].date.clone(),
                offset: c[0].offset,
                p10: mean(|d| d.p10),
                p50: mean(|d| d.p50),
                p90: mean(|d| d.p90),
                peak: max(|d| d.peak),
                trend: mean(|d| d.trend),
                measured: c.iter().all(|d| d.measured),
                committed: max(|d| d.committed),
                reserved: max(|d| d.reserved),
            }
        })
        .collect();
    PoolChart {
        days,
        ..chart.clone()
    }
}
