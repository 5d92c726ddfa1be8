//! Output of `capops check` and `capops explain`: human text, JSON, SARIF and
//! GitHub annotations. (The Markdown pull-request comment is in `markdown`.)

use super::Paths;
use crate::diag::SourceMap;
use crate::model::Subject;
use crate::policy::change::ChangeKind;
use crate::policy::{CheckResult, Evaluated, Outcome, PolicySource};
use serde::Serialize;

/// What the check was run against, for headers.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Context {
    pub at: String,
    /// `{rev, commit}` when checking a change.
    pub base: Option<BaseInfo>,
    pub policy: String,
    /// Demand against capacity of the pools the judged documents touch.
    #[serde(rename = "forecasts")]
    pub charts: Vec<crate::cost::chart::PoolChart>,
    /// What the change does on clusters and clouds (checking a change).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub effects: Option<EffectsView>,
}

/// The rendered effect of a change, for people and tools.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct EffectsView {
    /// The instants rendered (`--at`, and the starts of windows the change adds or moves).
    pub at: Vec<String>,
    pub summary: crate::policy::facts::EffectFacts,
    pub files: Vec<crate::render::effects::FileEffect>,
}

/// The effect as `terraform plan` would print it: one line per file, the
/// fields that change below it.
pub fn effects_text(e: &EffectsView) -> String {
    let mut out = String::new();
    if e.files.is_empty() {
        out.push_str("effect on clusters and clouds: none (the rendered objects are the same)\n");
        return out;
    }
    out.push_str(&format!(
        "effect on clusters and clouds (rendered at {}):\n",
        e.at.join(", ")
    ));
    for f in &e.files {
        let mark = match f.change {
            "added" => "+",
            "removed" => "-",
            _ => "~",
        };
        let quota: Vec<String> = f
            .quota_delta
            .iter()
            .map(|(k, d)| format!("{k} {d:+}"))
            .collect();
        out.push_str(&format!(
            "  {mark} {} ({}){}\n",
            f.path,
            f.kind,
            if quota.is_empty() {
                String::new()
            } else {
                format!(": {}", quota.join(", "))
            }
        ));
        for fe in &f.fields {
            out.push_str(&format!(
                "      {}: {} -> {}\n",
                fe.field, fe.before, fe.after
            ));
        }
    }
    let s = &e.summary;
    out.push_str(&format!(
        "Effect: {} to add, {} to change, {} to remove.\n",
        s.objects_added, s.objects_changed, s.objects_removed
    ));
    out
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct BaseInfo {
    pub rev: String,
    pub commit: String,
}

pub fn policy_label(source: &PolicySource) -> String {
    match source {
        PolicySource::BuiltIn => "built-in default (policies/default.yaml)".into(),
        PolicySource::Repository { names } => format!("repository ({})", names.join(", ")),
    }
}

/// Counts of decisions.
#[derive(Debug, Clone, Copy, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Counts {
    pub evaluated: usize,
    pub approved: usize,
    pub needs_approval: usize,
    pub denied: usize,
}

pub fn counts(result: &CheckResult) -> Counts {
    let mut c = Counts {
        evaluated: result.evaluated.len(),
        ..Counts::default()
    };
    for e in &result.evaluated {
        match e.decision.outcome {
            Outcome::Approved => c.approved += 1,
            Outcome::NeedsApproval => c.needs_approval += 1,
            Outcome::Denied => c.denied += 1,
        }
    }
    c
}

pub(super) fn gpus(e: &Evaluated) -> Option<f64> {
    let path = match e.subject {
        Subject::CapacityRequest => "request.gpus",
        Subject::Reservation => "reservation.gpus",
        Subject::Team => "team.quota_gpus",
        _ => return None,
    };
    e.decision
        .facts
        .lookup(path)
        .and_then(|v| f64::try_from(v).ok())
}

pub fn fmt_gpus(x: f64) -> String {
    if (x - x.round()).abs() < 1e-9 {
        format!("{}", x.round() as i64)
    } else {
        format!("{x:.2}")
    }
}

/// A fact as a number (0 when absent).
pub(super) fn num(e: &Evaluated, path: &str) -> f64 {
    e.decision
        .facts
        .lookup(path)
        .and_then(|v| f64::try_from(v).ok())
        .unwrap_or(0.0)
}

pub(super) fn text(e: &Evaluated, path: &str) -> String {
    e.decision
        .facts
        .lookup(path)
        .map(|v| {
            v.as_str()
                .map(str::to_string)
                .unwrap_or_else(|| v.to_string())
        })
        .unwrap_or_default()
}

pub(super) fn flag(e: &Evaluated, path: &str) -> bool {
    e.decision.facts.lookup(path).is_some_and(|v| v.is_true())
}

fn pct(x: f64) -> String {
    format!("{:.0}%", x * 100.0)
}

