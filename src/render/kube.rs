//! The Kubernetes objects of one cluster at `--at`.
//!
//! - a ResourceQuota `capops-gpu` in each team namespace: `requests.<resource>`
//!   for every GPU resource the cluster's pools provide, the sum of the
//!   team's requests in force (0 where it has none, so nothing runs
//!   unapproved); with `render.priorityClassQuotas`, one more quota per
//!   priority class its requests use, scoped with `scopeSelector`;
//! - a PriorityClass per PriorityClass document;
//! - where the cluster runs Kueue: a ResourceFlavor per pool, a ClusterQueue
//!   per team (one resource group covering every GPU resource of the
//!   cluster, a flavor per pool, nominal quota from its requests in force,
//!   the team's borrowing and lending limits), the cohort they share, a
//!   LocalQueue in each team namespace and a WorkloadPriorityClass per
//!   PriorityClass;
//! - the GPU operator's ConfigMaps and the node-label plan ([`super::operator`]).

pub use super::operator::{
    DEVICE_PLUGIN_CONFIGMAP, DEVICE_PLUGIN_LABEL, MIG_CONFIGMAP, MIG_DISABLED, MIG_LABEL,
};

use super::lint;
use super::{File, Job};
use crate::capacity;
use crate::diag::{Code, Diagnostic};
use crate::gpu::resources;
use crate::model::*;
use serde_json::{Value, json};
use std::collections::{BTreeMap, BTreeSet};

/// Name of the ResourceQuota in each team namespace.
pub use crate::validate::names::QUOTA_NAME;

/// What one team holds in one cluster at `--at`.
#[derive(Default)]
struct Holding {
    /// (pool, resource) → units.
    units: BTreeMap<(String, String), u64>,
    /// priority class → resource → units.
    by_class: BTreeMap<String, BTreeMap<String, u64>>,
    requests: Vec<String>,
}

/// The teams present in each cluster (with their namespaces) and the
/// requests in force at `--at`, by cluster, in the repository's order: built
/// once, so rendering many clusters reads each team and request once.
#[derive(Default)]
pub struct ByCluster<'r> {
    teams: std::collections::HashMap<&'r str, Vec<(&'r Document<TeamSpec>, &'r TeamCluster)>>,
    requests: std::collections::HashMap<&'r str, Vec<&'r Document<RequestSpec>>>,
}

impl<'r> ByCluster<'r> {
    pub fn new(repo: &'r Repo, at: Timestamp) -> Self {
        let mut out = ByCluster::default();
        for t in repo.teams.values() {
            let mut seen = BTreeSet::new();
            for (c, tc) in &t.spec.clusters {
                // The first entry of a cluster stands, as a search would find it.
                if seen.insert(c.value.as_str()) {
                    out.teams.entry(c.value.as_str()).or_default().push((t, tc));
                }
            }
        }
        for r in capacity::active_at(repo, at) {
            out.requests
                .entry(r.spec.cluster.value.as_str())
                .or_default()
                .push(r);
        }
        out
    }
}

