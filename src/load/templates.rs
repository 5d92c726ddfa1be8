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

/// The template overrides of the working tree, sorted by name.
pub fn read_worktree(root: &Path) -> Vec<TemplateFile> {
    let dir = root.join(TEMPLATES_DIR);
    let mut out = Vec::new();
    if !dir.is_dir() {
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
        if !name.ends_with(".j2") {
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
            name,
            text: text_of(bytes),
        })
        .collect())
}
