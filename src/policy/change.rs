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
                if old.metadata != fp.metadata {
                    fields.insert(0, "metadata".into());
                }
                Some((ChangeKind::Modified, fields))
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
