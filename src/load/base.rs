//! The base revision of a change, as a repository of documents.
//!
//! Files the change did not touch (same path, same git blob id) are not read
//! again: their documents are taken from the working tree's. Only the files
//! that differ are read from git and parsed. The base is not validated: it is
//! what was merged, and the change is what is being judged. But it must
//! load: a base file that no longer parses, or a document whose shape no
//! longer checks, would silently drop out of what judges the change (a
//! policy read as the built-in default), so those errors are kept
//! ([`Base::problems`]) and `check` refuses to judge.

use super::git::{self, GitError};
use super::{Input, TypedDoc};
use crate::diag::{FileId, SourceKind, SourceMap};
use crate::model::{Kind, Repo};
use std::collections::{BTreeMap, HashSet};
use std::path::Path;

/// A base revision's documents.
#[derive(Debug)]
pub struct Base {
    pub repo: Repo,
    /// The revision as given.
    pub rev: String,
    /// The commit it resolved to.
    pub commit: String,
    /// Files read from git (the others were identical to the working tree).
    pub files_read: usize,
    /// Working-tree files identical in the base. Their requests and
    /// reservations are not copied into `repo`: they are unchanged.
    pub same_files: HashSet<FileId>,
    /// The git blob id of every working-tree file, by path (to compare
    /// other revisions with the working tree without hashing it again).
    pub worktree_blobs: BTreeMap<String, git2::Oid>,
    /// Errors reading the files the base holds that drop a file or a
    /// document (a file that does not parse, a document whose shape does not
    /// check): those documents are missing from `repo`, so the base cannot
    /// judge a change (`check` refuses).
    pub problems: Vec<crate::diag::Diagnostic>,
    /// Files the base's documents name that the loader does not read (the
    /// Config's `usage.prometheus.caFile`) and that the working tree has
    /// changed: a change to one is a change to the document naming it.
    pub named_files_changed: Vec<String>,
}

/// A repository from documents, without checks: the first document of a name
/// wins. Used for a base revision, which is judged as it was merged.
pub fn assemble(docs: Vec<TypedDoc>) -> Repo {
    let mut repo = Repo::default();
    for doc in docs {
        // A second document of a name was reported when it was merged; the first stands.
        let _ = doc.insert_into(&mut repo);
    }
    repo
}

/// Loads the base revision `rev` of the repository at `root`, sharing the
/// working tree's documents (`head`) for files the change did not touch.
/// Files read from git are added to `sources`, marked with the revision.
pub fn load_base(
    sources: &mut SourceMap,
    head: &Repo,
    root: &Path,
    rev: &str,
    cache: Option<&super::cache::Cache>,
) -> Result<Base, GitError> {
    let known: BTreeMap<String, git2::Oid> = {
        use rayon::prelude::*;
        let files: Vec<_> = sources
            .files()
            .filter(|(_, f)| f.kind == SourceKind::WorkTree)
            .map(|(_, f)| f)
            .collect();
        files
            .par_iter()
            .filter_map(|f| {
                let id = f.content_id(super::cache::key_of)?;
                Some((f.path.clone(), git2::Oid::from_bytes(&id).ok()?))
            })
            .collect()
    };
    let revision = git::read_revision(root, rev, &known)?;
    let unchanged: HashSet<FileId> = {
        let paths: HashSet<&str> = revision.unchanged.iter().map(String::as_str).collect();
        sources
            .files()
            .filter(|(_, f)| f.kind == SourceKind::WorkTree && paths.contains(f.path.as_str()))
            .map(|(id, _)| id)
            .collect()
    };
    let mut docs = documents_in(head, &unchanged);
    // The base's own ignore patterns applied (`read_revision`): a file the
    // base ignored is not in it, even where the working tree reads it.
    let mut inputs: Vec<Input> = revision.inputs;
    // The usage history is the base's whole: when no usage file changed it is
    // the head's; otherwise every usage file is read again, the changed ones
    // from git and the others from the working tree (they are identical).
    let is_usage = |p: &str| super::files::classify(p) == Some(super::FileKind::UsageCsv);
    let usage_changed = inputs.iter().any(|i| is_usage(&i.path))
        || sources
            .files()
            .filter(|(_, f)| f.kind == SourceKind::WorkTree && is_usage(&f.path))
            .any(|(id, _)| !unchanged.contains(&id));
    if usage_changed {
        let unchanged_usage: Vec<Input> = sources
            .files()
            .filter(|(id, f)| unchanged.contains(id) && is_usage(&f.path))
            .map(|(_, f)| Input {
                path: f.path.clone(),
                content: match f.full_text() {
                    Some(text) => super::Content::Bytes(text.as_bytes().to_vec()),
                    None => super::Content::Deferred(root.join(&f.path)),
                },
            })
            .collect();
        inputs.extend(unchanged_usage);
    }
    let files_read = inputs.len();
    let loaded = super::load_with(
        std::mem::take(sources),
        inputs,
        SourceKind::Revision(rev.to_string()),
        cache,
    );
    *sources = loaded.sources;
    // Only what drops a file or a document (the codes no Config can
    // lower): a usage row the loader skips, say, is the usage rules' to
    // judge, and a Config may have made it a warning.
    let problems: Vec<crate::diag::Diagnostic> = loaded
        .diagnostics
        .into_iter()
        .filter(|d| d.is_error() && !d.code.overridable())
        .collect();
    docs.extend(loaded.docs);
    let mut repo = assemble(docs);
    repo.usage = if usage_changed {
        std::sync::Arc::new(loaded.usage)
    } else {
        head.usage.clone()
    };
    let named_files_changed = repo
        .config
        .as_ref()
        .and_then(|c| c.spec.usage.prometheus.ca_file.as_ref())
        .filter(|f| super::git_files::file_changed(root, &revision.commit, &f.value))
        .map(|f| f.value.clone())
        .into_iter()
        .collect();
    Ok(Base {
        named_files_changed,
        repo,
        rev: rev.to_string(),
        commit: revision.commit,
        files_read,
        same_files: unchanged,
        worktree_blobs: known,
        problems,
    })
}

