//! The pull-request comment: `capops check --format markdown`.
//!
//! One comment, found again by its hidden marker: a one-line summary, a table
//! of the changed documents with tier, approvers, cost and key facts, findings
//! that link to the file and line, a Mermaid chart of forecast demand against
//! capacity for each pool the change touches, and folded details. It never
//! exceeds GitHub's 65,536-character comment limit: details are dropped
//! first, then charts, then rows.

use super::Paths;
use super::check::{Context, counts, fmt_gpus};
use super::escape::{cell_code, code, escape, longest_run, url_path};
use crate::diag::{SourceMap, Span};
use crate::model::{Effect, Subject};
use crate::policy::change::ChangeKind;
use crate::policy::{CheckResult, Evaluated, Outcome};

/// GitHub's limit on a comment body.
pub const COMMENT_LIMIT: usize = 65_536;
/// The marker that identifies capops' comment on a pull request.
pub const MARKER: &str = "<!-- capops:check -->";

/// Where links point: `https://github.com/org/repo/blob/<sha>/`.
#[derive(Debug, Clone, Default)]
pub struct Links {
    pub blob_base: Option<String>,
}

impl Links {
    /// From the GitHub Actions environment, when there is one.
    pub fn from_env(env: &dyn Fn(&str) -> Option<String>) -> Links {
        let server = env("GITHUB_SERVER_URL");
        let repo = env("GITHUB_REPOSITORY");
        let sha = env("CAPOPS_HEAD_SHA")
            .or_else(|| env("GITHUB_HEAD_SHA"))
            .or_else(|| env("GITHUB_SHA"));
        Links {
            blob_base: match (server, repo, sha) {
                (Some(s), Some(r), Some(h)) => Some(format!("{s}/{r}/blob/{h}/")),
                _ => None,
            },
        }
    }
}

fn place(span: Span, sources: &SourceMap, paths: &Paths, links: &Links) -> String {
    let lc = sources.line_col(span);
    let file = paths.file(sources, span.file);
    let text = code(&format!("{file}:{}", lc.line));
    match (&links.blob_base, Paths::in_worktree(sources, span.file)) {
        (Some(base), true) => format!("[{text}]({base}{}#L{})", url_path(&file), lc.line),
        _ => text,
    }
}

fn icon(o: Outcome) -> &'static str {
    match o {
        Outcome::Approved => "✅",
        Outcome::NeedsApproval => "🟡",
        Outcome::Denied => "❌",
    }
}

fn gpus_of(e: &Evaluated) -> String {
    let path = match e.subject {
        Subject::CapacityRequest => "request.gpus",
        Subject::Reservation => "reservation.gpus",
        Subject::Team => "team.quota_gpus",
        _ => return "–".into(),
    };
    e.decision
        .facts
        .lookup(path)
        .and_then(|v| f64::try_from(v).ok())
        .map(fmt_gpus)
        .unwrap_or_else(|| "–".into())
}

fn approvers(e: &Evaluated) -> String {
    if e.decision.approvals.is_empty() {
        return "–".into();
    }
    e.decision
        .approvals
        .iter()
        .map(|a| {
            let who: Vec<String> = a
                .teams
                .iter()
                .chain(a.users.iter())
                .map(|w| cell_code(w))
                .collect();
            if who.is_empty() {
                format!("{} × {}", a.count, escape(a.role.as_str()))
            } else {
                format!(
                    "{} × {} ({})",
                    a.count,
                    escape(a.role.as_str()),
                    who.join(", ")
                )
            }
        })
        .collect::<Vec<_>>()
        .join("<br>")
}

