//! Output: diagnostics and results as human text, JSON, SARIF and GitHub
//! workflow annotations.
//!
//! Only this layer (and `cli`) writes to stdout and stderr. Data goes to
//! stdout; diagnostics for people go to stderr. Paths are shown relative to
//! where the command was run, so annotations and SARIF land on the right file.

pub mod chart;
pub mod check;
pub mod costs;
pub mod explain;
pub mod github;
pub mod human;
pub mod json;
pub mod markdown;
pub mod sarif;
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

/// An amount for people: `1,610,700 USD`, or `0.45 USD` below 100.
pub fn money(amount: f64, currency: &str) -> String {
    money_decimal(
        rust_decimal::Decimal::from_f64_retain(amount).unwrap_or_default(),
        currency,
    )
}

/// [`money`] for a decimal amount: rounded half away from zero, to whole
/// units from 100 up and to cents below.
pub fn money_decimal(amount: rust_decimal::Decimal, currency: &str) -> String {
    use rust_decimal::RoundingStrategy::MidpointAwayFromZero;
    let places = if amount.is_zero() || amount.abs() >= rust_decimal::Decimal::ONE_HUNDRED {
        0
    } else {
        2
    };
    let mut rounded = amount.round_dp_with_strategy(places, MidpointAwayFromZero);
    rounded.rescale(places);
    let rounded = rounded.to_string();
    let (int, frac) = rounded.split_once('.').unwrap_or((&rounded, ""));
    let (sign, digits) = int.strip_prefix('-').map_or(("", int), |d| ("-", d));
    let mut grouped = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            grouped.push(',');
        }
        grouped.push(c);
    }
    let frac = if frac.is_empty() {
        String::new()
    } else {
        format!(".{frac}")
    };
    let sign = if grouped.chars().all(|c| c == '0' || c == ',')
        && frac.chars().all(|c| c == '0' || c == '.')
    {
        ""
    } else {
        sign
    };
    format!("{sign}{grouped}{frac} {currency}")
        .trim_end()
        .to_string()
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    #[test]
    fn money_is_grouped_and_rounded() {
        assert_eq!(money(1_610_700.0, "USD"), "1,610,700 USD");
        assert_eq!(money(1_928_601.6, "USD"), "1,928,602 USD");
        assert_eq!(money(0.454, "USD"), "0.45 USD");
        assert_eq!(money(-12_345.0, "EUR"), "-12,345 EUR");
        assert_eq!(money(999.0, "USD"), "999 USD");
        assert_eq!(money(99.995, "USD"), "100.00 USD");
        assert_eq!(money(-0.001, "USD"), "0.00 USD");
        assert_eq!(money(0.0, "USD"), "0 USD");
        assert_eq!(money(1234.5, ""), "1,235");
        assert_eq!(
            money_decimal(rust_decimal::Decimal::new(96_658_107, 2), "USD"),
            "966,581 USD"
        );
    }

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
