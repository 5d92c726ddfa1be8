//! GPU nodes: the labels capops sets on each pool's nodes (the MIG
//! manager's `nvidia.com/mig.config`, the device plugin's
//! `nvidia.com/device-plugin.config`), the MIG rollout's progress, and
//! `verify`: what the nodes advertise against what the pools declare. Pure
//! functions over node objects already read.

use super::desired::{FIELD_MANAGER, PoolLabels};
use super::fields::{self, Seg};
use super::plan::{Conflict, FieldConflict, LabelChange, NodeChange};
use crate::gpu::{catalog, resources};
use crate::model::{ClusterSpec, MigStrategy};
use crate::render::kube::MIG_LABEL;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;

/// The MIG manager's progress label.
pub const MIG_STATE_LABEL: &str = "nvidia.com/mig.config.state";
/// The value the GPU operator gives MIG-capable nodes nobody labelled.
pub const MIG_DEFAULT: &str = "all-disabled";
/// GPU Feature Discovery's labels.
pub const PRODUCT_LABEL: &str = "nvidia.com/gpu.product";
pub const COUNT_LABEL: &str = "nvidia.com/gpu.count";
/// The device plugin's MIG strategy, as GPU Feature Discovery reports it.
pub const STRATEGY_LABEL: &str = "nvidia.com/mig.strategy";

/// A node's name.
pub fn name(node: &Value) -> &str {
    node["metadata"]["name"].as_str().unwrap_or_default()
}

/// A node's label.
pub fn label<'a>(node: &'a Value, key: &str) -> Option<&'a str> {
    node["metadata"]["labels"][key].as_str()
}

/// Whether a node matches a selector (every label equal).
pub fn selected(node: &Value, selector: &BTreeMap<String, String>) -> bool {
    !selector.is_empty()
        && selector
            .iter()
            .all(|(k, v)| label(node, k) == Some(v.as_str()))
}

/// The label changes for the pools' nodes. `nodes` holds every node read
/// (each pool's list); a node another manager labelled with a different
/// value is a conflict, except the GPU operator's `all-disabled` default
/// for the MIG label, which exists to be replaced.
pub fn plan(pools: &[PoolLabels], nodes: &[Value]) -> Vec<NodeChange> {
    let mut by_node: BTreeMap<&str, NodeChange> = BTreeMap::new();
    let mut wanted: BTreeMap<(&str, &str), (&str, &str)> = BTreeMap::new();
    for pool in pools {
        for node in nodes.iter().filter(|n| selected(n, &pool.selector)) {
            let n = name(node);
            for (k, v) in &pool.labels {
                if let Some((other_pool, other_value)) = wanted.get(&(n, k.as_str()))
                    && *other_value != v.as_str()
                {
                    let entry = by_node.entry(n).or_insert_with(|| empty(n, &pool.pool));
                    entry.conflict = Some(Conflict::Pools {
                        pools: vec![other_pool.to_string(), pool.pool.clone()],
                        label: k.clone(),
                    });
                    continue;
                }
                wanted.insert((n, k.as_str()), (pool.pool.as_str(), v.as_str()));
                let current = label(node, k);
                if current == Some(v.as_str()) {
                    continue;
                }
                let entry = by_node.entry(n).or_insert_with(|| empty(n, &pool.pool));
                entry.labels.insert(
                    k.clone(),
                    LabelChange {
                        before: current.map(str::to_string),
                        after: v.clone(),
                    },
                );
                let path = [
                    Seg::Key("metadata".into()),
                    Seg::Key("labels".into()),
                    Seg::Key(k.clone()),
                ];
                let owners = fields::owners_of(node, &path, FIELD_MANAGER);
                let replaceable = k == MIG_LABEL && current == Some(MIG_DEFAULT);
                if current.is_some() && !owners.is_empty() && !replaceable {
                    let field = fields::show(&path);
                    let list = match &mut entry.conflict {
                        Some(Conflict::Fields { fields }) => fields,
                        Some(_) => continue,
                        None => {
                            entry.conflict = Some(Conflict::Fields { fields: Vec::new() });
                            match &mut entry.conflict {
                                Some(Conflict::Fields { fields }) => fields,
                                _ => unreachable!(),
                            }
                        }
                    };
                    for o in owners {
                        list.push(FieldConflict {
                            field: field.clone(),
                            manager: Some(o),
                        });
                    }
                }
            }
        }
    }
    by_node.into_values().collect()
}

fn empty(node: &str, pool: &str) -> NodeChange {
    NodeChange {
        node: node.to_string(),
        pool: pool.to_string(),
        labels: BTreeMap::new(),
        conflict: None,
    }
}

/// Where a node's MIG reconfiguration stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Rollout {
    /// The MIG manager has not reported on the new config yet.
    Waiting,
    Pending,
    Rebooting,
    Success,
    Failed,
}

impl Rollout {
    pub fn done(self) -> bool {
        matches!(self, Rollout::Success | Rollout::Failed)
    }
}

/// The rollout state of `node` after capops set its MIG label at
/// `labelled_at` (RFC 3339, from the node's managedFields): a state written
/// before that time belongs to the previous config.
pub fn rollout(node: &Value, labelled_at: &str) -> Rollout {
    let state = label(node, MIG_STATE_LABEL);
    let path = [
        Seg::Key("metadata".into()),
        Seg::Key("labels".into()),
        Seg::Key(MIG_STATE_LABEL.into()),
    ];
    let written_at = node["metadata"]["managedFields"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|e| fields::entry_paths(e).iter().any(|p| p.as_slice() == path))
        .filter_map(|e| e["time"].as_str())
        .max();
    let fresh = written_at.is_some_and(|t| t >= labelled_at);
    match (state, fresh) {
        (Some("pending"), _) => Rollout::Pending,
        (Some("rebooting"), _) => Rollout::Rebooting,
        (Some("success"), true) => Rollout::Success,
        (Some("failed"), true) => Rollout::Failed,
        _ => Rollout::Waiting,
    }
}

