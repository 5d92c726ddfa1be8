//! Usage history: hourly samples of allocated and used GPUs, from `usage/*.csv`.
//!
//! One series per (cluster, pool, team). A missing value is a gap (the
//! collector was down), never a zero: forecasting and utilization treat the
//! two differently.
//!
//! Years of hourly history for thousands of teams are tens of millions of
//! hours, so a series is kept as two columns of numbers on a grid of hours
//! ([`Hourly`]: 4 bytes an hour for numbers with up to three decimals, 8
//! otherwise) and a bit per hour for whether a row was there, not as a list
//! of rows: what is read is put in place as it is read ([`Usage::add`]),
//! and a later row of the same hour replaces an earlier one (two different
//! rows of one hour are counted, for
//! `usage-conflicting-rows`).

use super::Timestamp;
pub use super::hourly::Hourly;
use crate::diag::Span;

/// Header every usage CSV starts with.
pub const USAGE_COLUMNS: [&str; 6] = [
    "timestamp",
    "cluster",
    "pool",
    "team",
    "allocated_gpus",
    "used_gpus",
];

/// Identity of one usage series.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SeriesKey {
    pub cluster: String,
    pub pool: String,
    pub team: String,
}

/// One hourly sample (a row of a usage file, read).
#[derive(Clone, Copy, Debug)]
pub struct UsageSample {
    /// Index into [`Usage::series`] (or into the series of the file read).
    pub series: u32,
    /// Whole hours since the Unix epoch (every [`Timestamp`] fits).
    hour: i32,
    /// GPUs allocated to the team's workloads (NaN: gap).
    allocated: f64,
    /// GPUs busy (NaN: gap).
    used: f64,
}

impl UsageSample {
    /// A sample of `series` in the hour of `at` (`None`: a gap).
    pub fn new(series: u32, at: Timestamp, allocated: Option<f64>, used: Option<f64>) -> Self {
        UsageSample::at_hour(series, at.hour_index(), allocated, used)
    }

    /// A sample of `series` in hour `hour` (whole hours since the epoch).
    pub fn at_hour(series: u32, hour: i64, allocated: Option<f64>, used: Option<f64>) -> Self {
        UsageSample {
            series,
            hour: hour.clamp(i64::from(i32::MIN), i64::from(i32::MAX)) as i32,
            allocated: allocated.unwrap_or(f64::NAN),
            used: used.unwrap_or(f64::NAN),
        }
    }

    /// The hour, as an index (whole hours since the Unix epoch).
    pub fn hour(&self) -> i64 {
        i64::from(self.hour)
    }

    /// The start of the hour.
    pub fn at(&self) -> Timestamp {
        Timestamp::from_second(self.hour() * 3600).unwrap_or(Timestamp(jiff::Timestamp::UNIX_EPOCH))
    }

    /// GPUs allocated (None: gap).
    pub fn allocated(&self) -> Option<f64> {
        Some(self.allocated).filter(|v| !v.is_nan())
    }

    /// GPUs busy (None: gap).
    pub fn used(&self) -> Option<f64> {
        Some(self.used).filter(|v| !v.is_nan())
    }

    /// The same sample, of another series.
    pub fn with_series(self, series: u32) -> Self {
        UsageSample { series, ..self }
    }
}

impl PartialEq for UsageSample {
    fn eq(&self, other: &Self) -> bool {
        self.series == other.series
            && self.hour == other.hour
            && self.allocated() == other.allocated()
            && self.used() == other.used()
    }
}

/// One series' hours: the two columns and which hours had a row.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Grid {
    pub allocated: Hourly,
    pub used: Hourly,
    /// A bit per hour of the grid: a row was there (gaps included).
    rows: Vec<u64>,
    /// Hours where a row replaced a different one (each hour once).
    pub conflicts: u32,
    /// Those hours (few: each is an error).
    conflicted: std::collections::HashSet<i64>,
    /// The first of them.
    pub first_conflict: Option<i64>,
    /// The row that first replaced a different one in that hour, where
    /// the rows' places were known.
    pub conflict_row: Option<Span>,
}

