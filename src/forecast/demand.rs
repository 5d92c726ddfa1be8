//! Demand series from usage history, and a pool's demand outlook: what was
//! measured, then what is forecast.
//!
//! Usage rows are hourly samples per (cluster, pool, team). A pool's demand
//! is the GPUs allocated to all its teams: an hour where a team that was
//! reporting has a gap is a gap for the pool (summing the others would read
//! as a drop in demand). A team's series counts only between its first and
//! its last sample; outside them the team was not there. [`Outlook`] joins
//! the measured hours (gaps filled, for arithmetic over past hours) with a
//! quantile forecast from the hour after the last sample, plus what the
//! approved requests add or remove from then on (the caller works that
//! timeline out: `cost::approved`). A pool with requests but no history has an
//! outlook made of its request timeline alone, and says so ([`Basis`]).

use super::Forecast;
use crate::model::Usage;

pub use crate::model::usage::Hourly;

/// The allocated and used series of every usage series, by series id, as
/// known before an hour: a view of the usage grids, copied only where a
/// series reaches past that hour (a report or a check at a past `--at`
/// reads what was measured then, not what came after).
#[derive(Clone, Debug)]
pub struct SeriesSet<'u> {
    usage: &'u Usage,
    /// By series id, the allocated and used series cut at the hour, for
    /// the series that reach it.
    cut: std::collections::HashMap<usize, (Hourly, Hourly)>,
}

impl<'u> SeriesSet<'u> {
    /// The series of `usage` (each on its hourly grid; a later row of the
    /// same hour replaced an earlier one when the usage was read) before
    /// hour `before`.
    pub fn build(usage: &'u Usage, before: i64) -> SeriesSet<'u> {
        let cut = usage
            .grids
            .iter()
            .enumerate()
            .filter(|(_, g)| g.allocated.end() > before)
            .map(|(id, g)| {
                // Up to its last row before the hour, gaps included (an
                // empty row is a gap wherever it is; a series whose next
                // row came after the hour had, then, ended at its last).
                let within = usize::try_from(before - g.allocated.start).unwrap_or(0);
                let kept = (0..within.min(g.allocated.hours()))
                    .rev()
                    .find(|&i| g.has_row(i))
                    .map_or(0, |i| i + 1);
                (id, (g.allocated.first(kept), g.used.first(kept)))
            })
            .collect();
        SeriesSet { usage, cut }
    }

    /// GPUs allocated, hour by hour, of series `id`.
    pub fn allocated(&self, id: usize) -> &Hourly {
        match self.cut.get(&id) {
            Some((a, _)) => a,
            None => &self.usage.grids[id].allocated,
        }
    }

    /// GPUs busy, hour by hour, of series `id`.
    pub fn used(&self, id: usize) -> &Hourly {
        match self.cut.get(&id) {
            Some((_, u)) => u,
            None => &self.usage.grids[id].used,
        }
    }

    /// The sum of the allocated series `ids` (gap where any series that spans
    /// the hour has a gap). Empty when none of them has a sample.
    pub fn sum(&self, ids: &[usize]) -> Hourly {
        sum(ids.iter().map(|&i| self.allocated(i)))
    }
}

/// The sum of series on the union of their spans; an hour is a gap when a
/// series whose span covers it has a gap there.
pub fn sum<'a>(series: impl Iterator<Item = &'a Hourly>) -> Hourly {
    let spans: Vec<&Hourly> = series.filter(|s| s.hours() > 0).collect();
    let Some(start) = spans.iter().map(|s| s.start).min() else {
        return Hourly::default();
    };
    let end = spans.iter().map(|s| s.end()).max().unwrap_or(start);
    let mut values: Vec<Option<f64>> = vec![Some(0.0); (end - start) as usize];
    for s in spans {
        let offset = (s.start - start) as usize;
        for (i, v) in s.values().enumerate() {
            let slot = &mut values[offset + i];
            *slot = match (*slot, v) {
                (Some(acc), Some(x)) => Some(acc + x),
                _ => None,
            };
        }
    }
    Hourly::new(start, values)
}

