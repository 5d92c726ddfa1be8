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

/// Whether the file at `path` (as a Config names it, relative to the
/// capacity repository at `root`) differs between `commit` and the working
/// tree: added, removed, edited, or reached another way. The path is
/// resolved in each as the system would open it, component by component:
/// every link on the way (a folder turned into a link, a link's target
/// changed, `..` after a link) and every submodule (by the commit it
/// pins) is compared, not only the file it ends at. A file the loader does
/// not read (a Config's `usage.prometheus.caFile`) is an input all the
/// same, and a change to it is a change to what names it. A path that
/// leaves the git repository (absolute, or climbing out) in both names a
/// file of the machine, which no pull request changes. Unreadable counts as
/// changed.
pub fn file_changed(root: &Path, commit: &str, path: &str) -> bool {
    let Some((repo, prefix)) = open(root) else {
        return true;
    };
    let Some(tree) = git2::Oid::from_str(commit)
        .ok()
        .and_then(|c| repo.find_commit(c).ok())
        .and_then(|c| c.tree().ok())
    else {
        return true;
    };
    let Some(workdir) = repo.workdir().map(Path::to_path_buf) else {
        return true;
    };
    let index = repo.index().ok();
    let base = |p: &str| match tree.get_path(Path::new(p)) {
        Err(e) if e.code() == git2::ErrorCode::NotFound => Kind::Missing,
        Err(_) => Kind::Unreadable,
        Ok(e) => match e.filemode() {
            0o040000 => Kind::Dir,
            0o160000 => Kind::Submodule(e.id()),
            0o120000 => match repo.find_blob(e.id()) {
                Ok(b) => Kind::Link(b.content().to_vec()),
                Err(_) => Kind::Unreadable,
            },
            _ => Kind::File(e.id()),
        },
    };
    let head = |p: &str| {
        // A submodule is what the index pins (a checkout without its
        // files has an empty folder there).
        if let Some(e) = index.as_ref().and_then(|i| i.get_path(Path::new(p), 0))
            && e.mode == 0o160000
        {
            return Kind::Submodule(e.id);
        }
        let full = workdir.join(p);
        match full.symlink_metadata() {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Kind::Missing,
            Err(_) => Kind::Unreadable,
            Ok(m) if m.file_type().is_symlink() => match std::fs::read_link(&full) {
                Ok(t) => Kind::Link(t.as_os_str().as_encoded_bytes().to_vec()),
                Err(_) => Kind::Unreadable,
            },
            Ok(m) if m.is_dir() => {
                if full.join(".git").symlink_metadata().is_ok() {
                    Kind::Unreadable
                } else {
                    Kind::Dir
                }
            }
            Ok(m) if m.is_file() => git2::Oid::hash_file(git2::ObjectType::Blob, &full)
                .map_or(Kind::Unreadable, Kind::File),
            Ok(_) => Kind::Unreadable,
        }
    };
    let full = if path.starts_with('/') || prefix.is_empty() {
        path.to_string()
    } else {
        format!("{prefix}/{path}")
    };
    // An absolute path (or link target) into the work tree is the
    // repository's file, in the base as in the head: the checkout's own
    // path, as git has it and as the system resolves it.
    let mut tops: Vec<String> = vec![workdir.to_string_lossy().trim_end_matches('/').to_string()];
    if let Ok(c) = workdir.canonicalize() {
        tops.push(c.to_string_lossy().trim_end_matches('/').to_string());
    }
    let (b, h) = (resolve(&base, &full, &tops), resolve(&head, &full, &tops));
    b != h || h.iter().any(|(_, k)| *k == Kind::Unreadable)
}

/// What a path component is in one revision.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Kind {
    Dir,
    File(git2::Oid),
    Link(Vec<u8>),
    Submodule(git2::Oid),
    Missing,
    /// Outside the git repository: the machine's.
    Outside,
    /// Links that never end, or something that cannot be read.
    Unreadable,
}

