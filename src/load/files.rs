//! Finding and reading the files of a capacity repository on disk.
//!
//! The root is the folder holding `capops.yaml`. Under it capops reads every
//! `*.yaml` / `*.yml` file and the usage history `usage/*.csv`, skipping hidden
//! paths, the `rendered/`, `templates/` and `tests/` folders and whatever the
//! Config's `ignore` lists. Reading is bounded: a file over [`MAX_FILE_BYTES`]
//! is reported, not read; a symlink loop is reported and skipped.

// An edge: it reads files, git, the environment or the clock (see clippy.toml).
#![allow(clippy::disallowed_methods, clippy::disallowed_types)]

use std::path::{Path, PathBuf};

/// Largest file capops reads (16 MiB). Capacity documents are small; a file
/// this large is a mistake (a log, a dump) and reading it would waste memory.
pub const MAX_FILE_BYTES: u64 = 16 * 1024 * 1024;

/// The repository's root document.
pub const CONFIG_FILE: &str = "capops.yaml";

/// Folders at the root that never hold capacity documents.
pub const SKIPPED_DIRS: [&str; 3] = ["rendered", "templates", "tests"];

/// One file found in the repository.
#[derive(Debug, Clone)]
pub struct Input {
    /// Path relative to the root, `/`-separated.
    pub path: String,
    pub content: Content,
}

/// What reading a file gave.
#[derive(Debug, Clone)]
pub enum Content {
    Bytes(Vec<u8>),
    TooLarge(u64),
    Unreadable(String),
    /// The file's name (or a folder's above it) is not valid UTF-8: not
    /// read, by the working-tree and the git reader alike.
    NameNotUtf8,
    SymlinkLoop(String),
    /// A symbolic link, not followed: what it points to is not read.
    Symlink,
    /// A git submodule or nested repository, not read.
    Submodule,
    /// A file to read when it is parsed ([`read`]): usage CSVs of the
    /// working tree, so that each file's text is held only while it is read.
    Deferred(PathBuf),
}

/// What kind of file an input is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileKind {
    Yaml,
    UsageCsv,
}

/// Classifies a repository-relative path, or `None` when capops does not read it.
pub fn classify(path: &str) -> Option<FileKind> {
    let mut parts = path.split('/');
    let first = parts.clone().next().unwrap_or("");
    if path.split('/').any(|p| p.starts_with('.')) {
        return None;
    }
    if path.contains('/') && SKIPPED_DIRS.contains(&first) {
        return None;
    }
    let lower = path.to_ascii_lowercase();
    if lower.ends_with(".yaml") || lower.ends_with(".yml") {
        return Some(FileKind::Yaml);
    }
    if first == "usage" && lower.ends_with(".csv") && parts.nth(2).is_none() {
        return Some(FileKind::UsageCsv);
    }
    None
}

/// Whether a repository path matches one of the Config's ignore patterns.
///
/// A pattern ending in `/` is a folder prefix; otherwise `*` matches within a
/// path segment, `**` across segments and `?` one character.
pub fn ignored(path: &str, patterns: &[String]) -> bool {
    patterns.iter().any(|p| {
        if let Some(dir) = p.strip_suffix('/') {
            path.starts_with(&format!("{}/", dir.trim_start_matches("./")))
        } else {
            glob(p.trim_start_matches("./").as_bytes(), path.as_bytes())
        }
    })
}

fn glob(p: &[u8], s: &[u8]) -> bool {
    // Each (pattern position, text position) is decided once: `**` and `*`
    // retried at every offset would otherwise take exponential time.
    let mut memo = vec![None; (p.len() + 1) * (s.len() + 1)];
    glob_at(p, s, 0, 0, &mut memo)
}

fn glob_at(p: &[u8], s: &[u8], pi: usize, si: usize, memo: &mut [Option<bool>]) -> bool {
    let key = pi * (s.len() + 1) + si;
    if let Some(known) = memo[key] {
        return known;
    }
    let (pat, text) = (&p[pi..], &s[si..]);
    let result = match pat {
        [] => text.is_empty(),
        [b'*', b'*', rest @ ..] => {
            let skip = if rest.first() == Some(&b'/') { 3 } else { 2 };
            (si..=s.len()).any(|i| glob_at(p, s, pi + skip, i, memo))
        }
        [b'*', ..] => (si..=s.len())
            .take_while(|&i| i == si || s[i - 1] != b'/')
            .any(|i| glob_at(p, s, pi + 1, i, memo)),
        [b'?', ..] => !text.is_empty() && text[0] != b'/' && glob_at(p, s, pi + 1, si + 1, memo),
        [c, ..] => !text.is_empty() && text[0] == *c && glob_at(p, s, pi + 1, si + 1, memo),
    };
    memo[key] = Some(result);
    result
}

/// Why a folder could not be read as a capacity repository.
#[derive(Debug, thiserror::Error)]
pub enum RootError {
    #[error("{0} is not a folder")]
    NotADirectory(PathBuf),
    #[error("{0} has no capops.yaml")]
    NoConfig(PathBuf),
}

