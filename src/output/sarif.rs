//! SARIF 2.1.0 output, for GitHub code scanning and other SARIF viewers.

use super::Paths;
use crate::diag::{Code, Diagnostic, Label, Severity, SourceMap};
use serde_json::{Value, json};

/// Where each code is documented.
pub const CODES_URL: &str = "https://github.com/capops/capops/blob/main/docs/codes.md";

fn level(s: Severity) -> &'static str {
    match s {
        Severity::Error => "error",
        Severity::Warning => "warning",
        Severity::Note | Severity::Allow => "note",
    }
}

fn physical(l: &Label, sources: &SourceMap, paths: &Paths) -> Value {
    let start = sources.line_col(l.span);
    let end = sources.end_line_col(l.span);
    json!({
        "physicalLocation": {
            "artifactLocation": {"uri": uri(&paths.file(sources, l.span.file)), "uriBaseId": "%SRCROOT%"},
            "region": {
                "startLine": start.line,
                "startColumn": start.column,
                "endLine": end.line,
                "endColumn": end.column.max(start.column + usize::from(end.line == start.line)),
            }
        },
        "message": {"text": l.text},
    })
}

/// A repository path as a relative URI reference (RFC 3986): every byte
/// but the unreserved ones and `/` percent-encoded, so a file named
/// `a b#c?.yaml` is not read as a fragment or a query.
pub fn uri(path: &str) -> String {
    let mut out = String::with_capacity(path.len());
    for b in path.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~/".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// The most results one run carries: GitHub code scanning stores and shows
/// the first 5,000 of a run by severity, and rejects a run of more than
/// 25,000 outright. The rest are counted in a notification.
pub const MAX_RESULTS: usize = 5_000;

/// The most related locations a result carries (GitHub keeps 100).
const MAX_RELATED: usize = 100;

fn rank(s: Severity) -> u8 {
    match s {
        Severity::Error => 0,
        Severity::Warning => 1,
        Severity::Note | Severity::Allow => 2,
    }
}

/// A SARIF log with one run holding the diagnostics: all of them up to
/// [`MAX_RESULTS`], else that many, errors first.
pub fn log(diags: &[Diagnostic], sources: &SourceMap, paths: &Paths) -> Value {
    let mut kept: Vec<&Diagnostic> = diags.iter().collect();
    let omitted = kept.len().saturating_sub(MAX_RESULTS);
    if omitted > 0 {
        // Stable: within a severity, in the order capops reports them.
        kept.sort_by_key(|d| rank(d.severity));
        kept.truncate(MAX_RESULTS);
    }
    let rules: Vec<Value> = Code::ALL
        .iter()
        .map(|c| {
            json!({
                "id": c.as_str(),
                "shortDescription": {"text": c.title()},
                "helpUri": format!("{CODES_URL}#{}", c.as_str()),
                "defaultConfiguration": {"level": level(c.default_severity())},
            })
        })
        .collect();
    let results: Vec<Value> = kept
        .into_iter()
        .map(|d| {
            let index = Code::ALL.iter().position(|c| *c == d.code).unwrap_or(0);
            let text = match &d.help {
                Some(h) => format!("{}\nhelp: {h}", d.message),
                None => d.message.clone(),
            };
            let mut result = json!({
                "ruleId": d.code.as_str(),
                "ruleIndex": index,
                "level": level(d.severity),
                "message": {"text": text},
            });
            if let Some(p) = &d.primary {
                result["locations"] = json!([physical(p, sources, paths)]);
            }
            if !d.related.is_empty() {
                result["relatedLocations"] = Value::Array(
                    d.related
                        .iter()
                        .take(MAX_RELATED)
                        .enumerate()
                        .map(|(i, l)| {
                            let mut v = physical(l, sources, paths);
                            v["id"] = json!(i);
                            v
                        })
                        .collect(),
                );
            }
            result
        })
        .collect();
    let mut run = json!({
        "tool": {"driver": {
            "name": "capops",
            "version": env!("CARGO_PKG_VERSION"),
            "informationUri": "https://github.com/capops/capops",
            "rules": rules,
        }},
        "columnKind": "unicodeCodePoints",
        "results": results,
    });
    if omitted > 0 {
        run["invocations"] = json!([{
            "executionSuccessful": true,
            "toolExecutionNotifications": [{
                "level": "warning",
                "message": {"text": format!(
                    "{omitted} more diagnostics left out: a run carries at most {MAX_RESULTS} (GitHub code scanning shows no more), errors first; the JSON output (--format json) has them all"
                )},
            }],
        }]);
    }
    json!({
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [run]
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_carries_at_most_five_thousand_results_errors_first() {
        let mut diags: Vec<Diagnostic> = (0..6_000)
            .map(|i| Diagnostic::new(Code::DocumentEmpty, format!("warning {i}")))
            .collect();
        diags.extend((0..10).map(|i| Diagnostic::new(Code::WindowInverted, format!("error {i}"))));
        let v = log(
            &diags,
            &SourceMap::new(),
            &Paths::new(std::path::Path::new(".")),
        );
        let run = &v["runs"][0];
        let results = run["results"].as_array().unwrap();
        assert_eq!(results.len(), MAX_RESULTS);
        assert_eq!(results[0]["message"]["text"], "error 0");
        assert_eq!(results[9]["level"], "error");
        assert_eq!(results[10]["message"]["text"], "warning 0");
        let note = run["invocations"][0]["toolExecutionNotifications"][0]["message"]["text"]
            .as_str()
            .unwrap();
        assert!(note.starts_with("1010 more diagnostics left out"), "{note}");
        // Under the limit: all, in order, and no notification.
        let v = log(
            &diags[..3],
            &SourceMap::new(),
            &Paths::new(std::path::Path::new(".")),
        );
        assert_eq!(v["runs"][0]["results"].as_array().unwrap().len(), 3);
        assert!(v["runs"][0].get("invocations").is_none());
    }
}

#[cfg(test)]
mod uri_tests {
    #[test]
    fn paths_are_percent_encoded_as_uri_references() {
        assert_eq!(
            super::uri("teams/a b#c%%20?.yaml"),
            "teams/a%20b%23c%25%2520%3F.yaml"
        );
        assert_eq!(super::uri("clusters/é.yaml"), "clusters/%C3%A9.yaml");
        assert_eq!(super::uri("requests/ok-1_2.yaml"), "requests/ok-1_2.yaml");
    }
}