/// One way a pool's nodes differ from what it declares.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Mismatch {
    pub pool: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node: Option<String>,
    /// `node-count`, `gpu-model`, `gpu-count`, `mig-config`, `mig-strategy`, `mig-state`, `allocatable`.
    pub check: String,
    pub expected: String,
    pub found: String,
}

/// The catalog model a GPU Feature Discovery product label names
/// (`NVIDIA-H100-80GB-HBM3`, `NVIDIA-A100-SXM4-40GB-MIG-1g.5gb`, `Tesla-T4-SHARED`).
pub fn product_model(product: &str) -> Option<&'static catalog::GpuModel> {
    let mut p = product.strip_suffix("-SHARED").unwrap_or(product);
    if let Some(i) = p.find("-MIG-") {
        p = &p[..i];
    }
    catalog::model(p).or_else(|| {
        let lower = p.to_ascii_lowercase();
        ["nvidia-", "tesla-"]
            .iter()
            .find_map(|pre| lower.strip_prefix(pre).and_then(catalog::model))
    })
}

/// Compares a cluster's nodes with its pools. `nodes` maps each pool's
/// name to the nodes its selector matched; `mig_configs` maps pools to the
/// MIG config name capops renders for them.
pub fn verify(
    cluster: &ClusterSpec,
    nodes: &BTreeMap<String, Vec<Value>>,
    mig_configs: &BTreeMap<String, String>,
) -> Vec<Mismatch> {
    let mut out = Vec::new();
    let empty = Vec::new();
    for pool in &cluster.node_pools {
        let pool_name = pool.name.value.as_str().to_string();
        let found = nodes.get(&pool_name).unwrap_or(&empty);
        let mut push = |node: Option<&str>, check: &str, expected: String, found: String| {
            out.push(Mismatch {
                pool: pool_name.clone(),
                node: node.map(str::to_string),
                check: check.to_string(),
                expected,
                found,
            })
        };
        let declared = pool.nodes.value.0;
        if found.len() as u64 != u64::from(declared) {
            push(
                None,
                "node-count",
                format!("{declared} nodes"),
                format!(
                    "{} nodes match {}",
                    found.len(),
                    selector_text(&pool.plain_labels())
                ),
            );
        }
        let model = catalog::model(&pool.gpu_model.value);
        let gpus = pool.gpus_per_node.value.0;
        let provided = resources::provided(pool, cluster.mig_strategy.value);
        let single = pool.mig.is_some() && cluster.mig_strategy.value == MigStrategy::Single;
        for node in found {
            let n = Some(name(node));
            match label(node, PRODUCT_LABEL) {
                None => push(
                    n,
                    "gpu-model",
                    pool.gpu_model.value.clone(),
                    format!("no {PRODUCT_LABEL} label (is GPU Feature Discovery running?)"),
                ),
                Some(p) => {
                    let seen = product_model(p);
                    if seen.map(|m| m.id) != model.map(|m| m.id) {
                        push(n, "gpu-model", pool.gpu_model.value.clone(), p.to_string());
                    }
                }
            }
            if !single {
                let count = label(node, COUNT_LABEL);
                if count.and_then(|c| c.parse::<u32>().ok()) != Some(gpus) {
                    push(
                        n,
                        "gpu-count",
                        gpus.to_string(),
                        count.unwrap_or("no label").to_string(),
                    );
                }
            }
            if pool.mig.is_some() {
                if let Some(config) = mig_configs.get(&pool_name)
                    && label(node, MIG_LABEL) != Some(config.as_str())
                {
                    push(
                        n,
                        "mig-config",
                        config.clone(),
                        label(node, MIG_LABEL).unwrap_or("no label").to_string(),
                    );
                }
                // `nvidia.com/mig-*` resources exist only under the mixed strategy.
                let want = match cluster.mig_strategy.value {
                    MigStrategy::Mixed => "mixed",
                    MigStrategy::Single => "single",
                };
                if label(node, STRATEGY_LABEL) != Some(want) {
                    push(
                        n,
                        "mig-strategy",
                        want.to_string(),
                        label(node, STRATEGY_LABEL)
                            .unwrap_or("no label")
                            .to_string(),
                    );
                }
                let state = label(node, MIG_STATE_LABEL);
                if state != Some("success") {
                    push(
                        n,
                        "mig-state",
                        "success".into(),
                        state.unwrap_or("no label").to_string(),
                    );
                }
            }
            for p in &provided {
                let want = u64::from(p.per_gpu) * u64::from(gpus);
                let have = node["status"]["allocatable"].get(&p.resource);
                let have_n = have.and_then(super::quantity::Quantity::from_json);
                if have_n != super::quantity::Quantity::parse(&want.to_string()) {
                    push(
                        n,
                        "allocatable",
                        format!("{} {want}", p.resource),
                        format!(
                            "{} {}",
                            p.resource,
                            have.map(|h| h.to_string().trim_matches('"').to_string())
                                .unwrap_or_else(|| "none".into())
                        ),
                    );
                }
            }
        }
    }
    out
}

fn selector_text(sel: &BTreeMap<String, String>) -> String {
    if sel.is_empty() {
        return "no selector (the pool has no nodeLabels)".into();
    }
    sel.iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(",")
}
