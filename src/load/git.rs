//! Reading a capacity repository as it was at a git revision.
//!
//! `check --base REV` judges a change against the base revision. The files
//! are read straight from git objects with git2 (no checkout, nothing written),
//! from the same folder of the git repository as the working tree being
//! checked. Each file comes with its blob id, so that files the change did not
//! touch need not be parsed twice.

// An edge: it reads files, git, the environment or the clock (see clippy.toml).
#![allow(clippy::disallowed_methods, clippy::disallowed_types)]

use super::files::{self, Content, Input, MAX_FILE_BYTES};
use git2::{ObjectType, Oid, Repository, TreeWalkMode, TreeWalkResult};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// A revision's files.
#[derive(Debug)]
pub struct Revision {
    /// The revision as given (`main`, `HEAD~1`, a SHA).
    pub spec: String,
    /// The commit it resolved to.
    pub commit: String,
    /// Files capops reads (those the revision's own Config does not
    /// ignore), relative to the capacity repository root, that differ from
    /// the working tree (the others are in `unchanged`).
    pub inputs: Vec<Input>,
    /// Blob id of every file capops reads at that revision.
    pub blobs: BTreeMap<String, Oid>,
    /// Files identical in the working tree (same path, same blob id): not read.
    pub unchanged: Vec<String>,
}

/// Why a revision could not be read.
#[derive(Debug, thiserror::Error)]
pub enum GitError {
    #[error("{0} is not inside a git repository")]
    NotARepository(PathBuf),
    #[error("{0} is a bare git repository; capops checks a working tree")]
    Bare(PathBuf),
    #[error("revision `{rev}` does not exist in {repo}")]
    MissingRevision { rev: String, repo: PathBuf },
    #[error(
        "revision `{rev}` is a {kind} in {repo}, not a commit: name a commit (a branch, a tag of a commit, or a commit's SHA)"
    )]
    NotACommit {
        rev: String,
        kind: String,
        repo: PathBuf,
    },
    #[error(
        "revision `{rev}` is not in this shallow clone of {repo}; fetch it (git fetch --deepen, or actions/checkout with fetch-depth: 0)"
    )]
    ShallowWithoutBase { rev: String, repo: PathBuf },
    #[error(
        "this shallow clone of {repo} does not hold the whole first-parent history, which the rolling budget of automatic approvals is counted from (commit dates are checked along it); fetch the history (git fetch --unshallow, or actions/checkout with fetch-depth: 0)"
    )]
    ShallowHistory { repo: PathBuf },
    #[error("git: {0}")]
    Other(String),
}

impl From<git2::Error> for GitError {
    fn from(e: git2::Error) -> Self {
        GitError::Other(e.message().to_string())
    }
}

/// A revision that names a tree or a blob (or a tag of one).
fn not_a_commit(rev: &str, object: &git2::Object<'_>, repo: &Path) -> GitError {
    let kind = |o: &git2::Object<'_>| o.kind().map_or("git object", |k| k.str()).to_string();
    // A tag is named by what it tags (`a tag of a tree`).
    let kind = match object.as_tag().and_then(|t| t.target().ok()) {
        Some(target) => format!("tag of a {}", kind(&target)),
        None => kind(object),
    };
    GitError::NotACommit {
        rev: rev.to_string(),
        kind,
        repo: repo.to_path_buf(),
    }
}

