//! What units of a resource are worth on a cluster, pool by pool.
//!
//! A namespace quota or a Kueue borrowing limit counts units of a resource
//! (`nvidia.com/gpu`, a MIG profile) wherever the cluster provides it, and a
//! unit is worth different GPU-equivalents in different pools: a whole GPU
//! in one, an eighth of one in a pool time-sliced eight ways. Valued at the
//! first pool that provides the resource, a limit read cheap when a
//! time-sliced pool was listed first. Two values, neither depending on the
//! pools' order:
//!
//! - [`Supply::bound`]: a change of `n` units at the most a unit is worth
//!   anywhere in the cluster, uncapped. What a raised or cut limit is judged
//!   by: it is never less than what the render can grant (it splits a limit
//!   over the flavours in proportion to their units), and a limit raised
//!   past the cluster's size still counts (a later pool added to the cohort
//!   is borrowed from too).
//! - [`Supply::worth`]: the most `n` units can hold today, filled into the
//!   pools where a unit is worth most first, up to each pool's units: a
//!   team's ceiling, never above the GPUs that provide the resource.

use crate::model::*;
use std::collections::BTreeMap;

/// The pools that provide one resource: (units, GPU-equivalents a unit),
/// the most valuable first.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Supply(Vec<(f64, f64)>);

impl Supply {
    /// Units the cluster provides in all.
    pub fn units(&self) -> f64 {
        self.0.iter().map(|(u, _)| u).sum()
    }

    /// `base` and `head` (one resource in a cluster before and after a
    /// change) as one: the more units of the two, each worth the most a unit
    /// is worth in either. What a limit moved with a pool change is judged
    /// by: fewer units in the head (time-slicing taken off) neither hides a
    /// limit removed nor lowers the worth of a raise.
    pub fn merged(base: &Supply, head: &Supply) -> Supply {
        Supply(vec![(
            base.units().max(head.units()),
            base.max_worth().max(head.max_worth()),
        )])
    }

    /// The most a unit is worth in any pool (1 where none provides it).
    pub fn max_worth(&self) -> f64 {
        self.0.first().map_or(1.0, |(_, eq)| *eq)
    }

    /// `n` units at the most a unit is worth, uncapped: what a change of a
    /// limit by `n` units is judged by.
    pub fn bound(&self, n: f64) -> f64 {
        n.max(0.0) * self.max_worth()
    }

    /// The most GPU-equivalents `n` units can hold.
    pub fn worth(&self, n: f64) -> f64 {
        let mut left = n.max(0.0);
        let mut worth = 0.0;
        for &(units, eq) in &self.0 {
            if left <= 0.0 {
                break;
            }
            let take = left.min(units);
            worth += take * eq;
            left -= take;
        }
        worth
    }
}

/// Each resource the pools of `cluster` provide, with its supply.
pub fn of(cluster: &ClusterSpec) -> BTreeMap<String, Supply> {
    let mut out: BTreeMap<String, Supply> = BTreeMap::new();
    for p in &cluster.node_pools {
        let gpus = crate::capacity::pool_gpus(p) as f64;
        for r in crate::gpu::resources::provided(p, cluster.mig_strategy.value) {
            out.entry(r.resource)
                .or_default()
                .0
                .push((gpus * r.per_gpu as f64, r.gpu_equivalent));
        }
    }
    for supply in out.values_mut() {
        supply.0.sort_by(|a, b| b.1.total_cmp(&a.1));
    }
    out
}

/// [`of`] the cluster named `name` in `repo` (nothing when it has none).
pub fn of_named(repo: &Repo, name: &str) -> BTreeMap<String, Supply> {
    repo.clusters
        .get(name)
        .map(|c| of(&c.spec))
        .unwrap_or_default()
}

#[cfg(test)]
#[path = "supply_tests.rs"]
mod tests;
