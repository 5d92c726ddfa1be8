//! Whether a change rewrites committed usage history.
//!
//! `capops usage pull` only appends; a row of the base revision that the
//! change alters or removes is a history rewrite (`--rewrite-from`, or an
//! edit by hand). Under `check --base`, each usage file whose committed rows
//! changed gets one `usage-history-rewritten` warning, at the first changed
//! row, so reviewers see that the numbers the gate judges with were replaced.
//! Rows are compared by meaning (series, hour, numbers), not bytes, and
//! wherever they now are: a file renamed or split rewrites nothing.

use super::history::records;
use crate::diag::{Code, Diagnostic, SourceKind, SourceMap, Span};
use crate::model::{Repo, Timestamp};
use std::borrow::Cow;
use std::collections::HashMap;

type Key<'a> = (&'a str, &'a str, &'a str, i64);
/// A row's allocated and used GPUs, and where it is (offset, file).
type Found = (Option<f64>, Option<f64>, usize, crate::diag::FileId);

/// The rows of a usage file's text by series and hour.
fn rows_of(id: crate::diag::FileId, text: &str) -> Vec<(Key<'_>, Found)> {
    records(text)
        .1
        .iter()
        .filter_map(|r| {
            Some((
                (r.cluster, r.pool, r.team, r.hour?),
                (r.allocated, r.used, r.bytes.0, id),
            ))
        })
        .collect()
}

/// One diagnostic per usage file whose base rows the working tree changes.
/// `sources` holds the working tree and the base files read from git.
pub fn check(repo: &Repo, sources: &SourceMap) -> Vec<Diagnostic> {
    let is_usage = |p: &str| p.starts_with("usage/") && p.ends_with(".csv");
    // Usage files of the working tree that read cleanly keep a few rows:
    // their whole text is read again here.
    let head: HashMap<&str, (crate::diag::FileId, Cow<'_, str>)> = sources
        .files()
        .filter(|(_, f)| f.kind == SourceKind::WorkTree && is_usage(&f.path))
        .map(|(id, f)| (f.path.as_str(), (id, f.read_text().unwrap_or_default())))
        .collect();
    // Every row of the working tree, whichever file holds it, read only
    // when a file's own rows miss some: rows moved to another file (a file
    // renamed or split) are not rewritten.
    let everywhere: std::cell::OnceCell<HashMap<Key<'_>, Found>> = std::cell::OnceCell::new();
    let mut out = Vec::new();
    for (base_id, base) in sources.files() {
        if !matches!(base.kind, SourceKind::Revision(_)) || !is_usage(&base.path) {
            continue;
        }
        let rev = match &base.kind {
            SourceKind::Revision(r) => r.as_str(),
            _ => "",
        };
        let base_text = base.read_text().unwrap_or_default();
        let (_, old) = records(&base_text);
        let now = head.get(base.path.as_str()).map(|(id, _)| *id);
        let current: HashMap<Key<'_>, Found> = match head.get(base.path.as_str()) {
            Some((id, text)) => rows_of(*id, text).into_iter().collect(),
            None => HashMap::new(),
        };
        let find = |k: &Key<'_>| {
            current.get(k).copied().or_else(|| {
                everywhere
                    .get_or_init(|| {
                        head.values()
                            .flat_map(|(id, text)| rows_of(*id, text))
                            .collect()
                    })
                    .get(k)
                    .copied()
            })
        };
        let (mut changed, mut removed) = (0usize, 0usize);
        let mut first: Option<(i64, Option<(crate::diag::FileId, usize)>)> = None;
        for r in &old {
            let Some(h) = r.hour else { continue };
            let at = match find(&(r.cluster, r.pool, r.team, h)) {
                Some((a, u, _, _)) if a == r.allocated && u == r.used => continue,
                Some((_, _, offset, file)) => {
                    changed += 1;
                    Some((file, offset))
                }
                None => {
                    removed += 1;
                    None
                }
            };
            if first.is_none_or(|(fh, _)| h < fh) {
                first = Some((h, at));
            }
        }
        let Some((hour, offset)) = first else {
            continue;
        };
        let from = Timestamp::from_second(hour * 3600)
            .map(|t| t.to_string())
            .unwrap_or_default();
        let span = match (now, offset) {
            (_, Some((id, o))) => Span::new(id, o, o),
            (Some(id), None) => Span::file_start(id),
            (None, None) => Span::file_start(base_id),
        };
        let what = match (changed, removed) {
            (c, 0) => format!("changes {c} committed row{}", plural(c)),
            (0, r) => format!("removes {r} committed row{}", plural(r)),
            (c, r) => format!("changes {c} and removes {r} committed rows"),
        };
        let mut d = Diagnostic::new(
            Code::UsageHistoryRewritten,
            format!("{} {what} of {rev}, from {from} on: a rewrite of usage history", base.path),
        )
        .at(span, "first rewritten row")
        .help("`capops usage pull` only appends; rewriting measured hours (`--rewrite-from`) changes the numbers utilization, forecasts and costs are judged with: check that it was meant");
        match super::severity(repo, Code::UsageHistoryRewritten) {
            Some(crate::diag::Severity::Allow) => continue,
            Some(s) => d.severity = s,
            None => {}
        }
        out.push(d);
    }
    out
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}
