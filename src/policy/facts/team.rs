//! The facts of a Team (its quota, leads, borrowing and lending limits, usage
//! and budget, and what each was before) and of a changed ApprovalPolicy or
//! Config.

use super::Env;
use super::model::*;
use super::values::round;
use crate::model::*;
use crate::policy::change::{Change, ChangeKind};
use schemars::JsonSchema;
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};

/// What a team's conditions read.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct TeamSubject {
    /// The evaluation time (`--at`, default now), RFC 3339.
    pub now: String,
    pub config: ConfigFacts,
    /// What the change does to the rendered objects and files (zero without a base).
    pub effects: EffectFacts,
    pub change: TeamChange,
    pub team: TeamFacts,
}

#[derive(Debug, Clone, Default, Serialize, JsonSchema)]
pub struct TeamChange {
    #[serde(flatten)]
    pub base: ChangeFacts,
    /// GPUs now minus GPUs before (requests, reservations) or quota GPUs now minus before (teams); the whole size when added.
    /// A team's quota now is weighed at the most a unit is worth in the base's cluster or in the
    /// cluster as the same change leaves it.
    pub delta_gpus: f64,
    /// Quota the change takes away, cluster by cluster and resource by resource (GPU-equivalents;
    /// a raise elsewhere does not offset it).
    pub quota_cut_gpus: f64,
    /// Leads the change adds (they would approve the team's requests).
    pub leads_added: Vec<String>,
    /// Leads the change removes.
    pub leads_removed: Vec<String>,
    /// GPU-equivalents the team may newly borrow from its cohorts: raised
    /// borrowing limits, and removed ones counted up to the cluster's capacity.
    /// Each unit is counted at the most a unit is worth in the cluster (a
    /// time-sliced pool listed first does not make whole GPUs cheap), a raise
    /// past the cluster's size included. Only on clusters that run Kueue
    /// before or after the change (elsewhere nothing renders a cohort; the
    /// limits count when Kueue comes on); a limit set where there was none
    /// unlocks nothing, however high (borrowing was unbounded).
    pub borrowing_unlocked_gpus: f64,
    /// Whether some borrowing limit was removed, or a new presence has none
    /// (borrowing is then unbounded), on a cluster that runs Kueue.
    pub borrowing_unbounded: bool,
    /// GPU-equivalents the team may no longer borrow from its cohorts: lowered borrowing
    /// limits, a limit set where there was none (counted from the cluster's capacity), and
    /// clusters it leaves.
    pub borrowing_cut_gpus: f64,
    /// Whether a lending limit changed.
    pub lending_changed: bool,
    /// Clusters where the team's namespace changed, where the team claims a namespace for
    /// the first time (every cluster of a team the change adds), or that it leaves (its
    /// quota object there is removed).
    pub namespaces_changed: Vec<String>,
    /// GPU-equivalents the team's quota rose by in the 30 days before the base revision,
    /// from its git history (0 without history): a raise split over several pull requests
    /// adds up.
    pub recent_quota_growth_gpus: f64,
    /// GPU-equivalents the team's borrowing limits unlocked in the 30 days before the base
    /// revision, from its git history (0 without history); a team added in those 30 days
    /// counts all its borrowing on the clusters that run Kueue.
    pub recent_borrowing_unlocked_gpus: f64,
    pub previous: PreviousTeam,
}

#[derive(Debug, Clone, Default, Serialize, JsonSchema)]
pub struct PreviousTeam {
    /// GPU-equivalents before the change (0 when added).
    pub gpus: f64,
    /// The leads before the change.
    pub leads: Vec<String>,
}

/// What the conditions of a changed ApprovalPolicy or Config read.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct DocumentSubject {
    /// The evaluation time (`--at`, default now), RFC 3339.
    pub now: String,
    pub config: ConfigFacts,
    /// What the change does to the rendered objects and files (zero without a base).
    pub effects: EffectFacts,
    pub change: ChangeFacts,
    pub document: DocumentFacts,
}

