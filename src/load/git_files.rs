//! Whether a checkout's git repository can be trusted for revisions, and
//! whether a file a document names (outside what the loader reads, such
//! as a Config's CA file) differs between a revision and the working tree.

#![allow(clippy::disallowed_methods, clippy::disallowed_types)]

use git2::Repository;
use std::path::Path;

/// Why git refuses to open the repository holding `root` (a checkout owned
/// by another user, which git calls dubious ownership; a broken `.git`);
/// `None` when it opens, or when there is no repository there. capops reads
/// revisions to stamp, compare and roll back by: a repository it cannot
/// open is never taken for a folder outside git.
pub fn refusal(root: &Path) -> Option<String> {
    // A path that does not resolve (missing, a link loop) holds no
    // repository: loading it says what is wrong (`no-config`).
    root.canonicalize().ok()?;
    match Repository::discover(root) {
        Err(e) if e.code() != git2::ErrorCode::NotFound => Some(e.message().to_string()),
        // A `.git` above it that git cannot open (a worktree's or a
        // submodule's `.git` file naming a folder a container did not
        // mount): not a folder outside git.
        Err(_) => root
            .canonicalize()
            .ok()?
            .ancestors()
            .map(|d| d.join(".git"))
            .find(|g| g.symlink_metadata().is_ok())
            .map(|g| {
                format!(
                    "{} is there, but it is not a repository git can open",
                    g.display()
                )
            }),
        // Its HEAD must name a commit it holds (an unborn branch has none
        // yet): a corrupt HEAD or missing objects stamp nothing.
        Ok(repo) => match repo.head() {
            Err(e) if e.code() == git2::ErrorCode::UnbornBranch => None,
            Err(e) => Some(format!("its HEAD cannot be read: {}", e.message())),
            Ok(h) => h
                .peel_to_commit()
                .err()
                .map(|e| format!("the commit its HEAD names cannot be read: {}", e.message())),
        },
    }
}

/// Whether the file at `rel` (relative to the capacity repository at
/// `root`) differs between `commit` and the working tree: added, removed,
/// edited, or turned into or from a link. A file the loader does not read
/// (a Config's `usage.prometheus.caFile`) is an input all the same, and a
/// change to it is a change to what names it. Unreadable counts as changed.
pub fn file_changed(root: &Path, commit: &str, rel: &str) -> bool {
    let Some(base) = base_entry(root, commit, rel) else {
        return true;
    };
    let path = root.join(rel);
    let head = match path.symlink_metadata() {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(_) => return true,
        Ok(m) if m.file_type().is_symlink() => {
            let Ok(target) = std::fs::read_link(&path) else {
                return true;
            };
            let bytes = target.as_os_str().as_encoded_bytes();
            git2::Oid::hash_object(git2::ObjectType::Blob, bytes)
                .ok()
                .map(|o| (o, true))
        }
        Ok(m) if m.is_file() => git2::Oid::hash_file(git2::ObjectType::Blob, &path)
            .ok()
            .map(|o| (o, false)),
        Ok(_) => return true,
    };
    base != head
}

/// The blob id of `rel` in `commit`, and whether it is a link: `Some(None)`
/// when the commit has no such file, `None` when git cannot say.
#[allow(clippy::option_option)]
fn base_entry(root: &Path, commit: &str, rel: &str) -> Option<Option<(git2::Oid, bool)>> {
    let repo = Repository::discover(root).ok()?;
    let prefix = super::git::prefix_of(repo.workdir()?, root)?;
    let tree = repo
        .find_commit(git2::Oid::from_str(commit).ok()?)
        .ok()?
        .tree()
        .ok()?;
    let full = if prefix.is_empty() {
        rel.to_string()
    } else {
        format!("{prefix}/{rel}")
    };
    Some(
        tree.get_path(Path::new(&full))
            .ok()
            .map(|e| (e.id(), e.filemode() == i32::from(git2::FileMode::Link))),
    )
}

/// `path` as a path inside the repository (`a/b`), when it is one: an
/// absolute path or one that climbs out names a file of the machine, which
/// no pull request changes.
pub fn inside(path: &str) -> Option<String> {
    use std::path::Component;
    let mut parts: Vec<&str> = Vec::new();
    for c in Path::new(path).components() {
        match c {
            Component::Normal(p) => parts.push(p.to_str()?),
            Component::CurDir => {}
            Component::ParentDir => {
                parts.pop()?;
            }
            Component::RootDir | Component::Prefix(_) => return None,
        }
    }
    (!parts.is_empty()).then(|| parts.join("/"))
}

#[cfg(test)]
mod tests {
    #[test]
    fn only_paths_inside_the_repository_are_compared() {
        assert_eq!(
            super::inside("certs/ca.pem").as_deref(),
            Some("certs/ca.pem")
        );
        assert_eq!(
            super::inside("./certs/../ca.pem").as_deref(),
            Some("ca.pem")
        );
        assert_eq!(super::inside("/etc/ssl/ca.pem"), None);
        assert_eq!(super::inside("../ca.pem"), None);
        assert_eq!(super::inside("."), None);
    }
}
