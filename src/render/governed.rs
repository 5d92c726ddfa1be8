//! What a template override may change in what it renders: layout, and the
//! free-form metadata people attach (Kubernetes labels and annotations other
//! than capops' own, Terraform `tags` and `labels`). Everything else, the
//! fields that carry governance, must be exactly what the built-in template
//! writes for the same documents.

use serde_json::{Map, Value};

/// How many differing places a message lists.
const SHOWN: usize = 5;

/// Whether a label or annotation key is capops' own.
fn owned_key(key: &str) -> bool {
    key == super::MANAGED_BY.0
        || key.starts_with("capops.dev/")
        || key == "app.kubernetes.io/instance"
}

/// The object with what an override may change taken out.
fn governed(v: &Value, kubernetes: bool) -> Value {
    match v {
        Value::Object(m) => {
            let mut out = Map::new();
            for (k, child) in m {
                if !kubernetes && (k == "tags" || k == "labels") && child.is_object() {
                    continue;
                }
                out.insert(k.clone(), governed(child, kubernetes));
            }
            if kubernetes && let Some(Value::Object(meta)) = out.get_mut("metadata") {
                for field in ["labels", "annotations"] {
                    if let Some(Value::Object(map)) = meta.get_mut(field) {
                        map.retain(|k, _| owned_key(k));
                        if map.is_empty() {
                            meta.remove(field);
                        }
                    }
                }
            }
            Value::Object(out)
        }
        Value::Array(items) => {
            Value::Array(items.iter().map(|i| governed(i, kubernetes)).collect())
        }
        other => other.clone(),
    }
}

fn diff(a: &Value, b: &Value, at: &str, out: &mut Vec<String>) {
    if out.len() > SHOWN {
        return;
    }
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            let mut keys: Vec<&String> = x.keys().chain(y.keys()).collect();
            keys.sort();
            keys.dedup();
            for k in keys {
                let here = format!("{at}/{}", k.replace('~', "~0").replace('/', "~1"));
                match (x.get(k), y.get(k)) {
                    (Some(p), Some(q)) => diff(p, q, &here, out),
                    _ => out.push(here),
                }
            }
        }
        (Value::Array(x), Value::Array(y)) if x.len() == y.len() => {
            for (i, (p, q)) in x.iter().zip(y).enumerate() {
                diff(p, q, &format!("{at}/{i}"), out);
            }
        }
        _ if a == b => {}
        _ => out.push(if at.is_empty() {
            "/".into()
        } else {
            at.to_string()
        }),
    }
}

/// JSON pointers where `got` differs from `expected` in governed fields
/// (empty when the override keeps to what it may change).
pub fn differences(expected: &Value, got: &Value, kubernetes: bool) -> Vec<String> {
    let mut out = Vec::new();
    diff(
        &governed(expected, kubernetes),
        &governed(got, kubernetes),
        "",
        &mut out,
    );
    if out.len() > SHOWN {
        out.truncate(SHOWN);
        out.push("…".into());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn labels_and_tags_may_change_governed_fields_may_not() {
        let quota = json!({"kind": "ResourceQuota", "metadata": {"name": "q", "labels": {"a": "1"}}, "spec": {"hard": {"requests.nvidia.com/gpu": "8"}}});
        let relabelled = json!({"kind": "ResourceQuota", "metadata": {"name": "q", "labels": {"team": "x"}, "annotations": {"owner": "y"}}, "spec": {"hard": {"requests.nvidia.com/gpu": "8"}}});
        assert!(differences(&quota, &relabelled, true).is_empty());
        let bigger = json!({"kind": "ResourceQuota", "metadata": {"name": "q"}, "spec": {"hard": {"requests.nvidia.com/gpu": "1000"}}});
        assert_eq!(
            differences(&quota, &bigger, true),
            vec!["/spec/hard/requests.nvidia.com~1gpu"]
        );
        let scoped = json!({"kind": "ResourceQuota", "metadata": {"name": "q"}, "spec": {"hard": {"requests.nvidia.com/gpu": "8"}, "scopes": ["BestEffort"]}});
        assert_eq!(differences(&quota, &scoped, true), vec!["/spec/scopes"]);
        let owned = json!({"kind": "ResourceQuota", "metadata": {"name": "q", "labels": {"capops.dev/x": "1"}}, "spec": {"hard": {"requests.nvidia.com/gpu": "8"}}});
        assert_eq!(differences(&quota, &owned, true), vec!["/metadata/labels"]);
        let tf = json!({"resource": {"aws_ec2_capacity_reservation": {"r": {"instance_count": 4, "tags": {"a": "b"}}}}});
        let tagged = json!({"resource": {"aws_ec2_capacity_reservation": {"r": {"instance_count": 4, "tags": {"cost": "x"}}}}});
        assert!(differences(&tf, &tagged, false).is_empty());
        let external = json!({"resource": {"aws_ec2_capacity_reservation": {"r": {"instance_count": 64, "tags": {"a": "b"}}}}, "data": {"external": {"x": {"program": ["sh"]}}}});
        assert_eq!(
            differences(&tf, &external, false),
            vec![
                "/data",
                "/resource/aws_ec2_capacity_reservation/r/instance_count"
            ]
        );
    }
}
