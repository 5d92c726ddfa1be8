//! Text a document must give that says nothing: a Team's `costCenter` and
//! a price's `source` made only of white space or invisible characters
//! (a zero-width space reads as written to the schema, and as nothing to
//! the approver who must check it).

use crate::diag::{Code, Diagnostic};
use crate::model::types::has_visible_text;
use crate::model::{Repo, Spanned};

/// Reports required text that holds nothing a reader can see.
pub(super) fn check(repo: &Repo, diags: &mut Vec<Diagnostic>) {
    for t in repo.teams.values() {
        blank(
            &t.spec.cost_center,
            "costCenter",
            "the cost center its spend is charged to",
            diags,
        );
    }
    for c in repo.catalogs.values() {
        for p in &c.spec.prices {
            blank(
                &p.source,
                "source",
                "where the price was read (a URL, a contract)",
                diags,
            );
        }
    }
}

fn blank(text: &Spanned<String>, field: &str, what: &str, diags: &mut Vec<Diagnostic>) {
    if !has_visible_text(&text.value) {
        diags.push(
            Diagnostic::new(
                Code::MissingField,
                format!("`{field}` is blank: it holds only white space or invisible characters"),
            )
            .at(text.span, "nothing a reader can see")
            .help(format!("write {what}")),
        );
    }
}