/// Cost and forecast lines of a decision, from the facts the policy saw.
pub fn money_lines(e: &Evaluated) -> Vec<String> {
    let cur = text(e, "config.currency");
    let money = |x: f64| crate::model::money::format_f64(x, &cur);
    let mut out = Vec::new();
    match e.subject {
        Subject::CapacityRequest => {
            let full = flag(e, "request.has_price");
            if full || num(e, "request.gpu_hour_price") > 0.0 {
                let mut line = format!(
                    "cost: {} a month, {} over the window ({}/GPU-hour)",
                    money(num(e, "request.monthly_cost")),
                    money(num(e, "request.total_cost")),
                    money(num(e, "request.gpu_hour_price"))
                );
                if matches!(e.change, ChangeKind::Added | ChangeKind::Modified) {
                    let d = num(e, "change.delta_monthly_cost");
                    line.push_str(&format!(
                        "; {}{} a month against the base",
                        if d >= 0.0 { "+" } else { "" },
                        money(d)
                    ));
                }
                if !full {
                    line.push_str(&format!(
                        "; at least: another pool of {} that its quota reaches has no price in a PriceCatalog",
                        text(e, "request.cluster")
                    ));
                }
                out.push(line);
            } else {
                out.push(
                    "cost: unknown (the pool's instance type has no price in a PriceCatalog)"
                        .into(),
                );
            }
            if flag(e, "pool.has_usage") {
                out.push(format!(
                    "demand: {}/{} over the window: P50 {} GPUs on average, P90 peak {}, of {} GPUs ({})",
                    text(e, "request.cluster"),
                    text(e, "request.pool"),
                    fmt_gpus(num(e, "pool.demand_p50")),
                    fmt_gpus(num(e, "pool.demand_p90")),
                    fmt_gpus(num(e, "pool.gpus")),
                    text(e, "pool.forecast_method")
                ));
            }
            // A low-utilization team is reported by its rule's finding, with the numbers.
        }
        Subject::Reservation => {
            if flag(e, "reservation.has_forecast") {
                out.push(format!(
                    "forecast: {} of the reserved GPU-hours used at P50 ({} at P10); stranded {} at P50, {} at P10, of {} ({})",
                    pct(num(e, "reservation.expected_utilization")),
                    pct(num(e, "reservation.utilization_p10")),
                    money(num(e, "reservation.stranded_cost")),
                    money(num(e, "reservation.stranded_cost_p10")),
                    money(num(e, "reservation.total_cost")),
                    pct(num(e, "reservation.stranded_share"))
                ));
                out.push(format!(
                    "idle: {} of it allocated but not busy at P50 ({}; the pool keeps {} of its allocation busy)",
                    money(num(e, "reservation.idle_cost")),
                    pct(num(e, "reservation.idle_share")),
                    pct(num(e, "reservation.busy_share"))
                ));
                if text(e, "reservation.forecast_basis") == "requests" {
                    out.push(
                        "basis: no usage history; judged on the approved requests alone".into(),
                    );
                } else if !flag(e, "reservation.term_supported") {
                    out.push(format!(
                        "history: {} days support a forecast to {}; the term runs beyond it",
                        fmt_gpus(num(e, "reservation.history_days")),
                        text(e, "reservation.supported_until")
                    ));
                }
                let short = num(e, "reservation.shortfall_hours");
                out.push(if short > 0.0 {
                    format!(
                        "shortfall: {} hours of the term where P90 demand exceeds the pool's {} GPUs, by up to {}",
                        short,
                        fmt_gpus(num(e, "pool.gpus")),
                        fmt_gpus(num(e, "reservation.shortfall_gpus"))
                    )
                } else {
                    format!("shortfall: none (P90 demand stays within the pool's {} GPUs)", fmt_gpus(num(e, "pool.gpus")))
                });
            } else {
                out.push(format!(
                    "cost: {} over the term; no usage history for {}/{} to forecast its use",
                    money(num(e, "reservation.total_cost")),
                    text(e, "cluster.name"),
                    text(e, "pool.name")
                ));
            }
        }
        Subject::Team => {
            if flag(e, "team.has_usage") {
                out.push(format!(
                    "utilization: {} over 30 days ({} of {} GPUs on average); idle cost {}",
                    pct(num(e, "team.utilization")),
                    fmt_gpus(num(e, "team.mean_used_gpus")),
                    fmt_gpus(num(e, "team.mean_allocated_gpus")),
                    money(num(e, "team.idle_cost"))
                ));
            }
            if flag(e, "team.has_budget") {
                let alert = num(e, "team.budget_alert");
                out.push(format!(
                    "budget: {} projected this month of {} ({}){}",
                    money(num(e, "team.projected_spend")),
                    money(num(e, "team.monthly_budget")),
                    pct(num(e, "team.budget_share")),
                    if alert > 0.0 {
                        format!(", past the {} alert", pct(alert))
                    } else {
                        String::new()
                    }
                ));
            }
        }
        _ => {}
    }
    out
}

