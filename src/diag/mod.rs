//! Diagnostics: findings with a stable code, a severity, a place and help.
//!
//! Every stage reports problems as [`Diagnostic`] values pushed to a list; it
//! never prints and never stops at the first problem. The report layer turns
//! the list into human text (miette), JSON, SARIF or GitHub annotations.
//! Codes are listed once, in [`codes`], and documented in `docs/codes.md`.

pub mod codes;
pub mod lookalike;
pub mod source;

pub use codes::Code;
pub use source::{
    FileId, LineCol, Reread, Row, Rows, SourceFile, SourceKind, SourceMap, Span, Text,
};

use serde::Serialize;
use std::fmt;

/// How serious a finding is. `Allow` hides it (set through the Config's severity overrides).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Allow,
    Note,
    Warning,
    Error,
}

impl Severity {
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Allow => "allow",
            Severity::Note => "note",
            Severity::Warning => "warning",
            Severity::Error => "error",
        }
    }

    pub fn parse(s: &str) -> Option<Severity> {
        Some(match s {
            "allow" => Severity::Allow,
            "note" => Severity::Note,
            "warning" => Severity::Warning,
            "error" => Severity::Error,
            _ => return None,
        })
    }
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A span with a short text shown under it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Label {
    pub span: Span,
    pub text: String,
}

/// One finding.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diagnostic {
    pub code: Code,
    pub severity: Severity,
    pub message: String,
    /// Where the problem is. `None` only for problems with no file (a missing repository root).
    pub primary: Option<Label>,
    /// Other places that explain the problem (the first definition of a duplicate name).
    pub related: Vec<Label>,
    /// What to do about it.
    pub help: Option<String>,
}

impl Diagnostic {
    /// A diagnostic with the code's default severity.
    pub fn new(code: Code, message: impl Into<String>) -> Self {
        Diagnostic {
            code,
            severity: code.default_severity(),
            message: message.into(),
            primary: None,
            related: Vec::new(),
            help: None,
        }
    }

    pub fn at(mut self, span: Span, label: impl Into<String>) -> Self {
        self.primary = Some(Label {
            span,
            text: label.into(),
        });
        self
    }

    pub fn related(mut self, span: Span, label: impl Into<String>) -> Self {
        self.related.push(Label {
            span,
            text: label.into(),
        });
        self
    }

    pub fn help(mut self, help: impl Into<String>) -> Self {
        self.help = Some(help.into());
        self
    }

    pub fn severity(mut self, severity: Severity) -> Self {
        self.severity = severity;
        self
    }

    pub fn span(&self) -> Option<Span> {
        self.primary.as_ref().map(|l| l.span)
    }

    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }
}

/// Counts of findings by severity.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Summary {
    pub errors: usize,
    pub warnings: usize,
    pub notes: usize,
}

impl Summary {
    pub fn of(diags: &[Diagnostic]) -> Summary {
        let mut s = Summary::default();
        for d in diags {
            match d.severity {
                Severity::Error => s.errors += 1,
                Severity::Warning => s.warnings += 1,
                Severity::Note => s.notes += 1,
                Severity::Allow => {}
            }
        }
        s
    }
}

/// A value as a message quotes it: at most 60 characters, then how long
/// it was (a 15-megabyte value is not echoed whole).
pub fn clip(value: &str) -> std::borrow::Cow<'_, str> {
    const SHOWN: usize = 60;
    match value.char_indices().nth(SHOWN) {
        None => std::borrow::Cow::Borrowed(value),
        Some((at, _)) => std::borrow::Cow::Owned(format!(
            "{}… ({} characters)",
            &value[..at],
            value.chars().count()
        )),
    }
}

/// Sorts diagnostics by file, position and code, and drops exact repeats, so
/// that output is stable whatever order the stages (and threads) found them in.
pub fn normalize(diags: &mut Vec<Diagnostic>) {
    diags.sort_by(|a, b| {
        let ka = (a.span().is_none(), a.span(), a.code.as_str(), &a.message);
        let kb = (b.span().is_none(), b.span(), b.code.as_str(), &b.message);
        ka.cmp(&kb)
    });
    diags.dedup();
    diags.retain(|d| d.severity != Severity::Allow);
}