fn key_facts(e: &Evaluated) -> String {
    let f = &e.decision.facts;
    let get = |p: &str| f.lookup(p);
    let mut parts = Vec::new();
    if e.subject == Subject::CapacityRequest {
        if let Some(w) =
            get("request.window.start").filter(|v| !v.as_str().unwrap_or("").is_empty())
        {
            let end = get("request.window.end")
                .map(|v| v.to_string())
                .unwrap_or_default();
            parts.push(format!(
                "{}→{}",
                &w.to_string()[..10.min(w.to_string().len())],
                &end[..10.min(end.len())]
            ));
        } else {
            parts.push("no window".into());
        }
        if let Some(v) = get("team.within_quota") {
            parts.push(if v.is_true() {
                "within quota".into()
            } else {
                "over quota".into()
            });
        }
        if get("pool.overcommitted").is_some_and(|v| v.is_true()) {
            parts.push("pool over-committed".into());
        }
        if get("request.has_price").is_some_and(|v| v.is_true()) {
            let currency = get("config.currency")
                .map(|v| v.to_string())
                .unwrap_or_default();
            let n = |p: &str| get(p).and_then(|v| f64::try_from(v).ok()).unwrap_or(0.0);
            let mut cost = format!(
                "{}/month",
                crate::model::money::format_f64(n("request.monthly_cost"), &currency)
            );
            if matches!(e.change, ChangeKind::Added | ChangeKind::Modified) {
                let d = n("change.delta_monthly_cost");
                cost.push_str(&format!(
                    " ({}{})",
                    if d >= 0.0 { "+" } else { "" },
                    crate::model::money::format_f64(d, &currency)
                ));
            }
            parts.push(cost);
        }
        if get("pool.has_usage").is_some_and(|v| v.is_true()) {
            let n = |p: &str| get(p).and_then(|v| f64::try_from(v).ok()).unwrap_or(0.0);
            parts.push(format!(
                "pool demand P50 {} / P90 {} of {} GPUs",
                fmt_gpus(n("pool.demand_p50").round()),
                fmt_gpus(n("pool.demand_p90").round()),
                fmt_gpus(n("pool.gpus"))
            ));
        }
    }
    if e.subject == Subject::Team {
        let n = |p: &str| get(p).and_then(|v| f64::try_from(v).ok()).unwrap_or(0.0);
        let currency = get("config.currency")
            .map(|v| v.to_string())
            .unwrap_or_default();
        if get("team.has_usage").is_some_and(|v| v.is_true()) {
            parts.push(format!(
                "{:.0}% used over 30 days",
                100.0 * n("team.utilization")
            ));
        }
        if get("team.has_budget").is_some_and(|v| v.is_true()) {
            parts.push(format!(
                "{} projected this month ({:.0}% of budget)",
                crate::model::money::format_f64(n("team.projected_spend"), &currency),
                100.0 * n("team.budget_share")
            ));
        }
    }
    if e.subject == Subject::Reservation
        && let (Some(c), Some(d)) = (get("reservation.total_cost"), get("reservation.days"))
    {
        let currency = get("config.currency")
            .map(|v| v.to_string())
            .unwrap_or_default();
        let cost = f64::try_from(c).unwrap_or(0.0);
        let days = f64::try_from(d).unwrap_or(0.0);
        parts.push(format!(
            "{} over {} days",
            crate::model::money::format_f64(cost, &currency),
            fmt_gpus(days)
        ));
        if get("reservation.has_forecast").is_some_and(|v| v.is_true()) {
            let n = |p: &str| get(p).and_then(|v| f64::try_from(v).ok()).unwrap_or(0.0);
            parts.push(format!(
                "{:.0}% used at P50, {} stranded ({} at P10), {} idle",
                100.0 * n("reservation.expected_utilization"),
                crate::model::money::format_f64(n("reservation.stranded_cost"), &currency),
                crate::model::money::format_f64(n("reservation.stranded_cost_p10"), &currency),
                crate::model::money::format_f64(n("reservation.idle_cost"), &currency)
            ));
        }
    }
    parts.join(", ")
}

/// What the pull-request loop adds to the comment (`capops check --github`).
#[derive(Debug, Clone, Default)]
pub struct Lead {
    /// The verdict once approvals are verified, instead of the policy's alone.
    pub verdict: Option<String>,
    /// Markdown placed after the totals (the approvals section).
    pub sections: String,
}

/// Renders the comment.
pub fn comment(
    result: &CheckResult,
    ctx: &Context,
    sources: &SourceMap,
    paths: &Paths,
    links: &Links,
) -> String {
    comment_with(result, ctx, sources, paths, links, &Lead::default())
}

