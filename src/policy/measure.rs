//! What a change to a cluster does to what it holds, measured between two
//! versions of it: GPUs that change pool, what its pools cost a month, the
//! largest fall of a pool's price, and what the requests in force gain when
//! a pool's sharing changes. Pure functions of the documents and prices they
//! are given; the gate reads them for a change and for its 30 days of history.

use crate::model::*;
use std::collections::BTreeMap;

/// GPUs that change pool by pool when a cluster goes from `then` to `now`
/// (`None`: absent): the larger of what the pools that grow gain and what the
/// pools that shrink lose, so nodes moved from one pool to another count
/// though the cluster's total stays; plus the GPUs of `then`'s pools whose
/// nodes another pool's `nodeLabels` may now match (swapped selectors).
pub fn moved_gpus(
    now: Option<&Document<ClusterSpec>>,
    then: Option<&Document<ClusterSpec>>,
) -> f64 {
    let pool_gpus = |c: Option<&Document<ClusterSpec>>| -> BTreeMap<String, f64> {
        c.map(|c| {
            c.spec
                .node_pools
                .iter()
                .map(|p| {
                    (
                        p.name.value.to_string(),
                        p.nodes.value.0 as f64 * p.gpus_per_node.value.0 as f64,
                    )
                })
                .collect()
        })
        .unwrap_or_default()
    };
    let (now_pools, then_pools) = (pool_gpus(now), pool_gpus(then));
    let (mut gained, mut lost) = (0.0f64, 0.0f64);
    let names: std::collections::BTreeSet<&String> =
        now_pools.keys().chain(then_pools.keys()).collect();
    for name in names {
        let d = now_pools.get(name).copied().unwrap_or(0.0)
            - then_pools.get(name).copied().unwrap_or(0.0);
        if d > 0.0 {
            gained += d;
        } else {
            lost -= d;
        }
    }
    let retargeted = match (now, then) {
        (Some(n), Some(t)) => crate::policy::selectors::retargeted(&n.spec, &t.spec).gpus,
        _ => 0.0,
    };
    gained.max(lost) + retargeted
}

/// The largest fall of a pool's blended GPU-hour price from `before` to
/// `after` (each cluster priced with its own repository's catalogs and
/// reservations), as a share of the price before; a priced pool left without
/// a price counts as 1. A pool `after` adds is measured against the dearest
/// pool of the same GPU model that `after` removes or shrinks (a pool renamed
/// and relabelled, or a cheaper twin that takes the old one's nodes, takes
/// the requests that ran there at its price); a pool added beside pools left
/// as they were, or of a model `before` did not run, is measured against
/// itself with its reserved nodes that no reservation covers at on demand
/// (a commitment's price claimed with no commitment behind it).
pub fn price_cut(
    before: (&Repo, &Document<ClusterSpec>),
    after: (&Repo, &Document<ClusterSpec>),
    at: Timestamp,
) -> f64 {
    let price = |(repo, c): (&Repo, &Document<ClusterSpec>),
                 n: &crate::model::cluster::NodePool| {
        crate::cost::prices::pool(repo, c, n, at)
            .blended
            .map(crate::cost::prices::float)
    };
    // A pool of `before` that `after` removes or gives fewer GPUs: what ran
    // there moves somewhere, perhaps into a pool `after` adds.
    let shrinks = |o: &crate::model::cluster::NodePool| {
        after
            .1
            .spec
            .node_pools
            .iter()
            .find(|n| n.name.value == o.name.value)
            .is_none_or(|n| crate::capacity::pool_gpus(n) < crate::capacity::pool_gpus(o))
    };
    let mut cut = 0.0f64;
    for pool in &after.1.spec.node_pools {
        let old = before
            .1
            .spec
            .node_pools
            .iter()
            .find(|o| o.name.value == pool.name.value);
        let then = match old {
            Some(old) => price(before, old),
            None => before
                .1
                .spec
                .node_pools
                .iter()
                .filter(|o| same_model(&o.gpu_model.value, &pool.gpu_model.value))
                .filter(|o| shrinks(o))
                .filter_map(|o| price(before, o))
                .fold(None, |m: Option<f64>, x| Some(m.map_or(x, |m| m.max(x)))),
        };
        if let Some(b) = then.filter(|b| *b > 0.0) {
            cut = cut.max(price(after, pool).map_or(1.0, |a| (b - a) / b));
        }
        if old.is_none() {
            // A pool added with reserved nodes no reservation covers claims
            // a commitment's price that nothing backs: measured against
            // itself at on demand, as moving an existing pool's nodes to
            // `reserved` is measured against its price before (whatever
            // else the change shrinks: the larger cut counts).
            cut = cut.max(unbacked_cut(after, pool, at));
        }
    }
    cut
}

