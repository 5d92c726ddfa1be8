//! `capops check --format json` and `capops explain --format json`: the
//! decisions, changes and diagnostics as stable JSON (docs/output.md).

use super::*;
use crate::diag::{Diagnostic, Summary};
use crate::output::json::{self, JsonDiagnostic};

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct JsonCheck<'a> {
    #[serde(flatten)]
    pub context: Context,
    pub summary: JsonSummary,
    pub changes: Vec<JsonChange>,
    pub decisions: Decisions<'a>,
    pub diagnostics: Vec<JsonDiagnostic>,
}

/// The decisions, each made into JSON as it is written: a hundred thousand
/// decisions with their facts are gigabytes held at once, one at a time a
/// few kilobytes.
pub struct Decisions<'a> {
    result: &'a CheckResult,
    sources: &'a SourceMap,
    paths: &'a Paths,
}

impl Serialize for Decisions<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeSeq;
        let mut seq = s.serialize_seq(Some(self.result.evaluated.len()))?;
        for e in &self.result.evaluated {
            seq.serialize_element(&decision_json(e, self.sources, self.paths, false))?;
        }
        seq.end()
    }
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct JsonSummary {
    #[serde(flatten)]
    pub counts: Counts,
    pub exit_code: i32,
    #[serde(flatten)]
    pub diagnostics: Summary,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct JsonChange {
    pub kind: String,
    pub name: String,
    pub change: &'static str,
    pub fields: Vec<String>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct JsonDecision {
    pub kind: &'static str,
    pub name: String,
    pub change: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub column: Option<usize>,
    pub decision: &'static str,
    pub tier: Option<String>,
    pub approvals: Vec<JsonApproval>,
    pub missing_fields: Vec<&'static str>,
    pub findings: Vec<JsonFinding>,
    /// The facts the policy saw (all of them).
    pub facts: serde_json::Value,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub trace: Vec<JsonTrace>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct JsonApproval {
    pub role: String,
    pub count: u32,
    pub teams: Vec<String>,
    pub users: Vec<String>,
    pub from: String,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct JsonFinding {
    pub rule: String,
    pub effect: &'static str,
    pub message: String,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct JsonTrace {
    pub kind: &'static str,
    pub name: String,
    pub condition: String,
    /// true, false, or null when the condition failed (see `error`).
    pub result: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    pub reads: serde_json::Map<String, serde_json::Value>,
    pub effect: String,
}

pub fn decision_json(
    e: &Evaluated,
    sources: &SourceMap,
    paths: &Paths,
    with_trace: bool,
) -> JsonDecision {
    let lc = e.location.map(|s| sources.line_col(s));
    JsonDecision {
        kind: e.subject.as_str(),
        name: e.name.clone(),
        change: e.change.as_str(),
        file: e.location.map(|s| paths.file(sources, s.file)),
        line: lc.map(|l| l.line),
        column: lc.map(|l| l.column),
        decision: e.decision.outcome.as_str(),
        tier: e.decision.tier.clone(),
        approvals: e
            .decision
            .approvals
            .iter()
            .map(|a| JsonApproval {
                role: a.role.to_string(),
                count: a.count,
                teams: a.teams.clone(),
                users: a.users.clone(),
                from: a.from.clone(),
            })
            .collect(),
        missing_fields: e.decision.missing_fields.clone(),
        findings: e
            .decision
            .findings
            .iter()
            .map(|f| JsonFinding {
                rule: f.rule.clone(),
                effect: f.effect.as_str(),
                message: f.message.clone(),
            })
            .collect(),
        facts: crate::policy::facts::to_json(&e.decision.facts.to_value()),
        trace: if with_trace {
            e.decision
                .trace
                .iter()
                .map(|t| JsonTrace {
                    kind: t.kind,
                    name: t.name.clone(),
                    condition: t.condition.clone(),
                    result: t.result.clone().ok(),
                    error: t.result.clone().err(),
                    reads: t
                        .reads
                        .iter()
                        .map(|(k, v)| {
                            (
                                k.clone(),
                                serde_json::from_str(v)
                                    .unwrap_or(serde_json::Value::String(v.clone())),
                            )
                        })
                        .collect(),
                    effect: t.effect.clone(),
                })
                .collect()
        } else {
            Vec::new()
        },
    }
}

pub fn json<'a>(
    result: &'a CheckResult,
    ctx: &Context,
    diagnostics: &[Diagnostic],
    exit_code: i32,
    sources: &'a SourceMap,
    paths: &'a Paths,
) -> JsonCheck<'a> {
    JsonCheck {
        context: ctx.clone(),
        summary: JsonSummary {
            counts: counts(result),
            exit_code,
            diagnostics: Summary::of(diagnostics),
        },
        changes: result
            .changes
            .iter()
            .filter(|c| c.change.kind != ChangeKind::Unchanged)
            .map(|c| JsonChange {
                kind: c.kind.as_str().to_string(),
                name: c.name.clone(),
                change: c.change.kind.as_str(),
                fields: c.change.fields.clone(),
            })
            .collect(),
        decisions: Decisions {
            result,
            sources,
            paths,
        },
        diagnostics: json::diagnostics(diagnostics, sources, paths),
    }
}