/// Copies of a repository's documents that sit in the given files, less the
/// requests and reservations (numerous, and only needed in the base where
/// they changed).
fn documents_in(repo: &Repo, files: &HashSet<FileId>) -> Vec<TypedDoc> {
    repo.documents()
        .filter(|d| !matches!(d.kind(), Kind::CapacityRequest | Kind::Reservation))
        .filter(|d| files.contains(&d.origin().file))
        .map(|d| d.to_owned())
        .collect()
}

/// The documents of the repository at `rev` that the rolling budgets count
/// from: its requests, teams, clusters, reservations and price catalogs.
#[derive(Debug, Default)]
pub struct PastDocs {
    pub requests: BTreeMap<String, crate::model::Document<crate::model::RequestSpec>>,
    pub teams: BTreeMap<String, crate::model::Document<crate::model::TeamSpec>>,
    pub clusters: BTreeMap<String, crate::model::Document<crate::model::ClusterSpec>>,
    pub reservations: BTreeMap<String, crate::model::Document<crate::model::ReservationSpec>>,
    pub catalogs: BTreeMap<String, crate::model::Document<crate::model::CatalogSpec>>,
}

/// The documents of `docs` whose files `kept` says are unchanged.
fn unchanged_of<T: Clone>(
    docs: &BTreeMap<String, crate::model::Document<T>>,
    kept: &dyn Fn(FileId) -> bool,
) -> BTreeMap<String, crate::model::Document<T>> {
    docs.iter()
        .filter(|(_, d)| kept(d.origin.file))
        .map(|(n, d)| (n.clone(), d.clone()))
        .collect()
}

/// The CapacityRequests, Teams and Clusters of the repository at `rev` (for
/// the rolling budgets): files unchanged since are the head's documents, the
/// others are read from git. `known` is the working tree's blob ids
/// ([`Base::worktree_blobs`]).
pub fn documents_at(
    sources: &SourceMap,
    head: &Repo,
    known: &BTreeMap<String, git2::Oid>,
    root: &Path,
    rev: &str,
    cache: Option<&super::cache::Cache>,
) -> Result<PastDocs, GitError> {
    let revision = git::read_revision(root, rev, known)?;
    let unchanged: HashSet<&str> = revision.unchanged.iter().map(String::as_str).collect();
    let kept = |file: FileId| unchanged.contains(sources.get(file).path.as_str());
    let mut out = PastDocs {
        requests: unchanged_of(&head.requests, &kept),
        teams: unchanged_of(&head.teams, &kept),
        clusters: unchanged_of(&head.clusters, &kept),
        reservations: unchanged_of(&head.reservations, &kept),
        catalogs: unchanged_of(&head.catalogs, &kept),
    };
    let loaded = super::load_with(
        SourceMap::new(),
        revision.inputs,
        SourceKind::Revision(rev.to_string()),
        cache,
    );
    for doc in loaded.docs {
        match doc {
            TypedDoc::CapacityRequest(d) => {
                out.requests.entry(d.name().to_string()).or_insert(d);
            }
            TypedDoc::Team(d) => {
                out.teams.entry(d.name().to_string()).or_insert(d);
            }
            TypedDoc::Cluster(d) => {
                out.clusters.entry(d.name().to_string()).or_insert(d);
            }
            TypedDoc::Reservation(d) => {
                out.reservations.entry(d.name().to_string()).or_insert(d);
            }
            TypedDoc::PriceCatalog(d) => {
                out.catalogs.entry(d.name().to_string()).or_insert(d);
            }
            _ => {}
        }
    }
    Ok(out)
}