fn leads(team: &Document<TeamSpec>) -> BTreeSet<String> {
    team.spec
        .leads
        .iter()
        .map(|l| l.value.trim_start_matches('@').to_ascii_lowercase())
        .collect()
}

use super::supply::{self, Supply};

/// The value a team's quota, borrowing or lending map gives a resource the
/// cluster's pools provide: the first key (in the map's order) that names it
/// ([`crate::gpu::resources::names_resource`]: `nvidia.com/mig-1g.010gb` is
/// `nvidia.com/mig-1g.10gb`, an A30's `mig-1g.6gb` is not `mig-1g.5gb`), as
/// the render reads it; validation refuses a map that names one resource
/// twice.
pub(crate) fn limit_of(
    m: &BTreeMap<Spanned<String>, Spanned<Quantity>>,
    resource: &str,
) -> Option<f64> {
    m.iter()
        .find(|(k, _)| crate::gpu::resources::names_resource(&k.value, resource))
        .map(|(_, v)| v.value.0 as f64)
}

/// The most GPU-equivalents a team can hold in a cluster: its quota (none
/// written is 0) and, on a cluster that runs Kueue, what it may borrow (up
/// to the cluster's capacity); 0 for a team, or a cluster, the repository
/// does not have it in.
pub fn holding_ceiling(repo: &Repo, team: &str, cluster: &str) -> f64 {
    let Some(t) = repo.teams.get(team) else {
        return 0.0;
    };
    let Some((_, presence)) = t.spec.clusters.iter().find(|(c, _)| c.value == cluster) else {
        return 0.0;
    };
    let kueue = repo
        .clusters
        .get(cluster)
        .and_then(|c| c.spec.kueue.as_ref())
        .is_some_and(|k| k.enabled);
    let units_of =
        |m: &BTreeMap<Spanned<String>, Spanned<Quantity>>, resource: &str| limit_of(m, resource);
    // A presence without any quota holds nothing of its own (a request
    // there is over its quota of 0, and the namespace's ResourceQuota is
    // its requests in force); on Kueue it may still borrow.
    supply::of_named(repo, cluster)
        .iter()
        .map(|(resource, supply)| {
            let units = supply.units();
            let quota = units_of(&presence.quota, resource).unwrap_or(0.0);
            let borrow = if kueue {
                units_of(&presence.borrowing_limit, resource).unwrap_or(units)
            } else {
                0.0
            };
            supply.worth(quota + borrow)
        })
        .sum()
}

/// What the teams of `repo` may borrow in `cluster` once it runs Kueue as
/// written: per team, each resource's borrowing limit or, without one, the
/// cluster's whole capacity of it (GPU-equivalents), summed over the teams
/// and capped at the cluster's GPU-equivalents; 0 when the cluster does not
/// run Kueue.
pub(crate) fn kueue_borrowing(repo: &Repo, cluster: &Document<ClusterSpec>) -> f64 {
    if !cluster.spec.kueue.as_ref().is_some_and(|k| k.enabled) {
        return 0.0;
    }
    let capacity = supply::of(&cluster.spec);
    let whole: f64 = cluster
        .spec
        .node_pools
        .iter()
        .map(|p| crate::capacity::pool_gpus(p) as f64)
        .sum();
    let mut sum = 0.0;
    for team in repo.teams.values() {
        let Some((_, presence)) = team
            .spec
            .clusters
            .iter()
            .find(|(c, _)| c.value == cluster.name())
        else {
            continue;
        };
        for (resource, supply) in &capacity {
            let limit = limit_of(&presence.borrowing_limit, resource).unwrap_or(supply.units());
            sum += supply.bound(limit.min(supply.units()));
        }
    }
    sum.min(whole)
}

