//! How many problems of one file are described: past a budget they are
//! counted, and one `problems-not-shown` error says how many (a file of
//! millions of wrong values would otherwise hold a diagnostic, about a
//! kilobyte, for each). Problems of a code the Config may lower are counted
//! under their own code instead, so that the count is as severe as what it
//! stands for: a thousand and one warnings do not make an error.

use crate::diag::{Code, Diagnostic, Span};
use std::collections::BTreeMap;

/// The most problems described for one file (its documents' shape, or a
/// usage file's rows). A file of millions of wrong values would otherwise
/// hold a diagnostic (about a kilobyte) for each; past this the problems
/// are counted, and one diagnostic says how many.
pub const DESCRIBED_PER_FILE: usize = 1_000;

/// What is left of a file's [`DESCRIBED_PER_FILE`], and what was counted
/// past it.
pub struct Budget {
    pub(super) left: usize,
    /// Problems no Config can lower, not described.
    pub(super) hidden: usize,
    pub(super) first_hidden: Option<Span>,
    /// Problems of codes a Config may lower, not described: how many of
    /// each code, and where the first is.
    counted: BTreeMap<Code, (usize, Option<Span>)>,
    /// What the file's problems are about ("its documents' shape", "its rows").
    about: &'static str,
}

impl Budget {
    /// A budget for a YAML file's shape problems.
    pub fn new() -> Budget {
        Budget::about("problems with its documents' shape")
    }

    /// A budget for problems described as `about` ("problems with its rows").
    pub fn about(about: &'static str) -> Budget {
        Budget {
            left: DESCRIBED_PER_FILE,
            hidden: 0,
            first_hidden: None,
            counted: BTreeMap::new(),
            about,
        }
    }

    /// Describes `d` in `out` while the budget lasts; counts it after.
    pub fn push(&mut self, d: Diagnostic, out: &mut Vec<Diagnostic>) {
        if self.left > 0 {
            self.left -= 1;
            out.push(d);
        } else if d.code.overridable() {
            let entry = self.counted.entry(d.code).or_insert((0, None));
            entry.0 += 1;
            entry.1 = entry.1.or(d.span());
        } else {
            self.hidden += 1;
            self.first_hidden = self.first_hidden.or(d.span());
        }
    }

    /// The diagnostics that count what was not described: one
    /// `problems-not-shown` error for problems no Config can lower, and one
    /// of each other code, at that code's severity (so the Config's
    /// severities apply to the count as to what it counts).
    pub fn finish(self) -> Vec<Diagnostic> {
        let help = "fix the problems shown and run again; the next ones are then described";
        let mut out = Vec::new();
        if let Some(span) = self.first_hidden {
            out.push(
                Diagnostic::new(
                    Code::ProblemsNotShown,
                    format!(
                        "this file has {} more {} than the {DESCRIBED_PER_FILE} described",
                        self.hidden, self.about
                    ),
                )
                .at(span, "the first problem not shown")
                .help(help),
            );
        }
        for (code, (n, span)) in self.counted {
            let d = Diagnostic::new(
                code,
                format!(
                    "this file has {n} more `{code}` problems than the {DESCRIBED_PER_FILE} described",
                    code = code.as_str()
                ),
            )
            .help(help);
            out.push(match span {
                Some(span) => d.at(span, "the first not shown"),
                None => d,
            });
        }
        out
    }
}

impl Default for Budget {
    fn default() -> Self {
        Budget::new()
    }
}