/// What an outlook's forecast hours rest on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Basis {
    /// The measured history's forecast, plus the approved requests' changes.
    History,
    /// No history at all: the approved requests' timeline alone.
    Requests,
}

impl Basis {
    pub fn as_str(self) -> &'static str {
        match self {
            Basis::History => "history",
            Basis::Requests => "requests",
        }
    }
}

/// Measured demand, then forecast demand.
#[derive(Clone, Debug)]
pub struct Outlook {
    /// The measured series.
    pub history: Hourly,
    /// The measured series with gaps filled (from its first value), for arithmetic over past hours.
    filled: Vec<f64>,
    filled_start: i64,
    /// Hour index of the first forecast hour (the hour after the last sample).
    pub forecast_start: i64,
    /// The forecast of the measured series alone (the trend).
    pub forecast: Forecast,
    /// GPUs the approved requests add (positive) or remove (negative) at
    /// each forecast hour, relative to the measured level.
    pub approved: Steps,
    pub basis: Basis,
}

/// An hourly series kept as runs of equal values: the approved requests'
/// timeline changes only where a window starts or ends, so a pool's years
/// of hours take a few runs instead of eight bytes an hour.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Steps {
    len: usize,
    /// Index of the first hour of each run, ascending, the first 0.
    starts: Vec<usize>,
    values: Vec<f64>,
}

impl Steps {
    /// The series `f(0), f(1), ... f(len - 1)`.
    pub fn from_fn(len: usize, f: impl Fn(usize) -> f64) -> Steps {
        let mut out = Steps {
            len,
            ..Steps::default()
        };
        for j in 0..len {
            let v = f(j);
            // Bit equality: a NaN run stays one run, -0.0 and 0.0 stay apart.
            if out
                .values
                .last()
                .is_none_or(|last| last.to_bits() != v.to_bits())
            {
                out.starts.push(j);
                out.values.push(v);
            }
        }
        out
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The value at hour `j`; `None` past the end.
    pub fn get(&self, j: usize) -> Option<f64> {
        if j >= self.len {
            return None;
        }
        let run = self.starts.partition_point(|&s| s <= j);
        self.values.get(run.checked_sub(1)?).copied()
    }
}

/// Demand at one hour.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Quantiles {
    pub p10: f64,
    pub p50: f64,
    pub p90: f64,
    /// Whether the hour was measured (then the three are the measurement).
    pub measured: bool,
}

impl Quantiles {
    /// The quantiles moved by `delta` GPUs, never below zero (they keep their order).
    fn shifted(self, delta: f64) -> Quantiles {
        Quantiles {
            p10: (self.p10 + delta).max(0.0),
            p50: (self.p50 + delta).max(0.0),
            p90: (self.p90 + delta).max(0.0),
            measured: self.measured,
        }
    }
}

impl Outlook {
    /// Forecasts `history` up to (excluding) hour `until`, at least a day.
    /// `None` when the history has no value.
    pub fn new(history: Hourly, until: i64) -> Option<Outlook> {
        Outlook::with_approved(history, until, |_| 0.0)
    }

    /// Like [`Outlook::new`], with `approved(hour)` GPUs added to each
    /// forecast hour: what the approved requests change after the
    /// measurements end.
    pub fn with_approved(
        history: Hourly,
        until: i64,
        approved: impl Fn(i64) -> f64,
    ) -> Option<Outlook> {
        Outlook::forecast_from(history, until, approved, |_| i64::MIN)
    }

