//! The base revision of a change, as a repository of documents.
//!
//! Files the change did not touch (same path, same git blob id) are not read
//! again: their documents are taken from the working tree's. Only the files
//! that differ are read from git and parsed. The base is not validated: it is
//! what was merged, and the change is what is being judged.

use super::Outcome;
use crate::diag::{FileId, SourceKind};
use crate::load::git::{self, GitError};
use crate::load::{self, TypedDoc};
use crate::model::Repo;
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
    /// Working-tree files identical in the base. Their requests, reservations
    /// and price catalogs are not copied into `repo`: they are unchanged.
    pub same_files: HashSet<FileId>,
}

/// Loads the base revision `rev` of the repository at `root`, sharing the
/// working tree's documents for files the change did not touch. Files read from
/// git are added to `head.sources`, marked with the revision.
pub fn load_base(head: &mut Outcome, root: &Path, rev: &str) -> Result<Base, GitError> {
    let known: BTreeMap<String, git2::Oid> = {
        use rayon::prelude::*;
        let files: Vec<_> = head
            .sources
            .files()
            .filter(|(_, f)| f.kind == SourceKind::WorkTree)
            .map(|(_, f)| f)
            .collect();
        files
            .par_iter()
            .filter_map(|f| Some((f.path.clone(), git::blob_id(f.text.as_bytes())?)))
            .collect()
    };
    let revision = git::read_revision(root, rev, &known)?;
    let unchanged: HashSet<FileId> = {
        let paths: HashSet<&str> = revision.unchanged.iter().map(String::as_str).collect();
        head.sources
            .files()
            .filter(|(_, f)| f.kind == SourceKind::WorkTree && paths.contains(f.path.as_str()))
            .map(|(id, _)| id)
            .collect()
    };
    let mut docs = documents_in(&head.repo, &unchanged);
    // The base's own ignore patterns apply when its capops.yaml differs;
    // otherwise they are the working tree's.
    let mut inputs = revision.inputs;
    if !inputs.iter().any(|i| i.path == load::CONFIG_FILE) {
        let patterns: Vec<String> = head
            .repo
            .config
            .as_ref()
            .map(|c| c.spec.ignore.iter().map(|p| p.value.clone()).collect())
            .unwrap_or_default();
        inputs.retain(|i| !load::files::ignored(&i.path, &patterns));
    }
    let files_read = inputs.len();
    let sources = std::mem::take(&mut head.sources);
    let loaded = load::load_with(sources, inputs, SourceKind::Revision(rev.to_string()));
    head.sources = loaded.sources;
    docs.extend(loaded.docs);
    Ok(Base {
        repo: super::assemble(docs),
        rev: rev.to_string(),
        commit: revision.commit,
        files_read,
        same_files: unchanged,
    })
}

/// Copies of a repository's documents that sit in the given files, less the
/// requests and reservations (numerous, and only needed in the base where
/// they changed).
fn documents_in(repo: &Repo, files: &HashSet<FileId>) -> Vec<TypedDoc> {
    let keep = |f: FileId| files.contains(&f);
    let mut out = Vec::new();
    if let Some(c) = repo.config.as_ref().filter(|c| keep(c.origin.file)) {
        out.push(TypedDoc::Config(c.clone()));
    }
    out.extend(
        repo.teams
            .values()
            .filter(|d| keep(d.origin.file))
            .cloned()
            .map(TypedDoc::Team),
    );
    out.extend(
        repo.clusters
            .values()
            .filter(|d| keep(d.origin.file))
            .cloned()
            .map(TypedDoc::Cluster),
    );
    out.extend(
        repo.priority_classes
            .values()
            .filter(|d| keep(d.origin.file))
            .cloned()
            .map(TypedDoc::PriorityClass),
    );
    out.extend(
        repo.policies
            .values()
            .filter(|d| keep(d.origin.file))
            .cloned()
            .map(TypedDoc::ApprovalPolicy),
    );
    out.extend(
        repo.catalogs
            .values()
            .filter(|d| keep(d.origin.file))
            .cloned()
            .map(TypedDoc::PriceCatalog),
    );
    out
}
