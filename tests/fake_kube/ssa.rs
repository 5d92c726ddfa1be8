//! Server-side apply as the API server does it, for the fake: field sets
//! per manager, conflicts, force, removal of fields whose sole owner stops
//! applying them, and Update ownership for merge patches.
//!
//! Field sets are sets of paths; a path step is a map key (`f:`) or a
//! list-map element named by its key fields (`k:`). Lists are atomic
//! unless the kind's schema declares `x-kubernetes-list-type: map` for
//! them; maps merge key by key. `apiVersion`, `kind`, `metadata.name`,
//! `metadata.namespace`, server bookkeeping and `status` are never owned.

use serde_json::{Map, Value};
use std::collections::{BTreeMap, BTreeSet};

/// One step of a field path.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Step {
    Field(String),
    /// A list-map element: its key fields, as compact JSON with sorted keys.
    Key(String),
}

pub type FieldPath = Vec<Step>;
pub type FieldSet = BTreeSet<FieldPath>;

/// Which lists of a kind merge by key: field-name path (list elements
/// elided, e.g. `spec.resourceGroups.flavors`) → key fields.
#[derive(Clone, Debug, Default)]
pub struct ListTypes {
    pub maps: BTreeMap<String, Vec<String>>,
}

impl ListTypes {
    fn keys(&self, names: &[String]) -> Option<&Vec<String>> {
        self.maps.get(&names.join("."))
    }
}

/// A manager's entry in `managedFields`.
#[derive(Clone, Debug, PartialEq)]
pub struct Managed {
    pub manager: String,
    /// `Apply` or `Update`.
    pub operation: String,
    pub api_version: String,
    pub time: String,
    pub fields: FieldSet,
}

fn never_owned(p: &FieldPath) -> bool {
    let f = |i: usize| match p.get(i) {
        Some(Step::Field(s)) => s.as_str(),
        _ => "",
    };
    match f(0) {
        "apiVersion" | "kind" | "status" => true,
        "metadata" => matches!(
            f(1),
            "name"
                | "namespace"
                | "resourceVersion"
                | "uid"
                | "generation"
                | "creationTimestamp"
                | "managedFields"
                | "selfLink"
        ),
        _ => false,
    }
}

fn key_of(item: &Value, keys: &[String]) -> String {
    let m: BTreeMap<&str, &Value> = keys
        .iter()
        .map(|k| (k.as_str(), item.get(k).unwrap_or(&Value::Null)))
        .collect();
    serde_json::to_string(&m).unwrap_or_default()
}

/// The fields a value sets.
pub fn field_set(v: &Value, types: &ListTypes) -> FieldSet {
    let mut out = FieldSet::new();
    collect(v, &mut Vec::new(), &mut Vec::new(), types, &mut out);
    out.retain(|p| !p.is_empty() && !never_owned(p));
    out
}

fn collect(
    v: &Value,
    path: &mut FieldPath,
    names: &mut Vec<String>,
    types: &ListTypes,
    out: &mut FieldSet,
) {
    match v {
        Value::Object(m) if !m.is_empty() => {
            for (k, c) in m {
                path.push(Step::Field(k.clone()));
                names.push(k.clone());
                collect(c, path, names, types, out);
                names.pop();
                path.pop();
            }
        }
        Value::Array(items) if !items.is_empty() && types.keys(names).is_some() => {
            let keys = types.keys(names).cloned().unwrap_or_default();
            for item in items {
                path.push(Step::Key(key_of(item, &keys)));
                out.insert(path.clone());
                if let Some(m) = item.as_object() {
                    for (k, c) in m {
                        path.push(Step::Field(k.clone()));
                        names.push(k.clone());
                        collect(c, path, names, types, out);
                        names.pop();
                        path.pop();
                    }
                }
                path.pop();
            }
        }
        _ => {
            out.insert(path.clone());
        }
    }
}

/// The value at a path.
pub fn get<'a>(v: &'a Value, path: &[Step], types: &ListTypes) -> Option<&'a Value> {
    let mut cur = v;
    let mut names: Vec<String> = Vec::new();
    for step in path {
        cur = match step {
            Step::Field(k) => {
                names.push(k.clone());
                cur.get(k)?
            }
            Step::Key(k) => {
                let keys = types.keys(&names)?;
                cur.as_array()?.iter().find(|i| &key_of(i, keys) == k)?
            }
        };
    }
    Some(cur)
}

