//! Usage history: hourly samples of allocated and used GPUs, from `usage/*.csv`.
//!
//! One series per (cluster, pool, team). A missing value is a gap (the
//! collector was down), never a zero: forecasting and utilization treat the
//! two differently.

use super::Timestamp;
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

/// One hourly sample: 24 bytes (years of hourly history for thousands of
/// teams are tens of millions of samples).
#[derive(Clone, Copy, Debug)]
pub struct UsageSample {
    /// Index into [`Usage::series`].
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
        let hour = at
            .hour_index()
            .clamp(i64::from(i32::MIN), i64::from(i32::MAX)) as i32;
        UsageSample {
            series,
            hour,
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

/// All usage history of a repository.
#[derive(Clone, Debug, Default)]
pub struct Usage {
    pub series: Vec<SeriesKey>,
    /// The first row that mentions each series, for diagnostics.
    pub series_spans: Vec<Span>,
    pub samples: Vec<UsageSample>,
}

impl Usage {
    pub fn series_id(&self, key: &SeriesKey) -> Option<u32> {
        self.series.iter().position(|k| k == key).map(|i| i as u32)
    }
}
