//! The stable JSON form of diagnostics (documented in `docs/output.md`).

use super::Paths;
use crate::diag::{Diagnostic, Label, SourceMap, Summary};
use serde::Serialize;

/// Version of the JSON output; bumped only on incompatible changes.
pub const OUTPUT_VERSION: u32 = 1;

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct JsonDiagnostic {
    pub code: &'static str,
    pub severity: &'static str,
    pub message: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub column: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub end_line: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub end_column: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub help: Option<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub related: Vec<JsonLocation>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct JsonLocation {
    pub file: String,
    pub line: usize,
    pub column: usize,
    pub message: String,
}

fn location(l: &Label, sources: &SourceMap, paths: &Paths) -> JsonLocation {
    let lc = sources.line_col(l.span);
    JsonLocation {
        file: paths.file(sources, l.span.file),
        line: lc.line,
        column: lc.column,
        message: l.text.clone(),
    }
}

/// One diagnostic as JSON.
pub fn diagnostic(d: &Diagnostic, sources: &SourceMap, paths: &Paths) -> JsonDiagnostic {
    let (file, start, end) = match &d.primary {
        Some(p) => (
            Some(paths.file(sources, p.span.file)),
            Some(sources.line_col(p.span)),
            Some(sources.end_line_col(p.span)),
        ),
        None => (None, None, None),
    };
    JsonDiagnostic {
        code: d.code.as_str(),
        severity: d.severity.as_str(),
        message: d.message.clone(),
        file,
        line: start.map(|l| l.line),
        column: start.map(|l| l.column),
        end_line: end.map(|l| l.line),
        end_column: end.map(|l| l.column),
        label: d.primary.as_ref().map(|p| p.text.clone()),
        help: d.help.clone(),
        related: d
            .related
            .iter()
            .map(|l| location(l, sources, paths))
            .collect(),
    }
}

/// Every `--format json` result: the output version, the command, and the
/// command's own fields.
#[derive(Serialize)]
pub struct Envelope<'a, T: Serialize> {
    pub version: u32,
    pub command: &'static str,
    #[serde(flatten)]
    pub body: &'a T,
}

impl<'a, T: Serialize> Envelope<'a, T> {
    pub fn new(command: &'static str, body: &'a T) -> Self {
        Envelope {
            version: OUTPUT_VERSION,
            command,
            body,
        }
    }
}

/// What `capops validate --format json` prints.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ValidateOutput {
    pub valid: bool,
    pub summary: ValidateSummary,
    pub diagnostics: Vec<JsonDiagnostic>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ValidateSummary {
    pub files: usize,
    pub documents: usize,
    #[serde(flatten)]
    pub counts: Summary,
}

pub fn diagnostics(
    diags: &[Diagnostic],
    sources: &SourceMap,
    paths: &Paths,
) -> Vec<JsonDiagnostic> {
    diags
        .iter()
        .map(|d| diagnostic(d, sources, paths))
        .collect()
}