/// Renders the comment with the pull-request loop's verdict and sections.
pub fn comment_with(
    result: &CheckResult,
    ctx: &Context,
    sources: &SourceMap,
    paths: &Paths,
    links: &Links,
    lead: &Lead,
) -> String {
    let c = counts(result);
    let verdict = if let Some(v) = &lead.verdict {
        v.clone()
    } else if c.denied > 0 {
        format!("❌ {} denied", c.denied)
    } else if c.needs_approval > 0 {
        let mut roles: Vec<&str> = result
            .evaluated
            .iter()
            .flat_map(|e| e.decision.approvals.iter().map(|a| a.role.as_str()))
            .collect();
        roles.sort_unstable();
        roles.dedup();
        format!("🟡 needs approval ({})", escape(&roles.join(", ")))
    } else {
        "✅ approved automatically".into()
    };
    let scope = if ctx.base.is_some() {
        format!(
            "{} change{}",
            c.evaluated,
            if c.evaluated == 1 { "" } else { "s" }
        )
    } else {
        format!("{} documents", c.evaluated)
    };
    let mut head = format!("{MARKER}\n### GPU capacity check: {scope} · {verdict}\n\n");
    head.push_str(&super::totals::markdown(
        &super::totals::totals(result),
        &verdict,
    ));
    head.push('\n');
    let judged = match &ctx.base {
        Some(b) => format!(
            "Policy from base {} ({})",
            code(&b.rev),
            code(b.commit.get(..12).unwrap_or(&b.commit))
        ),
        None => "Policy from the working tree".into(),
    };
    head.push_str(&format!(
        "{judged}: {} · evaluated at {} · {} approved automatically, {} need approval, {} denied\n\n",
        escape(&ctx.policy), ctx.at, c.approved, c.needs_approval, c.denied
    ));
    head.push_str(&lead.sections);
    if let Some(effects) = &ctx.effects
        && !effects.files.is_empty()
    {
        head.push_str(&effects_section(effects));
    }

    let mut rows = Vec::new();
    for e in &result.evaluated {
        let change = match e.change {
            ChangeKind::Unchanged if ctx.base.is_some() => "standing".to_string(),
            ChangeKind::Unchanged => "–".to_string(),
            k => k.as_str().to_string(),
        };
        let missing = if e.decision.missing_fields.is_empty() {
            "–".to_string()
        } else {
            escape(&e.decision.missing_fields.join(", "))
        };
        rows.push(format!(
            "| {} | {} | {} | {} | {} | {} | {} | {} |\n",
            icon(e.decision.outcome),
            cell_code(&format!("{}/{}", e.subject.as_str(), e.name)),
            change,
            gpus_of(e),
            e.decision
                .tier
                .as_deref()
                .map(escape)
                .unwrap_or_else(|| "–".into()),
            approvers(e),
            missing,
            escape(&key_facts(e)),
        ));
    }
    let table_head = "| | Document | Change | GPUs | Tier | Approvals required | Missing | Facts |\n|---|---|---|---|---|---|---|---|\n";

    let mut findings = String::new();
    for e in &result.evaluated {
        for f in &e.decision.findings {
            let (mark, word) = match f.effect {
                Effect::Deny => ("❌", "deny"),
                Effect::Warn => ("⚠️", "warn"),
                Effect::RequireApproval => ("🟡", "approval"),
                Effect::Escalate => ("⬆️", "escalate"),
            };
            let at = e
                .location
                .map(|s| format!(" at {}", place(s, sources, paths, links)))
                .unwrap_or_default();
            findings.push_str(&format!(
                "- {mark} **{word}** {} on {}{at}: {}\n",
                code(&f.rule),
                code(&e.name),
                escape(&f.message)
            ));
        }
    }

    let mut charts = String::new();
    if !ctx.charts.is_empty() {
        charts.push_str("\n**Forecast against capacity**\n\n");
        for c in &ctx.charts {
            charts.push_str(&super::chart::mermaid(c));
            charts.push('\n');
        }
    }

    let mut details = String::from("<details><summary>How each decision was reached</summary>\n\n");
    for e in &result.evaluated {
        if e.decision.trace.is_empty() {
            continue;
        }
        details.push_str(&code(&format!("{}/{}", e.subject.as_str(), e.name)));
        if let Some(t) = &e.decision.tier {
            details.push_str(&format!(" → tier {}", code(t)));
        }
        details.push('\n');
        let mut landed = false;
        for step in &e.decision.trace {
            let result = match &step.result {
                Ok(true) => "true".to_string(),
                Ok(false) => "false".to_string(),
                Err(err) => format!("error: {err}"),
            };
            // Tiers up to the one it landed in, and the rules that fired.
            if (step.kind == "tier" && landed) || (step.kind == "rule" && step.result == Ok(false))
            {
                continue;
            }
            if step.kind == "tier" && step.result == Ok(true) {
                landed = true;
            }
            let reads: Vec<String> = step
                .reads
                .iter()
                .map(|(k, v)| format!("{k} = {v}"))
                .collect();
            details.push_str(&format!(
                "- {} {}: {} → {result} ({}){}\n",
                escape(step.kind),
                code(&step.name),
                code(&step.condition),
                escape(&reads.join(", ")),
                if step.effect.is_empty() {
                    String::new()
                } else {
                    format!(": {}", escape(&step.effect))
                }
            ));
        }
        details.push('\n');
    }
    details.push_str("</details>\n");
    let footer = "\n<sub>capops: approvals count for the current head commit only; each role's approvers are listed in the Config.</sub>\n";

    assemble(
        &head, table_head, &rows, &findings, &charts, &details, footer,
    )
}

