//! The repository a change is judged in.
//!
//! A pull request never changes what judges it. Everything a decision reads,
//! other than the changed document itself, comes from the base revision: the
//! Config, the approval policies, the Teams (quotas, leads, limits), the
//! Clusters (capacity, environment, purchase mix), the PriorityClasses, the
//! PriceCatalogs and the usage history. What the pull request proposes to
//! commit (its CapacityRequests and Reservations, all of them, so that several
//! requests of one change add up) comes from the head. Documents the change
//! adds that the base does not have (a new cluster, a new team, a new pool of
//! a cluster the base has) are taken from the head so that references
//! resolve; their own addition is judged.
//!
//! Without a base (a plain `check` on the default branch or in a merge
//! queue) the repository judges itself.

use crate::model::*;
use crate::policy::measure::{monthly_cost, regrowth};
use std::collections::BTreeMap;

/// The judging world of a change from `base` to `head` (`same_files`: the
/// head's files identical in the base, whose documents the base leaves out).
pub fn judging(
    base: &Repo,
    head: &Repo,
    same_files: &std::collections::HashSet<crate::diag::FileId>,
) -> Repo {
    fn union<S: Clone>(
        base: &BTreeMap<String, Document<S>>,
        head: &BTreeMap<String, Document<S>>,
    ) -> BTreeMap<String, Document<S>> {
        let mut out = base.clone();
        for (name, doc) in head {
            out.entry(name.clone()).or_insert_with(|| doc.clone());
        }
        out
    }
    Repo {
        // Never the head's: a base without a (valid) Config judges with
        // the defaults, as the policy's roles and thresholds do.
        config: base.config.clone(),
        policies: base.policies.clone(),
        catalogs: base.catalogs.clone(),
        teams: union(&base.teams, &head.teams),
        clusters: with_new_pools(union(&base.clusters, &head.clusters), head),
        priority_classes: union(&base.priority_classes, &head.priority_classes),
        requests: head.requests.clone(),
        reservations: head.reservations.clone(),
        usage: base.usage.clone(),
        // Pools are priced by the base's reservations, whole.
        pricing_reservations: Some(std::sync::Arc::new(full_base_reservations(
            base, head, same_files,
        ))),
        // What the measurements hold: the base's versions of the requests
        // the change edits or removes (the base keeps only the files the
        // change touched; the others are the head's, unchanged).
        measured_requests: Some(std::sync::Arc::new(MeasuredRequests {
            base: base.requests.clone(),
            added: head
                .requests
                .iter()
                .filter(|(name, d)| {
                    !same_files.contains(&d.origin.file) && !base.requests.contains_key(*name)
                })
                .map(|(name, _)| name.clone())
                .collect(),
        })),
        invalid: head.invalid.clone(),
        unread: head.unread,
    }
}

/// The base's clusters with the pools the head adds to them: a request in a
/// pool the same change adds is judged against that pool (its price, spot
/// nodes, time-slicing), as a request in a cluster the change adds is; the
/// pools the base has stay the base's.
fn with_new_pools(
    mut clusters: BTreeMap<String, Document<ClusterSpec>>,
    head: &Repo,
) -> BTreeMap<String, Document<ClusterSpec>> {
    for (name, doc) in clusters.iter_mut() {
        let Some(h) = head.clusters.get(name) else {
            continue;
        };
        for pool in &h.spec.node_pools {
            if !doc
                .spec
                .node_pools
                .iter()
                .any(|p| p.name.value == pool.name.value)
            {
                doc.spec.node_pools.push(pool.clone());
            }
        }
    }
    clusters
}

/// The base revision's reservations, whole (see [`full_base`]).
fn full_base_reservations(
    base: &Repo,
    head: &Repo,
    same_files: &std::collections::HashSet<crate::diag::FileId>,
) -> BTreeMap<String, Document<ReservationSpec>> {
    let mut out = base.reservations.clone();
    for (name, doc) in &head.reservations {
        if same_files.contains(&doc.origin.file) {
            out.entry(name.clone()).or_insert_with(|| doc.clone());
        }
    }
    out
}

/// The base revision's requests, whole: the base keeps only the documents of
/// the files the change touched, the others are the head's (identical).
pub fn base_requests<'r>(
    base: &'r Repo,
    head: &'r Repo,
    changed: &std::collections::HashSet<&str>,
) -> BTreeMap<&'r str, &'r Document<RequestSpec>> {
    let mut out: BTreeMap<&str, &Document<RequestSpec>> = head
        .requests
        .iter()
        .filter(|(n, _)| !changed.contains(n.as_str()))
        .map(|(n, d)| (n.as_str(), d))
        .collect();
    for (n, d) in &base.requests {
        if changed.contains(n.as_str()) {
            out.insert(n.as_str(), d);
        }
    }
    out
}

