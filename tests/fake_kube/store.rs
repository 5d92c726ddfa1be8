//! The fake API server's storage and semantics: kinds (core kinds built in,
//! Kueue kinds from the same CRD files the real server gets), objects with
//! resourceVersions, uids and generations, label-selector lists with
//! `limit`/`continue`, get, server-side apply (dry-run, force, conflicts),
//! merge patch, delete with preconditions, validation (the CRDs' schemas;
//! quantities and immutable fields of core kinds), and Status bodies shaped
//! like the real server's.

use super::selector;
use super::ssa::{self, ListTypes, Managed};
use serde_json::{Map, Value, json};
use std::collections::BTreeMap;

/// A kind the fake serves.
pub struct KindDef {
    pub group: String,
    pub version: String,
    pub kind: String,
    pub plural: String,
    pub namespaced: bool,
    pub types: ListTypes,
    /// The CRD's schema (custom resources only).
    pub schema: Option<jsonschema::Validator>,
}

impl KindDef {
    pub fn api_version(&self) -> String {
        if self.group.is_empty() {
            self.version.clone()
        } else {
            format!("{}/{}", self.group, self.version)
        }
    }

    fn resource(&self) -> String {
        if self.group.is_empty() {
            self.plural.clone()
        } else {
            format!("{}.{}", self.plural, self.group)
        }
    }

    fn qualified_kind(&self) -> String {
        if self.group.is_empty() {
            self.kind.clone()
        } else {
            format!("{}.{}", self.kind, self.group)
        }
    }
}

fn core(group: &str, version: &str, kind: &str, plural: &str, namespaced: bool) -> KindDef {
    KindDef {
        group: group.into(),
        version: version.into(),
        kind: kind.into(),
        plural: plural.into(),
        namespaced,
        types: ListTypes::default(),
        schema: None,
    }
}

/// The list types a CRD schema declares.
fn list_types(schema: &Value, names: &mut Vec<String>, out: &mut ListTypes) {
    if schema["type"] == "array" {
        if schema["x-kubernetes-list-type"] == "map"
            && let Some(keys) = schema["x-kubernetes-list-map-keys"].as_array()
        {
            out.maps.insert(
                names.join("."),
                keys.iter()
                    .filter_map(|k| k.as_str().map(str::to_string))
                    .collect(),
            );
        }
        list_types(&schema["items"], names, out);
    }
    if let Some(props) = schema["properties"].as_object() {
        for (k, v) in props {
            names.push(k.clone());
            list_types(v, names, out);
            names.pop();
        }
    }
}

/// The kinds of a cluster with Kueue: core kinds and the CRDs in `crd_dir`.
pub fn kinds(crd_dir: &std::path::Path) -> Vec<KindDef> {
    let mut out = vec![
        core("", "v1", "Namespace", "namespaces", false),
        core("", "v1", "Node", "nodes", false),
        core("", "v1", "ResourceQuota", "resourcequotas", true),
        core("", "v1", "ConfigMap", "configmaps", true),
        core(
            "scheduling.k8s.io",
            "v1",
            "PriorityClass",
            "priorityclasses",
            false,
        ),
    ];
    let mut files: Vec<_> = std::fs::read_dir(crd_dir)
        .expect("CRD folder")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    files.sort();
    for f in files {
        let crd: Value = serde_json::from_str(&std::fs::read_to_string(&f).unwrap()).unwrap();
        let spec = &crd["spec"];
        for v in spec["versions"].as_array().unwrap() {
            let schema = &v["schema"]["openAPIV3Schema"];
            let mut types = ListTypes::default();
            list_types(schema, &mut Vec::new(), &mut types);
            out.push(KindDef {
                group: spec["group"].as_str().unwrap().into(),
                version: v["name"].as_str().unwrap().into(),
                kind: spec["names"]["kind"].as_str().unwrap().into(),
                plural: spec["names"]["plural"].as_str().unwrap().into(),
                namespaced: spec["scope"] == "Namespaced",
                types,
                schema: Some(jsonschema::validator_for(schema).expect("CRD schema compiles")),
            });
        }
    }
    out
}

/// A stored object.
#[derive(Clone, Debug)]
pub struct Stored {
    pub value: Value,
    pub managed: Vec<Managed>,
}

/// An HTTP answer.
pub struct Reply {
    pub code: u16,
    pub body: Value,
}

