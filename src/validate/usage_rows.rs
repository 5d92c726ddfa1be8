//! Usage rows against the documents: two different rows for one series and
//! hour, a series with more GPUs than its pool has, and series naming a
//! cluster, pool or team with no document.

use crate::diag::{Code, Diagnostic, Span};
use crate::model::*;
use std::collections::BTreeMap;

/// Two different rows for one series and hour, and rows with more GPUs than the pool has.
fn check_usage_rows(repo: &Repo, diags: &mut Vec<Diagnostic>) {
    let usage = &repo.usage;
    let capacity: Vec<Option<f64>> = usage
        .series
        .iter()
        .map(|k| {
            repo.pool(&k.cluster, &k.pool)
                .map(|p| crate::capacity::pool_gpus(p) as f64)
        })
        .collect();
    // Two different rows of one hour were counted as the rows were put in
    // place (`model::usage::Grid`).
    let conflicts: BTreeMap<u32, (u32, Timestamp, Option<Span>)> = usage
        .grids
        .iter()
        .enumerate()
        .filter(|(_, g)| g.conflicts > 0)
        .filter_map(|(i, g)| {
            let first = Timestamp::from_second(g.first_conflict? * 3600)?;
            Some((i as u32, (g.conflicts, first, g.conflict_row)))
        })
        .collect();
    for (series, (n, first, row)) in conflicts {
        let (place, label) = match row {
            Some(row) => (row, "this row differs from an earlier row of the same hour"),
            None => (
                usage.series_spans[series as usize],
                "series first seen here",
            ),
        };
        let key = &usage.series[series as usize];
        diags.push(
            Diagnostic::new(
                Code::UsageConflictingRows,
                format!(
                    "usage of {}/{}/{} has {n} hour{} with rows that differ, the first at {first}",
                    key.cluster,
                    key.pool,
                    key.team,
                    if n == 1 { "" } else { "s" }
                ),
            )
            .at(place, label)
            .help(format!("keep one row per series and hour; search the files for `{first}` rows of this series")),
        );
    }
    let mut over: BTreeMap<u32, (f64, Timestamp)> = BTreeMap::new();
    for s in usage.samples() {
        let Some(Some(cap)) = capacity.get(s.series as usize) else {
            continue;
        };
        let most = s.allocated().unwrap_or(0.0).max(s.used().unwrap_or(0.0));
        if most > cap + 1e-9 {
            let e = over.entry(s.series).or_insert((most, s.at()));
            if most > e.0 {
                *e = (most, s.at());
            }
        }
    }
    for (series, (most, at)) in over {
        let key = &usage.series[series as usize];
        let cap = capacity[series as usize].unwrap_or(0.0);
        // The row with the most GPUs, when it is the one in force (a later
        // row of the same hour may have replaced it).
        let (place, label) = match usage.peaks.get(series as usize) {
            Some((peak, span)) if (peak - most).abs() < 1e-9 => (*span, "this row"),
            _ => (
                usage.series_spans[series as usize],
                "series first seen here",
            ),
        };
        diags.push(
            Diagnostic::new(
                Code::UsageExceedsCapacity,
                format!(
                    "usage of {}/{}/{} reaches {most} GPUs at {at}; the pool has {cap}",
                    key.cluster, key.pool, key.team
                ),
            )
            .at(place, label)
            .help("correct the rows; no team can be allocated more GPUs than its pool has"),
        );
    }
}

pub(super) fn check_usage(repo: &Repo, diags: &mut Vec<Diagnostic>) {
    check_usage_rows(repo, diags);
    for (key, span) in repo.usage.series.iter().zip(&repo.usage.series_spans) {
        let mut missing = Vec::new();
        match repo.clusters.get(&key.cluster) {
            None if invalid(repo, Kind::Cluster, &key.cluster) => {}
            None => missing.push(format!("cluster `{}`", crate::diag::clip(&key.cluster))),
            Some(c) => {
                if !c
                    .spec
                    .node_pools
                    .iter()
                    .any(|p| p.name.value.as_str() == key.pool)
                {
                    missing.push(format!("pool `{}`", crate::diag::clip(&key.pool)));
                }
            }
        }
        if !repo.teams.contains_key(&key.team) && !invalid(repo, Kind::Team, &key.team) {
            missing.push(format!("team `{}`", crate::diag::clip(&key.team)));
        }
        if !missing.is_empty() {
            diags.push(
                Diagnostic::new(
                    Code::UsageUnknownReference,
                    format!("usage for {} names no existing document", missing.join(", ")),
                )
                .at(*span, "cluster, pool and team of the series' first row")
                .help(if missing.iter().all(|m| m.starts_with("team")) {
                    "rows of a team with no document still count in their pool's demand and utilization (the GPUs were in use: a renamed team's history is its pool's too), in no team's; rename the team in the rows, drop them, or restore the document"
                } else {
                    "rows for a cluster or pool with no document are ignored; drop them from the file or restore the document"
                }),
            );
        }
    }
}

/// Whether the repository holds a `kind` named `name` that did not check
/// (its own error says why; a reference to it is not another).
fn invalid(repo: &Repo, kind: Kind, name: &str) -> bool {
    repo.unread || repo.invalid.contains(&(kind, name.to_string()))
}