/// Adds the jobs of one cluster at the time `index` was built for; returns
/// its node-label plan, if any.
pub fn cluster(
    repo: &Repo,
    index: &ByCluster<'_>,
    cluster: &Document<ClusterSpec>,
    jobs: &mut Vec<Job>,
    diags: &mut Vec<Diagnostic>,
) -> Option<File> {
    let name = cluster.name();
    let spec = &cluster.spec;
    let settings = repo
        .config
        .as_ref()
        .map(|c| c.spec.render.clone())
        .unwrap_or_default();
    let default_class = repo
        .config
        .as_ref()
        .and_then(|c| c.spec.defaults.priority_class.as_ref())
        .map(|p| p.value.clone());
    let strategy = spec.mig_strategy.value;
    // Every GPU resource the cluster provides, pool by pool.
    let provided: Vec<(&NodePool, Vec<resources::Provided>)> = spec
        .node_pools
        .iter()
        .map(|p| (p, resources::provided(p, strategy)))
        .collect();
    let covered: Vec<String> = provided
        .iter()
        .flat_map(|(_, r)| r.iter().map(|x| x.resource.clone()))
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    // Teams present in the cluster, with their namespaces.
    let teams: &[(&Document<TeamSpec>, &TeamCluster)] =
        index.teams.get(name).map_or(&[], Vec::as_slice);
    // What each team holds at `at`.
    let mut holdings: BTreeMap<&str, Holding> = BTreeMap::new();
    for r in index.requests.get(name).map_or(&[][..], Vec::as_slice) {
        let s = &r.spec;
        let Some((pool, provided)) = provided
            .iter()
            .find(|(p, _)| p.name.value.as_str() == s.pool.value)
        else {
            continue;
        };
        let h = holdings.entry(s.team.value.as_str()).or_default();
        h.requests.push(format!("CapacityRequest/{}", r.name()));
        let class = s
            .priority_class
            .as_ref()
            .map(|p| p.value.clone())
            .or_else(|| default_class.clone());
        for (res, count) in &s.resources {
            let Some(p) = resources::find(provided, &res.value, pool) else {
                continue;
            };
            let n = u64::from(count.value.0);
            *h.units
                .entry((pool.name.value.as_str().to_string(), p.resource.clone()))
                .or_default() += n;
            if let Some(c) = &class {
                *h.by_class
                    .entry(c.clone())
                    .or_default()
                    .entry(p.resource.clone())
                    .or_default() += n;
            }
        }
    }
    let empty = Holding::default();
    // ResourceQuotas.
    for (team, tc) in teams {
        let h = holdings.get(team.name()).unwrap_or(&empty);
        let mut hard = BTreeMap::new();
        for res in &covered {
            let sum: u64 = h
                .units
                .iter()
                .filter(|((_, r), _)| r == res)
                .map(|(_, n)| n)
                .sum();
            hard.insert(format!("requests.{res}"), sum);
        }
        let mut sources = vec![format!("Team/{}", team.name())];
        sources.extend(h.requests.iter().cloned());
        jobs.push(Job {
            template: "kubernetes/resourcequota.yaml.j2",
            context: json!({
                "name": QUOTA_NAME,
                "namespace": tc.namespace.value,
                "hard": hard,
                "priority_class": Value::Null,
                "team": team.name(),
                "cluster": name,
            }),
            expect: Some(("v1", "ResourceQuota")),
            sources: sources.clone(),
            span: tc.namespace.span,
            folder: name.to_string(),
            file_name: None,
        });
        if settings.priority_class_quotas {
            for (class, units) in &h.by_class {
                let hard: BTreeMap<String, u64> = units
                    .iter()
                    .map(|(r, n)| (format!("requests.{r}"), *n))
                    .collect();
                jobs.push(Job {
                    template: "kubernetes/resourcequota.yaml.j2",
                    context: json!({
                        "name": format!("{QUOTA_NAME}-{class}"),
                        "namespace": tc.namespace.value,
                        "hard": hard,
                        "priority_class": class,
                        "team": team.name(),
                        "cluster": name,
                    }),
                    expect: Some(("v1", "ResourceQuota")),
                    sources: sources.clone(),
                    span: tc.namespace.span,
                    folder: name.to_string(),
                    file_name: None,
                });
            }
        }
    }
    // PriorityClasses (and Kueue's WorkloadPriorityClasses below).
    let kueue_on = spec.kueue.as_ref().is_some_and(|k| k.enabled);
    for pc in repo.priority_classes.values() {
        let s = &pc.spec;
        jobs.push(Job {
            template: "kubernetes/priorityclass.yaml.j2",
            context: json!({
                "name": pc.name(),
                "value": s.value.value,
                "preemption_policy": match s.preemption_policy {
                    Some(crate::model::priority::PreemptionPolicy::Never) => "Never",
                    _ => "PreemptLowerPriority",
                },
                "global_default": s.global_default.as_ref().is_some_and(|g| g.value),
                "description": s.description,
            }),
            expect: Some(("scheduling.k8s.io/v1", "PriorityClass")),
            sources: vec![format!("PriorityClass/{}", pc.name())],
            span: pc.name_span(),
            folder: name.to_string(),
            file_name: None,
        });
        if kueue_on {
            if let Some(d) = lint::description_too_long(pc, name) {
                diags.push(d);
                continue;
            }
            jobs.push(Job {
                template: "kubernetes/workloadpriorityclass.yaml.j2",
                context: json!({
                    "name": pc.name(),
                    "value": s.value.value,
                    "description": s.description,
                }),
                expect: Some(("kueue.x-k8s.io/v1beta2", "WorkloadPriorityClass")),
                sources: vec![format!("PriorityClass/{}", pc.name())],
                span: pc.name_span(),
                folder: name.to_string(),
                file_name: None,
            });
        }
    }
    if kueue_on {
        kueue_objects(
            repo, cluster, &provided, &covered, teams, &holdings, &settings, jobs, diags,
        );
    }
    super::operator::gpu_operator(cluster, &provided, &settings, kueue_on, jobs, diags)
}