/// Reads the capacity repository rooted at `root` (a folder of a git working
/// tree) as it was at `rev`. Files whose blob id equals `known[path]` (the
/// working tree's) are listed as unchanged and not read.
pub fn read_revision(
    root: &Path,
    rev: &str,
    known: &BTreeMap<String, Oid>,
) -> Result<Revision, GitError> {
    let repo =
        Repository::discover(root).map_err(|_| GitError::NotARepository(root.to_path_buf()))?;
    let workdir = repo
        .workdir()
        .ok_or_else(|| GitError::Bare(root.to_path_buf()))?
        .to_path_buf();
    let prefix = prefix_in(&workdir, root)?;
    let object = repo.revparse_single(rev).map_err(|_| {
        if shallow(&repo) {
            GitError::ShallowWithoutBase {
                rev: rev.to_string(),
                repo: workdir.clone(),
            }
        } else {
            GitError::MissingRevision {
                rev: rev.to_string(),
                repo: workdir.clone(),
            }
        }
    })?;
    let commit = object
        .peel_to_commit()
        .map_err(|_| not_a_commit(rev, &object, &workdir))?;
    let tree = commit.tree()?;
    let tree = if prefix.is_empty() {
        tree
    } else {
        match tree.get_path(Path::new(&prefix)) {
            Ok(entry) if entry.kind() == Some(ObjectType::Tree) => repo.find_tree(entry.id())?,
            // The capacity repository did not exist at that revision.
            _ => {
                return Ok(Revision {
                    spec: rev.to_string(),
                    commit: commit.id().to_string(),
                    inputs: Vec::new(),
                    blobs: BTreeMap::new(),
                    unchanged: Vec::new(),
                });
            }
        }
    };
    let mut found: Vec<(String, Oid)> = Vec::new();
    let mut bad_names: Vec<String> = Vec::new();
    tree.walk(TreeWalkMode::PreOrder, |dir, entry| {
        // A name that is not UTF-8: the working-tree reader would read it
        // under its lossy form, so neither reads it (`path-not-utf8`).
        let Ok(name) = entry.name() else {
            let lossy = format!("{dir}{}", String::from_utf8_lossy(entry.name_bytes()));
            let as_folder = entry.kind() == Some(ObjectType::Tree);
            if as_folder || files::classify(&lossy).is_some() {
                bad_names.push(lossy);
            }
            // Nothing under a folder of that name is read either.
            return TreeWalkResult::Skip;
        };
        if entry.kind() == Some(ObjectType::Blob) && entry.filemode() != 0o120000 {
            let path = format!("{dir}{name}");
            if files::classify(&path).is_some() {
                found.push((path, entry.id()));
            }
        }
        TreeWalkResult::Ok
    })?;
    found.sort();
    // The revision's own `ignore` patterns (from its capops.yaml, whatever
    // the working tree's say): a file it ignored was not part of it, and
    // one it reads is, though the working tree ignores it.
    let ignore: Vec<String> = match found.iter().find(|(p, _)| p == super::CONFIG_FILE) {
        Some((path, oid)) => match bounded_blob(&repo, *oid)? {
            Err(_) => Vec::new(),
            Ok(bytes) => super::ignore_patterns(&[Input {
                path: path.clone(),
                content: Content::Bytes(bytes),
            }]),
        },
        None => Vec::new(),
    };
    found.retain(|(p, _)| p == super::CONFIG_FILE || !files::ignored(p, &ignore));
    let mut revision = Revision {
        spec: rev.to_string(),
        commit: commit.id().to_string(),
        inputs: Vec::new(),
        blobs: BTreeMap::new(),
        unchanged: Vec::new(),
    };
    for path in bad_names {
        revision.inputs.push(Input {
            path,
            content: Content::NameNotUtf8,
        });
    }
    for (path, oid) in found {
        revision.blobs.insert(path.clone(), oid);
        if known.get(&path) == Some(&oid) {
            revision.unchanged.push(path);
            continue;
        }
        let content = match bounded_blob(&repo, oid)? {
            Ok(bytes) => Content::Bytes(bytes),
            Err(size) => Content::TooLarge(size),
        };
        revision.inputs.push(Input { path, content });
    }
    Ok(revision)
}

/// A blob's bytes, or its size when it is over [`MAX_FILE_BYTES`]. The
/// size is read from the object's header first: a blob of gigabytes in a
/// pull request is never inflated into memory to learn that it is too big.
fn bounded_blob(repo: &Repository, oid: Oid) -> Result<Result<Vec<u8>, u64>, git2::Error> {
    let (size, _) = repo.odb()?.read_header(oid)?;
    if size as u64 > MAX_FILE_BYTES {
        return Ok(Err(size as u64));
    }
    Ok(Ok(repo.find_blob(oid)?.content().to_vec()))
}

/// The path of `root` inside the working tree, `/`-separated ("" for the top).
fn prefix_in(workdir: &Path, root: &Path) -> Result<String, GitError> {
    let canon = |p: &Path| {
        p.canonicalize()
            .map_err(|e| GitError::Other(format!("{}: {e}", p.display())))
    };
    let workdir = canon(workdir)?;
    let root = canon(root)?;
    let rel = root
        .strip_prefix(&workdir)
        .map_err(|_| GitError::NotARepository(root.clone()))?;
    Ok(rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy())
        .collect::<Vec<_>>()
        .join("/"))
}

