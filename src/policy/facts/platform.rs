//! The facts of changes to the platform itself: a Cluster (its GPUs, what
//! they cost, its environment), a PriorityClass (its value and preemption)
//! and a PriceCatalog (what moved in the prices). Prices are the judging
//! world's (the base's), so a cluster's cost before and after is priced alike.

use super::Env;
use super::model::*;
use super::values::round;
use crate::model::*;
use crate::policy::change::Change;
use schemars::JsonSchema;
use serde::Serialize;
use std::collections::BTreeMap;

mod catalog;
mod unserved;
pub use catalog::{CatalogChange, CatalogFacts, CatalogSubject, catalog};
use unserved::unserved;

/// What a changed Cluster's conditions read.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ClusterSubject {
    /// The evaluation time (`--at`, default now), RFC 3339.
    pub now: String,
    pub config: ConfigFacts,
    /// What the change does to the rendered objects and files (zero without a base).
    pub effects: EffectFacts,
    pub change: ClusterChange,
    pub cluster: ClusterSize,
}

/// A cluster as the change leaves it.
#[derive(Debug, Clone, Default, Serialize, JsonSchema)]
pub struct ClusterSize {
    #[serde(flatten)]
    pub cluster: ClusterFacts,
    /// Physical GPUs across its pools.
    pub gpus: f64,
    /// Its pools' GPUs at their blended GPU-hour prices, for an average month (730 hours).
    pub monthly_cost: f64,
    /// Pools whose instance type has no price in the base's catalogs.
    pub unpriced_pools: Vec<String>,
}

