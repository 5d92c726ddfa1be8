//! Decisions as GitHub workflow annotations and as SARIF results, so that
//! denied and waiting documents are marked on the lines that hold them.

use super::*;
use crate::diag::Diagnostic;

/// Workflow annotations on the documents that are denied or need approval.
pub fn annotations(result: &CheckResult, sources: &SourceMap, paths: &Paths) -> Vec<String> {
    let mut out = Vec::new();
    for e in &result.evaluated {
        let (level, text) = match e.decision.outcome {
            Outcome::Approved => continue,
            Outcome::Denied => (
                "error",
                format!(
                    "{} {} is denied: {}",
                    e.subject.as_str(),
                    e.name,
                    e.decision
                        .findings
                        .iter()
                        .filter(|f| f.effect == crate::model::Effect::Deny)
                        .map(|f| format!("{}: {}", f.rule, f.message))
                        .collect::<Vec<_>>()
                        .join("; ")
                ),
            ),
            Outcome::NeedsApproval => {
                let mut t = format!("{} {} needs approval", e.subject.as_str(), e.name);
                if let Some(tier) = &e.decision.tier {
                    t.push_str(&format!(" (tier {tier})"));
                }
                if !e.decision.approvals.is_empty() {
                    t.push_str(&format!(": {}", approvals_text(e)));
                }
                if !e.decision.missing_fields.is_empty() {
                    t.push_str(&format!(
                        "; missing {}",
                        e.decision.missing_fields.join(", ")
                    ));
                }
                ("warning", t)
            }
        };
        let d = Diagnostic {
            code: crate::diag::Code::PolicyEvalError,
            severity: if level == "error" {
                crate::diag::Severity::Error
            } else {
                crate::diag::Severity::Warning
            },
            message: text,
            primary: e.location.map(|span| crate::diag::Label {
                span,
                text: String::new(),
            }),
            related: Vec::new(),
            help: None,
        };
        if let Some(line) = crate::output::github::annotation(&d, sources, paths) {
            // The title names the decision, not a diagnostic code.
            out.push(line.replacen(
                "title=capops policy-eval-error",
                &format!("title=capops {}", e.decision.outcome.as_str()),
                1,
            ));
        }
    }
    out
}

/// SARIF for a check: diagnostics, and one result per subject denied or needing approval.
pub fn sarif(
    result: &CheckResult,
    diagnostics: &[Diagnostic],
    sources: &SourceMap,
    paths: &Paths,
) -> serde_json::Value {
    let mut log = crate::output::sarif::log(diagnostics, sources, paths);
    let run = &mut log["runs"][0];
    let mut rules = run["tool"]["driver"]["rules"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let mut results = run["results"].as_array().cloned().unwrap_or_default();
    let rule_index = |id: &str, text: &str, rules: &mut Vec<serde_json::Value>| -> usize {
        if let Some(i) = rules.iter().position(|r| r["id"] == id) {
            return i;
        }
        rules.push(serde_json::json!({"id": id, "shortDescription": {"text": text}}));
        rules.len() - 1
    };
    for e in &result.evaluated {
        if e.decision.outcome == Outcome::Approved {
            continue;
        }
        let Some(span) = e.location else { continue };
        let start = sources.line_col(span);
        let location = serde_json::json!([{"physicalLocation": {
            "artifactLocation": {"uri": crate::output::sarif::uri(&paths.file(sources, span.file)), "uriBaseId": "%SRCROOT%"},
            "region": {"startLine": start.line, "startColumn": start.column}
        }}]);
        if e.decision.outcome == Outcome::NeedsApproval {
            let i = rule_index(
                "approval-required",
                "the change needs approvals before it can merge",
                &mut rules,
            );
            results.push(serde_json::json!({
                "ruleId": "approval-required", "ruleIndex": i, "level": "warning",
                "message": {"text": format!("{} {} needs approval (tier {}): {}", e.subject.as_str(), e.name,
                    e.decision.tier.clone().unwrap_or_else(|| "-".into()), approvals_text(e))},
                "locations": location,
            }));
        }
        for f in &e.decision.findings {
            let id = format!("policy/{}", f.rule);
            let i = rule_index(&id, &format!("policy rule {}", f.rule), &mut rules);
            let level = match f.effect {
                crate::model::Effect::Deny => "error",
                crate::model::Effect::Warn => "warning",
                _ => "note",
            };
            results.push(serde_json::json!({
                "ruleId": id, "ruleIndex": i, "level": level,
                "message": {"text": format!("{} {}: {}", e.subject.as_str(), e.name, f.message)},
                "locations": location,
            }));
        }
    }
    run["tool"]["driver"]["rules"] = serde_json::Value::Array(rules);
    run["results"] = serde_json::Value::Array(results);
    log
}