impl Grid {
    fn cover(&mut self, from: i64, to: i64) {
        let old_start = self.allocated.start;
        let was_empty = self.allocated.hours() == 0;
        self.allocated.cover(from, to);
        self.used.cover(from, to);
        let words = self.allocated.hours().div_ceil(64);
        if !was_empty && self.allocated.start < old_start {
            // Shift the row bits by the hours added in front.
            let shift = (old_start - self.allocated.start) as usize;
            let mut rows = vec![0u64; words];
            for (w, word) in self.rows.iter().enumerate() {
                let mut bits = *word;
                while bits != 0 {
                    let b = bits.trailing_zeros() as usize;
                    bits &= bits - 1;
                    let i = w * 64 + b + shift;
                    rows[i / 64] |= 1 << (i % 64);
                }
            }
            self.rows = rows;
        } else {
            self.rows
                .reserve_exact(words.saturating_sub(self.rows.len()));
            self.rows.resize(words, 0);
        }
    }

    /// Hours that had a row.
    pub fn rows(&self) -> usize {
        self.rows.iter().map(|w| w.count_ones() as usize).sum()
    }

    /// Whether the `i`-th hour of the grid had a row.
    pub fn has_row(&self, i: usize) -> bool {
        self.rows
            .get(i / 64)
            .is_some_and(|w| w & (1 << (i % 64)) != 0)
    }

    /// Hour of the last row (gaps included).
    pub fn last_row(&self) -> Option<i64> {
        let (w, word) = self.rows.iter().enumerate().rev().find(|(_, w)| **w != 0)?;
        Some(self.allocated.start + (w * 64 + 63 - word.leading_zeros() as usize) as i64)
    }

    /// Puts a row in place; a row already there with other numbers is a
    /// conflict, and `row` is where the replacing row is (when known).
    fn put(&mut self, hour: i64, allocated: Option<f64>, used: Option<f64>, row: Option<Span>) {
        let i = (hour - self.allocated.start) as usize;
        if self.has_row(i) {
            let same = |x: Option<f64>, y: Option<f64>| match (x, y) {
                (Some(x), Some(y)) => (x - y).abs() < 1e-9,
                (None, None) => true,
                _ => false,
            };
            if !(same(self.allocated.value(i), allocated) && same(self.used.value(i), used)) {
                if self.conflicted.insert(hour) {
                    self.conflicts += 1;
                }
                if self.first_conflict.is_none_or(|f| hour < f) {
                    self.first_conflict = Some(hour);
                    self.conflict_row = row;
                }
            }
        }
        self.allocated.set(i, allocated);
        self.used.set(i, used);
        self.rows[i / 64] |= 1 << (i % 64);
    }
}

/// The most hours all series together may span beyond a day per row (what
/// the 31-day floor of [`max_span_hours`] grants sparse series): 2,048 such
/// months. Without it, many series of two rows a month apart would cost
/// gigabytes for a file of megabytes.
pub const SPARSE_HOURS_BUDGET: i64 = 2_048 * 31 * 24;

/// Hours a series of `rows` rows spanning `hours` holds beyond a day per row.
fn sparse_hours(hours: i64, rows: usize) -> i64 {
    (hours - i64::try_from(rows).unwrap_or(i64::MAX).saturating_mul(24)).max(0)
}

/// The most hours a series with `rows` rows may span: a day per row, and at
/// least 31 days (hourly rows with gaps, even daily rows, fit; two rows a
/// century apart do not), while all series' hours beyond a day per row stay
/// within [`SPARSE_HOURS_BUDGET`].
pub fn max_span_hours(rows: usize) -> i64 {
    i64::try_from(rows)
        .unwrap_or(i64::MAX)
        .saturating_mul(24)
        .max(31 * 24)
}

/// A series whose rows [`Usage::add`] did not put in place.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Refused {
    pub series: u32,
    /// Hours the series would have spanned.
    pub hours: i64,
    /// Rows it would have had.
    pub rows: usize,
    /// The hour of the row farthest from the median hour of all its rows
    /// (those held before and those added): most likely the mistyped one.
    pub farthest_hour: i64,
    /// Its index among the samples added; `None` when it is a row held
    /// before (read from an earlier file).
    pub farthest: Option<usize>,
    /// Refused because the series' hours beyond a day per row would pass
    /// [`SPARSE_HOURS_BUDGET`] for all series together, not on its own.
    pub over_budget: bool,
}

/// The rows of one usage file, as read (series numbered within the file).
#[derive(Clone, Debug, Default)]
pub struct UsageRows {
    pub series: Vec<SeriesKey>,
    /// The first row that mentions each series.
    pub series_spans: Vec<Span>,
    /// Each series' row with the most GPUs (allocated or used), and that number.
    pub peaks: Vec<(f64, Span)>,
    pub samples: Vec<UsageSample>,
    /// Where each sample's row is (its timestamp to its last cell).
    pub rows: Vec<Span>,
}