#[allow(clippy::too_many_arguments)]
fn kueue_objects(
    repo: &Repo,
    cluster: &Document<ClusterSpec>,
    provided: &[(&NodePool, Vec<resources::Provided>)],
    covered: &[String],
    teams: &[(&Document<TeamSpec>, &TeamCluster)],
    holdings: &BTreeMap<&str, Holding>,
    settings: &crate::model::config::RenderSettings,
    jobs: &mut Vec<Job>,
    diags: &mut Vec<Diagnostic>,
) {
    let _ = repo;
    let name = cluster.name();
    let spec = &cluster.spec;
    let cohort = crate::model::kueue_cohort(name, spec)
        .expect("kueue is on")
        .to_string();
    // A cluster over Kueue's limits gets no Kueue objects, and render fails
    // with the lint's errors even where the Config lowered them: rendering
    // the cluster without its queues would have `apply` prune the live ones.
    let problems: Vec<Diagnostic> = lint::kueue_cluster(cluster)
        .into_iter()
        .filter(Diagnostic::is_error)
        .collect();
    if !problems.is_empty() {
        diags.extend(problems);
        return;
    }
    jobs.push(Job {
        template: "kubernetes/cohort.yaml.j2",
        context: json!({"name": cohort}),
        expect: Some(("kueue.x-k8s.io/v1beta2", "Cohort")),
        sources: vec![format!("Cluster/{name}")],
        span: cluster.name_span(),
        folder: name.to_string(),
        file_name: None,
    });
    for (pool, _) in provided {
        let tolerations: Vec<Value> = pool
            .taints
            .iter()
            .map(|t| {
                json!({
                    "key": t.key,
                    "operator": if t.value.is_some() { "Equal" } else { "Exists" },
                    "value": t.value,
                    "effect": match t.effect {
                        TaintEffect::NoSchedule => "NoSchedule",
                        TaintEffect::PreferNoSchedule => "PreferNoSchedule",
                        TaintEffect::NoExecute => "NoExecute",
                    },
                })
            })
            .collect();
        jobs.push(Job {
            template: "kubernetes/resourceflavor.yaml.j2",
            context: json!({
                "name": pool.name.value.as_str(),
                "node_labels": pool.node_labels,
                "tolerations": tolerations,
                "cluster": name,
            }),
            expect: Some(("kueue.x-k8s.io/v1beta2", "ResourceFlavor")),
            sources: vec![format!("Cluster/{name}")],
            span: pool.name.span,
            folder: name.to_string(),
            file_name: None,
        });
    }
    let empty = Holding::default();
    for (team, tc) in teams {
        let h = holdings.get(team.name()).unwrap_or(&empty);
        // A team's limits are keyed by resource across the cluster's pools:
        // a key limits the resource it names ([`resources::names_resource`]),
        // never another model's profile in another pool.
        let limit = |m: &BTreeMap<Spanned<String>, Spanned<Quantity>>,
                     _pool: &NodePool,
                     _prov: &[resources::Provided],
                     res: &str|
         -> Option<(u64, crate::diag::Span)> {
            m.iter()
                .find(|(k, _)| resources::names_resource(&k.value, res))
                .map(|(_, v)| (u64::from(v.value.0), v.span))
        };
        let mut flavors: Vec<(Value, Vec<u64>)> = Vec::new();
        let mut warned = BTreeSet::new();
        for (pool, prov) in provided {
            let pool_name = pool.name.value.as_str();
            let mut resources_out = Vec::new();
            for res in covered {
                let nominal = h
                    .units
                    .get(&(pool_name.to_string(), res.clone()))
                    .copied()
                    .unwrap_or(0);
                let provides = prov.iter().any(|p| &p.resource == res);
                let borrowing = provides
                    .then(|| limit(&tc.borrowing_limit, pool, prov, res))
                    .flatten()
                    .map(|(n, _)| n);
                // Kueue wants lendingLimit ≤ nominalQuota in each flavor:
                // the team's limit is per resource, so it is capped per flavor.
                let lending = provides
                    .then(|| limit(&tc.lending_limit, pool, prov, res))
                    .flatten()
                    .map(|(n, span)| {
                        let held: u64 = h
                            .units
                            .iter()
                            .filter(|((_, r), _)| r == res)
                            .map(|(_, n)| n)
                            .sum();
                        if n > held && warned.insert(res.clone()) {
                            diags.push(
                                Diagnostic::new(
                                    Code::KueueLendingAboveNominal,
                                    format!(
                                        "team `{}` may lend {n} {res} in `{name}` but holds {held} there at this time; Kueue requires lendingLimit ≤ nominalQuota, so each flavor lends at most what the team holds in it",
                                        team.name()
                                    ),
                                )
                                .at(span, "lending limit")
                                .help("lower the lending limit, or ignore this if lending everything held is intended"),
                            );
                        }
                        n.min(nominal)
                    });
                let team_lending = provides
                    .then(|| limit(&tc.lending_limit, pool, prov, res))
                    .flatten()
                    .map(|(n, _)| n);
                resources_out.push(json!({
                    "name": res,
                    "nominal_quota": nominal,
                    "borrowing_limit": borrowing,
                    "lending_limit": lending,
                    "team_lending_limit": team_lending,
                }));
            }
            let units: Vec<u64> = covered
                .iter()
                .map(|res| {
                    prov.iter().find(|p| &p.resource == res).map_or(0, |p| {
                        u64::from(crate::capacity::pool_gpus(pool)) * u64::from(p.per_gpu)
                    })
                })
                .collect();
            flavors.push((
                json!({"name": pool_name, "resources": resources_out}),
                units,
            ));
        }
        let flavors = split_team_limits(flavors, covered.len());
        let mut sources = vec![format!("Team/{}", team.name())];
        sources.extend(h.requests.iter().cloned());
        jobs.push(Job {
            template: "kubernetes/clusterqueue.yaml.j2",
            context: json!({
                "name": team.name(),
                "cohort": cohort,
                "namespace": tc.namespace.value,
                "covered_resources": covered,
                "flavors": flavors,
                "team": team.name(),
                "cluster": name,
            }),
            expect: Some(("kueue.x-k8s.io/v1beta2", "ClusterQueue")),
            sources,
            span: tc.namespace.span,
            folder: name.to_string(),
            file_name: None,
        });
        jobs.push(Job {
            template: "kubernetes/localqueue.yaml.j2",
            context: json!({
                "name": settings.local_queue,
                "namespace": tc.namespace.value,
                "cluster_queue": team.name(),
            }),
            expect: Some(("kueue.x-k8s.io/v1beta2", "LocalQueue")),
            sources: vec![format!("Team/{}", team.name())],
            span: tc.namespace.span,
            folder: name.to_string(),
            file_name: None,
        });
    }
}