impl Reply {
    fn ok(body: Value) -> Reply {
        Reply { code: 200, body }
    }
}

/// A Status body.
pub fn status(code: u16, reason: &str, message: &str, details: Option<Value>) -> Reply {
    let mut body = json!({
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": message,
        "reason": reason,
        "code": code,
    });
    if let Some(d) = details {
        body["details"] = d;
    }
    Reply { code, body }
}

fn details(k: &KindDef, name: &str, kind_name: &str) -> Value {
    let mut d = json!({"name": name, "kind": kind_name});
    if !k.group.is_empty() {
        d["group"] = k.group.clone().into();
    }
    d
}

pub fn not_found(k: &KindDef, name: &str) -> Reply {
    status(
        404,
        "NotFound",
        &format!("{} \"{name}\" not found", k.resource()),
        Some(details(k, name, &k.plural)),
    )
}

fn modified(k: &KindDef, name: &str) -> Reply {
    status(
        409,
        "Conflict",
        &format!(
            "Operation cannot be fulfilled on {} \"{name}\": the object has been modified; please apply your changes to the latest version and try again",
            k.resource()
        ),
        Some(details(k, name, &k.plural)),
    )
}

fn invalid(k: &KindDef, name: &str, causes: Vec<(String, String, String)>) -> Reply {
    let text: Vec<String> = causes
        .iter()
        .map(|(_, field, msg)| format!("{field}: {msg}"))
        .collect();
    let message = if text.len() == 1 {
        format!("{} \"{name}\" is invalid: {}", k.qualified_kind(), text[0])
    } else {
        format!(
            "{} \"{name}\" is invalid: [{}]",
            k.qualified_kind(),
            text.join(", ")
        )
    };
    let mut d = details(k, name, &k.kind);
    d["causes"] = causes
        .into_iter()
        .map(|(reason, field, message)| json!({"reason": reason, "message": message, "field": field}))
        .collect();
    status(422, "Invalid", &message, Some(d))
}

/// Everything the fake stores.
pub struct Store {
    pub kinds: Vec<KindDef>,
    /// (plural, namespace, name) → object.
    pub objects: BTreeMap<(String, String, String), Stored>,
    pub resource_version: u64,
    /// Logical clock, seconds after 2026-11-23T00:00:00Z: each write is one second later.
    pub clock: i64,
    uids: u64,
}

const EPOCH: i64 = 1_795_392_000; // 2026-11-23T00:00:00Z

impl Store {
    pub fn new(kinds: Vec<KindDef>) -> Store {
        Store {
            kinds,
            objects: BTreeMap::new(),
            resource_version: 1000,
            clock: 0,
            uids: 0,
        }
    }

    pub fn kind(&self, group: &str, version: &str, plural: &str) -> Option<usize> {
        self.kinds
            .iter()
            .position(|k| k.group == group && k.version == version && k.plural == plural)
    }

    pub fn kind_of(&self, api_version: &str, kind: &str) -> Option<usize> {
        self.kinds
            .iter()
            .position(|k| k.api_version() == api_version && k.kind == kind)
    }

    fn now(&mut self) -> String {
        self.clock += 1;
        jiff::Timestamp::from_second(EPOCH + self.clock)
            .map(|t| t.to_string())
            .unwrap_or_default()
    }

    /// The object as the API returns it, with managedFields.
    pub fn render(&self, k: &KindDef, s: &Stored) -> Value {
        let mut v = s.value.clone();
        v["apiVersion"] = k.api_version().into();
        v["kind"] = k.kind.clone().into();
        if !s.managed.is_empty() {
            v["metadata"]["managedFields"] = ssa::encode(&s.managed);
        }
        super::sorted(&v)
    }

    fn namespace_exists(&self, ns: &str) -> bool {
        self.objects
            .contains_key(&("namespaces".to_string(), String::new(), ns.to_string()))
    }