    /// Like [`Outlook::with_approved`], the forecast fitted on the hours
    /// from `read_from(last measured hour)` on only (the Config's
    /// `usage.hourlyDays`); the outlook keeps every measured hour.
    pub fn forecast_from(
        history: Hourly,
        until: i64,
        approved: impl Fn(i64) -> f64,
        read_from: impl Fn(i64) -> i64,
    ) -> Option<Outlook> {
        let last = history.last_observed()?;
        let forecast_start = last + 1;
        let horizon = (until - forecast_start).clamp(24, 40 * 365 * 24) as usize;
        let used = history.head((forecast_start - history.start) as usize);
        let skip = usize::try_from(read_from(last).saturating_sub(history.start)).unwrap_or(0);
        let forecast = super::hourly(&used[skip.min(used.len())..], horizon);
        let (filled, offset) = super::fill(&used);
        let approved = Steps::from_fn(horizon, |j| approved(forecast_start + j as i64));
        Some(Outlook {
            filled_start: history.start + offset as i64,
            filled,
            history,
            forecast_start,
            forecast,
            approved,
            basis: Basis::History,
        })
    }

    /// A pool without history: demand over `[from, until)` is what the
    /// approved requests hold, `level(hour)`, with no spread.
    pub fn requests_only(from: i64, until: i64, level: impl Fn(i64) -> f64) -> Outlook {
        let horizon = (until - from).clamp(24, 40 * 365 * 24) as usize;
        // The trend is zero at every hour: it is not stored (see `trend_at`).
        Outlook {
            history: Hourly::default(),
            filled: Vec::new(),
            filled_start: from,
            forecast_start: from,
            forecast: Forecast {
                p10: Vec::new(),
                p50: Vec::new(),
                p90: Vec::new(),
                method: "approved requests only (no usage history)".into(),
                fallback: Some(
                    "the pool has no usage history: its demand is the approved requests' timeline"
                        .into(),
                ),
                validation_mae: None,
            },
            approved: Steps::from_fn(horizon, |j| level(from + j as i64)),
            basis: Basis::Requests,
        }
    }

    /// The first measured hour (gaps within the history filled), if any.
    pub fn first_measured(&self) -> Option<i64> {
        (self.basis == Basis::History && !self.filled.is_empty()).then_some(self.filled_start)
    }

    /// Hours of measured history, from the first value to the last (all
    /// of it, whatever part the forecast read).
    pub fn history_hours(&self) -> i64 {
        match self.history.first_observed() {
            Some(first) => self.forecast_start - first,
            None => 0,
        }
    }

    /// The first hour further from the last measurement than `multiple`
    /// times the history's length (the forecast extrapolates beyond what the
    /// history can support); the first forecast hour without history.
    pub fn supported_until(&self, multiple: f64) -> i64 {
        self.forecast_start + (multiple.max(0.0) * self.history_hours() as f64).floor() as i64
    }

    /// Demand at `hour`: the measurement (gaps filled) before the forecast
    /// starts, the forecast plus the approved requests' change after.
    /// `None` before the first measurement and beyond the forecast.
    pub fn at(&self, hour: i64) -> Option<Quantiles> {
        let q = self.trend_at(hour)?;
        if q.measured {
            return Some(q);
        }
        let j = (hour - self.forecast_start) as usize;
        Some(q.shifted(self.approved.get(j)?))
    }

    /// Demand at `hour` from the measured history alone, without the approved requests.
    pub fn trend_at(&self, hour: i64) -> Option<Quantiles> {
        if hour < self.forecast_start {
            let i = usize::try_from(hour - self.filled_start).ok()?;
            let v = *self.filled.get(i)?;
            return Some(Quantiles {
                p10: v,
                p50: v,
                p90: v,
                measured: true,
            });
        }
        let j = (hour - self.forecast_start) as usize;
        if self.basis == Basis::Requests {
            // No history: no trend, zero over the approved requests' span.
            return (j < self.approved.len()).then_some(Quantiles {
                p10: 0.0,
                p50: 0.0,
                p90: 0.0,
                measured: false,
            });
        }
        Some(Quantiles {
            p10: *self.forecast.p10.get(j)?,
            p50: self.forecast.p50[j],
            p90: self.forecast.p90[j],
            measured: false,
        })
    }

    /// The hour after the last forecast hour.
    pub fn end(&self) -> i64 {
        let hours = match self.basis {
            Basis::Requests => self.approved.len(),
            Basis::History => self.forecast.p50.len(),
        };
        self.forecast_start + hours as i64
    }

