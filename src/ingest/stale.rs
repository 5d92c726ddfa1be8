//! Whether the committed usage history is fresh enough to judge with.
//!
//! For each cluster with usage, the last hour with a measured value (not a
//! gap) must end no more than the Config's `usage.staleAfterHours` before
//! `--at`; otherwise `check` and `report` warn (`usage-stale`) that the
//! utilization, forecasts and idle cost they show are built on old numbers.

use crate::diag::{Code, Diagnostic, Span};
use crate::model::{Repo, Timestamp};
use std::collections::BTreeMap;

/// One `usage-stale` diagnostic per cluster whose usage is older than the threshold at `at`.
pub fn check(repo: &Repo, at: Timestamp) -> Vec<Diagnostic> {
    let config = repo.config_spec();
    let limit = i64::from(config.usage.stale_after_hours);
    // Last measured hour per cluster, and the series (for the file) it came from.
    let mut last: BTreeMap<&str, (i64, u32)> = BTreeMap::new();
    for (id, (key, grid)) in repo.usage.series.iter().zip(&repo.usage.grids).enumerate() {
        if !repo.clusters.contains_key(&key.cluster) {
            continue;
        }
        let measured = grid
            .allocated
            .last_observed()
            .max(grid.used.last_observed());
        let Some(h) = measured else { continue };
        let slot = last.entry(key.cluster.as_str()).or_insert((h, id as u32));
        if h > slot.0 {
            *slot = (h, id as u32);
        }
    }
    let severity = super::severity(repo, Code::UsageStale);
    let mut out = Vec::new();
    for (cluster, (hour, series)) in last {
        let end = (hour + 1) * 3600;
        let age = at.as_second() - end;
        if age <= limit * 3600 {
            continue;
        }
        let ends = Timestamp::from_second(end)
            .map(|t| t.to_string())
            .unwrap_or_default();
        let file = repo.usage.series_spans[series as usize].file;
        let mut d = Diagnostic::new(
            Code::UsageStale,
            format!(
                "usage of cluster `{cluster}` ends at {ends}, {} before {at}: utilization, forecasts and idle cost are judged on old numbers",
                age_text(age)
            ),
        )
        .at(Span::file_start(file), format!("last measured hour ends {ends}"))
        .help(format!(
            "run `capops usage pull` and commit the result (docs/usage.md); usage counts as stale after {limit} hours (`usage.staleAfterHours` in capops.yaml)"
        ));
        if let Some(s) = severity {
            d.severity = s;
        }
        if d.severity != crate::diag::Severity::Allow {
            out.push(d);
        }
    }
    out
}

/// `3 days 4 hours`, `50 hours` below three days.
fn age_text(seconds: i64) -> String {
    let hours = seconds / 3600;
    if hours < 72 {
        return format!("{hours} hours");
    }
    match hours % 24 {
        0 => format!("{} days", hours / 24),
        h => format!("{} days {h} hours", hours / 24),
    }
}

#[cfg(test)]
mod tests {
    use super::age_text;

    #[test]
    fn ages_read_as_hours_then_days() {
        assert_eq!(age_text(50 * 3600), "50 hours");
        assert_eq!(age_text(72 * 3600), "3 days");
        assert_eq!(age_text(76 * 3600 + 59), "3 days 4 hours");
    }
}
