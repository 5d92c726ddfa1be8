//! The effect of a change on clusters and clouds: the objects and files the
//! base renders against those the head renders, compared field by field.
//!
//! A reviewer reads documents; what a merge does is this: quotas that grow
//! or shrink in namespaces, priority values, MIG layouts, Terraform resources
//! and their arguments. [`diff`] turns two renders into that list, and
//! [`summary`] into the numbers the policy can read (`effects.*` facts). The
//! revision stamped on objects is left out: it changes with every commit.

use super::{File, Rendered};
use serde::Serialize;
use serde_json::Value;
use std::collections::BTreeMap;

/// Fields listed per changed file, at most.
const FIELDS_SHOWN: usize = 12;

/// How one rendered file changes.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct FileEffect {
    pub path: String,
    /// `added`, `removed` or `changed`.
    pub change: &'static str,
    /// The object's kind (`ResourceQuota`, ...), or `Terraform`, or `NodeLabels`.
    pub kind: String,
    /// Fields that differ: JSON pointer, before, after (changed files; at most 12).
    pub fields: Vec<FieldEffect>,
    /// For ResourceQuotas: each quota key's units after minus before.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub quota_delta: BTreeMap<String, i64>,
    /// A quota scoped to a priority class (`render.priorityClassQuotas`): a
    /// share of the namespace's own quota, so its rise is not counted again.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub scoped: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FieldEffect {
    pub field: String,
    pub before: Value,
    pub after: Value,
}

pub use crate::policy::facts::EffectFacts as EffectSummary;

fn kind_of(f: &File) -> String {
    if let Some(k) = f.value.get("kind").and_then(Value::as_str) {
        return k.to_string();
    }
    if f.path.starts_with("cloud/") {
        "Terraform".into()
    } else {
        "NodeLabels".into()
    }
}

/// A file's content without what changes with every commit.
fn comparable(f: &File) -> Value {
    let mut v = f.value.clone();
    if let Some(Value::Object(a)) = v.pointer_mut("/metadata/annotations") {
        a.remove(super::REVISION);
    }
    v
}

fn fields(a: &Value, b: &Value, at: &str, out: &mut Vec<FieldEffect>) {
    if out.len() >= FIELDS_SHOWN {
        return;
    }
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            let mut keys: Vec<&String> = x.keys().chain(y.keys()).collect();
            keys.sort();
            keys.dedup();
            for k in keys {
                let here = format!("{at}/{}", k.replace('~', "~0").replace('/', "~1"));
                fields(
                    x.get(k).unwrap_or(&Value::Null),
                    y.get(k).unwrap_or(&Value::Null),
                    &here,
                    out,
                );
            }
        }
        (Value::Array(x), Value::Array(y)) if x.len() == y.len() => {
            for (i, (p, q)) in x.iter().zip(y).enumerate() {
                fields(p, q, &format!("{at}/{i}"), out);
            }
        }
        _ if a == b => {}
        _ => out.push(FieldEffect {
            field: at.to_string(),
            before: a.clone(),
            after: b.clone(),
        }),
    }
}

fn quota(v: &Value) -> BTreeMap<String, i64> {
    v.pointer("/spec/hard")
        .and_then(Value::as_object)
        .map(|m| {
            m.iter()
                .filter_map(|(k, v)| {
                    let n = v
                        .as_str()
                        .and_then(|s| s.parse().ok())
                        .or_else(|| v.as_i64())?;
                    Some((k.clone(), n))
                })
                .collect()
        })
        .unwrap_or_default()
}

/// Every file that differs between the base's render and the head's.
pub fn diff(before: &Rendered, after: &Rendered) -> Vec<FileEffect> {
    let old: BTreeMap<&str, &File> = before.files.iter().map(|f| (f.path.as_str(), f)).collect();
    let new: BTreeMap<&str, &File> = after.files.iter().map(|f| (f.path.as_str(), f)).collect();
    let mut paths: Vec<&str> = old.keys().chain(new.keys()).copied().collect();
    paths.sort_unstable();
    paths.dedup();
    let mut out = Vec::new();
    for path in paths {
        let (change, kind, a, b) = match (old.get(path), new.get(path)) {
            (None, Some(f)) => ("added", kind_of(f), Value::Null, comparable(f)),
            (Some(f), None) => ("removed", kind_of(f), comparable(f), Value::Null),
            (Some(x), Some(y)) => {
                let (a, b) = (comparable(x), comparable(y));
                if a == b {
                    continue;
                }
                ("changed", kind_of(y), a, b)
            }
            (None, None) => continue,
        };
        let mut delta = BTreeMap::new();
        if kind == "ResourceQuota" {
            let (qa, qb) = (quota(&a), quota(&b));
            for k in qa.keys().chain(qb.keys()) {
                let d = qb.get(k).copied().unwrap_or(0) - qa.get(k).copied().unwrap_or(0);
                if d != 0 {
                    delta.insert(k.clone(), d);
                }
            }
        }
        let scoped = kind == "ResourceQuota"
            && [&a, &b]
                .iter()
                .any(|o| !o["spec"]["scopeSelector"].is_null());
        let mut changed_fields = Vec::new();
        if change == "changed" {
            fields(&a, &b, "", &mut changed_fields);
        }
        out.push(FileEffect {
            path: path.to_string(),
            change,
            kind,
            fields: changed_fields,
            quota_delta: delta,
            scoped,
        });
    }
    out
}

