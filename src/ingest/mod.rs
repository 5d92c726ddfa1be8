//! Measurements from the systems platform teams already run: the usage
//! history pulled from Prometheus (kube-state-metrics and dcgm-exporter), and a
//! node's GPUs read through NVML.
//!
//! The pull is split so that every decision is a pure function tested
//! without a network: [`plan`] decides which hours each cluster needs and
//! which queries to send; [`matrix`] reads Prometheus' JSON answers;
//! [`rows`] turns the answers into hourly rows per pool and team;
//! [`history`] merges them into the committed `usage/*.csv` and writes CSV
//! deterministically; [`stale`] says when the committed history is too old
//! and [`rewrite`] when a change replaces committed hours.
//! Only [`prometheus`] (HTTP) and [`nvml`] (the NVIDIA library) do I/O.

pub mod history;
pub mod matrix;
pub mod nvml;
pub mod plan;
pub mod prometheus;
pub mod rewrite;
pub mod rows;
pub mod stale;

#[cfg(test)]
mod history_tests;
#[cfg(test)]
mod tests;

/// Which measurement a query makes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Metric {
    Allocated,
    Used,
    Nodes,
}

impl Metric {
    pub const ALL: [Metric; 3] = [Metric::Allocated, Metric::Used, Metric::Nodes];

    pub fn as_str(self) -> &'static str {
        match self {
            Metric::Allocated => "allocated",
            Metric::Used => "used",
            Metric::Nodes => "nodes",
        }
    }
}

/// The Config's severity override for a code, if any.
fn severity(repo: &crate::model::Repo, code: crate::diag::Code) -> Option<crate::diag::Severity> {
    repo.config_spec()
        .severities
        .iter()
        .find(|(name, _)| name.value == code.as_str())
        .map(|(_, s)| s.severity())
}