/// All usage history of a repository.
#[derive(Clone, Debug, Default)]
pub struct Usage {
    pub series: Vec<SeriesKey>,
    /// The first row that mentions each series, for diagnostics.
    pub series_spans: Vec<Span>,
    /// Each series' row with the most GPUs (allocated or used), and that
    /// number: where a series over its pool's capacity is shown.
    pub peaks: Vec<(f64, Span)>,
    /// Each series' hours, by series id.
    pub grids: Vec<Grid>,
    /// Hours the series hold beyond a day per row, all together (at most
    /// [`SPARSE_HOURS_BUDGET`]).
    pub sparse_hours: i64,
}

impl Usage {
    pub fn series_id(&self, key: &SeriesKey) -> Option<u32> {
        self.series.iter().position(|k| k == key).map(|i| i as u32)
    }

    /// Adds a series (or finds it) and returns its id.
    pub fn series_for(&mut self, key: SeriesKey, span: Span) -> u32 {
        match self.series_id(&key) {
            Some(id) => id,
            None => self.push_series(key, span),
        }
    }

    /// Adds a new series and returns its id.
    pub fn push_series(&mut self, key: SeriesKey, span: Span) -> u32 {
        self.series.push(key);
        self.series_spans.push(span);
        self.peaks.push((f64::NEG_INFINITY, span));
        self.grids.push(Grid::default());
        (self.series.len() - 1) as u32
    }

    /// Puts rows in place, in order (a later row of an hour replaces an
    /// earlier one). Each sample's series must exist.
    ///
    /// A series is held hour by hour from its first row to its last, so
    /// rows far apart would cost memory out of all proportion to the file
    /// (two rows, in 2000 and 2099, are 876,000 hours): a series may span
    /// at most a day per row it has ([`max_span_hours`]). The rows of a
    /// series that would span more are not put in place, and the series is
    /// returned, for a diagnostic.
    pub fn add(&mut self, samples: &[UsageSample]) -> Vec<Refused> {
        self.add_rows(samples, &[])
    }

    /// [`Usage::add`], with where each sample's row is (`rows[i]` for
    /// `samples[i]`), to show a conflicting row.
    pub fn add_rows(&mut self, samples: &[UsageSample], rows: &[Span]) -> Vec<Refused> {
        // Each series' grid grows once to cover the rows' hours.
        // By series id: first hour, last hour, rows.
        let mut bounds: std::collections::HashMap<u32, (i64, i64, usize), IntHash> =
            std::collections::HashMap::default();
        for s in samples {
            let b = bounds.entry(s.series).or_insert((s.hour(), s.hour(), 0));
            *b = (b.0.min(s.hour()), b.1.max(s.hour()), b.2 + 1);
        }
        let mut refused = Vec::new();
        // In series order: which series the sparse budget refuses does not
        // depend on a hash.
        let mut bounds: Vec<(u32, (i64, i64, usize))> = bounds.into_iter().collect();
        bounds.sort_unstable_by_key(|b| b.0);
        for (series, (lo, hi, n)) in bounds {
            let g = &mut self.grids[series as usize];
            let (from, to) = if g.allocated.hours() == 0 {
                (lo, hi + 1)
            } else {
                (lo.min(g.allocated.start), (hi + 1).max(g.allocated.end()))
            };
            let rows = g.rows() + n;
            let sparse_before = sparse_hours(g.allocated.hours() as i64, g.rows());
            let sparse_after = sparse_hours(to - from, rows);
            let over_budget =
                self.sparse_hours - sparse_before + sparse_after > SPARSE_HOURS_BUDGET;
            if to - from > max_span_hours(rows) || over_budget {
                refused.push(Refused {
                    series,
                    hours: to - from,
                    rows,
                    farthest_hour: 0,
                    farthest: None,
                    over_budget: to - from <= max_span_hours(rows),
                });
                continue;
            }
            self.sparse_hours += sparse_after - sparse_before;
            g.cover(from, to);
        }
        refused.sort_by_key(|r| r.series);
        let out: std::collections::HashMap<u32, usize, IntHash> = refused
            .iter()
            .enumerate()
            .map(|(k, r)| (r.series, k))
            .collect();
        self.farthest(samples, &out, &mut refused);
        for (i, s) in samples.iter().enumerate() {
            if out.contains_key(&s.series) {
                continue;
            }
            let row = rows.get(i).copied();
            self.grids[s.series as usize].put(s.hour(), s.allocated(), s.used(), row);
        }
        refused
    }