#[derive(Debug, Clone, Default, Serialize, JsonSchema)]
pub struct ClusterChange {
    #[serde(flatten)]
    pub base: ChangeFacts,
    /// GPUs now minus GPUs before (requests, reservations) or quota GPUs now minus before (teams); the whole size when added.
    pub delta_gpus: f64,
    /// GPUs that change pool by pool: the larger of what the pools that grow gain and what the
    /// pools that shrink lose, so nodes moved from one pool to another count though the
    /// cluster's total stays (the whole size when added or removed); plus the GPUs of base
    /// pools whose nodes another pool's `nodeLabels` may now match (swapped selectors).
    pub moved_gpus: f64,
    /// GPU-equivalents the teams may newly borrow because the change turns Kueue on for the
    /// cluster (a cohort to borrow from where nothing was rendered): per team, each
    /// resource's borrowing limit or, without one, the cluster's whole capacity, summed and
    /// capped at the cluster's GPUs; 0 when Kueue was on before or stays off.
    pub borrowing_unlocked_gpus: f64,
    /// Monthly cost now minus before.
    pub delta_monthly_cost: f64,
    /// Cost over a year now minus before (clusters run without an end).
    pub delta_total_cost: f64,
    /// Whether the environment changed (production, staging, ...).
    pub environment_changed: bool,
    /// Pools the change adds.
    pub pools_added: Vec<String>,
    /// Pools the change removes.
    pub pools_removed: Vec<String>,
    /// Pools whose nodes, GPUs, purchase mix, MIG layout, time-slicing, node labels or taints change.
    pub pools_changed: Vec<String>,
    /// The largest fall of a pool's blended GPU-hour price (its purchase mix, instance type
    /// or GPUs changed), as a share of the price before (0.25: a quarter cheaper), priced
    /// with the base's catalogs and reservations; a priced pool left without a price counts
    /// as 1. A pool added is measured against the dearest pool of the same GPU model the
    /// change removes or shrinks (a pool renamed and relabelled onto spot, or a cheaper twin
    /// that takes the old one's nodes, prices the requests moved into it); a pool added
    /// beside pools left as they were (or in a cluster the change adds) is measured against
    /// itself with its reserved nodes that no reservation covers at on demand (a
    /// commitment's price claimed with no commitment behind it). Also measured from the base to the head, each priced with its own
    /// catalogs and reservations (a catalog cut and a purchase-mix change in one pull request
    /// compound); the larger counts.
    pub largest_price_decrease: f64,
    /// `largest_price_decrease` measured from the cluster as it was 30 days before the base
    /// revision (its git history; 0 without history; a cluster new since is measured from
    /// one with no pools, so its unbacked reserved nodes count): pools made cheaper over
    /// several pull requests add up.
    pub recent_largest_price_decrease: f64,
    /// GPU-equivalents the requests in force from `now` on in this cluster's pools gain
    /// because a pool's MIG layout, time-slicing or GPUs per node changed (fewer
    /// time-slicing replicas make each requested slice a larger share of a GPU), summed
    /// over requests whose size grows. Pools in both revisions only.
    pub requests_regrown_gpus: f64,
    /// What that growth costs from `now` (or each request's start, if later) to the end of
    /// each request's window, at the pool's blended GPU-hour price (the base's; the head's
    /// for a pool the change adds): more GPUs for the same requests are paid for like a
    /// request's own growth.
    pub requests_regrown_cost: f64,
    /// What the cluster's pool changes merged in the 30 days before the base revision made
    /// the requests then in force cost more (its git history; 0 without): a layout coarsened
    /// over several pull requests adds up.
    pub recent_regrown_cost: f64,
    /// `moved_gpus` measured from the cluster as it was 30 days before the base revision to
    /// the cluster as the change leaves it (its git history; 0 without): nodes moved between
    /// pools over several pull requests add up, and a move taken back does not. A cluster
    /// added in those 30 days is measured from nothing (all its GPUs) when the change moves
    /// GPUs between its pools, and counts 0 when it only grows or shrinks it.
    pub recent_moved_gpus: f64,
    /// What the cluster's pools came to cost more a month in the 30 days before the base
    /// revision (its git history, priced like `delta_monthly_cost`; 0 without): capacity
    /// or dearer purchase mixes added over several pull requests add up. A cluster added in
    /// those 30 days counts its whole monthly cost.
    pub recent_growth_monthly_cost: f64,
    /// GPU-equivalents the requests then in force gained from the cluster's pool changes
    /// merged in the 30 days before the base revision (its git history; 0 without).
    pub recent_regrown_gpus: f64,
    /// GPU-equivalents the teams' standing quotas (and, on a cluster that runs Kueue, their
    /// borrowing limits) on this cluster gain because a
    /// pool's units are worth more (fewer time-slicing replicas, a coarser
    /// single-strategy MIG layout, a pool added whose units are worth more):
    /// a quota is worth what a unit is worth in the pool where it is worth most,
    /// granted at the base's worth and held at the head's; per resource at most the
    /// GPUs of the pools where a unit is now worth more. The base's teams, and
    /// those the same change adds or edits as the head has them.
    pub quotas_regrown_gpus: f64,
    /// What the cluster's pool changes merged in the 30 days before the base
    /// revision added to the quotas then granted (its git history; 0 without).
    pub recent_quotas_regrown_gpus: f64,
    /// GPUs the cluster's pools gained in the 30 days before the base revision, from its
    /// git history (0 without history): growth split over several pull requests adds up.
    pub recent_growth_gpus: f64,
    /// GPUs every cluster the change touches gains, summed over those that grow (this one
    /// among them; a cluster that shrinks offsets none): capacity split across clusters in
    /// one pull request adds up.
    pub pr_gained_gpus: f64,
    /// What those clusters come to cost more a month, summed over those that cost more.
    pub pr_gained_monthly_cost: f64,
    /// GPUs all the base's clusters gained in the 30 days before the base revision (git
    /// history; 0 without; a cluster new since counts all its GPUs): growth split across
    /// clusters and pull requests adds up.
    pub recent_fleet_growth_gpus: f64,
    /// What all the base's clusters came to cost more a month in those 30 days.
    pub recent_fleet_growth_monthly_cost: f64,
    /// Pools whose `nodeLabels` select more nodes than before (a label dropped, or all of
    /// them: an empty selector selects every node), and pools added with no `nodeLabels`
    /// to a cluster that has other pools: their queues and settings reach nodes they did not.
    pub selectors_widened: Vec<String>,
    /// Pools whose `nodeLabels` select other nodes than before: a pool whose labels
    /// change in any way (a label changed, swapped, dropped or added), and a pool added
    /// whose labels may match a base pool's nodes (no label asked with another value).
    /// Their queues, MIG layouts and time-slicing go elsewhere.
    pub selectors_changed: Vec<String>,
    /// Reservations in force from `now` on covering a pool of this cluster that they
    /// could serve before the change and cannot after (its provider, region, instance
    /// type or zone moved away from theirs, or the pool is gone): paid for, unusable. Also
    /// those on a pool whose `purchase.reserved` the change cuts below the instances the
    /// reservations in force hold at once: the others are paid for and serve nothing.
    pub reservations_unserved: Vec<String>,
    pub previous: PreviousCluster,
}