/// GPU-equivalents each team's requests grew by between a past revision and
/// the base: for every request of the base, the largest amount it holds from
/// `from_hour` (the start of the 30 days) on beyond what its past version
/// held at the same hours in the same pool for the same team (a request moved
/// to another pool or team, or one that did not exist then, counts whole; one revived from an expired
/// window, stretched, or moved later counts what it newly holds). Shrinking
/// one request does not pay for growing another: this is the growth that
/// went through, which the rolling budget of automatic approvals counts.
pub fn recent_growth(
    world: &Repo,
    base: &BTreeMap<&str, &Document<RequestSpec>>,
    past: &BTreeMap<String, Document<RequestSpec>>,
    past_teams: &BTreeMap<String, Document<TeamSpec>>,
    past_clusters: &BTreeMap<String, Document<ClusterSpec>>,
    from_hour: i64,
) -> BTreeMap<String, f64> {
    use crate::capacity::{Hours, pool_in, pool_of, size, swing};
    let gpus = |s: &RequestSpec| size(s, pool_of(world, s)).gpus;
    // A past version is sized with the pool as it was then: what a pool's
    // change (fewer time-slicing replicas, a coarser MIG layout) gave the
    // team since is its growth too.
    let gpus_then =
        |s: &RequestSpec| size(s, pool_in(past_clusters, s).or_else(|| pool_of(world, s))).gpus;
    let mut out: BTreeMap<String, f64> = BTreeMap::new();
    for (name, doc) in base {
        let mut held = vec![(Hours::of_request(&doc.spec), gpus(&doc.spec))];
        if let Some(p) = past
            .get(*name)
            .filter(|p| same_pool(&p.spec, &doc.spec, world, past_teams))
        {
            held.push((Hours::of_request(&p.spec), -gpus_then(&p.spec)));
        }
        let grew = swing(held, from_hour).0;
        if grew > 1e-9 {
            *out.entry(doc.spec.team.value.clone()).or_default() += grew;
        }
    }
    out
}

/// Whether two versions of a request hold capacity for the same team in the
/// same pool: a request moved to another pool holds all it holds there anew,
/// and so does one handed to another team, or a name another team reuses
/// after the request was released (a released request pays for nobody's
/// growth but its own team's, as an edit down would). A past version whose
/// team `base` no longer has counts for the team holding it now when that
/// team is new since (`past_teams` lacks it): a team renamed keeps its
/// requests' history, but a team that was already there and takes up the
/// names a renamed or removed team gave up takes them up whole.
fn same_pool(
    then: &RequestSpec,
    now: &RequestSpec,
    base: &Repo,
    past_teams: &BTreeMap<String, Document<TeamSpec>>,
) -> bool {
    let renamed =
        !base.teams.contains_key(&then.team.value) && !past_teams.contains_key(&now.team.value);
    then.cluster.value == now.cluster.value
        && then.pool.value == now.pool.value
        && (then.team.value == now.team.value || renamed)
}

