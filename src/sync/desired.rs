//! The desired state of one cluster, taken from what `render::render`
//! produced in memory: the Kubernetes objects under `<cluster>/`, each
//! stamped with the annotation naming this capacity repository, and the
//! node-label plan under `node-labels/<cluster>.yaml`.

use super::kinds;
use super::plan::ObjRef;
use crate::render::Rendered;
use serde_json::Value;
use std::collections::BTreeMap;

/// Annotation naming the capacity repository an object belongs to. capops
/// prunes only objects that carry its label and this annotation with its
/// own repository's name.
pub const REPOSITORY: &str = "capops.dev/repository";
/// The annotation naming the Cluster document an object was applied for.
pub const CLUSTER: &str = "capops.dev/cluster";
/// The field manager capops applies with.
pub const FIELD_MANAGER: &str = "capops";

/// One object capops wants in the cluster.
#[derive(Clone, Debug, PartialEq)]
pub struct DesiredObject {
    pub target: ObjRef,
    pub value: Value,
}

/// Labels a pool's nodes must carry.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PoolLabels {
    pub pool: String,
    /// The pool's node selector (its `nodeLabels`).
    pub selector: BTreeMap<String, String>,
    pub labels: BTreeMap<String, String>,
    /// Nodes the pool declares.
    pub nodes: u64,
}

/// Everything capops wants in one cluster.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Desired {
    pub cluster: String,
    pub objects: Vec<DesiredObject>,
    pub pools: Vec<PoolLabels>,
}

/// The desired state of `cluster`, objects in apply order.
pub fn from_rendered(rendered: &Rendered, cluster: &str, repository: &str) -> Desired {
    let prefix = format!("{cluster}/");
    let mut objects = Vec::new();
    let mut pools = Vec::new();
    for f in &rendered.files {
        if f.kubernetes && f.path.starts_with(&prefix) {
            if let Some(o) = object(&f.value, repository, cluster) {
                objects.push(o);
            }
        } else if f.path == format!("node-labels/{cluster}.yaml") {
            pools = node_labels(&f.value);
        }
    }
    objects.sort_by(|a, b| a.target.cmp(&b.target));
    Desired {
        cluster: cluster.to_string(),
        objects,
        pools,
    }
}

/// A rendered object as a desired object, with the repository and cluster
/// annotations.
pub fn object(value: &Value, repository: &str, cluster: &str) -> Option<DesiredObject> {
    let api = value["apiVersion"].as_str()?;
    let kind = kinds::find(api, value["kind"].as_str()?)?;
    let mut value = value.clone();
    let meta = value.get_mut("metadata")?.as_object_mut()?;
    let name = meta.get("name")?.as_str()?.to_string();
    let namespace = meta
        .get("namespace")
        .and_then(Value::as_str)
        .map(str::to_string);
    let annotations = meta
        .entry("annotations")
        .or_insert_with(|| Value::Object(Default::default()));
    if let Some(a) = annotations.as_object_mut() {
        a.insert(REPOSITORY.into(), repository.into());
        a.insert(CLUSTER.into(), cluster.into());
    }
    Some(DesiredObject {
        target: ObjRef {
            order: kind.order,
            api_version: kind.api_version(),
            kind: kind.kind.to_string(),
            namespace: if kind.namespaced { namespace } else { None },
            name,
        },
        value,
    })
}

fn node_labels(plan: &Value) -> Vec<PoolLabels> {
    let strings = |v: &Value| -> BTreeMap<String, String> {
        v.as_object()
            .map(|m| {
                m.iter()
                    .filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_string())))
                    .collect()
            })
            .unwrap_or_default()
    };
    plan["pools"]
        .as_array()
        .map(|pools| {
            pools
                .iter()
                .map(|p| PoolLabels {
                    pool: p["pool"].as_str().unwrap_or_default().to_string(),
                    selector: strings(&p["selector"]),
                    labels: strings(&p["labels"]),
                    nodes: p["nodes"].as_u64().unwrap_or(0),
                })
                .collect()
        })
        .unwrap_or_default()
}