/// The submodules (gitlinks) under `folder` of the capacity repository at
/// `root`: in the index and in the `HEAD` commit, as paths relative to the
/// folder. Read from git itself, not from `.gitmodules`, whose spelling
/// (`Path = `, a `.gitmodules` at the top of a repository the capacity
/// repository is a folder of) cannot hide one. Empty outside git.
pub fn gitlinks_under(root: &Path, folder: &str) -> Vec<String> {
    let Ok(repo) = Repository::discover(root) else {
        return Vec::new();
    };
    let Some(workdir) = repo.workdir() else {
        return Vec::new();
    };
    let Ok(prefix) = prefix_in(workdir, root) else {
        return Vec::new();
    };
    let under = [prefix.as_str(), folder.trim_matches('/')]
        .iter()
        .filter(|p| !p.is_empty())
        .map(|p| format!("{p}/"))
        .collect::<String>();
    let mut out = std::collections::BTreeSet::new();
    let mut keep = |path: &str| {
        if let Some(rest) = in_folder(path, &under) {
            out.insert(rest);
        }
    };
    if let Ok(index) = repo.index() {
        for e in index.iter() {
            if e.mode == 0o160000 {
                keep(&String::from_utf8_lossy(&e.path));
            }
        }
    }
    if let Ok(tree) = repo.head().and_then(|h| h.peel_to_tree()) {
        let _ = tree.walk(TreeWalkMode::PreOrder, |dir, entry| {
            if entry.filemode() == 0o160000 {
                keep(&format!("{dir}{}", entry.name().unwrap_or("")));
            }
            TreeWalkResult::Ok
        });
    }
    out.into_iter().collect()
}

/// `path` (from the top of the git repository) relative to the folder
/// `under` (ending in `/`): `.` for the folder itself (a submodule where the
/// whole output goes), `None` outside it.
pub fn in_folder(path: &str, under: &str) -> Option<String> {
    let path = path.trim_start_matches("./").trim_end_matches('/');
    if under.strip_suffix('/') == Some(path) {
        return Some(".".into());
    }
    path.strip_prefix(under).map(str::to_string)
}

/// Where `root` lies under `workdir` (`a/b`; empty when they are one).
pub fn prefix_of(workdir: &Path, root: &Path) -> Option<String> {
    prefix_in(workdir, root).ok()
}

/// The git blob id of some content, as git would compute it.
pub fn blob_id(bytes: &[u8]) -> Option<Oid> {
    Oid::hash_object(ObjectType::Blob, bytes).ok()
}

/// The revision stamped on rendered objects: the last commit that changed
/// the capacity repository (outside the output folder), `+dirty` when the
/// working tree differs from it, or `unversioned` outside git.
pub fn revision_of(root: &Path, out: &Path) -> String {
    revision(root, out).unwrap_or_else(|| "unversioned".into())
}

fn revision(root: &Path, out: &Path) -> Option<String> {
    let repo = git2::Repository::discover(root).ok()?;
    let workdir = repo.workdir()?.canonicalize().ok()?;
    let root = root.canonicalize().ok()?;
    let rel = root.strip_prefix(&workdir).ok()?.to_path_buf();
    // The output folder, when it sits directly in the capacity repository.
    let skip = out
        .canonicalize()
        .ok()
        .or_else(|| Some(root.join(out.file_name()?)))
        .and_then(|o| o.strip_prefix(&root).ok().map(Path::to_path_buf))
        .and_then(|o| (o.components().count() == 1).then(|| o.to_string_lossy().into_owned()));
    let head = repo.head().ok()?.peel_to_commit().ok()?;
    let fingerprint = |c: &git2::Commit<'_>| -> Option<Vec<(String, git2::Oid)>> {
        let tree = c.tree().ok()?;
        let sub = if rel.as_os_str().is_empty() {
            tree
        } else {
            let entry = tree.get_path(&rel).ok()?;
            repo.find_tree(entry.id()).ok()?
        };
        Some(
            sub.iter()
                .filter(|e| skip.as_deref() != e.name().ok())
                .map(|e| (e.name().unwrap_or("").to_string(), e.id()))
                .collect(),
        )
    };
    let mut current = head.clone();
    let mine = fingerprint(&head);
    for _ in 0..10_000 {
        let Ok(parent) = current.parent(0) else {
            break;
        };
        if fingerprint(&parent) != mine {
            break;
        }
        current = parent;
    }
    let mut rev = current.id().to_string();
    // Uncommitted changes to the capacity documents.
    let mut opts = git2::StatusOptions::new();
    opts.include_untracked(true).recurse_untracked_dirs(true);
    if !rel.as_os_str().is_empty() {
        opts.pathspec(rel.to_string_lossy().as_ref());
    }
    if let Ok(statuses) = repo.statuses(Some(&mut opts)) {
        let prefix = match &skip {
            Some(s) if rel.as_os_str().is_empty() => format!("{s}/"),
            Some(s) => format!("{}/{s}/", rel.to_string_lossy()),
            None => String::from("\u{0}"),
        };
        let dirty = statuses.iter().any(|s| {
            s.path().is_ok_and(|p| !p.starts_with(&prefix))
                && !s.status().contains(git2::Status::IGNORED)
        });
        if dirty {
            rev.push_str("+dirty");
        }
    }
    Some(rev)
}