/// Quota and cluster growth that went through in the 30 days before the
/// base, from its git history: what splitting one change into several pull
/// requests would otherwise hide from the tiers.
#[derive(Debug, Clone, Default)]
pub struct PlatformGrowth {
    /// team -> GPU-equivalents its quota rose by (per cluster and resource;
    /// a cut in one place does not pay for a rise in another).
    pub quotas: BTreeMap<String, f64>,
    /// cluster -> GPUs its pools gained.
    pub clusters: BTreeMap<String, f64>,
    /// cluster -> what the requests in force then gained from its pools'
    /// changes since (MIG layout, time-slicing, GPUs per node), priced over
    /// the rest of their windows from the start of the 30 days.
    pub regrown_cost: BTreeMap<String, f64>,
    /// team -> GPU-equivalents its borrowing limits unlocked.
    pub borrowing: BTreeMap<String, f64>,
    /// team -> `nvidia.com/gpu` units its requests grew by (whole-GPU units of
    /// namespace quota, whatever GPU-equivalents they are).
    pub units: BTreeMap<String, f64>,
    /// cluster -> what its pools cost more a month (730 hours), at the base's
    /// prices: nodes added or bought dearer.
    pub monthly_cost: BTreeMap<String, f64>,
    /// cluster -> GPU-equivalents the requests in force then gained from its
    /// pools' changes since.
    pub regrown_gpus: BTreeMap<String, f64>,
    /// cluster -> GPU-equivalents the base's teams' quotas on it gained from
    /// its pools' changes since (fewer time-slicing replicas, a coarser
    /// single-strategy MIG layout).
    pub quotas_regrown: BTreeMap<String, f64>,
    /// The requests that grew, as they are in the base and as they were then
    /// (`None`: new since), for the cost of that growth (priced when judged),
    /// with what they were then as a share of what the same request is in
    /// today's pool (a pool with more time-slicing replicas then made it less).
    pub grown_requests: Vec<(RequestSpec, Option<(RequestSpec, f64)>)>,
    /// The start of the 30 days, as an hour index.
    pub from_hour: i64,
    /// What the reservations added or grown since then commit from the
    /// start of the 30 days on (each at least 0: a cut does not pay for another).
    pub recent_commitment_cost: f64,
    /// The price catalogs as they were then (price cuts split over several
    /// pull requests are measured from them).
    pub catalogs_then: BTreeMap<String, Document<CatalogSpec>>,
    /// The clusters as they were then (pool price cuts are measured from them too).
    pub clusters_then: BTreeMap<String, Document<ClusterSpec>>,
    /// Whether the history was read (a cluster missing from `clusters_then`
    /// is then one new since, which counts whole).
    pub read: bool,
}

