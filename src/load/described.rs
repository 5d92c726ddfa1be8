//! How many problems of one file are described: past a budget they are
//! counted, and one `problems-not-shown` error says how many (a file of
//! millions of wrong values would otherwise hold a diagnostic, about a
//! kilobyte, for each).

use crate::diag::{Code, Diagnostic, Span};

/// The most schema problems described for one file. A file of millions of
/// wrong values would otherwise hold a diagnostic (about a kilobyte) for
/// each; past this the problems are counted, and one `problems-not-shown`
/// error says how many.
pub const DESCRIBED_PER_FILE: usize = 1_000;

/// What is left of a file's [`DESCRIBED_PER_FILE`], and what was counted
/// past it.
pub struct Budget {
    pub(super) left: usize,
    pub(super) hidden: usize,
    pub(super) first_hidden: Option<Span>,
}

impl Budget {
    pub fn new() -> Budget {
        Budget {
            left: DESCRIBED_PER_FILE,
            hidden: 0,
            first_hidden: None,
        }
    }

    /// The error that counts what was not described, if anything was not.
    pub fn finish(self) -> Option<Diagnostic> {
        let span = self.first_hidden?;
        Some(
            Diagnostic::new(
                Code::ProblemsNotShown,
                format!(
                    "this file has {} more problems with its documents' shape than the {DESCRIBED_PER_FILE} described",
                    self.hidden
                ),
            )
            .at(span, "the first document with a problem not shown")
            .help("fix the problems shown and run again; the next ones are then described"),
        )
    }
}

impl Default for Budget {
    fn default() -> Self {
        Budget::new()
    }
}
