//! The GPU operator's side of a cluster: the mig-parted config (one named
//! config per distinct MIG layout, and `all-disabled`, which the operator
//! gives unlabelled MIG-capable nodes), the device-plugin configs
//! (time-slicing, and the MIG strategy of MIG pools: `nvidia.com/mig-*`
//! resources exist only under the mixed strategy, which is not the
//! operator's default), and the node-label plan: `nvidia.com/mig.config` and
//! `nvidia.com/device-plugin.config` for each pool's nodes, which the sync
//! step applies (it is not a Kubernetes object, so it is written outside the
//! cluster's folder).

use super::lint;
use super::{File, Format, Job};
use crate::diag::Diagnostic;
use crate::gpu::{mig, resources};
use crate::model::*;
use serde_json::{Value, json};
use std::collections::BTreeMap;

/// ConfigMap of the MIG manager's configs.
pub const MIG_CONFIGMAP: &str = "capops-mig-parted-config";
/// ConfigMap of the device plugin's sharing configs.
pub const DEVICE_PLUGIN_CONFIGMAP: &str = "capops-device-plugin-config";
/// Node label the MIG manager reads.
pub const MIG_LABEL: &str = crate::gpu::MIG_CONFIG_LABEL;
/// The mig-parted config every rendered MIG ConfigMap carries (MIG off).
pub const MIG_DISABLED: &str = "all-disabled";
/// The device plugin's config no node is labelled with (its defaults), so
/// that the ConfigMap the ClusterPolicy names always exists.
pub const DEVICE_PLUGIN_NEUTRAL: &str = "capops-default";
/// Node label the device plugin reads.
pub const DEVICE_PLUGIN_LABEL: &str = crate::gpu::DEVICE_PLUGIN_CONFIG_LABEL;

/// The mig-parted config name for a layout: `capops-` and the canonical
/// profiles with their counts, e.g. `capops-1g.10gb-x2-3g.40gb-x1`; a hash
/// when that would not fit a label value.
pub fn mig_config_name(layout: &[(String, u32)]) -> String {
    let parts: Vec<String> = layout.iter().map(|(p, n)| format!("{p}-x{n}")).collect();
    let name = format!("capops-{}", parts.join("-")).replace('+', ".");
    if lint::label_value(&name) {
        name
    } else {
        format!("capops-mig-{:016x}", fnv(&name))
    }
}

fn fnv(s: &str) -> u64 {
    s.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
    })
}