/// How each team's quota and each cluster grew from `past` to `base` (a team
/// or cluster new since counts whole).
pub fn platform_growth(
    world: &Repo,
    base: &Repo,
    base_requests: &BTreeMap<&str, &Document<RequestSpec>>,
    past: &crate::load::base::PastDocs,
    from_hour: i64,
) -> PlatformGrowth {
    use crate::capacity::{Hours, swing};
    use crate::policy::facts::team::{
        borrowing_change, quota_delta, quotas_regrown, team_quota_by,
    };
    let mut out = PlatformGrowth {
        from_hour,
        catalogs_then: past.catalogs.clone(),
        clusters_then: past.clusters.clone(),
        read: true,
        ..PlatformGrowth::default()
    };
    use crate::capacity::{pool_in, pool_of, size};
    let gpus = |s: &RequestSpec| size(s, pool_of(world, s)).gpus;
    // What a request held then, with its pool as it was then.
    let gpus_then =
        |s: &RequestSpec| size(s, pool_in(&past.clusters, s).or_else(|| pool_of(world, s))).gpus;
    for (name, doc) in base_requests {
        let then = past
            .requests
            .get(*name)
            .filter(|p| same_pool(&p.spec, &doc.spec, base, &past.teams));
        let mut held = vec![(Hours::of_request(&doc.spec), gpus(&doc.spec))];
        if let Some(p) = then {
            held.push((Hours::of_request(&p.spec), -gpus_then(&p.spec)));
        }
        if swing(held, from_hour).0 > 1e-9 {
            let then = then.map(|p| {
                let now_size = gpus(&p.spec);
                let ratio = if now_size > 0.0 {
                    gpus_then(&p.spec) / now_size
                } else {
                    1.0
                };
                (p.spec.clone(), ratio)
            });
            out.grown_requests.push((doc.spec.clone(), then));
        }
        // Units of namespace quota: whole GPUs at 1, MIG instances at what
        // one is worth where it is worth most in the cluster (the quota
        // holds in every pool of it), as `effects.quota_delta_gpus` counts.
        let units = |s: &RequestSpec| -> f64 {
            let cluster = base.clusters.get(&s.cluster.value).map(|c| &c.spec);
            s.resources
                .iter()
                .map(|(r, n)| {
                    let worth = if r.value == crate::gpu::resources::GPU {
                        1.0
                    } else {
                        cluster
                            .and_then(|c| crate::policy::facts::team::unit_worth(c, &r.value))
                            .unwrap_or(1.0)
                    };
                    n.value.0 as f64 * worth
                })
                .sum()
        };
        let mut held = vec![(Hours::of_request(&doc.spec), units(&doc.spec))];
        if let Some(p) = then {
            held.push((Hours::of_request(&p.spec), -units(&p.spec)));
        }
        let grew = swing(held, from_hour).0;
        if grew > 1e-9 {
            let units = out.units.entry(doc.spec.team.value.clone()).or_default();
            // To a millionth (sevenths of a GPU add up inexactly).
            *units = ((*units + grew) * 1e6).round() / 1e6;
        }
    }
    for (name, team) in &base.teams {
        let now = team_quota_by(base, team);
        let then = past
            .teams
            .get(name)
            .map(|t| team_quota_by(base, t))
            .unwrap_or_default();
        let (gain, _) = quota_delta(&now, &then);
        if gain > 1e-9 {
            out.quotas.insert(name.clone(), gain);
        }
        // A team new since counts its whole borrowing, as it counts its
        // whole quota, on the clusters that run Kueue (elsewhere nothing
        // renders a cohort to borrow from, and turning Kueue on counts the
        // teams' borrowing then).
        let unlocked = match past.teams.get(name) {
            Some(then) => borrowing_change(base, &BTreeMap::new(), Some(team), Some(then)).0,
            None => crate::policy::facts::team::kueue_borrowing_of(base, team),
        };
        if unlocked > 1e-9 {
            out.borrowing.insert(name.clone(), unlocked);
        }
    }
    let cluster_gpus = |c: &Document<ClusterSpec>| -> f64 {
        c.spec
            .node_pools
            .iter()
            .map(|p| f64::from(crate::capacity::pool_gpus(p)))
            .sum()
    };
    // The base's reservations whole (the base keeps only those of the files
    // the change touched; the world holds all of them for pricing).
    if let Some(reservations) = &world.pricing_reservations
        && let Some(start) = Timestamp::from_second(from_hour * 3600)
    {
        for (name, doc) in reservations.iter() {
            let then = past.reservations.get(name).map(|d| &d.spec);
            let committed =
                crate::cost::reservation::reservation_delta(base, Some(&doc.spec), then, start);
            out.recent_commitment_cost += committed.max(0.0);
        }
    }
    if let Some(start) = Timestamp::from_second(from_hour * 3600) {
        for (name, cluster) in &base.clusters {
            let Some(then) = past.clusters.get(name) else {
                // A cluster new since costs whole, as its GPUs count whole.
                let cost = monthly_cost(world, cluster, start);
                if cost > 1e-9 {
                    out.monthly_cost.insert(name.clone(), cost);
                }
                continue;
            };
            let (gpus, cost) =
                regrowth(world, base_requests.values().copied(), cluster, then, start);
            if cost > 0.0 {
                out.regrown_cost.insert(name.clone(), cost);
            }
            if gpus > 1e-9 {
                out.regrown_gpus.insert(name.clone(), gpus);
            }
            let dearer = monthly_cost(world, cluster, start) - monthly_cost(world, then, start);
            if dearer > 1e-9 {
                out.monthly_cost.insert(name.clone(), dearer);
            }
        }
    }
    for (name, cluster) in &base.clusters {
        if let Some(then) = past.clusters.get(name) {
            let gain = quotas_regrown(base.teams.values(), name, &cluster.spec, &then.spec);
            if gain > 1e-9 {
                out.quotas_regrown.insert(name.clone(), gain);
            }
        }
    }
    for (name, cluster) in &base.clusters {
        let then = past.clusters.get(name).map_or(0.0, cluster_gpus);
        let grew = cluster_gpus(cluster) - then;
        if grew > 1e-9 {
            out.clusters.insert(name.clone(), grew);
        }
    }
    out
}

