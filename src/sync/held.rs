//! Writes that wait for what they name. A ClusterQueue names its
//! ResourceFlavors and its Cohort, a LocalQueue its ClusterQueue, a Cohort
//! its parent, a WorkloadPriorityClass the PriorityClass of its name, and a
//! node's `nvidia.com/mig.config` label a layout of the
//! MIG manager's ConfigMap. When the create or update of the object named
//! did not land, writing the one that names it breaks what runs (a
//! ClusterQueue naming a flavor that is not there goes inactive and stops
//! admitting; a node labelled with a layout no ConfigMap holds fails its
//! reconfiguration), so it is held back with the prunes, and the next apply,
//! once the first lands, writes both.

use super::plan::Change;
use serde_json::Value;
use std::collections::BTreeSet;

/// The objects a desired object names, as `Kind name` (as
/// [`super::plan::ObjRef`] displays a cluster-scoped object).
pub fn references(c: &Change) -> Vec<String> {
    let Some(o) = &c.object else {
        return Vec::new();
    };
    let spec = &o["spec"];
    let text = |v: &Value| v.as_str().filter(|s| !s.is_empty()).map(str::to_string);
    let mut out = Vec::new();
    match c.target.kind.as_str() {
        "ClusterQueue" => {
            for g in spec["resourceGroups"].as_array().into_iter().flatten() {
                for f in g["flavors"].as_array().into_iter().flatten() {
                    out.extend(text(&f["name"]).map(|n| format!("ResourceFlavor {n}")));
                }
            }
            for key in ["cohortName", "cohort"] {
                out.extend(text(&spec[key]).map(|n| format!("Cohort {n}")));
            }
        }
        "LocalQueue" => {
            out.extend(text(&spec["clusterQueue"]).map(|n| format!("ClusterQueue {n}")));
        }
        // Kueue ranks workloads by it and the scheduler pods by the
        // PriorityClass of the same name: one changed without the other
        // (a value change the API refuses) splits the two.
        "WorkloadPriorityClass" => out.push(format!("PriorityClass {}", c.target.name)),
        "Cohort" => {
            for key in ["parentName", "parent"] {
                out.extend(text(&spec[key]).map(|n| format!("Cohort {n}")));
            }
        }
        _ => {}
    }
    out
}

/// The first object `c` names that is in `missing` (writes that did not land).
pub fn waits_for<'a>(c: &Change, missing: &'a BTreeSet<String>) -> Option<&'a String> {
    references(c).into_iter().find_map(|r| missing.get(&r))
}

/// Whether a node relabel waits for a ConfigMap that did not land (the MIG
/// manager's layouts, or the device plugin's time-slicing configs).
pub fn labels_wait(missing: &BTreeSet<String>) -> Option<&String> {
    missing.iter().find(|t| t.starts_with("ConfigMap "))
}