    /// Sets each refused series' farthest row ([`Refused::farthest`]): the
    /// one farthest from the median hour of all its rows, those it held
    /// before and those added.
    fn farthest(
        &self,
        samples: &[UsageSample],
        out: &std::collections::HashMap<u32, usize, IntHash>,
        refused: &mut [Refused],
    ) {
        let mut hours: Vec<Vec<i64>> = vec![Vec::new(); refused.len()];
        for s in samples {
            if let Some(&k) = out.get(&s.series) {
                hours[k].push(s.hour());
            }
        }
        for (r, h) in refused.iter_mut().zip(&mut hours) {
            let g = &self.grids[r.series as usize];
            let before: Vec<i64> = (0..g.allocated.hours())
                .filter(|&i| g.has_row(i))
                .map(|i| g.allocated.start + i as i64)
                .collect();
            let mut all: Vec<i64> = before.iter().chain(h.iter()).copied().collect();
            all.sort_unstable();
            let middle = all.get(all.len() / 2).copied().unwrap_or(0);
            let far = |x: &i64| (x - middle).abs();
            // Rows held before first: a tie goes to the earlier file.
            if let Some(&hour) = before.iter().max_by_key(|x| far(x)) {
                r.farthest_hour = hour;
                r.farthest = None;
            }
            let mut best = if r.farthest.is_none() && !before.is_empty() {
                far(&r.farthest_hour)
            } else {
                -1
            };
            for (i, s) in samples.iter().enumerate() {
                if s.series == r.series && far(&s.hour()) > best {
                    best = far(&s.hour());
                    r.farthest_hour = s.hour();
                    r.farthest = Some(i);
                }
            }
        }
    }

    /// Every hour that had a row, as the row that stands (series by
    /// series, hour by hour).
    pub fn samples(&self) -> impl Iterator<Item = UsageSample> + '_ {
        self.grids.iter().enumerate().flat_map(|(id, g)| {
            (0..g.allocated.hours())
                .filter(|&i| g.has_row(i))
                .map(move |i| {
                    UsageSample::at_hour(
                        id as u32,
                        g.allocated.start + i as i64,
                        g.allocated.value(i),
                        g.used.value(i),
                    )
                })
        })
    }

    /// Hours that had a row, all series together.
    pub fn row_count(&self) -> usize {
        self.grids.iter().map(Grid::rows).sum()
    }
}

/// Hashes an integer key by one multiplication (Fibonacci hashing): for
/// series ids, small integers a file cannot choose, and for keys that are
/// already hashes (the usage reader's). SipHash's keyed defence buys
/// nothing there and costs a hash per row.
#[derive(Clone, Copy, Default)]
pub(crate) struct IntHash;

impl std::hash::BuildHasher for IntHash {
    type Hasher = IntHasher;
    fn build_hasher(&self) -> IntHasher {
        IntHasher(0)
    }
}

pub(crate) struct IntHasher(u64);

