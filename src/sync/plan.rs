//! The plan: what applying would do to each cluster, as data.
//!
//! `capops plan --format json` writes a [`Plan`]; `capops apply --plan`
//! reads it back and applies exactly its changes, after checking that the
//! objects it saw (their resourceVersions and content) have not changed.
//! Everything here is plain data with serde derives: the file format is
//! these types.

use super::fields::FieldDiff;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;

/// Version of the plan file format.
pub const PLAN_VERSION: u32 = 1;

/// A Kubernetes object's identity.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ObjRef {
    /// Position of the kind in apply order.
    pub order: u8,
    pub api_version: String,
    pub kind: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
    pub name: String,
}

impl std::fmt::Display for ObjRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.namespace {
            Some(ns) => write!(f, "{} {ns}/{}", self.kind, self.name),
            None => write!(f, "{} {}", self.kind, self.name),
        }
    }
}

/// What a change does.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Action {
    Create,
    Update,
    Delete,
    Conflict,
    Error,
}

impl Action {
    pub fn symbol(self) -> char {
        match self {
            Action::Create => '+',
            Action::Update => '~',
            Action::Delete => '-',
            Action::Conflict => '!',
            Action::Error => 'x',
        }
    }
}

/// Why capops will not write an object (or a field of it) on its own.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "kebab-case")]
pub enum Conflict {
    /// Argo CD or Flux tracks the object: capops never touches it.
    #[serde(rename_all = "camelCase")]
    Gitops { tool: String, marker: String },
    /// Another capacity repository owns it: capops never touches it.
    #[serde(rename_all = "camelCase")]
    OtherRepository { repository: String },
    /// This repository's, applied for another of its Cluster documents: the
    /// context reaches that cluster's API server. capops never touches it.
    #[serde(rename_all = "camelCase")]
    OtherCluster { cluster: String },
    /// An object of the same name that capops did not create (by hand, or by
    /// another tool); `--force-conflicts` takes it over.
    #[serde(rename_all = "camelCase")]
    NotOwned { managers: Vec<String> },
    /// Carries capops's label but names no capacity repository (applied by
    /// hand from rendered files, or by an older capops); `--force-conflicts`
    /// adopts it.
    Unclaimed,
    /// Fields another field manager owns with other values (409 from the
    /// server); `--force-conflicts` takes them over.
    #[serde(rename_all = "camelCase")]
    Fields { fields: Vec<FieldConflict> },
    /// A node selected by pools that want different values for a label.
    #[serde(rename_all = "camelCase")]
    Pools { pools: Vec<String>, label: String },
}

impl Conflict {
    /// Whether `--force-conflicts` may take the object or fields over.
    pub fn forceable(&self) -> bool {
        matches!(
            self,
            Conflict::NotOwned { .. } | Conflict::Unclaimed | Conflict::Fields { .. }
        )
    }

    /// One line for people.
    pub fn describe(&self) -> String {
        match self {
            Conflict::Gitops { tool, marker } => {
                format!("tracked by {tool} ({marker}); capops never touches it")
            }
            Conflict::OtherCluster { cluster } => format!(
                "applied for this repository's Cluster `{cluster}`: this context reaches that cluster's API server, so capops never touches it here"
            ),
            Conflict::OtherRepository { repository } => format!(
                "owned by the capacity repository `{repository}`; capops never touches it"
            ),
            Conflict::NotOwned { managers } if managers.is_empty() => {
                "exists and was not created by capops".to_string()
            }
            Conflict::NotOwned { managers } => format!(
                "exists and was not created by capops (managed by {})",
                managers.join(", ")
            ),
            Conflict::Unclaimed => "carries capops's label but names no capacity repository (applied by hand from rendered files?)".to_string(),
            Conflict::Pools { pools, label } => format!(
                "selected by pools {} which want different values of `{label}`",
                pools.join(" and ")
            ),
            Conflict::Fields { fields } => {
                let list: Vec<String> = fields
                    .iter()
                    .map(|f| match &f.manager {
                        Some(m) => format!("{} (owned by {m})", f.field),
                        None => f.field.clone(),
                    })
                    .collect();
                format!("fields owned by another manager: {}", list.join(", "))
            }
        }
    }
}

/// A field another manager owns.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FieldConflict {
    pub field: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub manager: Option<String>,
}

/// A failure tied to one object (the cluster itself answered).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ObjectError {
    /// Stable kebab-case code (`namespace-missing`, `object-invalid`, ...).
    pub code: String,
    pub message: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub help: Option<String>,
}

