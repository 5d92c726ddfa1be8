//! Evaluating a compiled policy against one subject.
//!
//! A request lands in the first tier whose condition holds; rules then deny
//! it, warn, add an approval, or move it up a tier (or to a named tier).
//! Other subjects (reservations, teams, policy and config changes) start at
//! the lowest tier and are moved by their rules the same way. Every condition
//! evaluated is recorded with the facts it read, for `capops explain`.

use super::compile::{Compiled, Condition, error_text};
use super::facts::{self, SubjectKind};
use super::roles::{Members, Role};
use super::{Approval, Decision, Finding, Outcome, TraceStep};
use crate::diag::{Code, Diagnostic};
use crate::model::{Effect, RequiredField, Subject};
use minijinja::value::ValueKind;
use minijinja::{Environment, Value};

/// Evaluates a condition to true or false, or explains why it could not be.
fn truth(cond: &Condition<'_>, facts: &Value) -> Result<bool, String> {
    let value = cond.expr.eval(facts.clone()).map_err(|e| error_text(&e))?;
    match value.kind() {
        ValueKind::Bool => Ok(value.is_true()),
        other => Err(format!(
            "the condition gave {other} `{value}`, not true or false"
        )),
    }
}

fn reads(cond: &Condition<'_>, facts: &Value) -> Vec<(String, String)> {
    cond.reads
        .iter()
        .map(|path| {
            let shown = facts::lookup(facts, path)
                .map(|v| facts::show(&v))
                .unwrap_or_else(|| "undefined".into());
            (path.clone(), shown)
        })
        .collect()
}

