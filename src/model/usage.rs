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

/// One hourly sample.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct UsageSample {
    /// Index into [`Usage::series`].
    pub series: u32,
    pub at: Timestamp,
    /// GPUs allocated to the team's workloads (None: gap).
    pub allocated: Option<f64>,
    /// GPUs busy (None: gap).
    pub used: Option<f64>,
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