/// Removes the value at a path (and nothing else).
fn remove(v: &mut Value, path: &[Step], types: &ListTypes) {
    let Some((last, parent_path)) = path.split_last() else {
        return;
    };
    let mut cur = v;
    let mut walked: Vec<String> = Vec::new();
    for step in parent_path {
        cur = match step {
            Step::Field(k) => {
                walked.push(k.clone());
                match cur.get_mut(k) {
                    Some(c) => c,
                    None => return,
                }
            }
            Step::Key(k) => {
                let Some(keys) = types.keys(&walked).cloned() else {
                    return;
                };
                let Some(arr) = cur.as_array_mut() else {
                    return;
                };
                match arr.iter_mut().find(|i| &key_of(i, &keys) == k) {
                    Some(c) => c,
                    None => return,
                }
            }
        };
    }
    match last {
        Step::Field(k) => {
            if let Some(m) = cur.as_object_mut() {
                m.remove(k);
            }
        }
        Step::Key(k) => {
            let Some(keys) = types.keys(&walked).cloned() else {
                return;
            };
            if let Some(arr) = cur.as_array_mut() {
                arr.retain(|i| &key_of(i, &keys) != k);
            }
        }
    }
}

/// Merges an applied configuration into an object: maps key by key,
/// list-maps element by element, everything else replaced.
fn merge(dst: &mut Value, src: &Value, names: &mut Vec<String>, types: &ListTypes) {
    match (dst, src) {
        (Value::Object(d), Value::Object(s)) => {
            for (k, sv) in s {
                names.push(k.clone());
                match d.get_mut(k) {
                    Some(dv) if dv.is_object() && sv.is_object() => merge(dv, sv, names, types),
                    Some(Value::Array(da)) if sv.is_array() && types.keys(names).is_some() => {
                        let keys = types.keys(names).cloned().unwrap_or_default();
                        for item in sv.as_array().into_iter().flatten() {
                            let key = key_of(item, &keys);
                            match da.iter_mut().find(|i| key_of(i, &keys) == key) {
                                Some(existing) => {
                                    merge(existing, item, names, types);
                                }
                                None => da.push(item.clone()),
                            }
                        }
                    }
                    _ => {
                        d.insert(k.clone(), sv.clone());
                    }
                }
                names.pop();
            }
        }
        (d, s) => *d = s.clone(),
    }
}

/// How a path reads in a conflict: `.spec.cohortName`, `.spec.flavors[name="x"]`.
pub fn show(path: &[Step]) -> String {
    let mut s = String::new();
    for step in path {
        match step {
            Step::Field(f) => {
                s.push('.');
                s.push_str(f);
            }
            Step::Key(k) => {
                let m: BTreeMap<String, Value> = serde_json::from_str(k).unwrap_or_default();
                let inner: Vec<String> = m.iter().map(|(k, v)| format!("{k}={v}")).collect();
                s.push_str(&format!("[{}]", inner.join(",")));
            }
        }
    }
    s
}

/// A field-manager conflict.
#[derive(Clone, Debug, PartialEq)]
pub struct Conflict {
    pub manager: String,
    pub field: String,
}

/// The result of an apply: the new object and managers, or conflicts.
pub struct Applied {
    pub object: Value,
    pub managed: Vec<Managed>,
}

/// Applies `config` as `manager` to `live` (absent: a create).
pub fn apply(
    live: Option<(&Value, &[Managed])>,
    config: &Value,
    manager: &str,
    force: bool,
    api_version: &str,
    now: &str,
    types: &ListTypes,
) -> Result<Applied, Vec<Conflict>> {
    let cfg = field_set(config, types);
    let (base, mut managed): (Value, Vec<Managed>) = match live {
        Some((v, m)) => (v.clone(), m.to_vec()),
        None => (Value::Object(Map::new()), Vec::new()),
    };
    let mine = |m: &Managed| m.manager == manager && m.operation == "Apply";
    let mut conflicts = Vec::new();
    for m in managed.iter().filter(|m| !mine(m)) {
        for p in cfg.intersection(&m.fields) {
            if matches!(p.last(), Some(Step::Key(_))) {
                continue;
            }
            if get(&base, p, types) != get(config, p, types) {
                conflicts.push((m.manager.clone(), p.clone()));
            }
        }
    }
    if !conflicts.is_empty() {
        if !force {
            return Err(conflicts
                .into_iter()
                .map(|(manager, p)| Conflict {
                    manager,
                    field: show(&p),
                })
                .collect());
        }
        for m in managed.iter_mut().filter(|m| !mine(m)) {
            for (_, p) in &conflicts {
                m.fields.remove(p);
            }
        }
    }
    let previous: FieldSet = managed
        .iter()
        .filter(|m| mine(m))
        .flat_map(|m| m.fields.iter().cloned())
        .collect();
    let others: FieldSet = managed
        .iter()
        .filter(|m| !mine(m))
        .flat_map(|m| m.fields.iter().cloned())
        .collect();
    let mut object = base.clone();
    // Fields this manager alone owned and no longer applies go away (deepest first).
    let mut gone: Vec<&FieldPath> = previous
        .iter()
        .filter(|p| !cfg.contains(*p) && !others.contains(*p))
        .filter(|p| {
            // An element another manager still owns a field of stays.
            !matches!(p.last(), Some(Step::Key(_))) || !others.iter().any(|o| o.starts_with(p))
        })
        .collect();
    gone.sort_by_key(|p| std::cmp::Reverse(p.len()));
    for p in gone {
        remove(&mut object, p, types);
    }
    let mut body = config.clone();
    if let Some(m) = body.as_object_mut() {
        m.remove("status");
        if let Some(meta) = m.get_mut("metadata").and_then(Value::as_object_mut) {
            meta.remove("resourceVersion");
            meta.remove("managedFields");
        }
    }
    merge(&mut object, &body, &mut Vec::new(), types);
    managed.retain(|m| !mine(m));
    let changed_fields = previous != cfg;
    let time = managed_time(
        live,
        manager,
        "Apply",
        changed_fields || object != base,
        now,
    );
    managed.push(Managed {
        manager: manager.to_string(),
        operation: "Apply".into(),
        api_version: api_version.to_string(),
        time,
        fields: cfg,
    });
    managed.retain(|m| !m.fields.is_empty());
    Ok(Applied { object, managed })
}