    pub fn list(&self, ki: usize, ns: Option<&str>, query: &BTreeMap<String, String>) -> Reply {
        let k = &self.kinds[ki];
        let reqs = match selector::parse(query.get("labelSelector").map_or("", String::as_str)) {
            Ok(r) => r,
            Err(m) => return status(400, "BadRequest", &m, None),
        };
        let limit: usize = query
            .get("limit")
            .and_then(|l| l.parse().ok())
            .filter(|l| *l > 0)
            .unwrap_or(usize::MAX);
        let start = query
            .get("continue")
            .map(|c| decode_token(c))
            .unwrap_or_default();
        let mut items = Vec::new();
        let mut next = None;
        for ((plural, o_ns, name), s) in &self.objects {
            if plural != &k.plural || ns.is_some_and(|n| n != o_ns) {
                continue;
            }
            let key = format!("{o_ns}/{name}");
            if !start.is_empty() && key <= start {
                continue;
            }
            if !selector::matches(&s.value["metadata"]["labels"], &reqs) {
                continue;
            }
            if items.len() == limit {
                next = Some(encode_token(
                    &items
                        .last()
                        .map(|(k, _): &(String, Value)| k.clone())
                        .unwrap_or_default(),
                ));
                break;
            }
            let mut v = self.render(k, s);
            if k.group.is_empty()
                && let Some(m) = v.as_object_mut()
            {
                // Core lists leave out each item's apiVersion and kind.
                m.remove("apiVersion");
                m.remove("kind");
            }
            items.push((key, v));
        }
        let mut meta = json!({"resourceVersion": self.resource_version.to_string()});
        if let Some(t) = next {
            meta["continue"] = t.into();
        }
        Reply::ok(json!({
            "apiVersion": k.api_version(),
            "kind": format!("{}List", k.kind),
            "metadata": meta,
            "items": items.into_iter().map(|(_, v)| v).collect::<Vec<_>>(),
        }))
    }

    pub fn get(&self, ki: usize, ns: &str, name: &str) -> Reply {
        let k = &self.kinds[ki];
        match self
            .objects
            .get(&(k.plural.clone(), ns.to_string(), name.to_string()))
        {
            Some(s) => Reply::ok(self.render(k, s)),
            None => not_found(k, name),
        }
    }

    fn validate(
        &self,
        k: &KindDef,
        name: &str,
        v: &mut Value,
        old: Option<&Value>,
    ) -> Result<(), Reply> {
        let mut causes: Vec<(String, String, String)> = Vec::new();
        if let Some(schema) = &k.schema {
            let mut instance = v.clone();
            instance["apiVersion"] = k.api_version().into();
            instance["kind"] = k.kind.clone().into();
            for e in schema.iter_errors(&instance) {
                let field = e
                    .instance_path()
                    .as_str()
                    .trim_start_matches('/')
                    .split('/')
                    .filter(|s| !s.is_empty())
                    .map(|s| {
                        if s.chars().all(|c| c.is_ascii_digit()) {
                            format!("[{s}]")
                        } else {
                            format!(".{s}")
                        }
                    })
                    .collect::<String>();
                let field = field.trim_start_matches('.').to_string();
                use jsonschema::error::ValidationErrorKind as K;
                let (reason, msg, field) = match e.kind() {
                    K::Enum { options } => (
                        "FieldValueNotSupported",
                        format!(
                            "Unsupported value: {}: supported values: {}",
                            e.instance(),
                            options
                        ),
                        field,
                    ),
                    K::Required { property } => {
                        let p = property.as_str().unwrap_or_default();
                        let f = if field.is_empty() {
                            p.to_string()
                        } else {
                            format!("{field}.{p}")
                        };
                        ("FieldValueRequired", "Required value".to_string(), f)
                    }
                    _ => (
                        "FieldValueInvalid",
                        format!("Invalid value: {}: {e}", e.instance()),
                        field,
                    ),
                };
                causes.push((reason.into(), field, msg));
            }
        }
        match k.kind.as_str() {
            "ResourceQuota" | "Node" => {
                let paths: &[&[&str]] = if k.kind == "Node" {
                    &[&["status", "allocatable"], &["status", "capacity"]]
                } else {
                    &[&["spec", "hard"]]
                };
                for path in paths {
                    let mut cur = &mut *v;
                    for p in *path {
                        cur = &mut cur[*p];
                    }
                    let Some(m) = cur.as_object_mut() else {
                        continue;
                    };
                    for (key, q) in m.iter_mut() {
                        let text = match &q {
                            Value::String(s) => Some(s.clone()),
                            Value::Number(n) => Some(n.to_string()),
                            _ => None,
                        };
                        match text.as_deref().and_then(capops::sync::quantity::Quantity::parse_with_format) {
                            // The server keeps quantities of typed fields in canonical form.
                            Some((qty, f)) => *q = qty.canonical(f).into(),
                            None => causes.push((
                                "FieldValueInvalid".into(),
                                format!("{}[{key}]", path.join(".")),
                                format!("Invalid value: {q}: quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"),
                            )),
                        }
                    }
                }
            }
            "PriorityClass" => {
                if !v["value"].is_i64() {
                    causes.push((
                        "FieldValueRequired".into(),
                        "value".into(),
                        "Required value".into(),
                    ));
                }
                if let Some(old) = old {
                    for f in ["value", "preemptionPolicy"] {
                        if old.get(f) != v.get(f) {
                            causes.push((
                                "FieldValueForbidden".into(),
                                f.into(),
                                "Forbidden: may not be changed in an update.".into(),
                            ));
                        }
                    }
                }
            }
            _ => {}
        }
        if causes.is_empty() {
            Ok(())
        } else {
            Err(invalid(k, name, causes))
        }
    }

