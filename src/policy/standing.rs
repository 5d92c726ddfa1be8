//! Requests a change does not touch but moves the ground under: requests in
//! force in a pool the change modifies (its purchase mix, MIG layout,
//! time-slicing, size or labels, or any pool of a cluster whose other
//! settings change) or at a priority class it modifies. Such a request was
//! approved against what the base said about its pool; it is judged again
//! as it stands, and only a deny counts: the change may not leave a standing
//! request breaking a rule (production inference on spot or time-sliced
//! GPUs, research at high priority). Its tiers and approvals are not asked
//! again, since nothing about the request itself moved. A request the change
//! also edits is judged both ways: as a change, in the base's world, and
//! here, where its denials join its decision.

use super::change::{Change, ChangeKind, Changed};
use super::{Decision, Outcome};
use crate::model::*;
use std::collections::BTreeSet;

/// The requests of `head` that `changes` (base to head) move the ground
/// under, in force from hour `at` on: standing ones, and those the change
/// also edits or adds (judged in the base's world as changes, and here again
/// against the head's cluster or class, so that editing a request does not
/// spare it the head's pool).
pub fn affected(base: &Repo, head: &Repo, changes: &[Changed], at: Timestamp) -> Vec<Changed> {
    let mut pools: BTreeSet<(&str, &str)> = BTreeSet::new();
    let mut clusters: BTreeSet<&str> = BTreeSet::new();
    let mut classes: BTreeSet<&str> = BTreeSet::new();
    // The Config's default class moved: requests that name none run at the
    // head's.
    let default = |r: &Repo| {
        r.config_spec()
            .defaults
            .priority_class
            .as_ref()
            .map(|c| c.value.clone())
    };
    let default_moved = default(base) != default(head);
    for c in changes {
        // A class added (as the global default) or removed (the global
        // default, which another class replaces) moves requests that name none.
        if c.kind == Kind::PriorityClass && c.change.kind != ChangeKind::Modified {
            classes.insert(&c.name);
        }
        if c.change.kind != ChangeKind::Modified {
            continue;
        }
        match c.kind {
            // Only what places a pod: its value, whether it preempts, and
            // whether it is the default (not its description or annotations).
            Kind::PriorityClass => {
                let placed = |r: &Repo| {
                    r.priority_classes.get(&c.name).map(|p| {
                        let s = &p.spec;
                        (s.value.value, s.preemption(), s.is_global_default())
                    })
                };
                if placed(base) != placed(head) {
                    classes.insert(&c.name);
                }
            }
            Kind::Cluster => {
                let (Some(now), Some(then)) =
                    (head.clusters.get(&c.name), base.clusters.get(&c.name))
                else {
                    continue;
                };
                // Its own settings: those with a value compared by value (a
                // default written out, such as `migStrategy: mixed`, is no
                // change); any other field that changed, by its text.
                let valued = [
                    "environment",
                    "provider",
                    "region",
                    "kubeContext",
                    "apiServer",
                    "migStrategy",
                ];
                let settings = |d: &Document<ClusterSpec>| {
                    let s = &d.spec;
                    serde_json::json!([
                        s.environment,
                        s.provider,
                        s.region,
                        s.kube_context,
                        s.api_server
                            .as_ref()
                            .map(|a| crate::model::api_server::normal_server(&a.value)),
                        s.mig_strategy
                    ])
                };
                let other =
                    c.change.fields.iter().any(|f| {
                        f != "nodePools" && f != "metadata" && !valued.contains(&f.as_str())
                    });
                if other || settings(now) != settings(then) {
                    clusters.insert(now.name());
                    continue;
                }
                for pool in &now.spec.node_pools {
                    let before = then
                        .spec
                        .node_pools
                        .iter()
                        .find(|p| p.name.value == pool.name.value);
                    if before.is_some_and(|b| pool_shape(b) != pool_shape(pool)) {
                        pools.insert((now.name(), pool.name.value.as_str()));
                    }
                }
            }
            _ => {}
        }
    }
    if pools.is_empty() && clusters.is_empty() && classes.is_empty() && !default_moved {
        return Vec::new();
    }
    let hour = at.hour_index();
    head.requests
        .values()
        .filter(|r| crate::capacity::Hours::of_request(&r.spec).end > hour)
        .filter(|r| {
            let s = &r.spec;
            clusters.contains(s.cluster.value.as_str())
                || pools.contains(&(s.cluster.value.as_str(), s.pool.value.as_str()))
                // Without a class of its own a request runs at the global
                // default, which any changed class may have become.
                || s.priority_class.as_ref().map_or(!classes.is_empty() || default_moved, |p| {
                    classes.contains(p.value.as_str())
                })
        })
        .map(|r| Changed {
            kind: Kind::CapacityRequest,
            name: r.name().to_string(),
            change: Change::unchanged(),
        })
        .collect()
}