#[derive(Debug, Clone, Default, Serialize, JsonSchema)]
pub struct PreviousCluster {
    /// GPU-equivalents before the change (0 when added).
    pub gpus: f64,
    /// Environment before the change (empty when added).
    pub environment: String,
    /// Monthly cost before the change (0 when added).
    pub monthly_cost: f64,
}

fn size(env: &Env<'_>, cluster: &Document<ClusterSpec>) -> ClusterSize {
    let unpriced = cluster
        .spec
        .node_pools
        .iter()
        .filter(|pool| {
            crate::cost::prices::pool(env.world, cluster, pool, env.at)
                .blended
                .is_none()
        })
        .map(|pool| pool.name.value.to_string())
        .collect();
    ClusterSize {
        cluster: super::cluster_facts(cluster),
        gpus: cluster
            .spec
            .node_pools
            .iter()
            .map(|p| crate::capacity::pool_gpus(p) as f64)
            .sum(),
        monthly_cost: round(crate::policy::measure::monthly_cost(
            env.world, cluster, env.at,
        )),
        unpriced_pools: unpriced,
    }
}

/// Builds the facts of a changed Cluster: the head's document, compared with the base's.
pub fn cluster(env: &Env<'_>, doc: &Document<ClusterSpec>, change: &Change) -> ClusterSubject {
    let removed = change.kind == crate::policy::change::ChangeKind::Removed;
    let mut now = size(env, doc);
    if removed {
        // A removed cluster holds nothing: `doc` is the base's, for its name.
        now.gpus = 0.0;
        now.monthly_cost = 0.0;
    }
    let previous = change.previous::<ClusterSpec>();
    let before = previous.map(|p| size(env, p));
    let pools = |d: &Document<ClusterSpec>| -> BTreeMap<String, String> {
        d.spec
            .node_pools
            .iter()
            .map(|p| {
                (
                    p.name.value.to_string(),
                    crate::policy::standing::pool_shape(p),
                )
            })
            .collect()
    };
    let after_pools = if removed { BTreeMap::new() } else { pools(doc) };

    let before_pools = previous.map(pools).unwrap_or_default();
    // The largest fall of a pool's blended price from `p`'s to the head's.
    let cut_from = |p: &Document<ClusterSpec>| -> f64 {
        crate::policy::measure::price_cut((env.world, p), (env.world, doc), env.at)
    };
    // A cluster the change adds is measured from one with no pools (its
    // pools' unbacked commitment prices count).
    let empty = || {
        let mut c = doc.clone();
        c.spec.node_pools.clear();
        c
    };
    let price_cut = match previous {
        _ if removed => 0.0,
        Some(p) => cut_from(p),
        None => cut_from(&empty()),
    }
    .max(
        env.aggregates
            .head_price_cut
            .get(doc.name())
            .copied()
            .filter(|_| !removed && previous.is_some())
            .unwrap_or(0.0),
    );
    // From the cluster 30 days before; one new since is measured from one
    // with no pools, as above.
    let growth_read = env.aggregates.platform_growth.read;
    let recent_price_cut = match env.aggregates.platform_growth.clusters_then.get(doc.name()) {
        _ if removed || previous.is_none() => 0.0,
        Some(then) => cut_from(then),
        None if growth_read => cut_from(&empty()),
        None => 0.0,
    };
    let mut widened = Vec::new();
    if !removed {
        for pool in &doc.spec.node_pools {
            let old = previous.and_then(|p| {
                p.spec
                    .node_pools
                    .iter()
                    .find(|o| o.name.value == pool.name.value)
            });
            let wider = match old {
                // Every label still asked for was asked for before, and fewer are.
                Some(o) => {
                    pool.node_labels.len() < o.node_labels.len()
                        && pool
                            .node_labels
                            .iter()
                            .all(|(k, v)| o.node_labels.get(k) == Some(v))
                }
                None => pool.node_labels.is_empty() && doc.spec.node_pools.len() > 1,
            };
            if wider && change.kind != crate::policy::change::ChangeKind::Unchanged {
                widened.push(pool.name.value.to_string());
            }
        }
    }
    let (regrown, regrown_cost) = match (previous, removed) {
        (Some(p), false) => {
            crate::policy::measure::regrowth(env.world, env.world.requests.values(), doc, p, env.at)
        }
        _ => (0.0, 0.0),
    };
    let (prev_gpus, prev_cost) = before
        .as_ref()
        .map(|b| (b.gpus, b.monthly_cost))
        .unwrap_or((0.0, 0.0));
    let moved = crate::policy::measure::moved_gpus((!removed).then_some(doc), previous);
    let quotas_regrown = match (previous, removed) {
        (Some(p), false) => super::team::regrown_as_changed(env, doc, &p.spec),
        _ => 0.0,
    };
    let growth = &env.aggregates.platform_growth;
    // What the 30 days before the base did to this cluster (nothing for one
    // added or removed now).
    let recent = |m: &BTreeMap<String, f64>| -> f64 {
        if removed || previous.is_none() {
            return 0.0;
        }
        m.get(doc.name()).copied().unwrap_or(0.0)
    };
    let retargeted = match (previous, removed) {
        (Some(p), false) => crate::policy::selectors::retargeted(&doc.spec, &p.spec),
        _ => Default::default(),
    };
    ClusterSubject {
        now: env.at.to_string(),
        config: super::config_facts(env.config, env.world),
        effects: env.effects.clone(),
        change: ClusterChange {
            base: super::change_facts(change),
            delta_gpus: round(now.gpus - prev_gpus),
            moved_gpus: round(moved),
            borrowing_unlocked_gpus: round(match previous {
                Some(p) if !removed && !p.spec.kueue.as_ref().is_some_and(|k| k.enabled) => {
                    crate::policy::facts::team::kueue_borrowing(env.world, doc)
                }
                _ => 0.0,
            }),
            delta_monthly_cost: round(now.monthly_cost - prev_cost),
            delta_total_cost: round((now.monthly_cost - prev_cost) * 12.0),
            environment_changed: previous
                .is_some_and(|p| p.spec.environment.value != doc.spec.environment.value),
            pools_added: after_pools
                .keys()
                .filter(|k| !before_pools.contains_key(*k))
                .cloned()
                .collect(),
            pools_removed: before_pools
                .keys()
                .filter(|k| !after_pools.contains_key(*k))
                .cloned()
                .collect(),
            pools_changed: after_pools
                .iter()
                .filter(|(k, v)| before_pools.get(*k).is_some_and(|b| b != *v))
                .map(|(k, _)| k.clone())
                .collect(),
            largest_price_decrease: round(price_cut),
            recent_largest_price_decrease: round(recent_price_cut),
            requests_regrown_gpus: round(regrown),
            requests_regrown_cost: round(regrown_cost),
            recent_regrown_cost: round(
                env.aggregates
                    .platform_growth
                    .regrown_cost
                    .get(doc.name())
                    .copied()
                    .unwrap_or(0.0),
            ),
            // A cluster new in the 30 days is measured from nothing when
            // the change moves GPUs between its pools: they all changed
            // pool since (as they all count as added), so moves after its
            // creation add to its first size. A change that only grows or
            // shrinks it moves nothing (its growth counts as growth).
            recent_moved_gpus: round(match growth.clusters_then.get(doc.name()) {
                _ if removed || previous.is_none() || !growth.read => 0.0,
                Some(then) => crate::policy::measure::moved_gpus(Some(doc), Some(then)),
                None if moved > (now.gpus - prev_gpus).abs() + 1e-9 => {
                    crate::policy::measure::moved_gpus(Some(doc), None)
                }
                None => 0.0,
            }),
            recent_growth_monthly_cost: round(recent(&growth.monthly_cost)),
            recent_regrown_gpus: round(recent(&growth.regrown_gpus)),
            quotas_regrown_gpus: round(quotas_regrown),
            recent_quotas_regrown_gpus: round(
                env.aggregates
                    .platform_growth
                    .quotas_regrown
                    .get(doc.name())
                    .copied()
                    .unwrap_or(0.0),
            ),
            selectors_widened: widened,
            selectors_changed: retargeted.pools,
            reservations_unserved: unserved(env, previous, (!removed).then_some(doc)),
            recent_growth_gpus: round(
                env.aggregates
                    .platform_growth
                    .clusters
                    .get(doc.name())
                    .copied()
                    .unwrap_or(0.0),
            ),
            pr_gained_gpus: round(env.aggregates.clusters_gained.gpus),
            pr_gained_monthly_cost: round(env.aggregates.clusters_gained.monthly_cost),
            recent_fleet_growth_gpus: round(growth.clusters.values().sum()),
            recent_fleet_growth_monthly_cost: round(growth.monthly_cost.values().sum()),
            previous: PreviousCluster {
                gpus: prev_gpus,
                environment: previous
                    .map(|p| p.spec.environment.value.as_str().to_string())
                    .unwrap_or_default(),
                monthly_cost: prev_cost,
            },
        },
        cluster: now,
    }
}