/// How much cheaper a pool is than with its reserved nodes that no
/// reservation backs at on demand: the reservations covering it with its own
/// instances that have not ended (in force or bought for later, in the
/// repository's priced reservations and its own) back as many nodes as they
/// hold at most at once.
fn unbacked_cut(
    (repo, cluster): (&Repo, &Document<ClusterSpec>),
    pool: &crate::model::cluster::NodePool,
    at: Timestamp,
) -> f64 {
    use crate::cost::prices;
    let p = prices::pool(repo, cluster, pool, at);
    let Some(blended) = p.blended else {
        return 0.0;
    };
    let priced = repo.pricing_reservations.as_deref();
    let mut terms: Vec<(Timestamp, Timestamp, u32)> = Vec::new();
    let mut seen = std::collections::BTreeSet::new();
    for (name, r) in priced.into_iter().flatten().chain(repo.reservations.iter()) {
        let s = &r.spec;
        if !seen.insert(name.as_str())
            || s.term.end.value <= at
            || !prices::holds_pool_instances(cluster, pool, s)
        {
            continue;
        }
        terms.push((
            s.term.start.value.max(at),
            s.term.end.value,
            s.count.value.0,
        ));
    }
    let backed = crate::cost::reservation::most_held_at_once(&terms);
    let Some(reference) = p.with_on_demand(p.reserved_nodes.saturating_sub(backed)) else {
        return 0.0;
    };
    // `blended` prices the nodes backed only later at the catalog's
    // committed price too: the reference swaps only the unbacked ones.
    let (a, od) = (prices::float(blended), prices::float(reference));
    if od > 0.0 {
        ((od - a) / od).max(0.0)
    } else {
        0.0
    }
}

/// Whether two `gpuModel`s name the same catalog model (any of its names).
fn same_model(a: &str, b: &str) -> bool {
    match (crate::gpu::catalog::model(a), crate::gpu::catalog::model(b)) {
        (Some(x), Some(y)) => x.id == y.id,
        _ => a == b,
    }
}

/// A cluster's pools at their blended GPU-hour prices in `world` at `at`,
/// for an average month (730 hours); unpriced pools count nothing.
pub fn monthly_cost(world: &Repo, cluster: &Document<ClusterSpec>, at: Timestamp) -> f64 {
    cluster
        .spec
        .node_pools
        .iter()
        .filter_map(|pool| {
            let price = crate::cost::prices::pool(world, cluster, pool, at).blended?;
            Some(
                crate::capacity::pool_gpus(pool) as f64
                    * crate::cost::prices::float(price)
                    * crate::cost::prices::HOURS_PER_MONTH as f64,
            )
        })
        .sum()
}

/// What the requests in force from `at` on in a cluster gain when it goes
/// from `then` to `now` (a pool's MIG layout, time-slicing or GPUs per node
/// changed): the GPU-equivalents they grow by, summed over those that grow,
/// and what that costs over the rest of their windows (a standing request
/// over the horizon its costs are counted on) at the pool's blended price
/// in `world` (the head's pool where `world` has none). Pools in both only.
pub fn regrowth<'r>(
    world: &Repo,
    requests: impl Iterator<Item = &'r Document<RequestSpec>>,
    now: &Document<ClusterSpec>,
    then: &Document<ClusterSpec>,
    at: crate::model::Timestamp,
) -> (f64, f64) {
    let at_hour = at.hour_index();
    let (mut gpus, mut cost) = (0.0f64, 0.0f64);
    // What a pool's units are worth, by pool: only pools whose worth changed
    // can regrow a request (most changes leave every pool as it was, and
    // then no request is sized at all).
    let worth = |c: &ClusterSpec, p: &crate::model::cluster::NodePool| {
        let mut v: Vec<(String, u64)> = crate::gpu::resources::provided(p, c.mig_strategy.value)
            .into_iter()
            .map(|x| (x.resource, x.gpu_equivalent.to_bits()))
            .collect();
        v.sort();
        (p.gpus_per_node.value.0, v)
    };
    let changed: std::collections::BTreeSet<&str> = now
        .spec
        .node_pools
        .iter()
        .filter(|n| {
            then.spec
                .node_pools
                .iter()
                .find(|o| o.name.value == n.name.value)
                .is_some_and(|o| worth(&now.spec, n) != worth(&then.spec, o))
        })
        .map(|n| n.name.value.as_str())
        .collect();
    if changed.is_empty() {
        return (0.0, 0.0);
    }
    for r in requests {
        let s = &r.spec;
        if s.cluster.value != now.name() || !changed.contains(s.pool.value.as_str()) {
            continue;
        }
        let window = crate::capacity::Hours::of_request(s).bounded(at_hour);
        if window.end <= at_hour {
            continue;
        }
        fn find<'c>(
            c: &'c Document<ClusterSpec>,
            pool: &str,
        ) -> Option<(&'c crate::model::cluster::NodePool, &'c ClusterSpec)> {
            c.spec
                .node_pools
                .iter()
                .find(|n| n.name.value.as_str() == pool)
                .map(|n| (n, &c.spec))
        }
        let (Some(new), Some(old)) = (find(now, &s.pool.value), find(then, &s.pool.value)) else {
            continue;
        };
        let new_pool = new.0;
        let grew =
            crate::capacity::size(s, Some(new)).gpus - crate::capacity::size(s, Some(old)).gpus;
        if grew <= 1e-9 {
            continue;
        }
        gpus += grew;
        let hours = (window.end - window.start.max(at_hour)).max(0) as f64;
        let price = world
            .clusters
            .get(now.name())
            .and_then(|c| {
                let pool = c
                    .spec
                    .node_pools
                    .iter()
                    .find(|n| n.name.value.as_str() == s.pool.value)?;
                crate::cost::prices::pool(world, c, pool, at).blended
            })
            .or_else(|| crate::cost::prices::pool(world, now, new_pool, at).blended)
            .map_or(0.0, crate::cost::prices::float);
        cost += grew * hours * price;
    }
    (gpus, cost)
}
