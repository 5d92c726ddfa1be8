//! Output: diagnostics and results as human text, JSON, SARIF and GitHub
//! workflow annotations.
//!
//! Only this layer (and `cli`) writes to stdout and stderr. Data goes to
//! stdout; diagnostics for people go to stderr. Paths are shown relative to
//! where the command was run, so annotations and SARIF land on the right file.

pub mod chart;
pub mod check;
pub mod escape;
pub mod explain;
pub mod forecast;
pub mod github;
pub mod human;
pub mod json;
pub mod markdown;
pub mod redact;
pub mod report;
pub mod sarif;
pub mod table;
pub mod totals;

use crate::diag::{FileId, SourceKind, SourceMap, Span};

/// How paths in the repository are shown: prefixed with the repository root as given.
#[derive(Debug, Clone, Default)]
pub struct Paths {
    prefix: String,
}

impl Paths {
    /// `root` as the user gave it (`.`, `examples/acme`, `/abs/repo`).
    pub fn new(root: &std::path::Path) -> Self {
        let s = root.to_string_lossy().replace('\\', "/");
        let s = s.trim_end_matches('/');
        let prefix = match s {
            "" | "." => String::new(),
            _ => format!("{}/", s.strip_prefix("./").unwrap_or(s)),
        };
        Paths { prefix }
    }

    pub fn display(&self, path: &str) -> String {
        format!("{}{path}", self.prefix)
    }

    /// A loaded file's name as shown: working-tree files under the root as
    /// given, files of a git revision with `@rev`, built-in files as `capops:`.
    pub fn file(&self, sources: &SourceMap, id: FileId) -> String {
        let f = sources.get(id);
        match &f.kind {
            SourceKind::WorkTree => self.display(&f.path),
            SourceKind::Revision(rev) => format!("{}@{rev}", self.display(&f.path)),
            SourceKind::BuiltIn => format!("capops:{}", f.path),
        }
    }

    /// Whether a file is in the working tree (so annotations can point at it).
    pub fn in_worktree(sources: &SourceMap, id: FileId) -> bool {
        sources.get(id).kind == SourceKind::WorkTree
    }

    pub fn describe(&self, sources: &SourceMap, span: Span) -> String {
        format!(
            "{}:{}",
            self.file(sources, span.file),
            sources.line_col(span)
        )
    }
}

/// Output format chosen on the command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// Text for people, with source snippets (`text` is the same).
    #[value(alias = "text")]
    Human,
    /// Stable JSON, documented in docs/output.md.
    Json,
    /// SARIF 2.1.0, for code-scanning tools.
    Sarif,
    /// A Markdown pull-request comment (`check`) or document (`report`).
    Markdown,
    /// One self-contained HTML file with its charts (`report` only).
    Html,
}

impl Format {
    /// The name as written after `--format`.
    pub fn name(self) -> &'static str {
        match self {
            Format::Human => "human",
            Format::Json => "json",
            Format::Sarif => "sarif",
            Format::Markdown => "markdown",
            Format::Html => "html",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    #[test]
    fn paths_are_prefixed_with_the_root_as_given() {
        assert_eq!(Paths::new(Path::new(".")).display("a.yaml"), "a.yaml");
        assert_eq!(Paths::new(Path::new("./x/")).display("a.yaml"), "x/a.yaml");
        assert_eq!(
            Paths::new(Path::new("examples/acme")).display("t/a.yaml"),
            "examples/acme/t/a.yaml"
        );
    }
}