/// The supply of each resource on cluster `name`; where the same change
/// edits the cluster (`heads`), the two revisions merged
/// ([`Supply::merged`]): a limit raised with the pool change that makes its
/// units whole GPUs is not valued at the slices the base had, and one
/// removed with it is not read as a cut to the head's fewer units.
fn supply_as_changed(
    repo: &Repo,
    heads: &BTreeMap<String, ClusterSpec>,
    name: &str,
) -> BTreeMap<String, Supply> {
    let mut out = supply::of_named(repo, name);
    if let Some(head) = heads.get(name) {
        for (resource, s) in supply::of(head) {
            let merged = match out.get(&resource) {
                Some(base) => Supply::merged(base, &s),
                None => s,
            };
            out.insert(resource, merged);
        }
    }
    out
}

/// Borrowing the team may do in each cluster and resource: its limit, or the
/// cluster's whole capacity when it sets none, whether it set none, and the
/// most a unit is worth there; absent clusters borrow nothing, and with
/// `kueue_only` neither do clusters that run Kueue neither in `repo` nor as
/// `heads` leaves them (nothing renders a cohort to borrow from).
fn borrowing(
    repo: &Repo,
    heads: &BTreeMap<String, ClusterSpec>,
    team: Option<&Document<TeamSpec>>,
    kueue_only: bool,
) -> BTreeMap<(String, String), (f64, bool, f64)> {
    let mut out = BTreeMap::new();
    let Some(team) = team else { return out };
    for (cluster, presence) in &team.spec.clusters {
        // Kueue as the repository has it, or as the same change leaves it
        // (a limit raised where the same pull request turns Kueue on counts).
        let kueue = repo
            .clusters
            .get(&cluster.value)
            .is_some_and(|c| kueue_cohort(c.name(), &c.spec).is_some())
            || heads
                .get(&cluster.value)
                .is_some_and(|c| kueue_cohort(&cluster.value, c).is_some());
        if kueue_only && !kueue {
            continue;
        }
        for (resource, supply) in supply_as_changed(repo, heads, &cluster.value) {
            let limit = limit_of(&presence.borrowing_limit, &resource);
            out.insert(
                (cluster.value.clone(), resource),
                (
                    limit.unwrap_or(supply.units()),
                    limit.is_none(),
                    supply.max_worth(),
                ),
            );
        }
    }
    out
}

/// What a team may borrow where it can (GPU-equivalents): on the clusters
/// that run Kueue, its limits, or their whole capacity where it sets none,
/// each unit at the most a unit is worth there ([`Supply::bound`]).
pub(crate) fn kueue_borrowing_of(repo: &Repo, team: &Document<TeamSpec>) -> f64 {
    borrowing(repo, &BTreeMap::new(), Some(team), true)
        .values()
        .map(|(units, _, worth)| units * worth)
        .sum()
}

/// What a team may newly borrow from its cohorts going from `before` to
/// `now` (raised limits, and removed ones counted up to the cluster's
/// capacity), what it may no longer borrow, both in GPU-equivalents (each
/// unit at the most a unit is worth in the cluster, as it stands or as the
/// same change leaves it: `heads`), and whether some borrowing became
/// unbounded.
pub(crate) fn borrowing_change(
    repo: &Repo,
    heads: &BTreeMap<String, ClusterSpec>,
    now: Option<&Document<TeamSpec>>,
    before: Option<&Document<TeamSpec>>,
) -> (f64, f64, bool) {
    // Only where Kueue runs (before or after the change): elsewhere nothing
    // renders a cohort to borrow from, and the limits are counted when it
    // comes on (`kueue_borrowing`).
    let now_borrow = borrowing(repo, heads, now, true);
    let before_borrow = borrowing(repo, heads, before, true);
    let (mut unlocked, mut cut, mut unbounded) = (0.0, 0.0, false);
    for (key, &(units, open, worth)) in &now_borrow {
        let (old, old_open, _) = before_borrow.get(key).copied().unwrap_or((0.0, false, 1.0));
        // Without a limit before, borrowing was unbounded: no limit set
        // now unlocks more, however high (it would, as the cluster grows).
        if units > old && !old_open {
            unlocked += (units - old) * worth;
        }
        unbounded |= open && !old_open;
    }
    for (key, &(old, _, worth)) in &before_borrow {
        let units = now_borrow.get(key).map_or(0.0, |(u, _, _)| *u);
        if units < old {
            cut += (old - units) * worth;
        }
    }
    (unlocked, cut, unbounded)
}

