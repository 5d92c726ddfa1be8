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
            "artifactLocation": {"uri": paths.file(sources, l.span.file), "uriBaseId": "%SRCROOT%"},
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

/// A SARIF log with one run holding every diagnostic.
pub fn log(diags: &[Diagnostic], sources: &SourceMap, paths: &Paths) -> Value {
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
    let results: Vec<Value> = diags
        .iter()
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
    json!({
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {
                "name": "capops",
                "version": env!("CARGO_PKG_VERSION"),
                "informationUri": "https://github.com/capops/capops",
                "rules": rules,
            }},
            "columnKind": "unicodeCodePoints",
            "results": results,
        }]
    })
}