/// Collects every file capops reads under `root`, in path order.
pub fn collect(root: &Path) -> Result<Vec<Input>, RootError> {
    if !root.is_dir() {
        return Err(RootError::NotADirectory(root.to_path_buf()));
    }
    if !root.join(CONFIG_FILE).exists()
        && std::fs::symlink_metadata(root.join(CONFIG_FILE)).is_err()
    {
        return Err(RootError::NoConfig(root.to_path_buf()));
    }
    let mut inputs = Vec::new();
    let mut to_read = Vec::new();
    // Links are never followed (what they point to is not read, so nothing
    // outside the repository can be), and submodules are not entered (git
    // does not hold their files in the repository's history either).
    let mut submodules = Vec::new();
    let walker = walkdir::WalkDir::new(root)
        .follow_links(false)
        .sort_by_file_name()
        .into_iter()
        .filter_entry(|e| {
            if e.depth() == 0 {
                return true;
            }
            if e.file_name().to_string_lossy().starts_with('.') {
                return false;
            }
            if e.file_type().is_dir() && std::fs::symlink_metadata(e.path().join(".git")).is_ok() {
                submodules.push(relative(root, e.path()));
                return false;
            }
            true
        });
    for entry in walker {
        let entry = match entry {
            Ok(e) => e,
            Err(err) => {
                let path = err
                    .path()
                    .map(|p| relative(root, p))
                    .unwrap_or_else(|| "?".into());
                if err.loop_ancestor().is_some() {
                    inputs.push(Input {
                        path: path.clone(),
                        content: Content::SymlinkLoop(path),
                    });
                } else if classify(&path).is_some() {
                    inputs.push(Input {
                        path,
                        content: Content::Unreadable(io_text(&err)),
                    });
                } else if !err.path().is_some_and(|p| p.is_file()) && readable_folder(&path) {
                    // A folder that cannot be listed may hold documents:
                    // passing without them would pass what was never read.
                    // One that cannot even be looked at (a path past the
                    // system's limit) is no plain file either.
                    inputs.push(Input {
                        path: format!("{}/", path.trim_end_matches('/')),
                        content: Content::Unreadable(format!(
                            "the folder cannot be listed ({}), so the documents in it were not read",
                            io_text(&err)
                        )),
                    });
                }
                continue;
            }
        };
        if entry.file_type().is_dir() {
            // A folder where the Config belongs is not a repository without one.
            if entry.depth() == 1 && entry.file_name() == CONFIG_FILE {
                inputs.push(Input {
                    path: CONFIG_FILE.into(),
                    content: Content::Unreadable("it is a folder, not a file".into()),
                });
            }
            continue;
        }
        let path = relative(root, entry.path());
        // Git cannot name such a file the way the file system does: neither
        // reader reads it (the git reader says the same).
        if entry
            .path()
            .strip_prefix(root)
            .is_ok_and(|rel| rel.to_str().is_none())
        {
            if classify(&path).is_some() {
                inputs.push(Input {
                    path,
                    content: Content::NameNotUtf8,
                });
            }
            continue;
        }
        // The root itself may be reached through a link (`capops validate
        // ./current`, a link to the checkout): it is the repository.
        if entry.depth() > 0 && entry.path_is_symlink() {
            // A link to a folder cannot be classified by its name; report every
            // link a reader could mean (YAML, usage, or a folder's link).
            let to_dir = std::fs::metadata(entry.path()).is_ok_and(|m| m.is_dir());
            let ancestor = to_dir
                && std::fs::canonicalize(entry.path())
                    .ok()
                    .zip(
                        entry
                            .path()
                            .parent()
                            .and_then(|p| std::fs::canonicalize(p).ok()),
                    )
                    .is_some_and(|(target, parent)| parent.starts_with(&target));
            if ancestor {
                inputs.push(Input {
                    path: path.clone(),
                    content: Content::SymlinkLoop(path),
                });
            } else if to_dir || classify(&path).is_some() {
                inputs.push(Input {
                    path,
                    content: Content::Symlink,
                });
            }
            continue;
        }
        if classify(&path).is_none() {
            continue;
        }
        // A FIFO, socket or device would block or never end: not read.
        if !entry.file_type().is_file() {
            inputs.push(Input {
                path,
                content: Content::Unreadable(
                    "it is not a regular file (a FIFO, socket or device)".into(),
                ),
            });
            continue;
        }
        if classify(&path) == Some(FileKind::UsageCsv) {
            inputs.push(Input {
                path,
                content: Content::Deferred(entry.into_path()),
            });
            continue;
        }
        to_read.push((path, entry.into_path()));
    }

    for path in submodules {
        inputs.push(Input {
            content: Content::Submodule,
            path,
        });
    }
    // Reading ten thousand small files is mostly waiting on system calls: more
    // threads than cores keep the disk busy (measured: 4 threads read twice as
    // fast as 2 on a 2-core machine).
    use rayon::prelude::*;
    let read_all = |to_read: Vec<(String, std::path::PathBuf)>| -> Vec<Input> {
        to_read
            .into_par_iter()
            .map(|(path, full)| Input {
                content: read(&full),
                path,
            })
            .collect()
    };
    let threads = std::thread::available_parallelism().map_or(4, |n| (n.get() * 2).max(4));
    match rayon::ThreadPoolBuilder::new().num_threads(threads).build() {
        Ok(pool) => inputs.extend(pool.install(|| read_all(to_read))),
        Err(_) => inputs.extend(read_all(to_read)),
    }
    inputs.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(inputs)
}

