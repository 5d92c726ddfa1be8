//! The pipeline's front half, in one place: load, validate, lint.
//!
//! Every command that reads a capacity repository goes through [`run`]: the
//! files are loaded into spanned, typed documents ([`crate::load`]), checked
//! for meaning into a [`Repo`] ([`crate::validate`]), then the approval
//! policies ([`crate::policy::lint`]) and the rules of what will be rendered
//! ([`crate::render::lint`]) are checked, the Config's severity overrides are
//! applied to everything found, and the diagnostics are put in a stable order.
//! What comes after (facts, decisions, rendering) starts from a [`Validated`].

use crate::diag::{self, Diagnostic, SourceMap};
use crate::load::{self, Input};
use crate::model::Repo;
use std::path::Path;

/// A repository that went through loading, validation and lint, with every
/// diagnostic found on the way.
#[derive(Debug)]
pub struct Validated {
    pub sources: SourceMap,
    pub repo: Repo,
    pub diagnostics: Vec<Diagnostic>,
    /// Documents seen, whatever their validity.
    pub documents: usize,
}

impl Validated {
    /// No errors (warnings and notes are fine).
    pub fn is_valid(&self) -> bool {
        !self.diagnostics.iter().any(Diagnostic::is_error)
    }

    pub fn summary(&self) -> diag::Summary {
        diag::Summary::of(&self.diagnostics)
    }
}

/// Runs the front half of the pipeline over a set of inputs.
pub fn run(inputs: Vec<Input>) -> Validated {
    run_cached(inputs, None)
}

/// [`run`], taking the YAML trees of files read before from a parse cache
/// (the result is the same: [`load::cache`]).
pub fn run_cached(inputs: Vec<Input>, cache: Option<&load::cache::Cache>) -> Validated {
    let outcome = crate::validate::validate(load::load(inputs, cache));
    let mut diagnostics = outcome.diagnostics;
    crate::policy::lint::lint(&outcome.repo, &mut diagnostics);
    crate::render::lint::lint(&outcome.repo, &mut diagnostics);
    crate::validate::apply_overrides(&outcome.repo, &mut diagnostics);
    diag::normalize(&mut diagnostics);
    Validated {
        sources: outcome.sources,
        repo: outcome.repo,
        diagnostics,
        documents: outcome.documents,
    }
}

/// Reads the capacity repository rooted at `root` (the folder holding
/// `capops.yaml`) and runs the front half of the pipeline over it.
pub fn validate_dir(root: &Path) -> Result<Validated, load::files::RootError> {
    validate_dir_cached(root, None)
}

/// [`validate_dir`] with a parse cache.
pub fn validate_dir_cached(
    root: &Path,
    cache: Option<&load::cache::Cache>,
) -> Result<Validated, load::files::RootError> {
    Ok(run_cached(load::files::collect(root)?, cache))
}
