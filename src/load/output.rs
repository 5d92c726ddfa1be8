//! The committed output folder (`rendered/` by default), as files: what a
//! pull request changes there is compared with what `capops render` would
//! write, so hand edits to the files Argo CD, Flux or Terraform apply are
//! judged like any other change (see `cli::check`).

// An edge: it reads files and git (see clippy.toml).
#![allow(clippy::disallowed_methods, clippy::disallowed_types)]

use super::files::MAX_FILE_BYTES;
use super::git::{self, GitError};
use std::collections::BTreeMap;
use std::path::Path;

/// The output folder's files in the working tree, by path relative to the
/// folder; a link, an oversized file or a submodule (`.gitmodules`) maps to
/// `None`: never what render writes.
pub fn read_worktree(root: &Path, folder: &str) -> BTreeMap<String, Option<Vec<u8>>> {
    let dir = root.join(folder);
    let mut out = BTreeMap::new();
    if !dir.is_dir() || dir.is_symlink() {
        return out;
    }
    for entry in walkdir::WalkDir::new(&dir)
        .follow_links(false)
        .sort_by_file_name()
        .into_iter()
        .flatten()
    {
        let name = entry
            .path()
            .strip_prefix(&dir)
            .map(|p| p.to_string_lossy().replace('\\', "/"))
            .unwrap_or_default();
        if entry.path_is_symlink() {
            out.insert(name, None);
            continue;
        }
        if !entry.file_type().is_file() {
            continue;
        }
        let bytes = match std::fs::metadata(entry.path()) {
            Ok(m) if m.len() <= MAX_FILE_BYTES => std::fs::read(entry.path()).ok(),
            _ => None,
        };
        out.insert(name, bytes);
    }
    // A submodule in the folder (a gitlink: another repository's files,
    // which a consumer that clones submodules applies) is never output:
    // those git records, and those `.gitmodules` names (git reads its keys
    // in any case), at the capacity root or the top of the repository.
    for path in git::gitlinks_under(root, folder) {
        out.insert(path, None);
    }
    let mut tops = vec![root.to_path_buf()];
    if let Some((top, _)) = git::dirs(root) {
        tops.push(top);
    }
    for top in tops {
        // Read within the size limit: an oversized `.gitmodules` is not
        // read, and may name anything, so the output reads as edited.
        let path = top.join(".gitmodules");
        // Read as bytes, as git reads it (a byte that is not UTF-8 in a
        // comment does not hide the paths); one that is there but cannot be
        // read, or is not a plain file, may name anything, as oversized.
        let modules = match std::fs::symlink_metadata(&path) {
            Ok(m) if m.len() > MAX_FILE_BYTES || !m.is_file() => {
                out.insert(".gitmodules".into(), None);
                continue;
            }
            Ok(_) => match std::fs::read(&path) {
                Ok(bytes) => String::from_utf8_lossy(&bytes).into_owned(),
                Err(_) => {
                    out.insert(".gitmodules".into(), None);
                    continue;
                }
            },
            Err(_) => continue,
        };
        let at = git::prefix_of(&top, root).unwrap_or_default();
        let under = [at.as_str(), folder.trim_matches('/')]
            .iter()
            .filter(|p| !p.is_empty())
            .map(|p| format!("{p}/"))
            .collect::<String>();
        for path in submodule_paths(&modules) {
            if let Some(rest) = git::in_folder(&path, &under) {
                out.insert(rest, None);
            }
        }
    }
    out
}

/// The `path` of every submodule a `.gitmodules` file names (git's keys
/// are read in any case: `Path = ` is a path too).
fn submodule_paths(text: &str) -> Vec<String> {
    text.lines()
        .filter_map(|l| {
            let (key, value) = l.trim().split_once('=')?;
            key.trim()
                .eq_ignore_ascii_case("path")
                .then(|| value.trim().trim_matches('"').to_string())
        })
        .collect()
}

/// The output folder's files at a revision.
pub fn read_revision(
    root: &Path,
    rev: &str,
    folder: &str,
) -> Result<BTreeMap<String, Option<Vec<u8>>>, GitError> {
    Ok(git::folder_at(root, rev, folder)?
        .into_iter()
        .map(|(name, bytes)| (name, Some(bytes)))
        .collect())
}

/// Paths whose content differs between two listings (added, changed or removed).
pub fn changed(
    base: &BTreeMap<String, Option<Vec<u8>>>,
    head: &BTreeMap<String, Option<Vec<u8>>>,
) -> Vec<String> {
    base.keys()
        .chain(head.keys())
        .filter(|p| base.get(*p) != head.get(*p))
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .cloned()
        .collect()
}

/// The revision a rendered file was stamped with (`capops.dev/revision` on
/// Kubernetes objects, the `capops-revision` tag in Terraform), if any.
pub fn stamped_revision(text: &str) -> Option<String> {
    for (key, end) in [
        ("capops.dev/revision: ", '\n'),
        ("\"capops-revision\": \"", '"'),
    ] {
        if let Some(i) = text.find(key) {
            let rest = &text[i + key.len()..];
            let value = rest.split(end).next().unwrap_or("").trim();
            return Some(value.trim_matches('"').to_string());
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn changed_paths_and_stamps() {
        let a: BTreeMap<_, _> = [
            ("x".to_string(), Some(b"1".to_vec())),
            ("y".into(), Some(b"2".to_vec())),
        ]
        .into();
        let b: BTreeMap<_, _> = [
            ("x".to_string(), Some(b"1".to_vec())),
            ("z".into(), Some(b"3".to_vec())),
        ]
        .into();
        assert_eq!(changed(&a, &b), ["y", "z"]);
        assert_eq!(
            stamped_revision("metadata:\n  annotations:\n    capops.dev/revision: abc123+dirty\n")
                .as_deref(),
            Some("abc123+dirty")
        );
        assert_eq!(
            stamped_revision("{\"tags\": {\"capops-revision\": \"golden\", \"x\": 1}}").as_deref(),
            Some("golden")
        );
        assert_eq!(stamped_revision("kind: ResourceQuota\n"), None);
    }
}
