//! Validation: shape (JSON Schema, run while loading) and meaning (here).
//!
//! [`validate`] turns loaded documents into a [`Repo`] and runs every
//! cross-document check: unique names, resolvable references, windows,
//! resources that exist in their pool, MIG layouts that fit, priority-class
//! rules. Each check is a pure function that pushes diagnostics; all of them
//! run, so one run reports every problem.

mod blank_text;
pub mod checks;
pub mod cloud;
mod config_currency;
pub mod invariants;
pub mod names;
pub mod pools;
mod regions;
mod short_windows;
mod team_limits;
mod usage_rows;
pub mod usage_source;

use crate::diag::{self, Code, Diagnostic, SourceMap, Span};
use crate::load::{Loaded, TypedDoc};
use crate::model::Repo;
use std::collections::BTreeMap;

/// The result of loading and validating a repository.
#[derive(Debug)]
pub struct Outcome {
    pub sources: SourceMap,
    pub repo: Repo,
    pub diagnostics: Vec<Diagnostic>,
    pub documents: usize,
}

impl Outcome {
    /// No errors (warnings and notes are fine).
    pub fn is_valid(&self) -> bool {
        !self.diagnostics.iter().any(Diagnostic::is_error)
    }

    pub fn summary(&self) -> diag::Summary {
        diag::Summary::of(&self.diagnostics)
    }
}

/// Builds the repository from loaded documents and checks its meaning.
pub fn validate(loaded: Loaded) -> Outcome {
    let Loaded {
        sources,
        docs,
        usage,
        mut diagnostics,
        config_file,
        document_count,
        invalid,
        unread,
    } = loaded;
    let mut repo = Repo {
        usage: std::sync::Arc::new(usage),
        invalid,
        unread,
        ..Repo::default()
    };
    insert_documents(&mut repo, docs, &sources, config_file, &mut diagnostics);
    repo.compact();
    checks::run(&repo, &mut diagnostics);
    Outcome {
        sources,
        repo,
        diagnostics,
        documents: document_count,
    }
}

/// Files each document under its kind, reporting duplicates and a misplaced Config.
fn insert_documents(
    repo: &mut Repo,
    docs: Vec<TypedDoc>,
    sources: &SourceMap,
    config_file: Option<diag::FileId>,
    diags: &mut Vec<Diagnostic>,
) {
    for doc in docs {
        if let TypedDoc::Config(d) = &doc
            && Some(d.origin.file) != config_file
        {
            diags.push(
                Diagnostic::new(
                    Code::ConfigMisplaced,
                    format!(
                        "the Config document is in {}; it belongs in capops.yaml at the repository root",
                        sources.path(d.origin.file)
                    ),
                )
                .at(d.origin.kind_span, "Config outside capops.yaml")
                .help("move this document into capops.yaml"),
            );
            continue;
        }
        let Err(second) = doc.insert_into(repo) else {
            continue;
        };
        let kind = second.kind();
        if let TypedDoc::Config(d) = &second {
            let first = repo.config.as_ref().map(|c| c.origin.kind_span);
            let mut diag = Diagnostic::new(
                Code::ConfigMisplaced,
                "a repository has one Config; this is a second one",
            )
            .at(d.origin.kind_span, "second Config")
            .help("merge the two Config documents into one");
            if let Some(first) = first {
                diag = diag.related(first, "first Config");
            }
            diags.push(diag);
            continue;
        }
        if let Some(first) = repo.find(kind, second.name()) {
            diags.push(duplicate(
                kind.as_str(),
                second.name(),
                second.metadata().name.span,
                first.metadata().name.span,
                sources,
            ));
        }
    }
    // capops.yaml must hold the Config (unless it could not be read at all).
    if repo.config.is_none()
        && let Some(file) = config_file
    {
        let unreadable = diags
            .iter()
            .any(|d| d.span().is_some_and(|s| s.file == file) && d.is_error());
        if !unreadable {
            diags.push(
                    Diagnostic::new(Code::ConfigMisplaced, "capops.yaml holds no Config document")
                        .at(Span::file_start(file), "no Config here")
                        .help("start capops.yaml with `apiVersion: capops.dev/v1alpha1`, `kind: Config`, `metadata: {name: <org>}` and a `spec`"),
                );
        }
    }
}

fn duplicate(kind: &str, name: &str, second: Span, first: Span, sources: &SourceMap) -> Diagnostic {
    Diagnostic::new(
        Code::DuplicateName,
        format!(
            "{kind} `{name}` is defined twice (first in {})",
            sources.describe(first)
        ),
    )
    .at(second, "second definition")
    .related(first, "first definition")
    .help(format!(
        "rename one of the two, or delete the copy; {kind} names are unique across the repository"
    ))
}

/// Applies the Config's severity overrides, and reports overrides that name
/// no code. Runs last, over the diagnostics of every stage.
pub fn apply_overrides(repo: &Repo, diags: &mut Vec<Diagnostic>) {
    let Some(config) = &repo.config else { return };
    let mut overrides = BTreeMap::new();
    for (name, sev) in &config.spec.severities {
        match Code::parse(&name.value) {
            Some(code) if code.lowerable() || sev.severity() >= code.default_severity() => {
                overrides.insert(code, sev.severity());
            }
            Some(code) => diags.push(
                Diagnostic::new(
                    Code::OverrideRefused,
                    format!(
                        "`{code}` cannot be lowered: {why}",
                        code = code.as_str(),
                        why = if !code.overridable() {
                            "it stops capops from reading the repository"
                        } else if code.invariant() {
                            "it is a state check and render refuse, whatever the Config says (quotas and pools kept, capacity counted by the hour, one team a namespace)"
                        } else {
                            "it names something that does not exist, which nothing can judge or render"
                        }
                    ),
                )
                .at(name.span, "not lowered")
                .help("fix the problem instead; only findings about meaning can be silenced"),
            ),
            None => diags.push(
                Diagnostic::new(
                    Code::UnknownCode,
                    format!("`{}` is not a capops diagnostic code", name.value),
                )
                .at(name.span, "unknown code")
                .help(diag::suggest(
                    &name.value,
                    Code::ALL.iter().map(|c| c.as_str()),
                    "codes",
                )),
            ),
        }
    }
    for d in diags.iter_mut() {
        if let Some(sev) = overrides.get(&d.code) {
            d.severity = *sev;
        }
    }
}