/// Kueue limits borrowing and lending per flavor, while a Team states them
/// per resource for its whole queue: copied onto every flavor they would
/// add up (32 per flavor over three pools is 96). So a team's limit is
/// split: borrowing among the flavors in proportion to their pools' units
/// (the remainder to the first), lending flavor by flavor up to what the
/// team holds in each, until the limit is spent. The sums are the Team's
/// limits. Flavors where the team holds quota come first: Kueue tries
/// flavors in order and, by default, stops at the first one it can borrow
/// in, so a team's own capacity must come before its neighbours'.
pub(super) fn split_team_limits(
    mut flavors: Vec<(Value, Vec<u64>)>,
    resources: usize,
) -> Vec<Value> {
    for r in 0..resources {
        let field = |f: &Value, k: &str| f["resources"][r][k].as_u64();
        // Borrowing: one limit for the team, split by units.
        let with: Vec<usize> = (0..flavors.len())
            .filter(|&i| field(&flavors[i].0, "borrowing_limit").is_some())
            .collect();
        if let Some(&first) = with.first() {
            let limit = field(&flavors[first].0, "borrowing_limit").unwrap_or(0);
            let total: u64 = with.iter().map(|&i| flavors[i].1[r]).sum();
            let mut shares: Vec<u64> = with
                .iter()
                .map(|&i| {
                    (limit * flavors[i].1[r])
                        .checked_div(total)
                        .unwrap_or(limit / with.len() as u64)
                })
                .collect();
            let mut rest = limit - shares.iter().sum::<u64>();
            for s in shares.iter_mut() {
                if rest == 0 {
                    break;
                }
                *s += 1;
                rest -= 1;
            }
            for (&i, s) in with.iter().zip(shares) {
                flavors[i].0["resources"][r]["borrowing_limit"] = json!(s);
            }
        }
        // Lending: spent flavor by flavor, each at most what is held there.
        let mut left: Option<u64> = None;
        for (f, _) in flavors.iter_mut() {
            let Some(limit) = f["resources"][r]["team_lending_limit"].as_u64() else {
                continue;
            };
            let remaining = left.get_or_insert(limit);
            let nominal = f["resources"][r]["nominal_quota"].as_u64().unwrap_or(0);
            let lend = nominal.min(*remaining);
            *remaining -= lend;
            f["resources"][r]["lending_limit"] = json!(lend);
        }
    }
    let mut out: Vec<Value> = flavors.into_iter().map(|(f, _)| f).collect();
    for f in &mut out {
        for r in f["resources"].as_array_mut().into_iter().flatten() {
            if let Some(m) = r.as_object_mut() {
                m.remove("team_lending_limit");
            }
        }
    }
    out.sort_by_key(|f| {
        !f["resources"]
            .as_array()
            .is_some_and(|rs| rs.iter().any(|r| r["nominal_quota"].as_u64() > Some(0)))
    });
    out
}
