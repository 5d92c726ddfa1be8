//! Applying one cluster's plan: objects with server-side apply in the
//! kinds' order (each kind's objects concurrently), forceable conflicts only
//! with `--force-conflicts`, node labels with a merge patch, then prunes in
//! reverse order with uid and resourceVersion preconditions (held back when
//! a create or update of the cluster did not land); with `--wait`, the MIG
//! manager's progress on each relabelled node.

use super::client::{CallError, Conn};
use super::desired::FIELD_MANAGER;
use super::diff;
use super::kinds::NODE;
use super::nodes;
use super::plan::{Action, Change, ClusterError, ClusterPlan, NodeChange, ObjRef, ObjectError};
use super::run::{Progress, Settings, cluster_error, path_of};
use crate::diag::Code;
use futures::StreamExt;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::time::Duration;

/// What happened to one change when applied.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Outcome {
    /// `Kind namespace/name`, or `Node name`.
    pub target: String,
    pub action: Action,
    /// `applied`, `skipped` or `failed`.
    pub status: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<ObjectError>,
}

/// Where a node's MIG reconfiguration ended.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NodeRollout {
    pub node: String,
    pub pool: String,
    pub config: String,
    pub state: nodes::Rollout,
    /// Whether the wait ended before the node finished.
    pub timed_out: bool,
}

/// The result of applying one cluster's plan.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ClusterApply {
    pub cluster: String,
    pub outcomes: Vec<Outcome>,
    pub writes: usize,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<ClusterError>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rollout: Vec<NodeRollout>,
}

impl ClusterApply {
    pub fn failed(&self) -> usize {
        self.outcomes
            .iter()
            .filter(|o| o.status == "failed")
            .count()
    }
    pub fn skipped(&self) -> usize {
        self.outcomes
            .iter()
            .filter(|o| o.status == "skipped")
            .count()
    }
}

/// How to apply.
#[derive(Clone, Debug, Default)]
pub struct ApplyOptions {
    /// Take over fields and objects other managers own (never Argo CD's,
    /// Flux's or another capacity repository's).
    pub force_conflicts: bool,
    /// resourceVersion preconditions for updates, by `plan::key` (apply --plan).
    pub preconditions: BTreeMap<String, String>,
    /// Wait for the MIG manager after relabelling nodes.
    pub wait: Option<Wait>,
    /// Other clusters of the apply that could not be planned, or whose plan
    /// holds writes that will not land: prunes wait for them too (a team
    /// moved from here to one of them would be left with no quota anywhere).
    pub failed_elsewhere: Vec<String>,
}

/// How long and how often to watch `nvidia.com/mig.config.state`.
#[derive(Clone, Copy, Debug)]
pub struct Wait {
    pub timeout: Duration,
    pub interval: Duration,
}

fn object_failure(target: &ObjRef, e: &CallError) -> ObjectError {
    match e {
        CallError::Api(a) => diff::object_error(target, a),
        CallError::Transport(t) => ObjectError {
            code: Code::ClusterUnreachable.as_str().into(),
            message: format!("{target}: {t}"),
            help: None,
        },
    }
}