    /// A summary over `[from, to)`.
    pub fn over(&self, from: i64, to: i64) -> Summary {
        let mut s = Summary::default();
        let mut n = 0usize;
        // Hours before the first measurement and past the forecast are
        // unknown: counted, not walked (a window of a century is 876,000).
        let lo = from.max(self.filled_start).min(to.max(from));
        let hi = to.min(self.end()).max(lo);
        s.hours_unknown = usize::try_from((to - from).max(0) - (hi - lo)).unwrap_or(usize::MAX);
        for h in lo..hi {
            let Some(q) = self.at(h) else {
                s.hours_unknown += 1;
                continue;
            };
            n += 1;
            if q.measured {
                s.hours_measured += 1;
            } else {
                s.hours_forecast += 1;
            }
            s.mean_p50 += q.p50;
            s.mean_p10 += q.p10;
            s.mean_p90 += q.p90;
            s.peak_p90 = s.peak_p90.max(q.p90);
        }
        if n > 0 {
            s.mean_p10 /= n as f64;
            s.mean_p50 /= n as f64;
            s.mean_p90 /= n as f64;
        }
        s
    }

    /// Daily means of P10, P50 and P90 over `[from, to)`, one point per
    /// started day (for charts); days without data are skipped.
    pub fn daily(&self, from: i64, to: i64) -> Vec<(i64, Quantiles)> {
        let mut out = Vec::new();
        let mut day = from;
        while day < to {
            let next = (day + 24).min(to);
            let s = self.over(day, next);
            if s.hours_measured + s.hours_forecast > 0 {
                out.push((
                    day,
                    Quantiles {
                        p10: s.mean_p10,
                        p50: s.mean_p50,
                        p90: s.mean_p90,
                        measured: s.hours_forecast == 0,
                    },
                ));
            }
            day = next;
        }
        out
    }
}

