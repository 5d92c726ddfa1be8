//! Field paths in Kubernetes objects: the leaves of what capops applies, the
//! fields a manager owns according to `metadata.managedFields`, and a
//! field-level diff that compares quantities by value.
//!
//! A path is a list of map keys and list positions, shown the way people
//! read them: `spec.hard["requests.nvidia.com/gpu"]`,
//! `spec.resourceGroups[0].flavors[name=h100].resources[name=nvidia.com/gpu].nominalQuota`.

use super::quantity;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// One step into a JSON value.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Seg {
    Key(String),
    Index(usize),
    /// The element of a list of named objects whose `name` is this.
    Named(String),
}

/// A path from the object's root.
pub type Path = Vec<Seg>;

/// Shows a path: `spec.hard["requests.nvidia.com/gpu"]`.
pub fn show(path: &[Seg]) -> String {
    let mut s = String::new();
    for seg in path {
        match seg {
            Seg::Key(k) if is_plain(k) => {
                if !s.is_empty() {
                    s.push('.');
                }
                s.push_str(k);
            }
            Seg::Key(k) => s.push_str(&format!("[{}]", serde_json::Value::from(k.as_str()))),
            Seg::Index(i) => s.push_str(&format!("[{i}]")),
            Seg::Named(n) => s.push_str(&format!("[name={n}]")),
        }
    }
    s
}

fn is_plain(k: &str) -> bool {
    !k.is_empty()
        && k.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

/// The value at a path.
pub fn get<'a>(v: &'a Value, path: &[Seg]) -> Option<&'a Value> {
    let mut cur = v;
    for seg in path {
        cur = match (seg, cur) {
            (Seg::Key(k), Value::Object(m)) => m.get(k)?,
            (Seg::Index(i), Value::Array(a)) => a.get(*i)?,
            (Seg::Named(n), Value::Array(a)) => a.iter().find(|e| e["name"] == n.as_str())?,
            _ => return None,
        };
    }
    Some(cur)
}

/// The leaf paths of a value: scalars, lists (applied whole) and empty maps.
pub fn leaves(v: &Value) -> Vec<Path> {
    let mut out = Vec::new();
    walk(v, &mut Vec::new(), &mut out);
    out
}

fn walk(v: &Value, path: &mut Path, out: &mut Vec<Path>) {
    match v {
        Value::Object(m) if !m.is_empty() => {
            for (k, child) in m {
                path.push(Seg::Key(k.clone()));
                walk(child, path, out);
                path.pop();
            }
        }
        _ => out.push(path.clone()),
    }
}

/// One entry of `metadata.managedFields`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Manager {
    pub manager: String,
    /// `Apply` or `Update`.
    pub operation: String,
}

/// The fields each manager owns, from `metadata.managedFields`. Paths stop
/// at the first list element (`k:`, `v:`, `i:`): owning part of a list is
/// shown as owning the list.
pub fn managed(live: &Value) -> Vec<(Manager, Vec<Path>)> {
    let Some(entries) = live["metadata"]["managedFields"].as_array() else {
        return Vec::new();
    };
    entries
        .iter()
        .filter_map(|e| {
            let manager = e["manager"].as_str()?.to_string();
            let operation = e["operation"].as_str().unwrap_or("Update").to_string();
            Some((Manager { manager, operation }, entry_paths(e)))
        })
        .collect()
}

/// The fields one `managedFields` entry owns.
pub fn entry_paths(entry: &Value) -> Vec<Path> {
    let mut paths = Vec::new();
    if let Some(f) = entry.get("fieldsV1") {
        fields_v1(f, &mut Vec::new(), &mut paths);
    }
    paths.sort();
    paths.dedup();
    paths
}

fn fields_v1(v: &Value, path: &mut Path, out: &mut Vec<Path>) {
    let Some(m) = v.as_object() else {
        out.push(path.clone());
        return;
    };
    let mut children = false;
    for (k, child) in m {
        if k == "." {
            continue;
        }
        children = true;
        if let Some(name) = k.strip_prefix("f:") {
            path.push(Seg::Key(name.to_string()));
            fields_v1(child, path, out);
            path.pop();
        } else {
            // A list element: the list itself is what is shown as owned.
            out.push(path.clone());
        }
    }
    if !children && !path.is_empty() {
        out.push(path.clone());
    }
}

/// The fields `manager` owns with `operation`.
pub fn owned_by(live: &Value, manager: &str, operation: &str) -> Vec<Path> {
    managed(live)
        .into_iter()
        .filter(|(m, _)| m.manager == manager && m.operation == operation)
        .flat_map(|(_, p)| p)
        .collect()
}

/// The managers (other than `except`) that own `path` or a field under or above it.
pub fn owners_of(live: &Value, path: &[Seg], except: &str) -> Vec<String> {
    let mut out: Vec<String> = managed(live)
        .into_iter()
        .filter(|(m, paths)| {
            m.manager != except
                && paths
                    .iter()
                    .any(|p| p.starts_with(path) || path.starts_with(p))
        })
        .map(|(m, _)| m.manager)
        .collect();
    out.sort();
    out.dedup();
    out
}

/// One field that differs.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FieldDiff {
    pub path: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub before: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub after: Option<Value>,
}