async fn apply_change(conn: &Conn, c: &Change, o: &ApplyOptions) -> Outcome {
    let target = c.target.to_string();
    let outcome = |status: &str, error: Option<ObjectError>| Outcome {
        target: target.clone(),
        action: c.action,
        status: status.to_string(),
        error,
    };
    let path = path_of(&c.target);
    match c.action {
        Action::Create | Action::Update | Action::Conflict => {
            let force = match &c.conflict {
                None => false,
                Some(k) if k.forceable() && o.force_conflicts => true,
                Some(k) => {
                    let help = if k.forceable() {
                        Some("re-run with --force-conflicts to take it over".to_string())
                    } else {
                        None
                    };
                    return outcome(
                        "skipped",
                        Some(ObjectError {
                            code: conflict_code(k).as_str().into(),
                            message: format!("{}: {}", c.target, k.describe()),
                            help,
                        }),
                    );
                }
            };
            let Some(object) = &c.object else {
                return outcome("skipped", None);
            };
            let mut object = object.clone();
            if let Some(rv) = o.preconditions.get(&super::plan::key(&c.target))
                && let Some(meta) = object["metadata"].as_object_mut()
            {
                meta.insert("resourceVersion".into(), rv.clone().into());
            }
            match conn
                .apply(&path, &c.target.name, &object, false, force)
                .await
            {
                Ok(_) => outcome("applied", None),
                Err(e) => outcome("failed", Some(object_failure(&c.target, &e))),
            }
        }
        Action::Delete => {
            let rv = o
                .preconditions
                .get(&super::plan::key(&c.target))
                .or(c.resource_version.as_ref());
            match conn
                .delete(
                    &path,
                    &c.target.name,
                    c.uid.as_deref(),
                    rv.map(String::as_str),
                )
                .await
            {
                Ok(()) => outcome("applied", None),
                Err(CallError::Api(a)) if a.code == 404 => outcome("applied", None),
                Err(e) => outcome("failed", Some(object_failure(&c.target, &e))),
            }
        }
        Action::Error => outcome("skipped", c.error.clone()),
    }
}

/// The code of a conflict.
pub fn conflict_code(c: &super::plan::Conflict) -> Code {
    use super::plan::Conflict::*;
    match c {
        Gitops { .. } => Code::GitopsTracked,
        OtherRepository { .. } => Code::OtherRepository,
        OtherCluster { .. } => Code::OtherCluster,
        NotOwned { .. } => Code::ObjectNotOwned,
        Unclaimed => Code::ObjectUnclaimed,
        Fields { .. } => Code::FieldConflict,
        Pools { .. } => Code::NodePoolsOverlap,
    }
}