/// Builds the facts of a Team.
pub fn team(env: &Env<'_>, team: &Document<TeamSpec>, change: &Change) -> TeamSubject {
    let removed = change.kind == ChangeKind::Removed;
    let quota = if removed {
        0.0
    } else {
        team_quota_gpus(env.world, team)
    };
    let mut facts = super::team_base(env, Some(team), team.name());
    facts.quota_gpus = round(quota);
    let previous = change.previous::<TeamSpec>();
    let now_quota = if removed {
        BTreeMap::new()
    } else {
        team_quota_by_as_changed(env, team)
    };
    let before_quota = previous
        .map(|t| team_quota_by(env.base.unwrap_or(env.world), t))
        .unwrap_or_default();
    let quota_change = quota_delta(&now_quota, &before_quota);
    let now_leads = if removed {
        BTreeSet::new()
    } else {
        leads(team)
    };
    let before_leads = previous.map(leads).unwrap_or_default();
    let (unlocked, cut, unbounded) = borrowing_change(
        env.world,
        &env.aggregates.head_clusters,
        (!removed).then_some(team),
        previous,
    );
    let lending = |t: Option<&Document<TeamSpec>>| -> Vec<(String, String, u32)> {
        t.iter()
            .flat_map(|t| {
                t.spec.clusters.iter().flat_map(|(c, p)| {
                    p.lending_limit
                        .iter()
                        .map(move |(r, v)| (c.value.clone(), r.value.clone(), v.value.0))
                })
            })
            .collect()
    };
    let namespaces = |t: Option<&Document<TeamSpec>>| -> BTreeMap<String, String> {
        t.iter()
            .flat_map(|t| {
                t.spec
                    .clusters
                    .iter()
                    .map(|(c, p)| (c.value.clone(), p.namespace.value.clone()))
            })
            .collect()
    };
    let (ns_now, ns_before) = (namespaces((!removed).then_some(team)), namespaces(previous));
    TeamSubject {
        now: env.at.to_string(),
        config: super::config_facts(env.config, env.world),
        effects: env.effects.clone(),
        change: TeamChange {
            base: super::change_facts(change),
            delta_gpus: round(crate::capacity::signed(quota_change)),
            quota_cut_gpus: round(quota_change.1),
            leads_added: now_leads.difference(&before_leads).cloned().collect(),
            leads_removed: before_leads.difference(&now_leads).cloned().collect(),
            borrowing_unlocked_gpus: round(unlocked),
            borrowing_unbounded: unbounded,
            borrowing_cut_gpus: round(cut),
            lending_changed: previous.is_some()
                && lending((!removed).then_some(team)) != lending(previous),
            // A namespace moved, or a namespace claimed in a cluster the team
            // was not in (every namespace of a team the change adds: its
            // quota, queues and limits are rendered into them).
            namespaces_changed: ns_now
                .iter()
                .filter(|(c, ns)| match ns_before.get(*c) {
                    Some(before) => before != *ns,
                    None => {
                        previous.is_some()
                            || change.kind == crate::policy::change::ChangeKind::Added
                    }
                })
                .map(|(c, _)| c.clone())
                .chain(
                    ns_before
                        .keys()
                        .filter(|c| !removed && !ns_now.contains_key(*c))
                        .cloned(),
                )
                .collect(),
            recent_quota_growth_gpus: round(
                env.aggregates
                    .platform_growth
                    .quotas
                    .get(team.name())
                    .copied()
                    .unwrap_or(0.0),
            ),
            recent_borrowing_unlocked_gpus: round(
                env.aggregates
                    .platform_growth
                    .borrowing
                    .get(team.name())
                    .copied()
                    .unwrap_or(0.0),
            ),
            previous: PreviousTeam {
                gpus: round(before_quota.values().sum()),
                leads: before_leads.into_iter().collect(),
            },
        },
        team: facts,
    }
}