/// The base revision whole, for rendering it: the base keeps only the
/// requests and reservations of the files the change touched; the others are
/// the head's documents of the files identical in both.
pub fn full_base(
    base: &Repo,
    head: &Repo,
    same_files: &std::collections::HashSet<crate::diag::FileId>,
) -> Repo {
    let mut out = base.clone();
    for (name, doc) in &head.requests {
        if same_files.contains(&doc.origin.file) {
            out.requests
                .entry(name.clone())
                .or_insert_with(|| doc.clone());
        }
    }
    out.reservations = full_base_reservations(base, head, same_files);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(hourly_days: u32) -> Document<ConfigSpec> {
        let mut spec = ConfigSpec::default();
        spec.usage.hourly_days = Some(hourly_days);
        Document {
            metadata: Metadata::default(),
            spec,
            origin: Origin::default(),
            fingerprint: Fingerprint::default(),
        }
    }

    /// The Config a change is judged with is the base's, or the defaults
    /// when the base has none (or none that reads): never the head's.
    #[test]
    fn the_heads_config_never_judges_its_own_change() {
        let head = Repo {
            config: Some(config(35)),
            ..Repo::default()
        };
        let world = judging(&Repo::default(), &head, &Default::default());
        assert!(world.config.is_none());
        assert_eq!(world.config_spec().usage.hourly_days, None);
        let base = Repo {
            config: Some(config(90)),
            ..Repo::default()
        };
        assert_eq!(
            judging(&base, &head, &Default::default())
                .config_spec()
                .usage
                .hourly_days,
            Some(90)
        );
    }

    /// The rolling budget counts what a request newly holds since the start
    /// of the 30 days, not its size: an expired request revived, a window
    /// stretched, or a new request that already ended all went through.
    #[test]
    fn revived_stretched_and_finished_requests_count_as_growth() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/acme");
        let world = crate::pipeline::validate_dir(&root).unwrap().repo;
        let name = "training-eval-sweep"; // 8 GPUs, 2026-11-16 .. 2026-12-14
        let now = world.requests[name].clone();
        let at = |d: &str| d.parse::<crate::model::Timestamp>().unwrap().hour_index();
        let from = at("2026-10-23T00:00:00Z");
        let with_window = |start: &str, end: &str| {
            let mut d = now.clone();
            d.spec.window.as_mut().unwrap().start.value = start.parse().unwrap();
            d.spec.window.as_mut().unwrap().end.value = end.parse().unwrap();
            d
        };
        let growth = |past: Option<Document<RequestSpec>>| {
            let base: BTreeMap<&str, &Document<RequestSpec>> = [(name, &now)].into();
            let past: BTreeMap<String, Document<RequestSpec>> =
                past.into_iter().map(|p| (name.to_string(), p)).collect();
            recent_growth(
                &world,
                &base,
                &past,
                &BTreeMap::new(),
                &BTreeMap::new(),
                from,
            )
            .get("training")
            .copied()
            .unwrap_or(0.0)
        };
        // The same request then: nothing grew.
        assert_eq!(growth(Some(now.clone())), 0.0);
        // New in the 30 days: whole.
        assert_eq!(growth(None), 8.0);
        // Then expired (ended before the 30 days): revived, it grew by 8.
        assert_eq!(growth(Some(with_window("2026-08-01", "2026-09-01"))), 8.0);
        // Then ending before the new window starts: 8 newly held hours.
        assert_eq!(growth(Some(with_window("2026-10-20", "2026-11-10"))), 8.0);
        // Then a longer window: shortening it is no growth.
        assert_eq!(growth(Some(with_window("2026-10-01", "2027-01-01"))), 0.0);
    }

    #[test]
    fn what_a_pools_change_gave_a_request_since_is_its_teams_growth() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/acme");
        let world = crate::pipeline::validate_dir(&root).unwrap().repo;
        // 8 time-sliced units in t4-batch, 4 replicas a GPU: 2 GPU-equivalents.
        let name = "devex-ci-runners";
        let now = world.requests[name].clone();
        let base: BTreeMap<&str, &Document<RequestSpec>> = [(name, &now)].into();
        let past: BTreeMap<String, Document<RequestSpec>> =
            [(name.to_string(), now.clone())].into();
        let from = "2026-10-23T00:00:00Z"
            .parse::<crate::model::Timestamp>()
            .unwrap()
            .hour_index();
        let growth = |clusters: &BTreeMap<String, Document<ClusterSpec>>| {
            recent_growth(&world, &base, &past, &BTreeMap::new(), clusters, from)
                .get("devex")
                .copied()
                .unwrap_or(0.0)
        };
        // The pool as it is: nothing grew.
        assert_eq!(growth(&world.clusters), 0.0);
        // Then 8 replicas a GPU: the same 8 units were 1 GPU, now 2.
        let mut then = world.clusters.clone();
        let pool = then
            .get_mut("infer-l4")
            .unwrap()
            .spec
            .node_pools
            .iter_mut()
            .find(|p| p.name.value.as_str() == "t4-batch")
            .unwrap();
        pool.time_slicing.as_mut().unwrap().replicas.value = 8;
        assert_eq!(growth(&then), 1.0);
        // Its cost is priced from the same share: half of today's size then.
        let past_docs = crate::load::base::PastDocs {
            requests: past.clone(),
            clusters: then,
            ..Default::default()
        };
        let platform = platform_growth(&world, &world, &base, &past_docs, from);
        let grown: Vec<(&str, f64)> = platform
            .grown_requests
            .iter()
            .map(|(now, then)| (now.team.value.as_str(), then.as_ref().map_or(0.0, |t| t.1)))
            .collect();
        assert_eq!(grown, vec![("devex", 0.5)]);
    }
}