/// The commit checked out in the working tree holding `root` (`HEAD`).
pub fn head_commit(root: &Path) -> Result<String, GitError> {
    let repo =
        Repository::discover(root).map_err(|_| GitError::NotARepository(root.to_path_buf()))?;
    let commit = repo.head()?.peel_to_commit()?;
    Ok(commit.id().to_string())
}

/// Whether the commit checked out at `root` contains `commit` in its history
/// (is it, or descends from it). `false` when this clone lacks `commit`.
pub fn head_contains(root: &Path, commit: &str) -> Result<bool, GitError> {
    let repo =
        Repository::discover(root).map_err(|_| GitError::NotARepository(root.to_path_buf()))?;
    let head = repo.head()?.peel_to_commit()?.id();
    let Ok(other) = Oid::from_str(commit) else {
        return Ok(false);
    };
    if repo.find_commit(other).is_err() {
        return Ok(false);
    }
    Ok(head == other || repo.graph_descendant_of(head, other)?)
}

/// Whether the git repository holding `root` is a shallow clone (its
/// history cut at a depth: `actions/checkout` with a `fetch-depth`), where
/// "not in the history" may only mean "not fetched".
pub fn is_shallow(root: &Path) -> bool {
    Repository::discover(root).is_ok_and(|r| shallow(&r))
}

/// [`is_shallow`] of an open repository. A linked worktree of a shallow
/// clone too: git keeps `shallow` in the common folder, where libgit2 1.9
/// does not look.
fn shallow(repo: &Repository) -> bool {
    repo.is_shallow()
        || std::fs::metadata(repo.commondir().join("shallow")).is_ok_and(|m| m.len() > 0)
}

/// Whether the checked-out commit is a merge one of whose parents is an
/// ancestor of `base` (an older tip of the base branch: a pull request's
/// merge commit made before the branch moved).
pub fn head_merges_an_older_tip(root: &Path, base: &str) -> bool {
    let Ok(repo) = Repository::discover(root) else {
        return false;
    };
    let (Ok(head), Ok(base)) = (
        repo.head().and_then(|h| h.peel_to_commit()),
        Oid::from_str(base),
    ) else {
        return false;
    };
    head.parent_count() > 1
        && head
            .parent_ids()
            .any(|p| p != base && repo.graph_descendant_of(base, p).unwrap_or(false))
}

/// The capacity repository's folder at `rev`: the git repository, the commit
/// and the tree of the folder (`None` when it did not exist then).
fn capacity_tree<'r>(
    repo: &'r Repository,
    root: &Path,
    rev: &str,
) -> Result<(git2::Commit<'r>, Option<git2::Tree<'r>>), GitError> {
    let workdir = repo
        .workdir()
        .ok_or_else(|| GitError::Bare(root.to_path_buf()))?
        .to_path_buf();
    let prefix = prefix_in(&workdir, root)?;
    let missing = || GitError::MissingRevision {
        rev: rev.to_string(),
        repo: workdir.clone(),
    };
    let object = repo.revparse_single(rev).map_err(|_| missing())?;
    let commit = object
        .peel_to_commit()
        .map_err(|_| not_a_commit(rev, &object, &workdir))?;
    let tree = commit.tree()?;
    if prefix.is_empty() {
        return Ok((commit, Some(tree)));
    }
    let sub = match tree.get_path(Path::new(&prefix)) {
        Ok(entry) if entry.kind() == Some(ObjectType::Tree) => Some(repo.find_tree(entry.id())?),
        _ => None,
    };
    Ok((commit, sub))
}

