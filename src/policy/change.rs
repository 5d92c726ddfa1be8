//! The change a pull request makes: documents added, modified and removed.
//!
//! Documents are matched by identity (kind and name), not by file, and
//! compared by content (their fingerprints), so moving a document to another
//! file, or reordering its fields, is not a change.

use crate::diag::FileId;
use crate::model::*;
use std::collections::HashSet;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ChangeKind {
    Added,
    Modified,
    Removed,
    /// Evaluated without a base: every document as it stands.
    Unchanged,
}

/// How one document changed, with what it was before.
#[derive(Clone, Debug)]
pub struct Change {
    pub kind: ChangeKind,
    /// Top-level `spec` fields that differ (for modified documents), plus `metadata` when it does.
    pub fields: Vec<String>,
    /// The document as the base revision had it (modified and removed
    /// documents; without a base, the document as it stands).
    pub previous: Option<Box<TypedDoc>>,
}

impl Change {
    pub fn unchanged() -> Change {
        Change {
            kind: ChangeKind::Unchanged,
            fields: Vec::new(),
            previous: None,
        }
    }

    /// The previous document as its spec type, when it is of that kind.
    pub fn previous<S: Spec>(&self) -> Option<&Document<S>> {
        self.previous.as_deref().and_then(TypedDoc::get)
    }
}

/// One changed document.
#[derive(Clone, Debug)]
pub struct Changed {
    pub kind: Kind,
    pub name: String,
    pub change: Change,
}

/// Documents of every kind as (kind, name, fingerprint), less those in `skip` files.
fn fingerprints<'a>(
    repo: &'a Repo,
    skip: &HashSet<FileId>,
) -> Vec<(Kind, &'a str, &'a Fingerprint)> {
    repo.documents()
        .filter(|d| !skip.contains(&d.origin().file))
        .map(|d| (d.kind(), d.metadata().name.value.as_str(), d.fingerprint()))
        .collect()
}

/// Every document that differs between `base` and `head`, in kind and name
/// order. Documents of the head in `same_files` (files identical in the base)
/// are unchanged by definition and not compared; the base then need not hold them.
pub fn diff(base: &Repo, head: &Repo, same_files: &HashSet<FileId>) -> Vec<Changed> {
    let before = fingerprints(base, &HashSet::new());
    let after = fingerprints(head, same_files);
    let kept: HashSet<(Kind, &str)> = fingerprints(head, &HashSet::new())
        .into_iter()
        .map(|(k, n, _)| (k, n))
        .collect();
    let before_map: std::collections::HashMap<(Kind, &str), &Fingerprint> =
        before.iter().map(|(k, n, f)| ((*k, *n), *f)).collect();
    let mut out = Vec::new();
    for (kind, name, fp) in &after {
        let change = match before_map.get(&(*kind, *name)) {
            None => Some((ChangeKind::Added, Vec::new())),
            Some(old) if old != fp => {
                let mut fields = old.changed_fields(fp);
                fields.retain(|f| !same_value(base, head, *kind, name, f));
                if old.metadata != fp.metadata {
                    fields.insert(0, "metadata".into());
                }
                // Every field that differs in text has the same value.
                (!fields.is_empty()).then_some((ChangeKind::Modified, fields))
            }
            Some(_) => None,
        };
        if let Some((kind_of_change, fields)) = change {
            out.push(changed(base, *kind, name, kind_of_change, fields));
        }
    }
    for (kind, name, _) in &before {
        if !kept.contains(&(*kind, *name)) {
            out.push(changed(base, *kind, name, ChangeKind::Removed, Vec::new()));
        }
    }
    out.sort_by(|a, b| (a.kind, &a.name).cmp(&(b.kind, &b.name)));
    out
}

/// Whether `field` of the document `kind`/`name`, written differently in
/// base and head, has the same value in both: a default written out or
/// taken away (`kueue.cohort` as the cluster's own name, `migStrategy:
/// mixed`, `preemptionPolicy: PreemptLowerPriority`, `globalDefault:
/// false`). Amounts written differently are one value before this
/// (`load::amounts`). Any field not named here is compared by its text.
fn same_value(base: &Repo, head: &Repo, kind: Kind, name: &str, field: &str) -> bool {
    match kind {
        Kind::Cluster => {
            let (Some(a), Some(b)) = (base.clusters.get(name), head.clusters.get(name)) else {
                return false;
            };
            match field {
                "kueue" => kueue_cohort(name, &a.spec) == kueue_cohort(name, &b.spec),
                "migStrategy" => a.spec.mig_strategy.value == b.spec.mig_strategy.value,
                _ => false,
            }
        }
        Kind::PriorityClass => {
            let (Some(a), Some(b)) = (
                base.priority_classes.get(name),
                head.priority_classes.get(name),
            ) else {
                return false;
            };
            match field {
                "preemptionPolicy" => a.spec.preemption() == b.spec.preemption(),
                "globalDefault" => a.spec.is_global_default() == b.spec.is_global_default(),
                _ => false,
            }
        }
        Kind::CapacityRequest => {
            let (Some(a), Some(b)) = (base.requests.get(name), head.requests.get(name)) else {
                return false;
            };
            let preemptible = |s: &RequestSpec| s.preemptible.as_ref().is_some_and(|p| p.value);
            field == "preemptible" && preemptible(&a.spec) == preemptible(&b.spec)
        }
        _ => false,
    }
}

fn changed(
    base: &Repo,
    kind: Kind,
    name: &str,
    change: ChangeKind,
    fields: Vec<String>,
) -> Changed {
    let keep = matches!(change, ChangeKind::Modified | ChangeKind::Removed);
    Changed {
        kind,
        name: name.to_string(),
        change: Change {
            kind: change,
            fields,
            previous: keep
                .then(|| base.find(kind, name).map(|d| Box::new(d.to_owned())))
                .flatten(),
        },
    }
}

impl ChangeKind {
    pub fn as_str(self) -> &'static str {
        match self {
            ChangeKind::Added => "added",
            ChangeKind::Modified => "modified",
            ChangeKind::Removed => "removed",
            ChangeKind::Unchanged => "unchanged",
        }
    }
}

/// A file the base Config names (its CA file) changed: the Config is
/// changed in its `usage`, as if the document itself were edited there (a
/// new CA decides whom `usage pull` trusts with its token, and whose
/// measurements it takes). Added to the Config's change, or as one.
pub fn config_files_changed(changes: &mut Vec<Changed>, base: &Repo, head: &Repo) {
    let Some(config) = base.config.as_ref() else {
        return;
    };
    let name = config.metadata.name.value.to_string();
    if let Some(c) = changes
        .iter_mut()
        .find(|c| c.kind == Kind::Config && c.name == name)
    {
        if !c.change.fields.iter().any(|f| f == "usage") {
            c.change.fields.push("usage".into());
        }
        return;
    }
    if head.config.is_none() {
        return;
    }
    changes.push(Changed {
        kind: Kind::Config,
        name,
        change: Change {
            kind: ChangeKind::Modified,
            fields: vec!["usage".into()],
            previous: Some(Box::new(TypedDoc::Config(config.clone()))),
        },
    });
    changes.sort_by(|x, y| (x.kind, &x.name).cmp(&(y.kind, &y.name)));
}