/// What one unit of a resource is worth in GPUs on a cluster: `worth(cluster,
/// resource)`, with `resource` as pods ask for it (`nvidia.com/mig-1g.10gb`).
pub type Worth<'a> = &'a dyn Fn(&str, &str) -> f64;

/// Whole GPUs count 1 a unit: a time-sliced pool's unit is worth less, but a
/// namespace's quota holds in every pool of its cluster.
pub fn whole_gpus(_cluster: &str, resource: &str) -> f64 {
    if resource == "nvidia.com/gpu" {
        1.0
    } else {
        0.0
    }
}

/// GPUs' worth a file's quota gains: each GPU key's rise (`requests.nvidia.com/gpu`,
/// `requests.nvidia.com/mig-*`) at what a unit is worth on the file's cluster
/// (the first part of its path). A key that falls pays for none that rises.
pub fn gpu_rise(e: &FileEffect, worth: Worth<'_>) -> f64 {
    let cluster = e.path.split('/').next().unwrap_or("");
    e.quota_delta
        .iter()
        .filter_map(|(key, d)| {
            let resource = key.strip_prefix("requests.")?;
            resource
                .starts_with("nvidia.com/")
                .then(|| (*d).max(0) as f64 * worth(cluster, resource))
        })
        .sum()
}

/// The effect in numbers.
pub fn summary(effects: &[FileEffect], worth: Worth<'_>) -> EffectSummary {
    let mut s = EffectSummary::default();
    for e in effects {
        match e.change {
            "added" => s.objects_added += 1,
            "removed" => s.objects_removed += 1,
            _ => s.objects_changed += 1,
        }
        if e.kind == "Terraform" {
            s.cloud_files_changed += 1;
        }
        // What quotas gain: one namespace's cut does not pay for another's
        // rise. A priority class's quota is part of its namespace's quota.
        if e.scoped {
            continue;
        }
        s.quota_delta_gpus += gpu_rise(e, worth);
    }
    // Units at 1/7 and 3/7 add up to 9.999999999999998 for 10: to a
    // millionth of a GPU, so a rule's `>= 10` holds where it should.
    s.quota_delta_gpus = (s.quota_delta_gpus * 1e6).round() / 1e6;
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn quota(path: &str, gpus: u32, class: Option<&str>) -> File {
        let mut spec = json!({"hard": {"requests.nvidia.com/gpu": gpus.to_string()}});
        if let Some(c) = class {
            spec["scopeSelector"] = json!({"matchExpressions": [
                {"scopeName": "PriorityClass", "operator": "In", "values": [c]}
            ]});
        }
        File {
            path: path.into(),
            value: json!({"apiVersion": "v1", "kind": "ResourceQuota",
                "metadata": {"name": "q", "namespace": "ml"}, "spec": spec}),
            format: super::super::Format::Yaml,
            kubernetes: true,
        }
    }

    #[test]
    fn a_priority_class_quota_is_not_counted_on_top_of_its_namespaces() {
        // An 8-GPU request of class `normal`: the namespace's quota goes
        // 0 → 8 and its class quota appears with 8. The quotas gain 8, not 16.
        let before = Rendered {
            files: vec![quota("c/resourcequota-ml-capops-gpu.yaml", 0, None)],
            diagnostics: vec![],
        };
        let after = Rendered {
            files: vec![
                quota("c/resourcequota-ml-capops-gpu.yaml", 8, None),
                quota(
                    "c/resourcequota-ml-capops-gpu-normal.yaml",
                    8,
                    Some("normal"),
                ),
            ],
            diagnostics: vec![],
        };
        let effects = diff(&before, &after);
        assert_eq!(effects.len(), 2);
        assert!(
            effects
                .iter()
                .all(|e| e.quota_delta["requests.nvidia.com/gpu"] == 8)
        );
        let s = summary(&effects, &whole_gpus);
        assert_eq!(s.quota_delta_gpus, 8.0);
        assert_eq!((s.objects_added, s.objects_changed), (1, 1));
    }

    #[test]
    fn mig_units_add_up_to_whole_gpus_exactly() {
        // One 1g instance at 1/7 and 23 3g instances at 3/7 are 10 GPUs:
        // added as floats they were 9.999999999999998, under a rule's `>= 10`.
        let e = FileEffect {
            path: "c/resourcequota-ml-capops-gpu.yaml".into(),
            change: "changed",
            kind: "ResourceQuota".into(),
            fields: vec![],
            quota_delta: [
                ("requests.nvidia.com/mig-1g.10gb".to_string(), 1),
                ("requests.nvidia.com/mig-3g.40gb".to_string(), 23),
            ]
            .into(),
            scoped: false,
        };
        let worth = |_: &str, r: &str| {
            if r.contains("1g") {
                1.0 / 7.0
            } else {
                3.0 / 7.0
            }
        };
        assert_eq!(summary(&[e], &worth).quota_delta_gpus, 10.0);
    }
}
