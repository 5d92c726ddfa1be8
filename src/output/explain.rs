//! `capops explain`: the whole trace of one decision, for people.

use super::Paths;
use super::check::Context;
use crate::diag::SourceMap;
use crate::policy::change::ChangeKind;
use crate::policy::{Evaluated, Outcome};

pub fn human(e: &Evaluated, ctx: &Context, sources: &SourceMap, paths: &Paths) -> String {
    let mut out = String::new();
    out.push_str(&format!("{} {}", e.subject.as_str(), e.name));
    if let Some(span) = e.location {
        out.push_str(&format!(" ({})", paths.describe(sources, span)));
    }
    out.push('\n');
    let change = match e.change {
        ChangeKind::Unchanged => "judged as it stands".to_string(),
        k => format!(
            "{} since {}",
            k.as_str(),
            ctx.base
                .as_ref()
                .map(|b| b.rev.as_str())
                .unwrap_or("the base")
        ),
    };
    out.push_str(&format!(
        "{change} · policy: {} · at {}\n",
        ctx.policy, ctx.at
    ));
    if !e.fields.is_empty() {
        out.push_str(&format!("changed fields: {}\n", e.fields.join(", ")));
    }
    let tiers: Vec<_> = e
        .decision
        .trace
        .iter()
        .filter(|t| t.kind == "tier")
        .collect();
    if !tiers.is_empty() {
        out.push_str("\ntiers (the first that holds is the starting tier):\n");
        for t in tiers {
            out.push_str(&step(t));
        }
    }
    let rules: Vec<_> = e
        .decision
        .trace
        .iter()
        .filter(|t| t.kind == "rule")
        .collect();
    if !rules.is_empty() {
        out.push_str("\nrules:\n");
        for t in rules {
            out.push_str(&step(t));
        }
    }
    out.push_str("\ndecision: ");
    out.push_str(match e.decision.outcome {
        Outcome::Approved => "approved automatically",
        Outcome::NeedsApproval => "needs approval",
        Outcome::Denied => "denied",
    });
    if let Some(t) = &e.decision.tier {
        out.push_str(&format!(" (tier {t})"));
    }
    out.push('\n');
    for a in &e.decision.approvals {
        let who: Vec<String> = a
            .teams
            .iter()
            .chain(a.users.iter())
            .map(|w| format!("@{w}"))
            .collect();
        out.push_str(&format!(
            "  needs {} × {} ({}) — from {}\n",
            a.count,
            a.role,
            if who.is_empty() {
                "nobody holds this role".to_string()
            } else {
                who.join(", ")
            },
            a.from
        ));
    }
    if !e.decision.missing_fields.is_empty() {
        out.push_str(&format!(
            "  missing fields the tier requires: {}\n",
            e.decision.missing_fields.join(", ")
        ));
    }
    for f in &e.decision.findings {
        out.push_str(&format!(
            "  {} {}: {}\n",
            f.effect.as_str(),
            f.rule,
            f.message
        ));
    }
    out
}

fn step(t: &crate::policy::TraceStep) -> String {
    let result = match &t.result {
        Ok(true) => "true".to_string(),
        Ok(false) => "false".to_string(),
        Err(e) => format!("ERROR ({e})"),
    };
    let mut s = format!("  {:<34} {}\n", t.name, t.condition);
    for (k, v) in &t.reads {
        s.push_str(&format!("  {:<34}   {k} = {v}\n", ""));
    }
    s.push_str(&format!("  {:<34}   → {result}: {}\n", "", t.effect));
    s
}