/// Evaluates the policy for one subject. Errors in conditions and messages are
/// pushed as diagnostics (error severity) and the subject is treated as
/// needing the top tier, never as approved.
pub fn evaluate(
    env: &Environment<'static>,
    policy: &Compiled<'_>,
    subject: Subject,
    facts: facts::Kept,
    roles: &Members<'_>,
    record: bool,
    diags: &mut Vec<Diagnostic>,
) -> Decision {
    let facts_value = facts.to_value();
    let kind = SubjectKind::of(subject);
    let mut trace = Vec::new();
    let mut failed = false;
    let mut tier = 0usize;
    if kind == SubjectKind::Request {
        let mut chosen = None;
        for (i, t) in policy.tiers.iter().enumerate() {
            super::running::step(i);
            let result = truth(&t.when, &facts_value);
            if let Err(e) = &result {
                failed = true;
                diags.push(eval_error(&t.name, "tier", e, &t.when));
            }
            let holds = matches!(result, Ok(true));
            if !record {
                if holds && chosen.is_none() {
                    chosen = Some(i);
                    break;
                }
                continue;
            }
            trace.push(TraceStep {
                kind: "tier",
                name: t.name.clone(),
                condition: t.when.text.clone(),
                result: result.clone(),
                reads: reads(&t.when, &facts_value),
                effect: if holds && chosen.is_none() {
                    format!("lands in tier `{}`", t.name)
                } else if holds {
                    "holds, but an earlier tier matched".into()
                } else {
                    "does not hold".into()
                },
            });
            if holds && chosen.is_none() {
                chosen = Some(i);
            }
        }
        tier = match chosen {
            Some(i) => i,
            None => {
                if !policy.tiers.is_empty() && !failed {
                    diags.push(
                        Diagnostic::new(
                            Code::PolicyNoTierMatched,
                            format!("no tier of the policy matches this request (tiers: {})", policy.tiers.iter().map(|t| t.name.as_str()).collect::<Vec<_>>().join(", ")),
                        )
                        .at(policy.tiers[policy.tiers.len() - 1].when.span, "last tier")
                        .help("make the last tier's condition `true` so that every request lands somewhere"),
                    );
                }
                // Judged by nothing: never approved, even where the top
                // tier asks for no approval.
                failed = true;
                policy.tiers.len().saturating_sub(1)
            }
        };
    }
    let mut findings = Vec::new();
    let mut extra: Vec<(String, u32, String)> = Vec::new();
    let mut denied = false;
    let mut escalations = 0usize;
    let mut floor = tier;
    let rules = policy.rules.iter().enumerate();
    for (j, rule) in rules.filter(|(_, r)| r.subject == subject) {
        let step = policy.tiers.len() + 2 * j;
        super::running::step(step);
        let result = truth(&rule.when, &facts_value);
        if let Err(e) = &result {
            failed = true;
            diags.push(eval_error(&rule.name, "rule", e, &rule.when));
        }
        let fired = matches!(result, Ok(true));
        let message = if fired {
            super::running::step(step + 1);
            let rendered = match &rule.message_template {
                Some(name) => env
                    .get_template(name)
                    .and_then(|t| t.render(facts_value.clone())),
                None => env.render_str(&rule.message, facts_value.clone()),
            };
            match rendered {
                Ok(m) => m.split_whitespace().collect::<Vec<_>>().join(" "),
                Err(e) => {
                    failed = true;
                    diags.push(
                        Diagnostic::new(
                            Code::PolicyEvalError,
                            format!(
                                "the message of `{}` could not be rendered: {}",
                                rule.name,
                                error_text(&e)
                            ),
                        )
                        .at(rule.message_span, "message")
                        .help("fix the template; its facts are listed in docs/policy.md"),
                    );
                    rule.message.clone()
                }
            }
        } else {
            String::new()
        };
        let effect_text = if !record {
            String::new()
        } else if !fired {
            "does not fire".to_string()
        } else {
            match rule.effect {
                Effect::Deny => "denies".into(),
                Effect::Warn => "warns".into(),
                Effect::RequireApproval => format!(
                    "requires an approval from `{}`",
                    rule.role.as_deref().unwrap_or("?")
                ),
                Effect::Escalate => match rule.tier {
                    Some(t) => format!("escalates to tier `{}`", policy.tiers[t].name),
                    None => "escalates one tier".into(),
                },
            }
        };
        if record {
            trace.push(TraceStep {
                kind: "rule",
                name: rule.name.clone(),
                condition: rule.when.text.clone(),
                result: result.clone(),
                reads: reads(&rule.when, &facts_value),
                effect: effect_text,
            });
        }
        if !fired {
            continue;
        }
        match rule.effect {
            Effect::Deny => denied = true,
            Effect::Warn => {}
            Effect::RequireApproval => {
                if let Some(role) = &rule.role {
                    extra.push((role.clone(), 1, rule.name.clone()));
                }
            }
            Effect::Escalate => match rule.tier {
                Some(t) => floor = floor.max(t),
                None => escalations += 1,
            },
        }
        findings.push(Finding {
            rule: rule.name.clone(),
            effect: rule.effect,
            message,
            rule_span: rule.span,
        });
    }
    let last = policy.tiers.len().saturating_sub(1);
    // A kind of document the policy has no rule for is judged by nothing in
    // it: a change to one goes to the top tier (a policy written for
    // requests alone must not let its own rewrite, a quota or a price
    // through with nobody asked).
    let changed = facts::lookup(&facts_value, "change.kind")
        .and_then(|v| v.as_str().map(|k| k != "unchanged"))
        .unwrap_or(false);
    // Hours appended by the Config's usage pullers alone are data (what
    // `usage pull` writes on a schedule), whatever the policy says of usage.
    let puller_appends = subject == Subject::UsageHistory
        && facts::lookup(&facts_value, "change.by_usage_puller").is_some_and(|v| v.is_true())
        && num_at(&facts_value, "change.rewritten_rows") == Some(0.0)
        && num_at(&facts_value, "change.removed_rows") == Some(0.0);
    if kind != SubjectKind::Request
        && changed
        && !puller_appends
        && !policy.rules.iter().any(|r| r.subject == subject)
        && let Some(top) = policy.tiers.last()
    {
        floor = last;
        findings.push(Finding {
            rule: "unruled-kind".into(),
            effect: Effect::Escalate,
            message: format!(
                "the approval policy has no rule for {} documents, so nothing in it judges this change: it goes to the top tier, `{}`",
                subject.as_str(),
                top.name
            ),
            rule_span: top.span,
        });
    }
    let mut final_tier = (tier + escalations).max(floor).min(last);
    if failed {
        final_tier = last;
    }
    // Long windows and terms need the tiers that may approve them.
    if let Some((days, what, limit_of)) = length(kind, &facts_value) {
        let allows =
            |t: &super::compile::CompiledTier<'_>| limit_of(t).is_none_or(|l| days <= l as f64);
        if let Some(t) = policy.tiers.get(final_tier).filter(|t| !allows(t)) {
            let limit = limit_of(t).unwrap_or(0);
            let own = num_at(
                &facts_value,
                if what == "window" {
                    "request.window.days"
                } else {
                    "reservation.days"
                },
            );
            let shown = if days.is_infinite() {
                format!("an open-ended {what}")
            } else if own.is_some_and(|d| d < days) {
                format!(
                    "a {what} of {} days, run back to back with the others this change adds and those already held from now on, to {} days,",
                    own.unwrap_or(0.0).ceil(),
                    days.ceil()
                )
            } else {
                format!("a {what} of {} days", days.ceil())
            };
            match (final_tier..policy.tiers.len()).find(|i| allows(&policy.tiers[*i])) {
                Some(up) => {
                    findings.push(Finding {
                        rule: format!("{what}-limit"),
                        effect: Effect::Escalate,
                        message: format!(
                            "{shown} is longer than tier `{}` approves ({limit} days): tier `{}`",
                            t.name, policy.tiers[up].name
                        ),
                        rule_span: t.span,
                    });
                    final_tier = up;
                }
                None => {
                    denied = true;
                    findings.push(Finding {
                        rule: format!("{what}-limit"),
                        effect: Effect::Deny,
                        message: format!(
                            "{shown} is longer than any tier approves (tier `{}`: {limit} days); shorten it",
                            t.name
                        ),
                        rule_span: t.span,
                    });
                }
            }
        }
    }
    // A tier whose lead approvers this subject does not have (`team-lead` for
    // a reservation, which belongs to no team; a team without leads) could
    // never be approved: the next tier whose lead roles are filled approves.
    if !denied && (kind == SubjectKind::Request || final_tier > 0 || escalations > 0) {
        while final_tier < last {
            let t = &policy.tiers[final_tier];
            let unfilled = t.approvals.iter().find(|(r, _, _)| {
                let role = Role::parse(r);
                matches!(role, Role::TeamLead | Role::ReceivingTeamLead) && {
                    let (teams, users) = roles.of(&role);
                    teams.is_empty() && users.is_empty()
                }
            });
            let Some((role, _, _)) = unfilled else {
                break;
            };
            findings.push(Finding {
                rule: "tier-without-approvers".into(),
                effect: Effect::Escalate,
                message: format!(
                    "nobody approves as `{role}` here (no team leads answer for this change): tier `{}`",
                    policy.tiers[final_tier + 1].name
                ),
                rule_span: t.span,
            });
            final_tier += 1;
        }
    }
    let tier_def = policy.tiers.get(final_tier);
    // Requests carry at least their tier; other subjects only when a rule moved them.
    let in_tier = kind == SubjectKind::Request || final_tier > 0 || escalations > 0;
    let mut approvals: Vec<Approval> = Vec::new();
    let mut add = |role: &str, count: u32, from: String| {
        let role = Role::parse(role);
        if let Some(a) = approvals.iter_mut().find(|a| a.role == role) {
            a.count = a.count.max(count);
            return;
        }
        let (teams, users) = roles.of(&role);
        approvals.push(Approval {
            role,
            count,
            teams,
            users,
            from,
        });
    };
    if in_tier && let Some(t) = tier_def {
        for (role, count, _) in &t.approvals {
            add(role, *count, format!("tier {}", t.name));
        }
    }
    // A rule's lead approval nobody holds for the subject (a request handed
    // to a team with no leads) could never be given: the approvals of the
    // first tier that asks for no team's lead are asked instead.
    let unfilled = |role: &str| {
        let role = Role::parse(role);
        matches!(role, Role::TeamLead | Role::ReceivingTeamLead) && {
            let (teams, users) = roles.of(&role);
            teams.is_empty() && users.is_empty()
        }
    };
    for (role, count, rule) in extra {
        if !unfilled(&role) {
            add(&role, count, format!("rule {rule}"));
            continue;
        }
        let instead = policy.tiers.iter().find(|t| {
            !t.approvals.is_empty()
                && t.approvals.iter().all(|(r, _, _)| {
                    !matches!(Role::parse(r), Role::TeamLead | Role::ReceivingTeamLead)
                })
        });
        let Some(instead) = instead else {
            // No tier to ask instead: the approval stays asked, never given.
            add(&role, count, format!("rule {rule}"));
            continue;
        };
        findings.push(Finding {
            rule: "tier-without-approvers".into(),
            effect: Effect::Escalate,
            message: format!(
                "nobody approves as `{role}` here (rule {rule}): the approvals of tier `{}` are asked instead",
                instead.name
            ),
            rule_span: instead.span,
        });
        for (r, c, _) in &instead.approvals {
            add(r, *c, format!("rule {rule}, tier {}", instead.name));
        }
    }
    let mut missing = Vec::new();
    if kind == SubjectKind::Request
        && let Some(t) = tier_def
    {
        for field in &t.requires {
            let present = match field {
                RequiredField::Justification => "request.has_justification",
                RequiredField::Window => "request.has_window",
                RequiredField::SuccessMetrics => "request.has_success_metrics",
                RequiredField::BusinessCase => "request.has_business_case",
                RequiredField::PriorityClass => "request.priority_class",
            };
            let ok = facts::lookup(&facts_value, present).is_some_and(|v| v.is_true());
            if !ok {
                missing.push(field.as_str());
            }
        }
    }
    let outcome = if denied {
        Outcome::Denied
    } else if approvals.is_empty() && missing.is_empty() && !failed {
        Outcome::Approved
    } else {
        Outcome::NeedsApproval
    };
    Decision {
        outcome,
        tier: if in_tier {
            tier_def.map(|t| t.name.clone())
        } else {
            None
        },
        approvals,
        missing_fields: missing,
        findings,
        trace,
        facts,
        error: failed,
    }
}