/// The files of one folder of the capacity repository at `rev` (the template
/// overrides, for instance): paths relative to that folder, and contents.
/// Links and submodules are not read; files over the size limit are left out.
pub fn folder_at(root: &Path, rev: &str, folder: &str) -> Result<Vec<(String, Vec<u8>)>, GitError> {
    let repo =
        Repository::discover(root).map_err(|_| GitError::NotARepository(root.to_path_buf()))?;
    let (_, tree) = capacity_tree(&repo, root, rev)?;
    let Some(tree) = tree else {
        return Ok(Vec::new());
    };
    let dir = match tree.get_path(Path::new(folder)) {
        Ok(entry) if entry.kind() == Some(ObjectType::Tree) => repo.find_tree(entry.id())?,
        _ => return Ok(Vec::new()),
    };
    let mut out = Vec::new();
    let mut failed = None;
    dir.walk(TreeWalkMode::PreOrder, |prefix, entry| {
        if entry.kind() == Some(ObjectType::Blob) && entry.filemode() != 0o120000 {
            match bounded_blob(&repo, entry.id()) {
                Ok(Ok(bytes)) => {
                    out.push((format!("{prefix}{}", entry.name().unwrap_or("")), bytes))
                }
                Ok(Err(_)) => {}
                Err(e) => failed = Some(e),
            }
        }
        TreeWalkResult::Ok
    })?;
    if let Some(e) = failed {
        return Err(e.into());
    }
    out.sort();
    Ok(out)
}

/// The state the rolling budget of automatic approvals counts from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Past {
    /// The newest commit on the first-parent line made at or before the cutoff.
    Commit(String),
    /// The history starts after the cutoff: the first commit of the
    /// capacity repository (the oldest of the unbroken stretch back from the
    /// revision that holds its Config: the import of the capacity already
    /// held, not a README-only first commit) is the baseline.
    Root(String),
}

/// The state of `rev`'s first-parent line at `cutoff` (seconds since the
/// epoch).
///
/// Commit dates are what the committer wrote, so they are read as never
/// going backwards along the line: a commit counts as made no earlier than
/// any commit before it. The baseline is the newest commit that, and every
/// commit before it, is dated at or before the cutoff; a commit back-dated
/// past the cutoff on top of recent ones cannot hide them from the budget,
/// and one dated in the future makes everything after it count (the budget
/// fails closed). This needs the whole line: a shallow clone is an error
/// (fetch the history, `fetch-depth: 0`).
pub fn commit_before(root: &Path, rev: &str, cutoff: i64) -> Result<Past, GitError> {
    let repo =
        Repository::discover(root).map_err(|_| GitError::NotARepository(root.to_path_buf()))?;
    let (commit, _) = capacity_tree(&repo, root, rev)?;
    let workdir = repo
        .workdir()
        .ok_or_else(|| GitError::Bare(root.to_path_buf()))?
        .to_path_buf();
    let config_path = Path::new(&prefix_in(&workdir, root)?).join("capops.yaml");
    let mut current = commit;
    // The newest commit seen since the last one dated after the cutoff.
    let mut candidate: Option<git2::Oid> = None;
    // The oldest commit of the stretch from `rev` back that holds the
    // capacity repository (its Config): where a history shorter than the
    // budget's 30 days starts counting, so that a repository whose first
    // commits held only a README does not count the whole fleet it was
    // adopted with as grown in those 30 days.
    let mut adopted: Option<git2::Oid> = None;
    let mut tracking = true;
    // A bound on the walk: a commit an hour for over a century.
    for _ in 0..1_000_000 {
        if current.time().seconds() > cutoff {
            candidate = None;
        } else if candidate.is_none() {
            candidate = Some(current.id());
        }
        if tracking {
            if current.tree()?.get_path(&config_path).is_ok() {
                adopted = Some(current.id());
            } else {
                tracking = false;
            }
        }
        if current.parent_count() == 0 {
            // The root: or where a shallow clone was cut.
            if shallow(&repo) {
                return Err(GitError::ShallowHistory {
                    repo: root.to_path_buf(),
                });
            }
            return Ok(match candidate {
                Some(id) => Past::Commit(id.to_string()),
                None => Past::Root(adopted.unwrap_or(current.id()).to_string()),
            });
        }
        match current.parent(0) {
            Ok(p) => current = p,
            Err(_) => {
                return Err(GitError::ShallowHistory {
                    repo: root.to_path_buf(),
                });
            }
        }
    }
    Err(GitError::Other(format!(
        "more than 1,000,000 commits on the first-parent line of {rev}; capops cannot count the rolling budget"
    )))
}

/// The working tree and the git directory of the repository holding `root`
/// (for the parse cache, kept in the git directory), when there is one.
pub fn dirs(root: &Path) -> Option<(PathBuf, PathBuf)> {
    let repo = Repository::discover(root).ok()?;
    let workdir = repo.workdir()?.to_path_buf();
    Some((workdir, repo.path().to_path_buf()))
}
