//! The plan of one cluster's objects, computed from what was read: the
//! desired objects, the live objects (listed by label, or fetched by name),
//! and the server-side-apply dry-runs. Pure: no I/O, so every rule here is
//! tested without a server.
//!
//! Ownership decides first. An object tracked by Argo CD or Flux, or owned
//! by another capacity repository, is a conflict capops never resolves; an
//! object of the same name that capops did not create is a conflict
//! `--force-conflicts` may take over. For capops's own objects the dry-run
//! result is compared with the live object on the fields capops applies or
//! owned before (quantities by value), ignoring status, server bookkeeping
//! and the revision annotation (an object whose only difference is the
//! revision it was rendered at is left alone). Objects already as desired
//! on every applied field, with nothing capops owned left out, need no
//! dry-run at all: a cluster in the desired state costs one list per kind.

use super::desired::{CLUSTER, DesiredObject, FIELD_MANAGER, REPOSITORY};
use super::fields::{self, FieldDiff, Path, Seg};
use super::plan::{Action, Change, Conflict, FieldConflict, ObjRef, ObjectError, Observed};
use super::quantity;
use crate::diag::Code;
use crate::render::{MANAGED_BY, REVISION};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};

pub use crate::render::{GITOPS_ANNOTATIONS, GITOPS_LABELS};

/// Who an existing object belongs to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Owner {
    /// This capacity repository.
    Ours,
    Gitops {
        tool: String,
        marker: String,
    },
    OtherRepository(String),
    /// This repository's, applied for another of its Cluster documents:
    /// this context reaches that cluster's API server.
    OtherCluster(String),
    /// capops's label without a repository annotation.
    Unclaimed,
    /// Not capops's: these field managers wrote it.
    Foreign(Vec<String>),
}

/// Whose objects capops is syncing: a capacity repository's, for one of its
/// Cluster documents.
#[derive(Clone, Copy, Debug)]
pub struct Ident<'a> {
    pub repository: &'a str,
    pub cluster: &'a str,
    /// The repository's Cluster documents (empty: not known). An object
    /// that names a Cluster no longer among them (renamed or removed) is
    /// this one's to claim.
    pub known: &'a [String],
}

/// Who `live` belongs to, seen from `id`. An object of this repository
/// that names another of its clusters is that cluster's (objects applied
/// before capops named the cluster are taken as this one's).
pub fn owner(live: &Value, id: &Ident<'_>) -> Owner {
    let meta = &live["metadata"];
    for (key, tool) in GITOPS_ANNOTATIONS {
        if meta["annotations"].get(*key).is_some() {
            return Owner::Gitops {
                tool: tool.to_string(),
                marker: format!("annotation {key}"),
            };
        }
    }
    for (key, tool) in GITOPS_LABELS {
        if meta["labels"].get(*key).is_some() {
            return Owner::Gitops {
                tool: tool.to_string(),
                marker: format!("label {key}"),
            };
        }
    }
    if meta["labels"][MANAGED_BY.0] != MANAGED_BY.1 {
        let mut managers: Vec<String> = fields::managed(live)
            .into_iter()
            .map(|(m, _)| m.manager)
            .filter(|m| m != FIELD_MANAGER)
            .collect();
        managers.sort();
        managers.dedup();
        return Owner::Foreign(managers);
    }
    match meta["annotations"][REPOSITORY].as_str() {
        Some(r) if r == id.repository => match meta["annotations"][CLUSTER].as_str() {
            Some(c)
                if c != id.cluster && (id.known.is_empty() || id.known.iter().any(|k| k == c)) =>
            {
                Owner::OtherCluster(c.to_string())
            }
            _ => Owner::Ours,
        },
        Some(r) => Owner::OtherRepository(r.to_string()),
        None => Owner::Unclaimed,
    }
}

/// Whether capops's own server-side apply set the repository annotation.
/// A label and annotation someone else patched onto an object (the GPU
/// operator's ConfigMap, a copy restored with `kubectl create`) do not make
/// it capops's to delete.
pub fn applied_by_capops(live: &Value) -> bool {
    let path = [
        Seg::Key("metadata".into()),
        Seg::Key("annotations".into()),
        Seg::Key(REPOSITORY.into()),
    ];
    fields::owned_by(live, FIELD_MANAGER, "Apply")
        .iter()
        .any(|p| p.as_slice() == path)
}

/// A failed API call, as the server's Status said it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ApiFailure {
    pub code: u16,
    pub reason: String,
    pub message: String,
    pub causes: Vec<Cause>,
    /// Seconds the server asked to wait before trying again (the
    /// `Retry-After` header, else the Status's `details.retryAfterSeconds`).
    pub retry_after: Option<u64>,
}

/// One `details.causes[]` entry of a Status.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cause {
    pub reason: String,
    pub field: String,
    pub message: String,
}

