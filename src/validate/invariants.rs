//! The invariants a merged repository keeps from a moment on: no team holds
//! more than its standing quota and no pool is committed beyond what it has,
//! at any hour from `at`. A pull request may ask past a team's quota (it goes
//! up a tier, and raises the quota in the same change), but the state it
//! leaves must keep them: `capops check` (with or without a base, on the
//! proposed state) and `capops render` refuse a state that breaks them, so
//! two pull requests that each fit cannot merge into one that does not.

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

/// Every break of the invariants from `at` on.
pub fn check(repo: &Repo, ledger: &Ledger, at: Timestamp) -> Vec<Diagnostic> {
    let mut diags = Vec::new();
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
                diags.push(
                    Diagnostic::new(
                        Code::TeamOverQuota,
                        format!(
                            "from {} the requests in force give {} {} units of {resource} in {}, {} over its quota of {ceiling}",
                            hour_text(o.first_hour.unwrap_or(range.start)),
                            team.name(),
                            ceiling + o.shortfall,
                            cluster.value,
                            o.shortfall
                        ),
                    )
                    .at(span, "quota exceeded")
                    .help("raise the quota in this Team (a change judged on its own), or shrink or shorten the requests"),
                );
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
                diags.push(
                    Diagnostic::new(
                        Code::PoolOvercommitted,
                        format!(
                            "from {} the requests in force commit {} units of {resource} in {}/{}, which has {cap}",
                            hour_text(o.first_hour.unwrap_or(range.start)),
                            cap + o.shortfall,
                            cluster.name(),
                            pool.name.value
                        ),
                    )
                    .at(pool.name.span, "over-committed")
                    .help("add nodes, move requests to another pool, or shorten them"),
                );
            }
        }
    }
    diags
}
