//! The invariants a merged repository keeps from a moment on: no team holds
//! more than its standing quota and no pool is committed beyond what it has,
//! at any hour from `at`. A pull request may ask past a team's quota (it goes
//! up a tier, and raises the quota in the same change), but the state it
//! leaves must keep them: `capops check` (with or without a base, on the
//! proposed state) and `capops render` refuse a state that breaks them, so
//! two pull requests that each fit cannot merge into one that does not.
//! No window or term still to end is shorter than an hour
//! ([`super::short_windows`]).

use crate::capacity::{self, Hours, Ledger};
use crate::diag::{Code, Diagnostic};
use crate::model::*;

fn hour_text(hour: i64) -> String {
    Timestamp::from_second(hour * 3600)
        .map(|t| t.to_string())
        .unwrap_or_default()
}

/// The hours from `at` on.
fn from(at: Timestamp) -> Hours {
    Hours {
        start: at.hour_index(),
        end: i64::MAX,
    }
}

/// How many of the requests in force an over-commitment names.
const NAMED: usize = 5;

/// The requests `pick` chooses that hold `resource` at `hour` (the peak),
/// largest first: ` (at the most, from T: a 32, b 16, and 3 more)` and the
/// first few requests' names to point at.
fn in_force(
    repo: &Repo,
    ledger: &Ledger,
    hour: i64,
    resource: &str,
    pick: impl Fn(&RequestSpec) -> bool,
) -> (String, Vec<crate::diag::Span>) {
    let mut held: Vec<(&Document<RequestSpec>, u32)> = repo
        .requests
        .values()
        .filter(|r| pick(&r.spec))
        .filter_map(|r| {
            let (hours, sized) = ledger.size(r.name())?;
            let units = *sized.units.get(resource)?;
            (hours.start <= hour && hour < hours.end && units > 0).then_some((r, units))
        })
        .collect();
    if held.is_empty() {
        return (String::new(), Vec::new());
    }
    held.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.name().cmp(b.0.name())));
    let mut names: Vec<String> = held
        .iter()
        .take(NAMED)
        .map(|(r, units)| format!("{} {units}", r.name()))
        .collect();
    if held.len() > NAMED {
        names.push(format!("and {} more", held.len() - NAMED));
    }
    let spans = held
        .iter()
        .take(NAMED)
        .map(|(r, _)| r.metadata.name.span)
        .collect();
    (
        format!(
            " (at the most, from {}: {})",
            hour_text(hour),
            names.join(", ")
        ),
        spans,
    )
}

/// Every break of the invariants from `at` on.
pub fn check(repo: &Repo, ledger: &Ledger, at: Timestamp) -> Vec<Diagnostic> {
    let mut diags = super::short_windows::check(repo, at);
    let range = from(at);
    for team in repo.teams.values() {
        for (cluster, presence) in &team.spec.clusters {
            let provided: Vec<String> = repo
                .clusters
                .get(&cluster.value)
                .map(|c| {
                    c.spec
                        .node_pools
                        .iter()
                        .flat_map(|p| crate::gpu::resources::provided(p, c.spec.mig_strategy.value))
                        .map(|p| p.resource)
                        .collect()
                })
                .unwrap_or_default();
            let mut resources: Vec<&str> = provided.iter().map(String::as_str).collect();
            resources.sort_unstable();
            resources.dedup();
            for resource in resources {
                let Some(line) = ledger.team_units(team.name(), &cluster.value, resource) else {
                    continue;
                };
                let quota = presence
                    .quota
                    .iter()
                    .find(|(k, _)| k.value == resource)
                    .map(|(_, v)| (v.value.0 as f64, v.span));
                let ceiling = quota.map_or(0.0, |q| q.0);
                let o = capacity::overcommit(line, ceiling, range, at.hour_index());
                if o.hours == 0 {
                    continue;
                }
                let span = quota.map_or(presence.namespace.span, |q| q.1);
                let first = o.first_hour.unwrap_or(range.start);
                let peak = o.peak_hour.unwrap_or(first);
                let (named, spans) = in_force(repo, ledger, peak, resource, |r| {
                    r.team.value == team.name() && r.cluster.value == cluster.value
                });
                let mut d = Diagnostic::new(
                    Code::TeamOverQuota,
                    format!(
                        "from {} the requests in force give {} {} units of {resource} in {}, {} over its quota of {ceiling}{named}",
                        hour_text(first),
                        team.name(),
                        ceiling + o.shortfall,
                        cluster.value,
                        o.shortfall
                    ),
                )
                .at(span, "quota exceeded")
                .help("raise the quota in this Team (a change judged on its own), or shrink or shorten the requests");
                for s in spans {
                    d = d.related(s, "in force at the most");
                }
                diags.push(d);
            }
        }
    }
    for cluster in repo.clusters.values() {
        for pool in &cluster.spec.node_pools {
            let caps = capacity::pool_capacity(pool, &cluster.spec);
            for (resource, cap) in &caps {
                let Some(line) = ledger.pool_units(cluster.name(), &pool.name.value.0, resource)
                else {
                    continue;
                };
                let o = capacity::overcommit(line, *cap, range, at.hour_index());
                if o.hours == 0 {
                    continue;
                }
                let first = o.first_hour.unwrap_or(range.start);
                let peak = o.peak_hour.unwrap_or(first);
                let (named, spans) = in_force(repo, ledger, peak, resource, |r| {
                    r.cluster.value == cluster.name() && r.pool.value == pool.name.value.0
                });
                let mut d = Diagnostic::new(
                    Code::PoolOvercommitted,
                    format!(
                        "from {} the requests in force commit {} units of {resource} in {}/{}, which has {cap}{named}",
                        hour_text(first),
                        cap + o.shortfall,
                        cluster.name(),
                        pool.name.value
                    ),
                )
                .at(pool.name.span, "over-committed")
                .help("add nodes, move requests to another pool, or shorten them");
                for s in spans {
                    d = d.related(s, "in force at the most");
                }
                diags.push(d);
            }
        }
    }
    diags
}