    /// Stores a new version (or, on dry-run, only builds it) and returns it.
    #[allow(clippy::too_many_arguments)]
    fn commit(
        &mut self,
        ki: usize,
        ns: &str,
        name: &str,
        mut value: Value,
        managed: Vec<Managed>,
        old: Option<&Stored>,
        dry_run: bool,
    ) -> Reply {
        if let Err(r) = self.validate(&self.kinds[ki], name, &mut value, old.map(|o| &o.value)) {
            return r;
        }
        let k_plural = self.kinds[ki].plural.clone();
        // Nothing changed: no write, the resourceVersion stays.
        if let Some(o) = old
            && o.value == value
            && o.managed == managed
        {
            return Reply::ok(self.render(&self.kinds[ki], o));
        }
        let mut meta: Map<String, Value> =
            value["metadata"].as_object().cloned().unwrap_or_default();
        meta.insert("name".into(), name.into());
        if self.kinds[ki].namespaced {
            meta.insert("namespace".into(), ns.into());
        }
        match old {
            Some(o) => {
                for f in ["uid", "creationTimestamp", "deletionTimestamp"] {
                    if let Some(x) = o.value["metadata"].get(f) {
                        meta.insert(f.into(), x.clone());
                    }
                }
                let spec_changed = strip(&o.value) != strip(&value);
                let g = o.value["metadata"]["generation"].as_i64().unwrap_or(1);
                meta.insert(
                    "generation".into(),
                    (if spec_changed { g + 1 } else { g }).into(),
                );
            }
            None => {
                self.uids += 1;
                let uid = format!("00000000-0000-4000-8000-{:012x}", self.uids);
                let now = jiff::Timestamp::from_second(EPOCH + self.clock)
                    .map(|t| t.to_string())
                    .unwrap_or_default();
                meta.insert("uid".into(), uid.into());
                meta.insert("creationTimestamp".into(), now.into());
                meta.insert("generation".into(), 1.into());
            }
        }
        meta.remove("resourceVersion");
        meta.remove("managedFields");
        value["metadata"] = Value::Object(meta);
        if !dry_run {
            self.resource_version += 1;
            value["metadata"]["resourceVersion"] = self.resource_version.to_string().into();
            self.objects.insert(
                (k_plural, ns.to_string(), name.to_string()),
                Stored {
                    value: value.clone(),
                    managed: managed.clone(),
                },
            );
        } else if let Some(o) = old {
            value["metadata"]["resourceVersion"] = o.value["metadata"]["resourceVersion"].clone();
        }
        Reply {
            code: if old.is_some() { 200 } else { 201 },
            body: self.render(&self.kinds[ki], &Stored { value, managed }),
        }
    }