/// Whether documents could sit under a folder (neither hidden nor one of
/// the folders capops skips).
fn readable_folder(path: &str) -> bool {
    let first = path.split('/').next().unwrap_or("");
    !path.is_empty()
        && path != "?"
        && !path.split('/').any(|p| p.starts_with('.'))
        && !SKIPPED_DIRS.contains(&first)
}

fn io_text(err: &walkdir::Error) -> String {
    err.io_error()
        .map(|e| e.to_string())
        .unwrap_or_else(|| err.to_string())
}

/// Reads one file within the size limit.
pub fn read(path: &Path) -> Content {
    use std::io::Read;
    let file = match std::fs::File::open(path) {
        Ok(f) => f,
        Err(e) => return Content::Unreadable(e.to_string()),
    };
    // Room for the whole file when its size is known (one read, not a
    // series of growing ones); `take` bounds memory whatever the size.
    let hint = file
        .metadata()
        .map_or(0, |m| m.len().min(MAX_FILE_BYTES) as usize);
    let mut bytes = Vec::with_capacity(hint + 1);
    match file.take(MAX_FILE_BYTES + 1).read_to_end(&mut bytes) {
        Ok(_) if bytes.len() as u64 > MAX_FILE_BYTES => {
            // Report the real size when it can be had.
            let size = std::fs::metadata(path)
                .map(|m| m.len())
                .unwrap_or(bytes.len() as u64);
            Content::TooLarge(size)
        }
        Ok(_) => Content::Bytes(bytes),
        Err(e) if e.raw_os_error() == Some(21) => Content::Unreadable("it is a folder".into()),
        Err(e) => Content::Unreadable(e.to_string()),
    }
}

fn relative(root: &Path, path: &Path) -> String {
    let rel = path.strip_prefix(root).unwrap_or(path);
    rel.components()
        .map(|c| c.as_os_str().to_string_lossy())
        .collect::<Vec<_>>()
        .join("/")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classifies_paths() {
        assert_eq!(classify("capops.yaml"), Some(FileKind::Yaml));
        assert_eq!(classify("teams/a.yml"), Some(FileKind::Yaml));
        assert_eq!(classify("usage/h100.csv"), Some(FileKind::UsageCsv));
        assert_eq!(classify("usage/old/h100.csv"), None);
        assert_eq!(classify("data.csv"), None);
        assert_eq!(classify(".github/workflows/ci.yaml"), None);
        assert_eq!(classify("rendered/prod/rq.yaml"), None);
        assert_eq!(classify("tests/case/capops.yaml"), None);
        assert_eq!(classify("README.md"), None);
    }

    #[test]
    fn ignore_patterns() {
        let pats = vec![
            "drafts/".to_string(),
            "**/*.draft.yaml".to_string(),
            "x?.yaml".into(),
        ];
        assert!(ignored("drafts/a.yaml", &pats));
        assert!(ignored("teams/deep/b.draft.yaml", &pats));
        assert!(ignored("b.draft.yaml", &pats));
        assert!(ignored("x1.yaml", &pats));
        assert!(!ignored("teams/a.yaml", &pats));
        assert!(!ignored("draftsman/a.yaml", &pats));
        assert!(glob(b"teams/*.yaml", b"teams/a.yaml"));
        assert!(!glob(b"teams/*.yaml", b"teams/x/a.yaml"));
        assert!(glob(b"**/a/**/b.yaml", b"x/a/y/z/b.yaml"));
        assert!(glob(b"**/a/**/b.yaml", b"a/b.yaml"));
        assert!(!glob(b"**/a/**/b.yaml", b"x/ab.yaml"));
    }

    /// Patterns that backtrack exponentially in a naive matcher answer at
    /// once: each (pattern, text) position is decided once.
    #[test]
    fn pathological_patterns_answer_at_once() {
        let deep = "**/".repeat(40) + "x";
        let path = "a/".repeat(60) + "y";
        assert!(!glob(deep.as_bytes(), path.as_bytes()));
        let stars = "**/".to_string() + &"*a".repeat(25) + "*b";
        let name = "a".repeat(200);
        assert!(!glob(stars.as_bytes(), name.as_bytes()));
        assert!(glob(stars.as_bytes(), (name + "b").as_bytes()));
    }
}