impl ApiFailure {
    /// A 409 whose causes are field-manager conflicts.
    pub fn field_conflicts(&self) -> Option<Vec<FieldConflict>> {
        let fields: Vec<FieldConflict> = self
            .causes
            .iter()
            .filter(|c| c.reason == "FieldManagerConflict")
            .map(|c| FieldConflict {
                field: c.field.clone(),
                manager: c.message.split('"').nth(1).map(str::to_string),
            })
            .collect();
        (self.code == 409 && !fields.is_empty()).then_some(fields)
    }
}

/// What a server-side-apply dry-run answered.
#[derive(Clone, Debug, PartialEq)]
pub enum DryRun {
    /// The object as it would be after the apply.
    Applied(Value),
    /// 409 with field conflicts; `forced` is the object a forced apply would give.
    Conflict {
        failure: ApiFailure,
        forced: Option<Value>,
    },
    Failed(ApiFailure),
}

/// The live objects read from one cluster.
#[derive(Clone, Debug, Default)]
pub struct Live {
    pub objects: BTreeMap<ObjRef, Value>,
    /// Objects that came from the label-selector lists (the prune candidates).
    pub listed: BTreeSet<ObjRef>,
}

/// Paths never compared: status, server bookkeeping, the revision annotation.
fn ignored(path: &[Seg]) -> bool {
    let key = |i: usize| match path.get(i) {
        Some(Seg::Key(k)) => k.as_str(),
        _ => "",
    };
    match key(0) {
        "status" => true,
        "metadata" => {
            matches!(
                key(1),
                "resourceVersion"
                    | "managedFields"
                    | "generation"
                    | "uid"
                    | "creationTimestamp"
                    | "selfLink"
                    | "deletionTimestamp"
                    | "deletionGracePeriodSeconds"
            ) || (key(1) == "annotations" && key(2) == REVISION)
        }
        _ => false,
    }
}

/// Whether the desired object needs a dry-run to be planned: it is absent,
/// not plainly ours, differs from the live object on a field capops
/// applies, or leaves out a field capops owned (which the apply removes).
pub fn needs_dry_run(desired: &DesiredObject, live: Option<&Value>, id: &Ident<'_>) -> bool {
    let Some(live) = live else {
        return true;
    };
    match owner(live, id) {
        Owner::Gitops { .. } | Owner::OtherRepository(_) | Owner::OtherCluster(_) => return false,
        Owner::Foreign(_) | Owner::Unclaimed => return true,
        Owner::Ours => {}
    }
    let leaves = fields::leaves(&desired.value);
    let differs = leaves.iter().filter(|p| !ignored(p)).any(|p| {
        match (fields::get(&desired.value, p), fields::get(live, p)) {
            (Some(a), Some(b)) => !quantity::same(a, b),
            (a, b) => a != b,
        }
    });
    differs
        || fields::owned_by(live, FIELD_MANAGER, "Apply")
            .iter()
            .filter(|p| !ignored(p))
            .any(|owned| {
                !leaves
                    .iter()
                    .any(|l| l.starts_with(owned) || owned.starts_with(l))
            })
}

/// Whether an object missing from the lists must be fetched by name to be
/// planned: its dry-run shows it exists (it carries no capops label, or the
/// list would have returned it).
pub fn needs_fetch(live: Option<&Value>, dry: Option<&DryRun>) -> bool {
    if live.is_some() {
        return false;
    }
    match dry {
        Some(DryRun::Applied(v)) => v["metadata"]["resourceVersion"]
            .as_str()
            .is_some_and(|rv| !rv.is_empty()),
        Some(DryRun::Conflict { .. }) => true,
        _ => false,
    }
}

/// A hash of an object without status and server bookkeeping: equal
/// hashes mean nothing capops cares about changed.
pub fn content_hash(v: &Value) -> String {
    let mut v = v.clone();
    if let Some(m) = v.as_object_mut() {
        m.remove("status");
        if let Some(meta) = m.get_mut("metadata").and_then(Value::as_object_mut) {
            for k in ["resourceVersion", "managedFields", "generation"] {
                meta.remove(k);
            }
        }
    }
    let text = serde_json::to_string(&crate::render::yaml::sorted(&v)).unwrap_or_default();
    let h = text.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
    });
    format!("{h:016x}")
}

/// The observed state of a live object.
pub fn observed(v: &Value) -> Observed {
    Observed {
        resource_version: v["metadata"]["resourceVersion"]
            .as_str()
            .unwrap_or_default()
            .to_string(),
        content: content_hash(v),
        revision: None,
    }
}