pub(super) fn approvals_text(e: &Evaluated) -> String {
    e.decision
        .approvals
        .iter()
        .map(|a| {
            let who: Vec<String> = a
                .teams
                .iter()
                .map(|t| format!("@{t}"))
                .chain(a.users.iter().map(|u| format!("@{u}")))
                .collect();
            let who = if who.is_empty() {
                "nobody holds this role".to_string()
            } else {
                who.join(", ")
            };
            format!("{} × {} ({who})", a.count, a.role)
        })
        .collect::<Vec<_>>()
        .join("; ")
}

pub(super) fn outcome_word(o: Outcome) -> &'static str {
    match o {
        Outcome::Approved => "approved automatically",
        Outcome::NeedsApproval => "needs approval",
        Outcome::Denied => "denied",
    }
}

// ------------------------------------------------------------------ human

/// The human report (written to stdout: it is the command's result).
pub fn human(result: &CheckResult, ctx: &Context, sources: &SourceMap, paths: &Paths) -> String {
    let mut text = String::new();
    human_each(result, ctx, sources, paths, &mut |s| text.push_str(s));
    text
}

/// [`human`], handed to `out` a piece at a time (a line or a few), so that
/// a hundred thousand decisions are written without being held as one text.
pub fn human_each(
    result: &CheckResult,
    ctx: &Context,
    sources: &SourceMap,
    paths: &Paths,
    out: &mut dyn FnMut(&str),
) {
    let scope = match &ctx.base {
        Some(b) => format!(
            "changes since {} ({})",
            b.rev,
            &b.commit[..b.commit.len().min(12)]
        ),
        None => "every request, reservation and team".into(),
    };
    out(&format!(
        "capops check: {scope}\npolicy: {} · at {}\n\n",
        ctx.policy, ctx.at
    ));
    if ctx.base.is_some() {
        let (mut a, mut m, mut r) = (0, 0, 0);
        for c in &result.changes {
            match c.change.kind {
                ChangeKind::Added => a += 1,
                ChangeKind::Modified => m += 1,
                ChangeKind::Removed => r += 1,
                ChangeKind::Unchanged => {}
            }
        }
        out(&format!(
            "changed documents: {a} added, {m} modified, {r} removed\n"
        ));
        for c in &result.changes {
            out(&format!(
                "  {} {}/{}{}\n",
                match c.change.kind {
                    ChangeKind::Added => "+",
                    ChangeKind::Modified => "~",
                    ChangeKind::Removed => "-",
                    ChangeKind::Unchanged => " ",
                },
                c.kind,
                c.name,
                if c.change.fields.is_empty() {
                    String::new()
                } else {
                    format!(" ({})", c.change.fields.join(", "))
                }
            ));
        }
        out("\n");
    }
    if let Some(effects) = &ctx.effects {
        out(&effects_text(effects));
        out("\n");
    }
    for e in &result.evaluated {
        let mark = match e.decision.outcome {
            Outcome::Approved => "ok  ",
            Outcome::NeedsApproval => "NEED",
            Outcome::Denied => "DENY",
        };
        let size = gpus(e)
            .map(|g| format!("{} GPU{}", fmt_gpus(g), if g == 1.0 { "" } else { "s" }))
            .unwrap_or_default();
        let tier = e.decision.tier.clone().unwrap_or_else(|| "-".into());
        let change = if e.change == ChangeKind::Unchanged {
            // With a base, an unchanged subject is a standing request the
            // change moved the ground under (policy::standing).
            if ctx.base.is_some() {
                " [standing]".to_string()
            } else {
                String::new()
            }
        } else {
            format!(" [{}]", e.change.as_str())
        };
        out(&format!(
            "{mark} {}/{}{change}  {size}  tier {tier}: {}\n",
            e.subject.as_str(),
            e.name,
            outcome_word(e.decision.outcome)
        ));
        if let Some(span) = e.location {
            out(&format!("       at {}\n", paths.describe(sources, span)));
        }
        if !e.decision.approvals.is_empty() {
            out(&format!("       approvals: {}\n", approvals_text(e)));
        }
        if !e.decision.missing_fields.is_empty() {
            out(&format!(
                "       missing: {}\n",
                e.decision.missing_fields.join(", ")
            ));
        }
        for line in money_lines(e) {
            out(&format!("       {line}\n"));
        }
        for f in &e.decision.findings {
            out(&format!(
                "       {} {}: {}\n",
                f.effect.as_str(),
                f.rule,
                f.message
            ));
        }
    }
    let c = counts(result);
    out(&format!(
        "\n{} evaluated: {} approved automatically, {} need approval, {} denied\n",
        c.evaluated, c.approved, c.needs_approval, c.denied
    ));
}

mod annotate;
mod json_out;
pub use annotate::{annotations, sarif};
pub use json_out::{JsonCheck, JsonDecision, decision_json, json};