/// A team's quota across clusters, in GPU-equivalents.
pub fn team_quota_gpus(repo: &Repo, team: &Document<TeamSpec>) -> f64 {
    team_quota_by(repo, team).values().sum()
}

/// A team's quota in GPU-equivalents per (cluster, resource).
pub fn team_quota_by(repo: &Repo, team: &Document<TeamSpec>) -> BTreeMap<(String, String), f64> {
    let mut out = BTreeMap::new();
    for (cluster, presence) in &team.spec.clusters {
        let spec = repo.clusters.get(&cluster.value).map(|c| &c.spec);
        for (resource, n) in &presence.quota {
            let eq = spec
                .and_then(|c| unit_worth(c, &resource.value))
                .unwrap_or(1.0);
            *out.entry((cluster.value.clone(), resource.value.clone()))
                .or_insert(0.0) += n.value.0 as f64 * eq;
        }
    }
    out
}

/// [`team_quota_by`] in the world, each unit worth the most it is worth in
/// the world's cluster or in the cluster as the same change leaves it: a
/// quota raised with the pool change that makes its units whole GPUs is not
/// weighed at the slices the base had.
fn team_quota_by_as_changed(
    env: &Env<'_>,
    team: &Document<TeamSpec>,
) -> BTreeMap<(String, String), f64> {
    let mut out = team_quota_by(env.world, team);
    for ((cluster, resource), gpus) in out.iter_mut() {
        let Some(head) = env.aggregates.head_clusters.get(cluster) else {
            continue;
        };
        let Some((_, presence)) = team.spec.clusters.iter().find(|(c, _)| c.value == *cluster)
        else {
            continue;
        };
        let units: f64 = presence
            .quota
            .iter()
            .filter(|(k, _)| k.value == *resource)
            .map(|(_, v)| v.value.0 as f64)
            .sum();
        if let Some(eq) = unit_worth(head, resource) {
            *gpus = gpus.max(units * eq);
        }
    }
    out
}

/// [`quotas_regrown`] on `cluster` going from `then` to as the change has
/// it, over the teams as the change leaves them: the world's (the base's),
/// each one the change adds or edits as the head has it (a quota raised
/// with the pool change that makes it worth more regrows at its new size).
pub(crate) fn regrown_as_changed(
    env: &Env<'_>,
    cluster: &Document<ClusterSpec>,
    then: &ClusterSpec,
) -> f64 {
    let heads = &env.aggregates.head_teams;
    let teams = env
        .world
        .teams
        .values()
        .filter(|t| !heads.contains_key(t.name()))
        .chain(heads.values());
    quotas_regrown(teams, cluster.name(), &cluster.spec, then)
}

/// What one unit of `resource` in a namespace quota is worth on `cluster`, in
/// GPU-equivalents (`None`: no pool provides it). A namespace's quota holds in
/// every pool of the cluster: a unit is worth what it is worth in the pool
/// where it is worth most (a time-sliced pool listed first does not make whole
/// GPUs elsewhere cheap). A pool without nodes holds nothing, so it makes a
/// unit worth nothing more: when its nodes come, the quota's units grow in
/// worth then, and that change is judged as their regrowth (an empty pool
/// added first would otherwise raise the worth while no GPU moved, and the
/// nodes later would regrow the quota unjudged).
pub(crate) fn unit_worth(cluster: &ClusterSpec, resource: &str) -> Option<f64> {
    cluster
        .node_pools
        .iter()
        .filter(|p| crate::capacity::pool_gpus(p) > 0)
        .flat_map(|p| crate::gpu::resources::provided(p, cluster.mig_strategy.value))
        .filter(|p| p.resource == resource)
        .map(|p| p.gpu_equivalent)
        .fold(None, |m: Option<f64>, e| Some(m.map_or(e, |m| m.max(e))))
}