/// Applies a cluster's plan: objects in apply order (each kind's objects
/// concurrently), node labels, then prunes in reverse order.
pub async fn apply_cluster(
    conn: &Conn,
    plan: &ClusterPlan,
    o: &ApplyOptions,
    s: &Settings,
    progress: &dyn Progress,
) -> ClusterApply {
    let cluster = plan.cluster.as_str();
    let before = conn.calls().writes;
    let mut out = ClusterApply {
        cluster: cluster.to_string(),
        ..ClusterApply::default()
    };
    let total = plan.changes.len() + plan.nodes.len();
    progress.length(cluster, total as u64);
    progress.message(cluster, "applying");
    let mut groups: BTreeMap<(bool, i16), Vec<&Change>> = BTreeMap::new();
    for c in &plan.changes {
        let delete = c.action == Action::Delete;
        let order = if delete {
            -i16::from(c.target.order)
        } else {
            i16::from(c.target.order)
        };
        groups.entry((delete, order)).or_default().push(c);
    }
    let mut labelled = false;
    // Creates and updates that did not land: an object the plan found
    // invalid (a missing namespace), a write the server refused, or an
    // object of the same name that is not capops's.
    let mut missed = 0;
    // The targets of those, which what names them waits for
    // ([`super::held`]).
    let mut missing: std::collections::BTreeSet<String> = Default::default();
    for ((delete, _), changes) in groups {
        if delete && !labelled {
            apply_nodes(conn, plan, o, progress, &mut out, &missing).await;
            labelled = true;
        }
        if delete && (missed > 0 || !o.failed_elsewhere.is_empty()) {
            // A prune after a failed create would leave the team with
            // neither the old object nor the new one (a quota moved to a
            // namespace that does not exist yet): prunes wait for a clean
            // apply.
            for c in changes {
                progress.advance(cluster);
                out.outcomes.push(Outcome {
                    target: c.target.to_string(),
                    action: c.action,
                    status: "skipped".into(),
                    error: Some(ObjectError {
                        code: Code::PruneHeldBack.as_str().into(),
                        message: if missed > 0 {
                            format!(
                                "{}: not deleted: {missed} create{} or update{} in this cluster did not land",
                                c.target,
                                if missed == 1 { "" } else { "s" },
                                if missed == 1 { "" } else { "s" },
                            )
                        } else {
                            format!(
                                "{}: not deleted: {} could not be planned or has writes that will not land, and what this cluster gives up may be moving there",
                                c.target,
                                o.failed_elsewhere.join(", ")
                            )
                        },
                        help: Some(
                            "fix what failed and apply again; prunes run once every create and update of the cluster lands".into(),
                        ),
                    }),
                });
            }
            continue;
        }
        // Writes that name an object that did not land wait for it.
        let (changes, held): (Vec<&Change>, Vec<&Change>) = changes
            .into_iter()
            .partition(|c| delete || super::held::waits_for(c, &missing).is_none());
        for c in held {
            progress.advance(cluster);
            let named = super::held::waits_for(c, &missing)
                .cloned()
                .unwrap_or_default();
            missed += 1;
            missing.insert(c.target.to_string());
            out.outcomes.push(Outcome {
                target: c.target.to_string(),
                action: c.action,
                status: "skipped".into(),
                error: Some(ObjectError {
                    code: Code::WriteHeldBack.as_str().into(),
                    message: format!(
                        "{}: not written: it names {named}, which did not land",
                        c.target
                    ),
                    help: Some(
                        "fix what failed and apply again; this write goes through then".into(),
                    ),
                }),
            });
        }
        let results: Vec<Outcome> = futures::stream::iter(changes)
            .map(|c| async move {
                let r = apply_change(conn, c, o).await;
                progress.advance(cluster);
                r
            })
            .buffer_unordered(s.concurrency.max(1))
            .collect()
            .await;
        let unreachable = results.iter().any(|r| {
            r.error
                .as_ref()
                .is_some_and(|e| e.code == Code::ClusterUnreachable.as_str())
        });
        if !delete {
            // Any create or update that was not written leaves the desired
            // object missing: a write the server refused, an object of the
            // name that is not capops's, and a field conflict on capops's own
            // object too (someone edited the MIG manager's ConfigMap: the
            // layout a node would be labelled with is not in it; a
            // ClusterQueue still naming the flavor a prune would delete).
            for r in results.iter().filter(|r| {
                r.status == "failed"
                    || (r.status == "skipped" && r.error.is_some())
                    || r.action == Action::Error
            }) {
                missed += 1;
                missing.insert(r.target.clone());
            }
        }
        out.outcomes.extend(results);
        if unreachable {
            out.error = Some(cluster_error(
                Code::ClusterUnreachable,
                format!(
                    "lost {} while applying; the rest was not applied",
                    conn.server
                ),
                Some("run `capops plan` again when the cluster is back".into()),
            ));
            out.writes = conn.calls().writes - before;
            return out;
        }
    }
    if !labelled {
        apply_nodes(conn, plan, o, progress, &mut out, &missing).await;
    }
    out.outcomes.sort_by(|a, b| a.target.cmp(&b.target));
    out.writes = conn.calls().writes - before;
    out
}

