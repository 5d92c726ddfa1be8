//! How the pull-request gate's verdict reads: the status's one-line
//! description, the check run's line annotations, and the approvals in the
//! job log. Pure functions of the check's result and the verified approvals.

use super::comment::{Row, Written};
use super::rest::short;
use super::status::Annotation;
use super::status::Published;
use crate::diag::{Diagnostic, Severity, SourceMap};
use crate::output::Paths;
use crate::policy::CheckResult;
use crate::policy::approvals::Reviewers;
use crate::policy::approvals::{DecisionApprovals, Standing};

/// The status's one-line description.
pub fn description(
    result: &CheckResult,
    standings: &[Standing],
    approvals: &[DecisionApprovals],
    broken: bool,
) -> String {
    if broken {
        return "the policy could not be evaluated (see the job log)".into();
    }
    let n = result.evaluated.len();
    let count = |s: Standing| standings.iter().filter(|&&x| x == s).count();
    if n == 0 {
        return "no capacity documents changed".into();
    }
    if standings.iter().all(|s| s.passes()) {
        return format!(
            "{n} judged: approved ({} with every approval present)",
            count(Standing::Approved)
        );
    }
    let mut parts = Vec::new();
    if count(Standing::Denied) > 0 {
        parts.push(format!("{} denied", count(Standing::Denied)));
    }
    if count(Standing::ApprovalsMissing) > 0 {
        // A role is awaited while approvals are missing, or blocked while
        // one of its holders requests changes (named, with the role).
        let mut roles: Vec<String> = approvals
            .iter()
            .flat_map(|a| {
                a.roles.iter().filter_map(|r| {
                    if !r.changes_requested_by.is_empty() {
                        Some(format!(
                            "{}: changes requested by {}",
                            r.role,
                            r.changes_requested_by.join(", ")
                        ))
                    } else {
                        (r.missing > 0).then(|| r.role.clone())
                    }
                })
            })
            .collect();
        roles.sort_unstable();
        roles.dedup();
        parts.push(format!(
            "{} awaiting approval ({})",
            count(Standing::ApprovalsMissing),
            roles.join(", ")
        ));
    }
    if count(Standing::FieldsMissing) > 0 {
        parts.push(format!(
            "{} missing required fields",
            count(Standing::FieldsMissing)
        ));
    }
    format!("{n} judged: {}", parts.join("; "))
}

/// Line annotations for the check run: decisions that do not pass, and the
/// head's diagnostics, where they point into the working tree.
pub fn annotations(
    result: &CheckResult,
    diagnostics: &[Diagnostic],
    standings: &[Standing],
    sources: &SourceMap,
    paths: &Paths,
) -> Vec<Annotation> {
    let mut out = Vec::new();
    for (e, s) in result.evaluated.iter().zip(standings) {
        let Some(span) = e.location.filter(|s| Paths::in_worktree(sources, s.file)) else {
            continue;
        };
        let (level, what) = match s {
            Standing::Denied => ("failure", "is denied"),
            Standing::PolicyError => ("failure", "could not be judged"),
            Standing::ApprovalsMissing => ("warning", "awaits approval"),
            Standing::FieldsMissing => ("warning", "misses required fields"),
            _ => continue,
        };
        let mut message: Vec<String> = e
            .decision
            .findings
            .iter()
            .map(|f| f.message.clone())
            .collect();
        if !e.decision.missing_fields.is_empty() {
            message.push(format!("missing: {}", e.decision.missing_fields.join(", ")));
        }
        out.push(Annotation {
            path: paths.file(sources, span.file),
            line: sources.line_col(span).line as u32,
            level,
            title: format!("capops: {} {} {what}", e.subject.as_str(), e.name),
            message: if message.is_empty() {
                what.to_string()
            } else {
                message.join("\n")
            },
        });
    }
    for d in diagnostics {
        let Some(p) = d
            .primary
            .as_ref()
            .filter(|p| Paths::in_worktree(sources, p.span.file))
        else {
            continue;
        };
        let level = match d.severity {
            Severity::Error => "failure",
            Severity::Warning => "warning",
            Severity::Note => "notice",
            Severity::Allow => continue,
        };
        out.push(Annotation {
            path: paths.file(sources, p.span.file),
            line: sources.line_col(p.span).line as u32,
            level,
            title: format!("capops {}", d.code.as_str()),
            message: d.message.clone(),
        });
    }
    out
}

/// The approvals, for people reading the job log.
pub fn human_approvals(rows: &[Row<'_>], head: &str, verdict: &str) -> String {
    let mut out = format!(
        "\napprovals on the head commit {}: {verdict}\n",
        short(head)
    );
    for r in rows.iter().filter(|r| !r.approvals.roles.is_empty()) {
        for role in &r.approvals.roles {
            let by: Vec<String> = role
                .approved_by
                .iter()
                .map(|a| format!("{} on {}", a.login, short(&a.commit)))
                .collect();
            out.push_str(&format!(
                "  {}/{}: {} {}/{}{}{}\n",
                r.kind,
                r.name,
                role.role,
                role.approved_by.len(),
                role.needed,
                if by.is_empty() {
                    String::new()
                } else {
                    format!(" ({})", by.join(", "))
                },
                if role.missing > 0 {
                    let who: Vec<&str> = role
                        .teams
                        .iter()
                        .chain(&role.users)
                        .map(String::as_str)
                        .collect();
                    format!(
                        "; {} missing from {}",
                        role.missing,
                        if who.is_empty() {
                            "nobody".to_string()
                        } else {
                            who.join(", ")
                        }
                    )
                } else {
                    String::new()
                }
            ));
            for (login, why) in &role.uncounted_members {
                out.push_str(&format!("    {login} not counted: {why}\n"));
            }
            for login in &role.changes_requested_by {
                out.push_str(&format!(
                    "    {login} requested changes: the role is not met until they approve or the review is dismissed\n"
                ));
            }
        }
    }
    out
}

/// What the `github` object of the JSON output says.
pub struct Summary<'a> {
    pub number: u64,
    pub author: &'a str,
    pub head: &'a str,
    pub base: &'a str,
    pub success: bool,
    pub reviewers: &'a Reviewers,
    pub rows: &'a [Row<'a>],
    pub comment: Option<&'a Written>,
    pub status: Option<&'a Published>,
}

/// The `github` object of `check --github --format json` (docs/github.md#flags).
pub fn json(s: &Summary<'_>) -> serde_json::Value {
    use serde_json::json;
    json!({
        "pullRequest": s.number,
        "author": s.author,
        "headSha": s.head,
        "baseSha": s.base,
        "success": s.success,
        "approvers": s.reviewers.approvers,
        "notCounted": s.reviewers.not_counted.iter()
            .map(|(login, why)| json!({"login": login, "why": why}))
            .collect::<Vec<_>>(),
        "decisions": s.rows.iter()
            .map(|r| json!({"kind": r.kind, "name": r.name, "standing": r.standing, "roles": r.approvals.roles}))
            .collect::<Vec<_>>(),
        "comment": s.comment.map(|w| json!({"action": w.action, "url": w.url})),
        "status": s.status.map(|p| json!({
            "kind": p.kind,
            "url": p.url,
            "state": if s.success { "success" } else { "failure" },
        })),
    })
}