    /// Server-side apply.
    #[allow(clippy::too_many_arguments)]
    pub fn apply(
        &mut self,
        ki: usize,
        ns: &str,
        name: &str,
        body: &Value,
        manager: &str,
        force: bool,
        dry_run: bool,
    ) -> Reply {
        let k = &self.kinds[ki];
        if body["apiVersion"] != k.api_version().as_str() || body["kind"] != k.kind.as_str() {
            return status(
                400,
                "BadRequest",
                &format!(
                    "the body's apiVersion/kind must be {}/{}",
                    k.api_version(),
                    k.kind
                ),
                None,
            );
        }
        if body["metadata"]["name"].as_str().is_some_and(|n| n != name) {
            return status(
                400,
                "BadRequest",
                "the name of the object does not match the name on the URL",
                None,
            );
        }
        if k.namespaced && !self.namespace_exists(ns) {
            return status(
                404,
                "NotFound",
                &format!("namespaces \"{ns}\" not found"),
                Some(json!({"name": ns, "kind": "namespaces"})),
            );
        }
        let key = (k.plural.clone(), ns.to_string(), name.to_string());
        let old = self.objects.get(&key).cloned();
        if let Some(rv) = body["metadata"]["resourceVersion"].as_str() {
            let current = old
                .as_ref()
                .and_then(|o| o.value["metadata"]["resourceVersion"].as_str());
            if current != Some(rv) {
                return if old.is_none() {
                    not_found(k, name)
                } else {
                    modified(k, name)
                };
            }
        }
        let api_version = k.api_version();
        let now = jiff::Timestamp::from_second(EPOCH + self.clock + 1)
            .map(|t| t.to_string())
            .unwrap_or_default();
        let result = ssa::apply(
            old.as_ref().map(|o| (&o.value, o.managed.as_slice())),
            body,
            manager,
            force,
            &api_version,
            &now,
            &k.types,
        );
        match result {
            Ok(applied) => {
                if !dry_run {
                    let _ = self.now();
                }
                self.commit(
                    ki,
                    ns,
                    name,
                    applied.object,
                    applied.managed,
                    old.as_ref(),
                    dry_run,
                )
            }
            Err(conflicts) => {
                let mut by_manager: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
                for c in &conflicts {
                    by_manager.entry(&c.manager).or_default().push(&c.field);
                }
                let n = conflicts.len();
                let mut message = format!(
                    "Apply failed with {n} conflict{}: ",
                    if n == 1 { "" } else { "s" }
                );
                let parts: Vec<String> = by_manager
                    .iter()
                    .map(|(m, fields)| {
                        if n == 1 {
                            format!("conflict with \"{m}\": {}", fields[0])
                        } else {
                            format!(
                                "conflicts with \"{m}\":\n{}",
                                fields
                                    .iter()
                                    .map(|f| format!("- {f}"))
                                    .collect::<Vec<_>>()
                                    .join("\n")
                            )
                        }
                    })
                    .collect();
                message.push_str(&parts.join("\n"));
                let causes: Vec<Value> = conflicts
                    .iter()
                    .map(|c| json!({"reason": "FieldManagerConflict", "message": format!("conflict with \"{}\"", c.manager), "field": c.field}))
                    .collect();
                status(409, "Conflict", &message, Some(json!({"causes": causes})))
            }
        }
    }

    /// JSON merge patch as an Update by `manager`.
    pub fn merge_patch(
        &mut self,
        ki: usize,
        ns: &str,
        name: &str,
        patch: &Value,
        manager: &str,
        dry_run: bool,
    ) -> Reply {
        let k = &self.kinds[ki];
        let key = (k.plural.clone(), ns.to_string(), name.to_string());
        let Some(old) = self.objects.get(&key).cloned() else {
            return not_found(k, name);
        };
        if let Some(rv) = patch["metadata"]["resourceVersion"].as_str()
            && old.value["metadata"]["resourceVersion"].as_str() != Some(rv)
        {
            return modified(k, name);
        }
        let mut new = old.value.clone();
        ssa::merge_patch(&mut new, patch);
        if let Some(meta) = new["metadata"].as_object_mut() {
            meta.insert(
                "resourceVersion".into(),
                old.value["metadata"]["resourceVersion"].clone(),
            );
        }
        let api_version = k.api_version();
        let now = jiff::Timestamp::from_second(EPOCH + self.clock + 1)
            .map(|t| t.to_string())
            .unwrap_or_default();
        let managed = ssa::update_ownership(
            &old.value,
            &new,
            &old.managed,
            manager,
            &api_version,
            &now,
            &k.types,
        );
        if !dry_run && (new != old.value || managed != old.managed) {
            let _ = self.now();
        }
        self.commit(ki, ns, name, new, managed, Some(&old), dry_run)
    }