/// What a changed PriorityClass's conditions read.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct PriorityClassSubject {
    /// The evaluation time (`--at`, default now), RFC 3339.
    pub now: String,
    pub config: ConfigFacts,
    /// What the change does to the rendered objects and files (zero without a base).
    pub effects: EffectFacts,
    pub change: PriorityChange,
    pub priority_class: PriorityFacts,
}

#[derive(Debug, Clone, Default, Serialize, JsonSchema)]
pub struct PriorityFacts {
    /// The class's name.
    pub name: String,
    /// Its value: higher runs first and may preempt lower.
    pub value: i64,
    /// `PreemptLowerPriority` or `Never`.
    pub preemption_policy: String,
    /// Whether pods without a class get this one.
    pub global_default: bool,
    /// Requests of the repository that run at this class: by name, or naming none, at the Config's default class, or without one at this class when it is the global default.
    pub requests: u32,
}

#[derive(Debug, Clone, Default, Serialize, JsonSchema)]
pub struct PriorityChange {
    #[serde(flatten)]
    pub base: ChangeFacts,
    /// The value now minus before (the whole value when added).
    pub delta_value: i64,
    /// Whether the preemption policy or the global default changed.
    pub preemption_changed: bool,
    pub previous: PreviousPriority,
}

#[derive(Debug, Clone, Default, Serialize, JsonSchema)]
pub struct PreviousPriority {
    /// Value before the change (0 when added).
    pub value: i64,
    /// Preemption policy before the change (empty when added).
    pub preemption_policy: String,
}