fn managed_time(
    live: Option<(&Value, &[Managed])>,
    manager: &str,
    operation: &str,
    changed: bool,
    now: &str,
) -> String {
    let old = live.and_then(|(_, m)| {
        m.iter()
            .find(|x| x.manager == manager && x.operation == operation)
            .map(|x| x.time.clone())
    });
    match (changed, old) {
        (false, Some(t)) => t,
        _ => now.to_string(),
    }
}

/// RFC 7386 JSON merge patch.
pub fn merge_patch(target: &mut Value, patch: &Value) {
    match patch {
        Value::Object(p) => {
            if !target.is_object() {
                *target = Value::Object(Map::new());
            }
            let t = target.as_object_mut().expect("object");
            for (k, v) in p {
                if v.is_null() {
                    t.remove(k);
                } else {
                    merge_patch(t.entry(k.clone()).or_insert(Value::Null), v);
                }
            }
        }
        _ => *target = patch.clone(),
    }
}

/// Ownership after an Update by `manager` from `old` to `new`: the fields
/// it changed become its own and leave the other managers.
pub fn update_ownership(
    old: &Value,
    new: &Value,
    managed: &[Managed],
    manager: &str,
    api_version: &str,
    now: &str,
    types: &ListTypes,
) -> Vec<Managed> {
    let before = field_set(old, types);
    let after = field_set(new, types);
    let changed: FieldSet = after
        .iter()
        .filter(|p| get(old, p, types) != get(new, p, types))
        .cloned()
        .collect();
    let removed: FieldSet = before.difference(&after).cloned().collect();
    let mut out: Vec<Managed> = managed.to_vec();
    for m in &mut out {
        m.fields.retain(|p| !removed.contains(p));
        if !(m.manager == manager && m.operation == "Update") {
            m.fields.retain(|p| !changed.contains(p));
        }
    }
    if !changed.is_empty() {
        match out
            .iter_mut()
            .find(|m| m.manager == manager && m.operation == "Update")
        {
            Some(m) => {
                m.fields.extend(changed);
                m.time = now.to_string();
            }
            None => out.push(Managed {
                manager: manager.to_string(),
                operation: "Update".into(),
                api_version: api_version.to_string(),
                time: now.to_string(),
                fields: changed,
            }),
        }
    }
    out.retain(|m| !m.fields.is_empty());
    out
}

/// `managedFields` as the API server writes it.
pub fn encode(managed: &[Managed]) -> Value {
    Value::Array(
        managed
            .iter()
            .map(|m| {
                let mut root = Map::new();
                for p in &m.fields {
                    let mut cur = &mut root;
                    for (i, step) in p.iter().enumerate() {
                        let key = match step {
                            Step::Field(f) => format!("f:{f}"),
                            Step::Key(k) => format!("k:{k}"),
                        };
                        let entry = cur.entry(key).or_insert_with(|| Value::Object(Map::new()));
                        let obj = entry.as_object_mut().expect("object");
                        if i + 1 == p.len() && matches!(step, Step::Key(_)) {
                            obj.insert(".".into(), Value::Object(Map::new()));
                        }
                        cur = obj;
                    }
                }
                serde_json::json!({
                    "apiVersion": m.api_version,
                    "fieldsType": "FieldsV1",
                    "fieldsV1": Value::Object(root),
                    "manager": m.manager,
                    "operation": m.operation,
                    "time": m.time,
                })
            })
            .collect(),
    )
}