    /// A merge patch of the status subresource: only `status` changes (and
    /// the resourceVersion, as on a real server).
    pub fn patch_status(
        &mut self,
        ki: usize,
        ns: &str,
        name: &str,
        patch: &Value,
        dry_run: bool,
    ) -> Reply {
        let k = &self.kinds[ki];
        let key = (k.plural.clone(), ns.to_string(), name.to_string());
        let Some(mut stored) = self.objects.get(&key).cloned() else {
            return not_found(k, name);
        };
        let mut status = stored.value.get("status").cloned().unwrap_or(json!({}));
        ssa::merge_patch(&mut status, &patch["status"]);
        stored.value["status"] = status;
        if !dry_run {
            self.resource_version += 1;
            let _ = self.now();
            stored.value["metadata"]["resourceVersion"] = self.resource_version.to_string().into();
            self.objects.insert(key, stored.clone());
        }
        Reply::ok(self.render(&self.kinds[ki], &stored))
    }

    /// Creates an object as an Update by `manager` (setup, `kubectl create`).
    pub fn create(
        &mut self,
        ki: usize,
        ns: &str,
        name: &str,
        value: &Value,
        manager: &str,
    ) -> Reply {
        let now = self.now();
        let k = &self.kinds[ki];
        let key = (k.plural.clone(), ns.to_string(), name.to_string());
        if self.objects.contains_key(&key) {
            return status(
                409,
                "AlreadyExists",
                &format!("{} \"{name}\" already exists", k.resource()),
                None,
            );
        }
        let api_version = k.api_version();
        let managed = ssa::update_ownership(
            &json!({}),
            value,
            &[],
            manager,
            &api_version,
            &now,
            &k.types,
        );
        self.commit(ki, ns, name, value.clone(), managed, None, false)
    }

    pub fn delete(
        &mut self,
        ki: usize,
        ns: &str,
        name: &str,
        options: &Value,
        dry_run: bool,
    ) -> Reply {
        let k = &self.kinds[ki];
        let key = (k.plural.clone(), ns.to_string(), name.to_string());
        let Some(old) = self.objects.get(&key) else {
            return not_found(k, name);
        };
        let meta = &old.value["metadata"];
        let pre = &options["preconditions"];
        if let Some(uid) = pre["uid"].as_str()
            && meta["uid"].as_str() != Some(uid)
        {
            return status(
                409,
                "Conflict",
                &format!(
                    "Operation cannot be fulfilled on {} \"{name}\": the UID in the precondition ({uid}) does not match the UID in record ({}). The object might have been deleted and then recreated",
                    k.qualified_kind(),
                    meta["uid"].as_str().unwrap_or_default()
                ),
                Some(details(k, name, &k.kind)),
            );
        }
        if let Some(rv) = pre["resourceVersion"].as_str()
            && meta["resourceVersion"].as_str() != Some(rv)
        {
            return status(
                409,
                "Conflict",
                &format!(
                    "Operation cannot be fulfilled on {} \"{name}\": the ResourceVersion in the precondition ({rv}) does not match the ResourceVersion in record ({}). The object might have been modified",
                    k.qualified_kind(),
                    meta["resourceVersion"].as_str().unwrap_or_default()
                ),
                Some(details(k, name, &k.kind)),
            );
        }
        // Finalizers hold it: it is marked as being deleted, and returned.
        let finalized = meta["finalizers"].as_array().is_some_and(|f| !f.is_empty());
        if finalized {
            if !dry_run && meta["deletionTimestamp"].is_null() {
                let now = self.now();
                self.resource_version += 1;
                let rv = self.resource_version.to_string();
                let stored = self.objects.get_mut(&key).expect("present");
                stored.value["metadata"]["deletionTimestamp"] = now.into();
                stored.value["metadata"]["resourceVersion"] = rv.into();
            }
            let stored = &self.objects[&key];
            return Reply::ok(self.render(&self.kinds[ki], stored));
        }
        let mut d = details(k, name, &k.plural);
        d["uid"] = meta["uid"].clone();
        if !dry_run {
            self.objects.remove(&key);
            self.resource_version += 1;
            let _ = self.now();
        }
        Reply::ok(
            json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "details": d}),
        )
    }
}

/// An object without metadata and status: what makes a new generation.
fn strip(v: &Value) -> Value {
    let mut v = v.clone();
    if let Some(m) = v.as_object_mut() {
        m.remove("metadata");
        m.remove("status");
    }
    v
}

fn encode_token(key: &str) -> String {
    key.bytes().map(|b| format!("{b:02x}")).collect()
}

fn decode_token(t: &str) -> String {
    (0..t.len() / 2)
        .filter_map(|i| u8::from_str_radix(t.get(2 * i..2 * i + 2)?, 16).ok())
        .map(char::from)
        .collect()
}