/// GPU-equivalents the teams' standing quotas (and, where `now` runs Kueue,
/// borrowing limits) on cluster `name` gain when the
/// cluster goes from `then` to `now` (fewer time-slicing replicas, a coarser
/// single-strategy MIG layout, a pool whose units are worth more): the quota
/// was granted at `then`'s worth (1 GPU a unit where no pool provided the
/// resource, as a Team change weighs it) and holds `now`'s (nothing where no
/// pool provides it any more). Gains only, summed over teams, and per
/// resource at most the GPUs of the pools where a unit is worth more.
pub(crate) fn quotas_regrown<'t>(
    teams: impl Iterator<Item = &'t Document<TeamSpec>>,
    name: &str,
    now: &ClusterSpec,
    then: &ClusterSpec,
) -> f64 {
    // Per resource: what the quotas gain, up to the GPUs of the pools where
    // a unit is now worth more than it was granted at (only there can the
    // quota hold more than it did).
    let mut gains: BTreeMap<String, f64> = BTreeMap::new();
    for team in teams {
        for (cluster, presence) in &team.spec.clusters {
            if cluster.value != name {
                continue;
            }
            // Borrowing limits count in units too: on a cluster that runs
            // Kueue, a limit regrows with its units' worth as a quota does.
            let kueue = now.kueue.as_ref().is_some_and(|k| k.enabled);
            let limits = presence
                .quota
                .iter()
                .chain(presence.borrowing_limit.iter().filter(|_| kueue));
            for (resource, n) in limits {
                let after = unit_worth(now, &resource.value).unwrap_or(0.0);
                let before = unit_worth(then, &resource.value).unwrap_or(1.0);
                if after > before {
                    *gains.entry(resource.value.clone()).or_default() +=
                        n.value.0 as f64 * (after - before);
                }
            }
        }
    }
    gains
        .iter()
        .map(|(resource, gain)| {
            let before = unit_worth(then, resource).unwrap_or(1.0);
            let room: f64 = now
                .node_pools
                .iter()
                .filter(|p| {
                    crate::gpu::resources::provided(p, now.mig_strategy.value)
                        .iter()
                        .any(|x| x.resource == *resource && x.gpu_equivalent > before)
                })
                .map(|p| crate::capacity::pool_gpus(p) as f64)
                .sum();
            gain.min(room)
        })
        .sum()
}

/// The quota a change adds, cluster by cluster and resource by resource
/// (quota taken off one cluster does not pay for quota added on another);
/// minus what it removes when it only removes.
pub(crate) fn quota_delta(
    now: &BTreeMap<(String, String), f64>,
    before: &BTreeMap<(String, String), f64>,
) -> (f64, f64) {
    let (mut gain, mut loss) = (0.0, 0.0);
    let keys: BTreeSet<&(String, String)> = now.keys().chain(before.keys()).collect();
    for key in keys {
        let d = now.get(key).copied().unwrap_or(0.0) - before.get(key).copied().unwrap_or(0.0);
        if d > 0.0 {
            gain += d;
        } else {
            loss -= d;
        }
    }
    (
        if gain > 1e-9 { gain } else { 0.0 },
        if loss > 1e-9 { loss } else { 0.0 },
    )
}

/// Builds the facts of a changed ApprovalPolicy or Config.
pub fn document(env: &Env<'_>, kind: Kind, name: &str, change: &Change) -> DocumentSubject {
    DocumentSubject {
        now: env.at.to_string(),
        config: super::config_facts(env.config, env.world),
        effects: env.effects.clone(),
        change: super::change_facts(change),
        document: DocumentFacts {
            kind: kind.as_str().to_string(),
            name: name.to_string(),
        },
    }
}