fn num_at(facts_value: &Value, path: &str) -> Option<f64> {
    facts::lookup(facts_value, path).and_then(|v| f64::try_from(v).ok())
}

/// The length a tier limit applies to: a request's window or a reservation's
/// term, in days (infinite for an open-ended window), and the tier's limit of it.
#[allow(clippy::type_complexity)]
fn length(
    kind: SubjectKind,
    facts_value: &Value,
) -> Option<(
    f64,
    &'static str,
    fn(&super::compile::CompiledTier<'_>) -> Option<u32>,
)> {
    let num = |p: &str| facts::lookup(facts_value, p).and_then(|v| f64::try_from(v).ok());
    match kind {
        SubjectKind::Request => {
            let open =
                !facts::lookup(facts_value, "request.has_window").is_some_and(|v| v.is_true());
            let removed = facts::lookup(facts_value, "change.kind")
                .is_some_and(|v| v.as_str() == Some("removed"));
            if removed {
                return None;
            }
            let days = if open {
                f64::INFINITY
            } else {
                // Back-to-back requests the change adds count as one window.
                num("request.window.days")?.max(num("request.window.run_days").unwrap_or(0.0))
            };
            Some((days, "window", |t| t.max_window_days))
        }
        SubjectKind::Reservation => {
            let removed = facts::lookup(facts_value, "change.kind")
                .is_some_and(|v| v.as_str() == Some("removed"));
            if removed {
                return None;
            }
            let days = num("reservation.days")?.max(num("reservation.run_days").unwrap_or(0.0));
            Some((days, "term", |t| t.max_term_days))
        }
        _ => None,
    }
}

fn eval_error(owner: &str, what: &str, error: &str, cond: &Condition<'_>) -> Diagnostic {
    Diagnostic::new(
        Code::PolicyEvalError,
        format!("the condition of {what} `{owner}` failed: {error}"),
    )
    .at(cond.span, "condition")
    .help("a condition that cannot be evaluated counts as needing the top tier; fix the expression")
}