async fn apply_nodes(
    conn: &Conn,
    plan: &ClusterPlan,
    o: &ApplyOptions,
    progress: &dyn Progress,
    out: &mut ClusterApply,
    missing: &std::collections::BTreeSet<String>,
) {
    let mut relabelled: Vec<(&NodeChange, String)> = Vec::new();
    for n in &plan.nodes {
        let target = format!("Node {}", n.node);
        progress.advance(&plan.cluster);
        // A layout label waits for the ConfigMap that holds the layouts.
        if let Some(named) = super::held::labels_wait(missing) {
            out.outcomes.push(Outcome {
                target,
                action: Action::Update,
                status: "skipped".into(),
                error: Some(ObjectError {
                    code: Code::WriteHeldBack.as_str().into(),
                    message: format!("node {}: not relabelled: {named} did not land", n.node),
                    help: Some("fix what failed and apply again; the labels go on then".into()),
                }),
            });
            continue;
        }
        if let Some(k) = &n.conflict
            && !(k.forceable() && o.force_conflicts)
        {
            out.outcomes.push(Outcome {
                target,
                action: Action::Conflict,
                status: "skipped".into(),
                error: Some(ObjectError {
                    code: conflict_code(k).as_str().into(),
                    message: format!("node {}: {}", n.node, k.describe()),
                    help: k
                        .forceable()
                        .then(|| "re-run with --force-conflicts to take the labels over".into()),
                }),
            });
            continue;
        }
        let labels: serde_json::Map<String, Value> = n
            .labels
            .iter()
            .map(|(k, v)| (k.clone(), Value::from(v.after.clone())))
            .collect();
        let patch = json!({"metadata": {"labels": labels}});
        match conn
            .merge_patch(&NODE.path(None), &n.node, &patch, false)
            .await
        {
            Ok(v) => {
                out.outcomes.push(Outcome {
                    target,
                    action: Action::Update,
                    status: "applied".into(),
                    error: None,
                });
                if n.labels.contains_key(crate::render::kube::MIG_LABEL) {
                    relabelled.push((n, labelled_at(&v)));
                }
            }
            Err(e) => {
                let r = ObjRef {
                    order: NODE.order,
                    api_version: "v1".into(),
                    kind: "Node".into(),
                    namespace: None,
                    name: n.node.clone(),
                };
                out.outcomes.push(Outcome {
                    target,
                    action: Action::Update,
                    status: "failed".into(),
                    error: Some(object_failure(&r, &e)),
                });
            }
        }
    }
    if let Some(w) = o.wait
        && !relabelled.is_empty()
    {
        progress.message(&plan.cluster, "waiting for the MIG manager");
        out.rollout = wait_rollout(conn, &relabelled, w).await;
    }
}

/// When capops's label write landed, from the node's managedFields.
fn labelled_at(node: &Value) -> String {
    node["metadata"]["managedFields"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|e| e["manager"] == FIELD_MANAGER)
        .filter_map(|e| e["time"].as_str())
        .max()
        .unwrap_or_default()
        .to_string()
}

async fn wait_rollout(conn: &Conn, nodes: &[(&NodeChange, String)], w: Wait) -> Vec<NodeRollout> {
    // Checked: a deadline past what the clock can hold waits a day.
    let now = tokio::time::Instant::now();
    let deadline = now
        .checked_add(w.timeout)
        .unwrap_or(now + Duration::from_secs(86_400));
    let mut state: BTreeMap<String, nodes::Rollout> = BTreeMap::new();
    loop {
        for (n, at) in nodes {
            if state.get(&n.node).is_some_and(|s| s.done()) {
                continue;
            }
            if let Ok(Some(v)) = conn.get(&NODE.path(None), &n.node).await {
                state.insert(n.node.clone(), nodes::rollout(&v, at));
            }
        }
        let done = nodes
            .iter()
            .all(|(n, _)| state.get(&n.node).is_some_and(|s| s.done()));
        if done || tokio::time::Instant::now() + w.interval > deadline {
            return nodes
                .iter()
                .map(|(n, _)| {
                    let s = state
                        .get(&n.node)
                        .copied()
                        .unwrap_or(nodes::Rollout::Waiting);
                    NodeRollout {
                        node: n.node.clone(),
                        pool: n.pool.clone(),
                        config: n
                            .labels
                            .get(crate::render::kube::MIG_LABEL)
                            .map(|l| l.after.clone())
                            .unwrap_or_default(),
                        state: s,
                        timed_out: !s.done(),
                    }
                })
                .collect();
        }
        tokio::time::sleep(w.interval).await;
    }
}