impl std::hash::Hasher for IntHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(8) ^ u64::from(b)).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        }
    }
    fn write_u32(&mut self, n: u32) {
        self.write_u64(u64::from(n));
    }
    fn write_u64(&mut self, n: u64) {
        self.0 = (self.0 ^ n).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(team: &str) -> SeriesKey {
        SeriesKey {
            cluster: "c".into(),
            pool: "p".into(),
            team: team.into(),
        }
    }

    #[test]
    fn rows_in_any_order_land_on_one_grid_and_later_rows_win() {
        let mut u = Usage::default();
        let a = u.push_series(key("a"), Span::default());
        let b = u.push_series(key("b"), Span::default());
        u.add(&[
            UsageSample::at_hour(a, 200, Some(4.0), Some(2.0)),
            UsageSample::at_hour(b, 100, Some(1.0), None),
            UsageSample::at_hour(a, 130, None, None),
        ]);
        // An earlier hour, read later: the grid grows in front, row bits move.
        u.add(&[
            UsageSample::at_hour(a, 10, Some(3.0), Some(3.0)),
            UsageSample::at_hour(a, 200, Some(5.0), Some(2.0)),
            UsageSample::at_hour(b, 100, Some(1.0), None),
        ]);
        let g = &u.grids[a as usize];
        assert_eq!(g.allocated.start, 10);
        assert_eq!(g.allocated.end(), 201);
        assert_eq!(g.allocated.get(200), Some(5.0));
        assert_eq!(g.allocated.get(130), None);
        assert!(g.has_row(120), "the gap row at hour 130 is a row");
        assert!(!g.has_row(121));
        assert_eq!(g.last_row(), Some(200));
        assert_eq!(g.allocated.last_observed(), Some(200));
        // 200 had 4 then 5 allocated: one conflict; b's repeat is the same row.
        assert_eq!((g.conflicts, g.first_conflict), (1, Some(200)));
        assert_eq!(u.grids[b as usize].conflicts, 0);
        let rows: Vec<(u32, i64, Option<f64>)> = u
            .samples()
            .map(|s| (s.series, s.hour(), s.allocated()))
            .collect();
        assert_eq!(
            rows,
            vec![
                (a, 10, Some(3.0)),
                (a, 130, None),
                (a, 200, Some(5.0)),
                (b, 100, Some(1.0))
            ]
        );
        assert_eq!(u.row_count(), 4);
    }

    /// Rows far apart cost hours of memory, not bytes of file: a series
    /// may span a day per row (a month at least); one that would span more
    /// is refused whole, and the others are read.
    #[test]
    fn a_series_spanning_more_than_a_day_per_row_is_refused() {
        let mut u = Usage::default();
        let far = u.push_series(key("far"), Span::default());
        let daily = u.push_series(key("daily"), Span::default());
        let mut rows = vec![
            UsageSample::at_hour(far, 0, Some(1.0), Some(1.0)),
            UsageSample::at_hour(far, 99 * 8766, Some(1.0), Some(1.0)),
        ];
        rows.extend((0..365).map(|d| UsageSample::at_hour(daily, d * 24, Some(2.0), None)));
        let refused = u.add(&rows);
        assert_eq!(
            refused,
            vec![Refused {
                series: far,
                hours: 99 * 8766 + 1,
                rows: 2,
                // Of two rows, the median is the later one: the first is the farthest from it.
                farthest_hour: 0,
                farthest: Some(0),
                over_budget: false,
            }]
        );
        assert_eq!(u.grids[far as usize].allocated.hours(), 0);
        assert_eq!(u.grids[daily as usize].allocated.hours(), 364 * 24 + 1);
        assert_eq!(u.grids[daily as usize].rows(), 365);
        // Growing a series later counts the rows it already has.
        let more: Vec<UsageSample> = (365..400)
            .map(|d| UsageSample::at_hour(daily, d * 24, Some(2.0), None))
            .collect();
        assert!(u.add(&more).is_empty());
        let late = [UsageSample::at_hour(
            daily,
            400 * 24 + 24 * 500,
            Some(2.0),
            None,
        )];
        assert_eq!(u.add(&late).len(), 1, "500 days beyond 400 rows");
        assert_eq!(max_span_hours(0), 744);
        assert_eq!(max_span_hours(100), 2400);
    }

    /// Each series may take the 31-day floor, but not without bound: many
    /// series of two rows a month apart would cost gigabytes for megabytes
    /// of file. The series past the budget are refused, in series order;
    /// dense series are never held back by it.
    #[test]
    fn sparse_series_share_one_budget_of_hours() {
        let mut u = Usage::default();
        let n = (SPARSE_HOURS_BUDGET / (743 - 48)) as u32 + 5;
        let ids: Vec<u32> = (0..n)
            .map(|i| u.push_series(key(&format!("s{i}")), Span::default()))
            .collect();
        let mut rows = Vec::new();
        for &id in &ids {
            rows.push(UsageSample::at_hour(id, 0, Some(1.0), Some(1.0)));
            rows.push(UsageSample::at_hour(id, 742, Some(1.0), Some(1.0)));
        }
        let refused = u.add(&rows);
        // Each holds 743 hours, 695 beyond its two rows' 48.
        let fit = (SPARSE_HOURS_BUDGET / 695) as usize;
        assert_eq!(refused.len(), n as usize - fit);
        assert!(
            refused
                .iter()
                .all(|r| r.over_budget && r.series >= fit as u32)
        );
        assert!(u.sparse_hours <= SPARSE_HOURS_BUDGET);
        // A dense series still goes in.
        let dense = u.push_series(key("dense"), Span::default());
        let hourly: Vec<UsageSample> = (0..2000)
            .map(|h| UsageSample::at_hour(dense, h, Some(1.0), None))
            .collect();
        assert!(u.add(&hourly).is_empty());
    }
}