/// "did you mean" support: the closest candidate within a small edit distance.
pub fn closest<'a, I>(word: &str, candidates: I) -> Option<&'a str>
where
    I: IntoIterator<Item = &'a str>,
{
    let len = word.chars().count();
    let limit = (len / 3).max(2);
    candidates
        .into_iter()
        // The distance is at least the difference of the lengths: a long
        // value is never compared character by character with short names.
        .filter(|c| c.chars().count().abs_diff(len) <= limit)
        .map(|c| (edit_distance(word, c), c))
        .filter(|(d, _)| *d <= limit)
        .min_by_key(|(d, c)| (*d, *c))
        .map(|(_, c)| c)
}

/// Levenshtein distance over characters.
pub fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    let mut cur = vec![0; b.len() + 1];
    for (i, ca) in a.chars().enumerate() {
        cur[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let cost = usize::from(ca != *cb);
            cur[j + 1] = (prev[j] + cost).min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        std::mem::swap(&mut prev, &mut cur);
    }
    prev[b.len()]
}

/// "did you mean `x`?" or a list of what is allowed, for help texts.
pub fn suggest<'a, I>(word: &str, candidates: I, what: &str) -> String
where
    I: IntoIterator<Item = &'a str> + Clone,
{
    // A word that names the start of some names up to a separator (`v100`
    // of `v100-16gb` and `v100-32gb`) means one of them, whatever else is an
    // edit away (`a10g` from `a100`); otherwise one edit away is a typo.
    let lower = word.trim().to_ascii_lowercase();
    let starting = |boundary: bool| -> Vec<&str> {
        let mut out: Vec<&str> = candidates
            .clone()
            .into_iter()
            .filter(|c| {
                let c = c.to_ascii_lowercase();
                c.len() > lower.len()
                    && c.starts_with(&lower)
                    && (!boundary || matches!(c.as_bytes()[lower.len()], b'-' | b'.' | b'/'))
            })
            .collect();
        out.sort_unstable();
        out.dedup();
        out
    };
    let listed = |some: &[&str]| -> Option<String> {
        match some {
            [] => None,
            [one] => Some(format!("did you mean `{one}`?")),
            some if some.len() <= 4 => {
                let shown: Vec<String> = some.iter().map(|c| format!("`{c}`")).collect();
                Some(format!("did you mean one of {}?", shown.join(", ")))
            }
            _ => None,
        }
    };
    if lower.len() >= 2 {
        if let Some(s) = listed(&starting(true)) {
            return s;
        }
        if let Some(c) = closest(word, candidates.clone())
            && edit_distance(word, c) <= 1
        {
            return format!("did you mean `{c}`?");
        }
        if let Some(s) = listed(&starting(false)) {
            return s;
        }
    }
    if let Some(c) = closest(word, candidates.clone()) {
        return format!("did you mean `{c}`?");
    }
    let mut all: Vec<&str> = candidates.into_iter().collect();
    all.sort_unstable();
    all.dedup();
    if all.is_empty() {
        return format!("there are no {what}");
    }
    let shown: Vec<String> = all.iter().take(16).map(|c| format!("`{c}`")).collect();
    let more = if all.len() > 16 {
        format!(" and {} more", all.len() - 16)
    } else {
        String::new()
    };
    format!("known {what}: {}{more}", shown.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn closest_finds_typos_and_ignores_strangers() {
        let names = ["inference", "training", "research"];
        assert_eq!(closest("inferense", names), Some("inference"));
        assert_eq!(closest("trainig", names), Some("training"));
        assert_eq!(closest("marketing", names), None);
        assert_eq!(edit_distance("kitten", "sitting"), 3);
    }

    #[test]
    fn suggest_lists_candidates_when_nothing_is_close() {
        let s = suggest("zzz", ["b", "a"], "teams");
        assert_eq!(s, "known teams: `a`, `b`");
        assert_eq!(suggest("x", [], "teams"), "there are no teams");
        // The start of some names is one of them, not a near stranger.
        let models = ["a10g", "v100-16gb", "v100-32gb", "a100-40gb"];
        assert_eq!(
            suggest("v100", models, "models"),
            "did you mean one of `v100-16gb`, `v100-32gb`?"
        );
        // One edit away wins over names it starts.
        assert_eq!(suggest("a10", models, "models"), "did you mean `a10g`?");
        assert_eq!(
            suggest("a100", models, "models"),
            "did you mean `a100-40gb`?"
        );
    }

    #[test]
    fn a_long_value_is_never_close_to_a_short_name() {
        // Within a third of its length of `research`, by length alone, but
        // never compared: the lengths differ by more than the limit.
        let long = "research".repeat(100_000);
        assert_eq!(closest(&long, ["research", "training"]), None);
        // Lengths within the limit are still compared.
        assert_eq!(closest("researchers", ["research"]), Some("research"));
    }
}