/// The differences between `live` and `after` on the fields capops applies
/// (`desired`) or owned in `live`.
pub fn managed_diff(live: &Value, after: &Value, desired: &Value) -> Vec<FieldDiff> {
    let mut paths: Vec<Path> = fields::leaves(desired);
    paths.extend(fields::owned_by(live, FIELD_MANAGER, "Apply"));
    paths.retain(|p| !ignored(p) && !p.is_empty());
    paths.sort();
    paths.dedup();
    // Keep only the outermost of nested paths.
    let mut kept: Vec<Path> = Vec::new();
    for p in paths {
        if !kept.iter().any(|k| p.starts_with(k)) {
            kept.retain(|k| !k.starts_with(&p));
            kept.push(p);
        }
    }
    let mut out = Vec::new();
    for p in &kept {
        let mut path = p.clone();
        fields::diff(
            fields::get(live, p),
            fields::get(after, p),
            &mut path,
            &mut out,
        );
    }
    out.retain(|d| !d.path.is_empty());
    out
}

/// The error of an object's failed call, with a code and help.
pub fn object_error(target: &ObjRef, f: &ApiFailure) -> ObjectError {
    let (code, help) = match f.code {
        404 if target.namespace.is_some() && f.message.contains("namespace") => (
            "namespace-missing",
            Some(format!(
                "create the namespace `{}` (capops does not create namespaces), or fix the Team's namespace for this cluster",
                target.namespace.as_deref().unwrap_or_default()
            )),
        ),
        422 => (
            "object-invalid",
            Some(
                "the cluster refused the object: check the Kueue version, or a template override"
                    .to_string(),
            ),
        ),
        403 | 401 => (
            "forbidden",
            Some(
                "give the kubeconfig's user permission to get, list, patch and delete this kind"
                    .to_string(),
            ),
        ),
        409 => (
            "object-changed",
            Some(
                "the object changed while capops was writing it: run the command again".to_string(),
            ),
        ),
        _ => ("api-error", None),
    };
    let mut message = format!("{target}: {}", f.message);
    let fields: Vec<&str> = f
        .causes
        .iter()
        .filter(|c| !c.field.is_empty())
        .map(|c| c.field.as_str())
        .collect();
    if f.code == 422 && !fields.is_empty() && !f.message.contains(fields[0]) {
        message.push_str(&format!(" (fields: {})", fields.join(", ")));
    }
    ObjectError {
        code: code.to_string(),
        message,
        help,
    }
}