/// A pool as a change compares it: its size and how it is bought and shared.
pub(crate) fn pool_shape(p: &NodePool) -> String {
    // How the nodes are bought, as the costs read it (no `purchase` is all
    // on demand; a spot label or taint makes them spot).
    let mix = crate::model::purchase_nodes(p);
    let mig = p.mig.as_ref().map(|m| {
        m.layout
            .value
            .iter()
            .map(|(k, v)| format!("{}={}", k.value, v.value.0))
            .collect::<Vec<_>>()
            .join(",")
    });
    // Labels and taints (a set) by value: places differ in base and head.
    let mut taints: Vec<String> = p
        .taints
        .iter()
        .map(|t| serde_json::json!(t).to_string())
        .collect();
    taints.sort_unstable();
    let placed = serde_json::json!([&p.node_labels, taints]).to_string();
    format!(
        "{}x{}:{}:{:?}:{:?}:{:?}:{:?}:{placed}",
        p.nodes.value.0,
        p.gpus_per_node.value.0,
        p.gpu_model.value,
        p.instance_type.as_ref().map(|t| t.value.clone()),
        mix,
        mig,
        p.time_slicing.as_ref().map(|t| t.replicas.value),
    )
}

/// A standing request's decision, reduced to what counts: its denials (and
/// a condition that could not be evaluated); `None` when nothing denies it.
pub fn only_denials(mut decision: Decision) -> Option<Decision> {
    if decision.outcome != Outcome::Denied && !decision.error {
        return None;
    }
    decision
        .findings
        .retain(|f| f.effect == super::Effect::Deny);
    decision.approvals.clear();
    decision.tier = None;
    Some(decision)
}

/// The judging world with the head's version of every cluster and priority
/// class the change modifies, without the priority classes it removes: the
/// ground a standing request now stands on. (The Config's default class is
/// the head's too: [`head_default`].)
pub fn world(world: &Repo, head: &Repo, changes: &[Changed]) -> Repo {
    let mut out = world.clone();
    for c in changes {
        if c.kind == Kind::PriorityClass && c.change.kind == ChangeKind::Removed {
            out.priority_classes.remove(&c.name);
        }
        if c.change.kind != ChangeKind::Modified {
            continue;
        }
        match c.kind {
            Kind::Cluster => {
                if let Some(d) = head.clusters.get(&c.name) {
                    out.clusters.insert(c.name.clone(), d.clone());
                }
            }
            Kind::PriorityClass => {
                if let Some(d) = head.priority_classes.get(&c.name) {
                    out.priority_classes.insert(c.name.clone(), d.clone());
                }
            }
            _ => {}
        }
    }
    out
}

/// The judging Config with the head's default priority class: what a
/// request that names none runs at once the change is merged.
pub fn head_default(config: &ConfigSpec, head: &Repo) -> ConfigSpec {
    let mut out = config.clone();
    out.defaults.priority_class = head.config_spec().defaults.priority_class.clone();
    out
}

/// Adds the denials a request meets against the head's cluster or class to
/// the decision it got as a change (each rule once).
pub fn join(own: &mut Decision, standing: Decision) {
    for f in standing.findings {
        if !own.findings.iter().any(|o| o.rule == f.rule) {
            own.findings.push(f);
        }
    }
    own.error |= standing.error;
    if standing.outcome == Outcome::Denied {
        own.outcome = Outcome::Denied;
    }
}
