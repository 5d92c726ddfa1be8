//! Reading the template overrides (`templates/**/*.j2`) of a capacity
//! repository, from the working tree or from a git revision. Links are not
//! followed and files over the size limit are not read, in both; what is read
//! is text, checked and compiled by the render stage.

// An edge: it reads files and git (see clippy.toml).
#![allow(clippy::disallowed_methods, clippy::disallowed_types)]

use super::git::{self, GitError};
use std::path::Path;

/// The folder of a capacity repository that holds template overrides.
pub const TEMPLATES_DIR: &str = "templates";
/// The largest template read.
pub const MAX_TEMPLATE_BYTES: usize = 256 * 1024;

/// One template file: its path under `templates/`, and its text or why it could not be read.
#[derive(Debug, Clone, PartialEq)]
pub struct TemplateFile {
    pub name: String,
    pub text: Result<String, String>,
}

fn text_of(bytes: Vec<u8>) -> Result<String, String> {
    if bytes.len() > MAX_TEMPLATE_BYTES {
        return Err(format!(
            "is {} bytes; templates are limited to {MAX_TEMPLATE_BYTES}",
            bytes.len()
        ));
    }
    String::from_utf8(bytes).map_err(|_| "is not UTF-8".to_string())
}

/// Why a template's name is refused: a `\\` reads as a folder separator
/// on some systems and not on others, so the override it names would
/// depend on which reads it.
fn name_problem(name: &str) -> Option<String> {
    name.contains('\\').then(|| {
        "has a `\\` in its name, which some systems read as a folder separator; name it with `/` between folders".to_string()
    })
}

/// The template overrides of the working tree, sorted by name.
pub fn read_worktree(root: &Path) -> Vec<TemplateFile> {
    let dir = root.join(TEMPLATES_DIR);
    let mut out = Vec::new();
    // A submodule (or nested repository) is not entered, here or in git's
    // history: what a checkout that fetches submodules holds there is not
    // the repository's (the document reader warns `submodule-not-read`).
    let submodule = |d: &Path| d.join(".git").symlink_metadata().is_ok();
    if !dir.is_dir() || submodule(&dir) {
        return out;
    }
    for entry in walkdir::WalkDir::new(&dir)
        .follow_links(false)
        .sort_by_file_name()
        .into_iter()
        .filter_entry(|e| e.depth() == 0 || !(e.file_type().is_dir() && submodule(e.path())))
        .flatten()
    {
        let name = entry
            .path()
            .strip_prefix(&dir)
            .map(|p| {
                p.components()
                    .map(|c| c.as_os_str().to_string_lossy())
                    .collect::<Vec<_>>()
                    .join("/")
            })
            .unwrap_or_default();
        if !name.ends_with(".j2") {
            continue;
        }
        if let Some(problem) = name_problem(&name) {
            out.push(TemplateFile {
                name,
                text: Err(problem),
            });
            continue;
        }
        if entry.path_is_symlink() {
            out.push(TemplateFile {
                name,
                text: Err(
                    "is a symbolic link; templates are read only from the repository's own files"
                        .into(),
                ),
            });
            continue;
        }
        if !entry.file_type().is_file() {
            continue;
        }
        let text = match std::fs::metadata(entry.path()) {
            Ok(m) if m.len() as usize > MAX_TEMPLATE_BYTES => Err(format!(
                "is {} bytes; templates are limited to {MAX_TEMPLATE_BYTES}",
                m.len()
            )),
            Ok(_) => std::fs::read(entry.path())
                .map_err(|e| format!("cannot be read: {e}"))
                .and_then(text_of),
            Err(e) => Err(format!("cannot be read: {e}")),
        };
        out.push(TemplateFile { name, text });
    }
    out
}

/// The template overrides of the capacity repository at a git revision.
pub fn read_revision(root: &Path, rev: &str) -> Result<Vec<TemplateFile>, GitError> {
    Ok(git::folder_at(root, rev, TEMPLATES_DIR)?
        .into_iter()
        .filter(|(name, _)| name.ends_with(".j2"))
        .map(|(name, bytes)| TemplateFile {
            text: match name_problem(&name) {
                Some(p) => Err(p),
                None => text_of(bytes),
            },
            name,
        })
        .collect())
}

#[cfg(test)]
mod tests {
    #[test]
    fn submodules_are_not_entered_and_a_backslash_name_is_refused() {
        let d = tempfile::tempdir().unwrap();
        let t = d.path().join(super::TEMPLATES_DIR);
        std::fs::create_dir_all(t.join("kubernetes")).unwrap();
        std::fs::create_dir_all(t.join("vendored")).unwrap();
        std::fs::write(t.join("kubernetes/priorityclass.yaml.j2"), "x").unwrap();
        // A submodule checked out: its `.git` is a file naming the module.
        std::fs::write(t.join("vendored/.git"), "gitdir: ../../.git/modules/v").unwrap();
        std::fs::write(t.join("vendored/resourcequota.yaml.j2"), "y").unwrap();
        std::fs::write(t.join("kubernetes\\resourcequota.yaml.j2"), "z").unwrap();
        let read = super::read_worktree(d.path());
        let names: Vec<&str> = read.iter().map(|f| f.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "kubernetes/priorityclass.yaml.j2",
                "kubernetes\\resourcequota.yaml.j2"
            ]
        );
        assert_eq!(read[0].text.as_deref(), Ok("x"));
        assert!(
            read[1]
                .text
                .as_ref()
                .unwrap_err()
                .contains("has a `\\` in its name")
        );
        // A templates folder that is itself a submodule holds no override.
        std::fs::write(t.join(".git"), "gitdir: ../.git/modules/t").unwrap();
        assert!(super::read_worktree(d.path()).is_empty());
    }
}