/// The GPU operator's ConfigMaps, and the node-label plan.
pub(super) fn gpu_operator(
    cluster: &Document<ClusterSpec>,
    provided: &[(&NodePool, Vec<resources::Provided>)],
    settings: &crate::model::config::RenderSettings,
    kueue_on: bool,
    jobs: &mut Vec<Job>,
    diags: &mut Vec<Diagnostic>,
) -> Option<File> {
    let name = cluster.name();
    let strategy = cluster.spec.mig_strategy.value;
    let mut mig_configs: BTreeMap<String, Value> = BTreeMap::new();
    let mut sharing: BTreeMap<String, String> = BTreeMap::new();
    let mut plan = Vec::new();
    for (pool, prov) in provided {
        let mut labels = BTreeMap::new();
        if let Some(m) = &pool.mig {
            let model = crate::gpu::catalog::model(&pool.gpu_model.value);
            let Some(mig_model) = model.and_then(mig::mig_of) else {
                continue;
            };
            let mut layout: Vec<(String, u32)> = m
                .layout
                .value
                .iter()
                // As written (validation holds it to the driver's spelling):
                // mig-parted matches the name the node's driver reports, an
                // alias (`7g.79gb`) included, as the resource names do.
                .filter(|(p, _)| mig::resolve(mig_model, &p.value).is_ok())
                .map(|(p, n)| (p.value.clone(), n.value.0))
                .collect();
            layout.sort();
            let config = mig_config_name(&layout);
            let devices: BTreeMap<&str, u32> =
                layout.iter().map(|(p, n)| (p.as_str(), *n)).collect();
            mig_configs.insert(
                config.clone(),
                json!([{"devices": "all", "mig-enabled": true, "mig-devices": devices}]),
            );
            labels.insert(MIG_LABEL.to_string(), config);
        }
        // `nvidia.com/mig-*` resources exist only under the device plugin's
        // mixed strategy, and the GPU operator's default is single: MIG pools
        // get a device-plugin config that sets the Cluster's strategy.
        if pool.mig.is_some() && pool.time_slicing.is_none() {
            let flag = match strategy {
                MigStrategy::Single => "single",
                MigStrategy::Mixed => "mixed",
            };
            let config = format!("capops-{flag}-mig");
            let text = super::yaml::to_string(&json!({
                "version": "v1",
                "flags": {"migStrategy": flag},
            }));
            sharing.insert(config.clone(), text);
            labels.insert(DEVICE_PLUGIN_LABEL.to_string(), config);
        }
        if let Some(ts) = &pool.time_slicing {
            let replicas = ts.replicas.value;
            // Time-slicing multiplies what the device plugin advertises;
            // `provided` already counts replicas, so name the resources only.
            let names: Vec<String> = prov.iter().map(|p| p.resource.clone()).collect();
            let flag = match (&pool.mig, strategy) {
                (None, _) => "none",
                (Some(_), MigStrategy::Single) => "single",
                (Some(_), MigStrategy::Mixed) => "mixed",
            };
            let config = format!(
                "capops-{flag}-{}-x{replicas}",
                if pool.mig.is_some() { "mig" } else { "gpu" }
            );
            let resources: Vec<Value> = names
                .iter()
                .map(|n| json!({"name": n, "replicas": replicas}))
                .collect();
            let text = super::yaml::to_string(&json!({
                "version": "v1",
                "flags": {"migStrategy": flag},
                "sharing": {"timeSlicing": {"resources": resources}},
            }));
            // Two pools with the same flag and replicas but other MIG
            // resources need distinct configs.
            let config = match sharing.get(&config) {
                Some(existing) if *existing != text => {
                    format!("{config}-{:08x}", fnv(&text) as u32)
                }
                _ => config,
            };
            sharing.insert(config.clone(), text);
            labels.insert(DEVICE_PLUGIN_LABEL.to_string(), config);
        }
        if labels.is_empty() {
            continue;
        }
        // Under Kueue the pool was already reported for its ResourceFlavor.
        if pool.node_labels.is_empty() && !kueue_on {
            diags.push(lint::unlabelled(
                pool,
                name,
                "the node-label plan cannot select the nodes that need the MIG or time-slicing config",
            ));
        }
        plan.push(json!({
            "pool": pool.name.value.as_str(),
            "selector": pool.node_labels,
            "labels": labels,
            "nodes": pool.nodes.value.0,
        }));
    }
    let ns = &settings.gpu_operator_namespace;
    // The ClusterPolicy names both ConfigMaps for good: they are rendered
    // for every cluster that can use them, even when no pool needs a MIG
    // layout or a device-plugin setup any more (pruned, the GPU operator
    // would be left naming ConfigMaps that do not exist): the MIG manager's
    // where a pool's GPUs can run MIG, the device plugin's for every
    // cluster, with a neutral config no node is labelled with.
    let mig_capable = provided.iter().any(|(pool, _)| {
        crate::gpu::catalog::model(&pool.gpu_model.value).is_some_and(|m| m.mig.is_some())
    });
    if !mig_configs.is_empty() || mig_capable {
        // The GPU operator labels MIG-capable nodes nobody labelled
        // `all-disabled`, and marks them failed when the config lacks it.
        mig_configs.insert(
            MIG_DISABLED.to_string(),
            json!([{"devices": "all", "mig-enabled": false}]),
        );
        let text = super::yaml::to_string(&json!({"version": "v1", "mig-configs": mig_configs}));
        jobs.push(Job {
            template: "kubernetes/configmap.yaml.j2",
            context: json!({
                "name": MIG_CONFIGMAP,
                "namespace": ns,
                "data": {"config.yaml": text},
                "purpose": "mig-parted",
            }),
            expect: Some(("v1", "ConfigMap")),
            sources: vec![format!("Cluster/{name}")],
            span: cluster.name_span(),
            folder: name.to_string(),
            file_name: None,
        });
    }
    if !provided.is_empty() {
        sharing.insert(
            DEVICE_PLUGIN_NEUTRAL.to_string(),
            super::yaml::to_string(&json!({"version": "v1"})),
        );
        jobs.push(Job {
            template: "kubernetes/configmap.yaml.j2",
            context: json!({
                "name": DEVICE_PLUGIN_CONFIGMAP,
                "namespace": ns,
                "data": sharing,
                "purpose": "device-plugin",
            }),
            expect: Some(("v1", "ConfigMap")),
            sources: vec![format!("Cluster/{name}")],
            span: cluster.name_span(),
            folder: name.to_string(),
            file_name: None,
        });
    }
    (!plan.is_empty()).then(|| File {
        path: format!("node-labels/{name}.yaml"),
        value: json!({
            "cluster": name,
            "note": "Labels the sync step sets on each pool's nodes (selected by `selector`). A change of nvidia.com/mig.config repartitions the GPUs: drain the nodes first.",
            "pools": plan,
        }),
        format: Format::Yaml,
        kubernetes: false,
    })
}