/// Puts the parts together within the comment limit.
fn assemble(
    head: &str,
    table_head: &str,
    rows: &[String],
    findings: &str,
    charts: &str,
    details: &str,
    footer: &str,
) -> String {
    let findings_block = if findings.is_empty() {
        String::new()
    } else {
        format!("\n**Findings**\n\n{findings}")
    };
    let full = format!(
        "{head}{table_head}{}{findings_block}{charts}\n{details}{footer}",
        rows.concat()
    );
    if full.len() <= COMMENT_LIMIT {
        return full;
    }
    // Without the details, with the charts.
    let note = "\n_Details omitted to fit GitHub's comment limit: run `capops check --format json` or `capops explain NAME`._\n";
    let with_charts = format!(
        "{head}{table_head}{}{findings_block}{charts}{note}{footer}",
        rows.concat()
    );
    if with_charts.len() <= COMMENT_LIMIT {
        return with_charts;
    }
    // Without the details and the charts.
    let without = format!(
        "{head}{table_head}{}{findings_block}{note}{footer}",
        rows.concat()
    );
    if without.len() <= COMMENT_LIMIT {
        return without;
    }
    // Rows and findings cut to fit.
    let budget = COMMENT_LIMIT
        .saturating_sub(head.len() + table_head.len() + note.len() + footer.len() + 200);
    let mut body = String::new();
    let mut shown = 0;
    for row in rows {
        if body.len() + row.len() > budget {
            break;
        }
        body.push_str(row);
        shown += 1;
    }
    if shown < rows.len() {
        body.push_str(&format!(
            "\n… and {} more (see the JSON output)\n",
            rows.len() - shown
        ));
    }
    let mut out = format!("{head}{table_head}{body}");
    let room = COMMENT_LIMIT.saturating_sub(out.len() + note.len() + footer.len() + 100);
    if !findings_block.is_empty() && room > 100 {
        let mut cut: String = findings_block.chars().take(room).collect();
        if cut.len() < findings_block.len() {
            cut = cut
                .rsplit_once('\n')
                .map(|(a, _)| a.to_string())
                .unwrap_or_default();
            cut.push_str("\n- … more findings omitted\n");
        }
        out.push_str(&cut);
    }
    out.push_str(note);
    out.push_str(footer);
    out
}

/// The most of the effect section's lines a comment shows (in bytes): the
/// rest of the comment, and GitHub's limit, need room too.
const EFFECTS_SHOWN: usize = 20_000;

/// The effect on clusters and clouds, folded: a `diff` block, one line a
/// file, cut to [`EFFECTS_SHOWN`] with a count of the lines left out.
fn effects_section(effects: &super::check::EffectsView) -> String {
    let e = &effects.summary;
    let mut body = String::new();
    let mut left_out = 0usize;
    for l in super::check::effects_text(effects).lines().skip(1) {
        let t = l.trim_start();
        let line = if t.starts_with(['+', '-', '~']) {
            format!("{t}\n")
        } else {
            format!(" {l}\n")
        };
        if left_out > 0 || body.len() + line.len() > EFFECTS_SHOWN {
            left_out += 1;
        } else {
            body.push_str(&line);
        }
    }
    if left_out > 0 {
        body.push_str(&format!(
            " … and {left_out} more lines: `capops plan` or `capops check --format json` lists them all\n"
        ));
    }
    // A fence longer than any run of backticks inside, so nothing ends it.
    let fence = "`".repeat(3.max(longest_run(&body, '`') + 1));
    format!(
        "<details><summary>Effect on clusters and clouds: {} to add, {} to change, {} to remove</summary>\n\n{fence}diff\n{body}{fence}\n\n</details>\n\n",
        e.objects_added, e.objects_changed, e.objects_removed
    )
}