/// Demand over a range of hours.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Summary {
    pub mean_p10: f64,
    pub mean_p50: f64,
    pub mean_p90: f64,
    pub peak_p90: f64,
    pub hours_measured: usize,
    pub hours_forecast: usize,
    /// Hours before the first measurement.
    pub hours_unknown: usize,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diag::Span;
    use crate::model::{SeriesKey, Timestamp, UsageSample};

    /// (pool, team, hour, allocated, used)
    type Row<'a> = (&'a str, &'a str, i64, Option<f64>, Option<f64>);

    fn usage(rows: &[Row]) -> Usage {
        let mut u = Usage::default();
        for (pool, team, hour, a, used) in rows {
            let key = SeriesKey {
                cluster: "c".into(),
                pool: pool.to_string(),
                team: team.to_string(),
            };
            let id = u.series_for(key, Span::default());
            u.add(&[UsageSample::new(
                id,
                Timestamp::from_second(hour * 3600).unwrap(),
                *a,
                *used,
            )]);
        }
        u
    }

    #[test]
    fn pool_demand_sums_teams_and_keeps_gaps() {
        let u = usage(&[
            ("p", "a", 100, Some(4.0), Some(2.0)),
            ("p", "a", 101, None, None),
            ("p", "a", 102, Some(6.0), Some(3.0)),
            ("p", "b", 101, Some(1.0), Some(1.0)),
            ("p", "b", 102, Some(2.0), Some(1.0)),
            ("p", "b", 103, Some(3.0), Some(1.0)),
        ]);
        let set = SeriesSet::build(&u, i64::MAX);
        let d = set.sum(&[0, 1]);
        assert_eq!(d.start, 100);
        // Team b starts at 101 (not there before); team a's gap at 101 is the pool's gap;
        // team a has stopped reporting after 102.
        assert_eq!(
            d.values().collect::<Vec<_>>(),
            vec![Some(4.0), None, Some(8.0), Some(3.0)]
        );
        assert_eq!(d.last_observed(), Some(103));
    }

    #[test]
    fn series_are_read_as_known_before_the_hour() {
        // Team a reports at 100 and 101, sends an empty row at 102, nothing
        // at 103 and 104, and reports again at 105; team b reports at 100
        // to 106.
        let mut rows = vec![
            ("p", "a", 100, Some(4.0), Some(2.0)),
            ("p", "a", 101, Some(4.0), Some(2.0)),
            ("p", "a", 102, None, None),
            ("p", "a", 105, Some(9.0), Some(9.0)),
        ];
        rows.extend((100..107).map(|h| ("p", "b", h, Some(1.0), Some(1.0))));
        let u = usage(&rows);
        // Before 104, team a had stopped at its row of 102, a gap: the pool
        // has a gap at 102, and reads team b alone at 103.
        let set = SeriesSet::build(&u, 104);
        assert_eq!(set.allocated(0).end(), 103);
        assert_eq!(set.allocated(1).end(), 104);
        let d = set.sum(&[0, 1]);
        assert_eq!(
            d.values().collect::<Vec<_>>(),
            vec![Some(5.0), Some(5.0), None, Some(1.0)]
        );
        // Read whole, 103 is a gap too (team a comes back at 105).
        let whole = SeriesSet::build(&u, i64::MAX).sum(&[0, 1]);
        assert_eq!(whole.get(103), None);
        assert_eq!(whole.get(105), Some(10.0));
        // Rows after the hour never change what is read before it: the
        // same history without them reads the same.
        let earlier = usage(
            &rows
                .iter()
                .copied()
                .filter(|r| r.2 < 104)
                .collect::<Vec<_>>(),
        );
        let alone = SeriesSet::build(&earlier, 104).sum(&[0, 1]);
        assert_eq!(alone, d);
        // Before the first sample, nothing.
        assert_eq!(SeriesSet::build(&u, 100).allocated(0).hours(), 0);
    }

    #[test]
    fn outlook_joins_measurement_and_forecast() {
        let history = Hourly::new(
            1000,
            (0..24 * 20).map(|i| if i == 30 { None } else { Some(10.0) }),
        );
        let o = Outlook::new(history, 1000 + 24 * 20 + 48).unwrap();
        assert_eq!(o.forecast_start, 1000 + 480);
        // The gap is filled for arithmetic; measured hours have no spread.
        let q = o.at(1030).unwrap();
        assert!(q.measured && q.p50 == 10.0 && q.p10 == 10.0);
        let q = o.at(o.forecast_start + 5).unwrap();
        assert!(!q.measured && (q.p50 - 10.0).abs() < 1e-9);
        assert!(o.at(999).is_none());
        let s = o.over(990, o.forecast_start + 10);
        assert_eq!(s.hours_unknown, 10);
        assert_eq!(s.hours_measured, 480);
        assert_eq!(s.hours_forecast, 10);
        assert!((s.mean_p50 - 10.0).abs() < 1e-9);
    }

    #[test]
    fn hours_outside_the_outlook_are_counted_not_walked() {
        let o = Outlook::requests_only(1000, 1048, |h| if h < 1024 { 2.0 } else { 4.0 });
        // A century either side: only the 48 hours of the outlook are known.
        let s = o.over(1000 - 876_000, 1048 + 876_000);
        assert_eq!(s.hours_forecast, 48);
        assert_eq!(s.hours_unknown, 2 * 876_000);
        assert_eq!(s.mean_p50, 3.0);
        assert_eq!(s.peak_p90, 4.0);
        // Wholly outside, and empty or reversed ranges.
        assert_eq!(o.over(2000, 2010).hours_unknown, 10);
        assert_eq!(o.over(0, 10).hours_unknown, 10);
        assert_eq!(o.over(1010, 1010), Summary::default());
        assert_eq!(o.over(1020, 1010), Summary::default());
        assert_eq!(o.over(1040, 1050).hours_forecast, 8);
        assert_eq!(o.over(1040, 1050).hours_unknown, 2);
    }
}