/// The planned changes of a cluster's objects, the number of objects
/// already as desired, and what was observed.
pub fn plan_objects(
    desired: &[DesiredObject],
    live: &Live,
    dry: &BTreeMap<ObjRef, DryRun>,
    id: &Ident<'_>,
) -> (Vec<Change>, usize, BTreeMap<String, Observed>) {
    let mut changes = Vec::new();
    let mut unchanged = 0;
    let observed_map: BTreeMap<String, Observed> = live
        .objects
        .iter()
        .map(|(r, v)| {
            let mut o = observed(v);
            if owner(v, id) == Owner::Ours {
                o.revision = v["metadata"]["annotations"][REVISION]
                    .as_str()
                    .map(str::to_string);
            }
            (super::plan::key(r), o)
        })
        .collect();
    let change = |action, d: &DesiredObject, l: Option<&Value>| Change {
        action,
        target: d.target.clone(),
        resource_version: l
            .and_then(|l| l["metadata"]["resourceVersion"].as_str())
            .map(str::to_string),
        uid: l
            .and_then(|l| l["metadata"]["uid"].as_str())
            .map(str::to_string),
        live_revision: l
            .and_then(|l| l["metadata"]["annotations"][REVISION].as_str())
            .map(str::to_string),
        diff: Vec::new(),
        conflict: None,
        error: None,
        object: None,
    };
    for d in desired {
        let l = live.objects.get(&d.target);
        let dr = dry.get(&d.target);
        let forced_diff = |after: Option<&Value>| match (l, after) {
            (Some(l), Some(a)) => managed_diff(l, a, &d.value),
            _ => Vec::new(),
        };
        let after_of = |dr: Option<&DryRun>| -> Option<Value> {
            match dr {
                Some(DryRun::Applied(v)) => Some(v.clone()),
                Some(DryRun::Conflict { forced, .. }) => forced.clone(),
                _ => None,
            }
        };
        // Being deleted (a finalizer holds it: Kueue's while workloads are
        // admitted): not as desired, whatever its fields say. A write
        // cannot stop the deletion, so it is said, and what names it waits.
        if let Some(since) = l.and_then(|l| l["metadata"]["deletionTimestamp"].as_str()) {
            let finalizers: Vec<&str> = l
                .and_then(|l| l["metadata"]["finalizers"].as_array())
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .collect();
            changes.push(Change {
                error: Some(ObjectError {
                    code: Code::ObjectTerminating.as_str().into(),
                    message: format!(
                        "{}: being deleted since {since}{}: it disappears once {}; capops creates it again then",
                        d.target,
                        if finalizers.is_empty() {
                            String::new()
                        } else {
                            format!(" (finalizers: {})", finalizers.join(", "))
                        },
                        if finalizers.is_empty() { "the deletion finishes" } else { "they finish" },
                    ),
                    help: Some(
                        "wait for the deletion to finish (Kueue removes its finalizer once no admitted workload uses the object) and apply again".into(),
                    ),
                }),
                ..change(Action::Error, d, l)
            });
            continue;
        }
        let c = match l.map(|l| owner(l, id)) {
            Some(Owner::Gitops { tool, marker }) => Change {
                conflict: Some(Conflict::Gitops { tool, marker }),
                ..change(Action::Conflict, d, l)
            },
            Some(Owner::OtherRepository(repository)) => Change {
                conflict: Some(Conflict::OtherRepository { repository }),
                ..change(Action::Conflict, d, l)
            },
            Some(Owner::OtherCluster(cluster)) => Change {
                conflict: Some(Conflict::OtherCluster { cluster }),
                ..change(Action::Conflict, d, l)
            },
            Some(o @ (Owner::Foreign(_) | Owner::Unclaimed)) => {
                if let Some(DryRun::Failed(f)) = dr {
                    Change {
                        error: Some(object_error(&d.target, f)),
                        ..change(Action::Error, d, l)
                    }
                } else {
                    let conflict = match o {
                        Owner::Foreign(managers) => Conflict::NotOwned { managers },
                        _ => Conflict::Unclaimed,
                    };
                    Change {
                        conflict: Some(conflict),
                        diff: forced_diff(after_of(dr).as_ref()),
                        object: Some(d.value.clone()),
                        ..change(Action::Conflict, d, l)
                    }
                }
            }
            Some(Owner::Ours) => match dr {
                None => {
                    unchanged += 1;
                    continue;
                }
                Some(DryRun::Applied(after)) => {
                    let diff = managed_diff(l.expect("live"), after, &d.value);
                    if diff.is_empty() {
                        unchanged += 1;
                        continue;
                    }
                    Change {
                        diff,
                        object: Some(d.value.clone()),
                        ..change(Action::Update, d, l)
                    }
                }
                Some(DryRun::Conflict { failure, forced }) => Change {
                    conflict: Some(Conflict::Fields {
                        fields: failure.field_conflicts().unwrap_or_default(),
                    }),
                    diff: forced_diff(forced.as_ref()),
                    object: Some(d.value.clone()),
                    ..change(Action::Conflict, d, l)
                },
                Some(DryRun::Failed(f)) => Change {
                    error: Some(object_error(&d.target, f)),
                    ..change(Action::Error, d, l)
                },
            },
            None => match dr {
                Some(DryRun::Failed(f)) => Change {
                    error: Some(object_error(&d.target, f)),
                    ..change(Action::Error, d, l)
                },
                Some(DryRun::Conflict { .. }) => Change {
                    conflict: Some(Conflict::NotOwned {
                        managers: Vec::new(),
                    }),
                    object: Some(d.value.clone()),
                    ..change(Action::Conflict, d, l)
                },
                Some(DryRun::Applied(after)) if needs_fetch(None, dr) => Change {
                    conflict: Some(Conflict::NotOwned {
                        managers: fields::managed(after)
                            .into_iter()
                            .map(|(m, _)| m.manager)
                            .filter(|m| m != FIELD_MANAGER)
                            .collect(),
                    }),
                    object: Some(d.value.clone()),
                    ..change(Action::Conflict, d, l)
                },
                _ => Change {
                    object: Some(d.value.clone()),
                    ..change(Action::Create, d, l)
                },
            },
        };
        changes.push(c);
    }
    // Prune: listed objects of this repository that are no longer desired.
    let wanted: BTreeSet<&ObjRef> = desired.iter().map(|d| &d.target).collect();
    let mut prunes: Vec<Change> = live
        .listed
        .iter()
        .filter(|r| !wanted.contains(r))
        .filter_map(|r| {
            let v = live.objects.get(r)?;
            (owner(v, id) == Owner::Ours && applied_by_capops(v)).then(|| Change {
                action: Action::Delete,
                target: r.clone(),
                resource_version: v["metadata"]["resourceVersion"]
                    .as_str()
                    .map(str::to_string),
                uid: v["metadata"]["uid"].as_str().map(str::to_string),
                live_revision: v["metadata"]["annotations"][REVISION]
                    .as_str()
                    .map(str::to_string),
                diff: Vec::new(),
                conflict: None,
                error: None,
                object: None,
            })
        })
        .collect();
    // Reverse dependency order: queues before the flavors and classes they name.
    prunes.sort_by(|a, b| {
        b.target
            .order
            .cmp(&a.target.order)
            .then(a.target.cmp(&b.target))
    });
    changes.extend(prunes);
    (changes, unchanged, observed_map)
}