/// The steps of opening `path` from the top of the git repository, as a
/// system would: each link met (with its target), and where it ends (a
/// file, a folder, nothing, a submodule, outside the repository).
fn resolve(lookup: &dyn Fn(&str) -> Kind, path: &str, tops: &[String]) -> Vec<(String, Kind)> {
    use std::collections::VecDeque;
    // An absolute path inside the work tree (one of `tops`), as a path
    // from its top; `None` outside it.
    let inside = |p: &str| -> Option<String> {
        tops.iter().filter(|t| !t.is_empty()).find_map(|t| {
            let rest = p.strip_prefix(t.as_str())?;
            (rest.is_empty() || rest.starts_with('/')).then(|| rest.to_string())
        })
    };
    let mut trace = Vec::new();
    let mut rest: VecDeque<String> = VecDeque::new();
    if path.starts_with('/') {
        match inside(path) {
            Some(r) => rest.extend(r.split('/').map(str::to_string)),
            None => {
                trace.push((path.to_string(), Kind::Outside));
                return trace;
            }
        }
    } else {
        rest.extend(path.split('/').map(str::to_string));
    }
    let mut stack: Vec<String> = Vec::new();
    let mut hops = 0;
    while let Some(c) = rest.pop_front() {
        match c.as_str() {
            "" | "." => continue,
            ".." => {
                if stack.pop().is_none() {
                    trace.push(("..".into(), Kind::Outside));
                    return trace;
                }
                continue;
            }
            _ => {}
        }
        stack.push(c);
        let here = stack.join("/");
        match lookup(&here) {
            Kind::Dir if !rest.is_empty() => {}
            Kind::Link(target) => {
                hops += 1;
                trace.push((here, Kind::Link(target.clone())));
                if hops > 40 {
                    trace.push((String::new(), Kind::Unreadable));
                    return trace;
                }
                stack.pop();
                let target = String::from_utf8_lossy(&target).into_owned();
                let relative = if target.starts_with('/') {
                    match inside(&target) {
                        // From the top of the work tree.
                        Some(r) => {
                            stack.clear();
                            r
                        }
                        None => {
                            trace.push((target, Kind::Outside));
                            return trace;
                        }
                    }
                } else {
                    target
                };
                for part in relative.split('/').rev() {
                    rest.push_front(part.to_string());
                }
            }
            k => {
                trace.push((here, k));
                return trace;
            }
        }
    }
    trace.push((stack.join("/"), Kind::Dir));
    trace
}

/// The repository holding `root`, and `root`'s folder inside it.
fn open(root: &Path) -> Option<(Repository, String)> {
    let repo = Repository::discover(root).ok()?;
    let prefix = super::git::prefix_of(repo.workdir()?, root)?;
    Some((repo, prefix))
}

#[cfg(test)]
mod tests {
    use super::{Kind, resolve};

    #[test]
    fn a_path_is_opened_as_the_system_would_through_its_links() {
        let oid = git2::Oid::from_str("0123456789012345678901234567890123456789").unwrap();
        // certs is a link to pki; pki/ca.pem a file; x/y a folder.
        let world = |p: &str| match p {
            "certs" => Kind::Link(b"pki".to_vec()),
            "pki" | "x" | "x/y" => Kind::Dir,
            "pki/ca.pem" => Kind::File(oid),
            "loop" => Kind::Link(b"loop".to_vec()),
            _ => Kind::Missing,
        };
        let none: &[String] = &[];
        let t = resolve(&world, "certs/ca.pem", none);
        assert_eq!(
            t,
            vec![
                ("certs".to_string(), Kind::Link(b"pki".to_vec())),
                ("pki/ca.pem".to_string(), Kind::File(oid)),
            ]
        );
        // `..` after a folder is taken after that folder is opened.
        assert_eq!(
            resolve(&world, "./x/y/../../pki/ca.pem", none)
                .last()
                .unwrap()
                .1,
            Kind::File(oid)
        );
        assert_eq!(
            resolve(&world, "../ca.pem", none).last().unwrap().1,
            Kind::Outside
        );
        assert_eq!(
            resolve(&world, "/etc/ssl/ca.pem", none).last().unwrap().1,
            Kind::Outside
        );
        assert_eq!(
            resolve(&world, "loop/ca.pem", none).last().unwrap().1,
            Kind::Unreadable
        );
        assert_eq!(
            resolve(&world, "nope/ca.pem", none).last().unwrap().1,
            Kind::Missing
        );
        // An absolute path into the work tree is the repository's file.
        let tops = ["/work/repo".to_string()];
        assert_eq!(
            resolve(&world, "/work/repo/pki/ca.pem", &tops)
                .last()
                .unwrap()
                .1,
            Kind::File(oid)
        );
        assert_eq!(
            resolve(&world, "/work/repository/ca.pem", &tops)
                .last()
                .unwrap()
                .1,
            Kind::Outside
        );
    }
}