/// One planned change to one object.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Change {
    pub action: Action,
    #[serde(flatten)]
    pub target: ObjRef,
    /// The live object's resourceVersion when planned (none for a create).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource_version: Option<String>,
    /// The live object's uid (deletes are made with it as a precondition).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uid: Option<String>,
    /// The revision the live object was applied from (`capops.dev/revision`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub live_revision: Option<String>,
    /// Field-level differences (updates; the object's fields for creates are in `object`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub diff: Vec<FieldDiff>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub conflict: Option<Conflict>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<ObjectError>,
    /// What capops applies (creates, updates, forceable conflicts).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub object: Option<Value>,
}

/// Labels to set on one node.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NodeChange {
    pub node: String,
    pub pool: String,
    /// Label → (value now, value to set).
    pub labels: BTreeMap<String, LabelChange>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub conflict: Option<Conflict>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LabelChange {
    pub before: Option<String>,
    pub after: String,
}

/// Where an object stood when planned: a plan is stale when any of these
/// changed (a status-only change is not a change).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Observed {
    pub resource_version: String,
    /// Hash of the object without status and server bookkeeping.
    pub content: String,
    /// The revision this repository applied it from (its own objects only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub revision: Option<String>,
}

/// Counts of a plan.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Summary {
    pub add: usize,
    pub change: usize,
    pub delete: usize,
    pub conflict: usize,
    pub error: usize,
    /// Objects already as desired.
    pub unchanged: usize,
}

impl Summary {
    pub fn add(&mut self, o: &Summary) {
        self.add += o.add;
        self.change += o.change;
        self.delete += o.delete;
        self.conflict += o.conflict;
        self.error += o.error;
        self.unchanged += o.unchanged;
    }

    /// Whether anything differs from the desired state.
    pub fn drifted(&self) -> bool {
        self.add + self.change + self.delete + self.conflict > 0
    }

    /// `Plan: 1 to add, 2 to change, 0 to delete, 0 conflicts.`
    pub fn line(&self) -> String {
        format!(
            "Plan: {} to add, {} to change, {} to delete, {} conflict{}.",
            self.add,
            self.change,
            self.delete,
            self.conflict,
            if self.conflict == 1 { "" } else { "s" }
        )
    }
}

/// API calls made for one cluster.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Calls {
    pub lists: usize,
    pub gets: usize,
    pub dry_runs: usize,
    pub writes: usize,
}

impl Calls {
    pub fn total(&self) -> usize {
        self.lists + self.gets + self.dry_runs + self.writes
    }
}

/// A failure of a whole cluster (unreachable, Kueue missing, ...).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ClusterError {
    pub code: String,
    pub message: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub help: Option<String>,
}

/// The plan of one cluster.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ClusterPlan {
    pub cluster: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<ClusterError>,
    pub changes: Vec<Change>,
    pub nodes: Vec<NodeChange>,
    /// Objects the plan read, by `kind/namespace/name`.
    pub observed: BTreeMap<String, Observed>,
    pub summary: Summary,
    pub calls: Calls,
}

impl ClusterPlan {
    /// Recounts the summary from the changes (keeps `unchanged`).
    pub fn recount(&mut self) {
        let unchanged = self.summary.unchanged;
        let mut s = Summary {
            unchanged,
            ..Summary::default()
        };
        for c in &self.changes {
            match c.action {
                Action::Create => s.add += 1,
                Action::Update => s.change += 1,
                Action::Delete => s.delete += 1,
                Action::Conflict => s.conflict += 1,
                Action::Error => s.error += 1,
            }
        }
        for n in &self.nodes {
            if n.conflict.is_some() {
                s.conflict += 1;
            } else {
                s.change += 1;
            }
        }
        self.summary = s;
    }
}

/// A plan for every cluster.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Plan {
    pub version: u32,
    /// The capacity repository (its Config's name).
    pub repository: String,
    pub revision: String,
    pub at: String,
    pub clusters: Vec<ClusterPlan>,
    pub summary: Summary,
}

impl Plan {
    pub fn recount(&mut self) {
        let mut s = Summary::default();
        for c in &mut self.clusters {
            c.recount();
            s.add(&c.summary);
        }
        self.summary = s;
    }
}

/// `Kind/namespace/name`: the key of [`ClusterPlan::observed`].
pub fn key(r: &ObjRef) -> String {
    match &r.namespace {
        Some(ns) => format!("{}/{ns}/{}", r.kind, r.name),
        None => format!("{}/{}", r.kind, r.name),
    }
}
