//! The change a pull request makes: documents added, modified and removed.
//!
//! Documents are matched by identity (kind and name), not by file, and
//! compared by content (their fingerprints), so moving a document to another
//! file, or reordering its fields, is not a change.

use crate::model::*;

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
    pub previous_request: Option<Document<RequestSpec>>,
    pub previous_reservation: Option<Document<ReservationSpec>>,
    pub previous_team: Option<Document<TeamSpec>>,
}

impl Change {
    pub fn unchanged() -> Change {
        Change {
            kind: ChangeKind::Unchanged,
            fields: Vec::new(),
            previous_request: None,
            previous_reservation: None,
            previous_team: None,
        }
    }
}

/// One changed document.
#[derive(Clone, Debug)]
pub struct Changed {
    pub kind: Kind,
    pub name: String,
    pub change: Change,
}

/// Documents of every kind as (name, fingerprint) pairs.
fn fingerprints(repo: &Repo) -> Vec<(Kind, &str, &Fingerprint)> {
    fn each<'a, S>(
        kind: Kind,
        map: &'a std::collections::BTreeMap<String, Document<S>>,
        out: &mut Vec<(Kind, &'a str, &'a Fingerprint)>,
    ) {
        out.extend(map.iter().map(|(n, d)| (kind, n.as_str(), &d.fingerprint)));
    }
    let mut out = Vec::new();
    if let Some(c) = &repo.config {
        out.push((Kind::Config, c.name(), &c.fingerprint));
    }
    each(Kind::Team, &repo.teams, &mut out);
    each(Kind::Cluster, &repo.clusters, &mut out);
    each(Kind::CapacityRequest, &repo.requests, &mut out);
    each(Kind::PriorityClass, &repo.priority_classes, &mut out);
    each(Kind::Reservation, &repo.reservations, &mut out);
    each(Kind::ApprovalPolicy, &repo.policies, &mut out);
    each(Kind::PriceCatalog, &repo.catalogs, &mut out);
    out
}

/// Every document that differs between `base` and `head`, in kind and name order.
pub fn diff(base: &Repo, head: &Repo) -> Vec<Changed> {
    let before = fingerprints(base);
    let after = fingerprints(head);
    let find = |list: &[(Kind, &str, &Fingerprint)], kind: Kind, name: &str| {
        list.iter()
            .find(|(k, n, _)| *k == kind && *n == name)
            .map(|(_, _, f)| (*f).clone())
    };
    let mut out = Vec::new();
    for (kind, name, fp) in &after {
        let change = match find(&before, *kind, name) {
            None => Some((ChangeKind::Added, Vec::new())),
            Some(old) if &old != *fp => {
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
        if find(&after, *kind, name).is_none() {
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
            previous_request: (keep && kind == Kind::CapacityRequest)
                .then(|| base.requests.get(name).cloned())
                .flatten(),
            previous_reservation: (keep && kind == Kind::Reservation)
                .then(|| base.reservations.get(name).cloned())
                .flatten(),
            previous_team: (keep && kind == Kind::Team)
                .then(|| base.teams.get(name).cloned())
                .flatten(),
        },
    }
}