fn priority_facts(env: &Env<'_>, doc: &Document<PriorityClassSpec>) -> PriorityFacts {
    let s = &doc.spec;
    // What a request that names none runs at: the Config's default, or
    // without one this class when it is the global default.
    let global = s.is_global_default();
    let default_class = match &env.config.defaults.priority_class {
        Some(c) => Some(c.value.as_str()),
        None => global.then(|| doc.name()),
    };
    PriorityFacts {
        name: doc.name().to_string(),
        value: s.value.value,
        preemption_policy: s.preemption().as_str().to_string(),
        global_default: global,
        requests: env
            .world
            .requests
            .values()
            .filter(|r| {
                r.spec
                    .priority_class
                    .as_ref()
                    .map(|c| c.value.as_str())
                    .or(default_class)
                    == Some(doc.name())
            })
            .count() as u32,
    }
}

/// Builds the facts of a changed PriorityClass.
pub fn priority_class(
    env: &Env<'_>,
    doc: &Document<PriorityClassSpec>,
    change: &Change,
) -> PriorityClassSubject {
    let mut now = priority_facts(env, doc);
    if change.kind == crate::policy::change::ChangeKind::Removed {
        now.value = 0;
    }
    let before = change
        .previous::<PriorityClassSpec>()
        .map(|p| priority_facts(env, p));
    PriorityClassSubject {
        now: env.at.to_string(),
        config: super::config_facts(env.config, env.world),
        effects: env.effects.clone(),
        change: PriorityChange {
            base: super::change_facts(change),
            delta_value: now.value - before.as_ref().map_or(0, |b| b.value),
            preemption_changed: before.as_ref().is_some_and(|b| {
                b.preemption_policy != now.preemption_policy
                    || b.global_default != now.global_default
            }),
            previous: PreviousPriority {
                value: before.as_ref().map_or(0, |b| b.value),
                preemption_policy: before.map(|b| b.preemption_policy).unwrap_or_default(),
            },
        },
        priority_class: now,
    }
}