/// Field-level differences between two values, quantities compared by
/// value; maps key by key, lists of named objects by name, other lists by
/// position when their lengths agree, else whole.
pub fn diff(
    before: Option<&Value>,
    after: Option<&Value>,
    path: &mut Path,
    out: &mut Vec<FieldDiff>,
) {
    match (before, after) {
        (None, None) => {}
        (Some(a), Some(b)) if quantity::same(a, b) => {}
        (Some(Value::Object(a)), Some(Value::Object(b))) => {
            let mut keys: Vec<&String> = a.keys().chain(b.keys()).collect();
            keys.sort();
            keys.dedup();
            for k in keys {
                path.push(Seg::Key(k.clone()));
                diff(a.get(k), b.get(k), path, out);
                path.pop();
            }
        }
        (Some(Value::Array(a)), Some(Value::Array(b))) => {
            if let (Some(na), Some(nb)) = (names(a), names(b)) {
                let mut all: Vec<&str> = na.iter().chain(nb.iter()).copied().collect();
                all.sort();
                all.dedup();
                // Keep the order of `after`, then removed names.
                all.sort_by_key(|n| nb.iter().position(|m| m == n).unwrap_or(usize::MAX));
                for n in all {
                    path.push(Seg::Named(n.to_string()));
                    let find = |l: &'_ [Value]| l.iter().find(|e| e["name"] == n).cloned();
                    diff(find(a).as_ref(), find(b).as_ref(), path, out);
                    path.pop();
                }
            } else if a.len() == b.len() {
                for (i, (x, y)) in a.iter().zip(b).enumerate() {
                    path.push(Seg::Index(i));
                    diff(Some(x), Some(y), path, out);
                    path.pop();
                }
            } else {
                out.push(FieldDiff {
                    path: show(path),
                    before: before.cloned(),
                    after: after.cloned(),
                });
            }
        }
        _ => out.push(FieldDiff {
            path: show(path),
            before: before.cloned(),
            after: after.cloned(),
        }),
    }
}

/// The `name`s of a list of objects, when every element has a distinct one.
fn names(l: &[Value]) -> Option<Vec<&str>> {
    let names: Vec<&str> = l
        .iter()
        .map(|e| e["name"].as_str())
        .collect::<Option<_>>()?;
    let mut sorted = names.clone();
    sorted.sort();
    sorted.dedup();
    (sorted.len() == names.len() && !names.is_empty()).then_some(names)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn key(s: &str) -> Seg {
        Seg::Key(s.into())
    }

    #[test]
    fn paths_show_as_people_read_them() {
        assert_eq!(
            show(&[key("spec"), key("hard"), key("requests.nvidia.com/gpu")]),
            r#"spec.hard["requests.nvidia.com/gpu"]"#
        );
        assert_eq!(
            show(&[
                key("spec"),
                key("resourceGroups"),
                Seg::Index(0),
                key("flavors"),
                Seg::Named("h100".into())
            ]),
            "spec.resourceGroups[0].flavors[name=h100]"
        );
    }

    #[test]
    fn leaves_stop_at_lists_and_scalars() {
        let v = json!({"a": {"b": 1, "c": [1, 2]}, "d": {}});
        let mut l = leaves(&v);
        l.sort();
        assert_eq!(
            l,
            vec![
                vec![key("a"), key("b")],
                vec![key("a"), key("c")],
                vec![key("d")]
            ]
        );
        assert_eq!(
            get(&v, &[key("a"), key("c"), Seg::Index(1)]),
            Some(&json!(2))
        );
    }

    #[test]
    fn managed_fields_give_each_managers_fields() {
        let live = json!({"metadata": {"managedFields": [
            {"manager": "capops", "operation": "Apply", "fieldsV1": {
                "f:metadata": {"f:labels": {".": {}, "f:app.kubernetes.io/managed-by": {}}},
                "f:spec": {"f:hard": {"f:requests.nvidia.com/gpu": {}}}}},
            {"manager": "kubectl-edit", "operation": "Update", "fieldsV1": {
                "f:spec": {"f:resourceGroups": {"k:{\"name\":\"x\"}": {".": {}}}}}}
        ]}});
        let capops = owned_by(&live, "capops", "Apply");
        assert_eq!(capops.len(), 2);
        assert!(capops.contains(&vec![
            key("spec"),
            key("hard"),
            key("requests.nvidia.com/gpu")
        ]));
        assert_eq!(
            owned_by(&live, "kubectl-edit", "Update"),
            vec![vec![key("spec"), key("resourceGroups")]]
        );
        assert_eq!(
            owners_of(
                &live,
                &[key("spec"), key("resourceGroups"), Seg::Index(0)],
                "capops"
            ),
            vec!["kubectl-edit".to_string()]
        );
        assert!(owners_of(&live, &[key("spec"), key("hard")], "capops").is_empty());
    }

    #[test]
    fn diff_compares_quantities_by_value_and_lists_by_name() {
        let before = json!({"hard": {"requests.nvidia.com/gpu": "8", "x": "1000m"},
            "flavors": [{"name": "a", "q": 1}, {"name": "b", "q": 2}]});
        let after = json!({"hard": {"requests.nvidia.com/gpu": 10, "x": 1},
            "flavors": [{"name": "b", "q": 2}, {"name": "c", "q": 3}]});
        let mut out = Vec::new();
        diff(Some(&before), Some(&after), &mut Vec::new(), &mut out);
        let paths: Vec<&str> = out.iter().map(|d| d.path.as_str()).collect();
        assert_eq!(
            paths,
            vec![
                "flavors[name=c]",
                "flavors[name=a]",
                r#"hard["requests.nvidia.com/gpu"]"#
            ]
        );
        assert_eq!(out[2].before, Some(json!("8")));
        assert_eq!(out[2].after, Some(json!(10)));
        assert_eq!(out[1].after, None);
    }
}