pub(crate) fn pool_facts(pool: &NodePool, cluster: &ClusterSpec, demand: DemandFacts) -> PoolFacts {
    let (reserved, on_demand, spot) = crate::model::purchase_nodes(pool);
    PoolFacts {
        name: pool.name.value.to_string(),
        gpu_model: pool.gpu_model.value.clone(),
        instance_type: pool
            .instance_type
            .as_ref()
            .map(|t| t.value.clone())
            .unwrap_or_default(),
        nodes: pool.nodes.value.0,
        gpus_per_node: pool.gpus_per_node.value.0,
        gpus: crate::capacity::pool_gpus(pool),
        mig: pool.mig.is_some(),
        mig_layout: pool
            .mig
            .iter()
            .flat_map(|l| {
                l.layout
                    .value
                    .iter()
                    .map(|(k, v)| (k.value.clone(), v.value.0))
            })
            .collect(),
        time_slicing: pool.time_slicing.is_some(),
        replicas: pool
            .time_slicing
            .as_ref()
            .map(|t| t.replicas.value)
            .unwrap_or(1),
        reserved_nodes: reserved,
        on_demand_nodes: on_demand,
        spot_nodes: spot,
        spot: spot > 0,
        capacity: crate::capacity::pool_capacity(pool, cluster).into(),
        demand,
    }
}

/// Demand of a pool over hours `[from, to)`.
pub(crate) fn demand_facts(
    env: &Env<'_>,
    cluster: &str,
    pool: &str,
    (from, to): (i64, i64),
) -> DemandFacts {
    let outlook = env.analysis.outlook(cluster, pool);
    let summary = outlook.map(|o| o.over(from, to)).unwrap_or_default();
    DemandFacts {
        has_usage: outlook.is_some(),
        demand_p50: super::values::round(summary.mean_p50),
        demand_p90: super::values::round(summary.peak_p90),
        forecast_method: outlook
            .map(|o| o.forecast.method.clone())
            .unwrap_or_default(),
    }
}
