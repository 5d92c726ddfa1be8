//! How plans, applies, drift and verification read for people: text in the
//! manner of `terraform plan` (`+ create`, `~ update` with field-level
//! diffs, `- delete`, `! conflict`, `x error`, a `Plan:` line per cluster
//! and overall), and the Markdown issue body `drift` writes for a
//! scheduled workflow. Pure: strings in, strings out.

use super::apply::ClusterApply;
use super::nodes::Mismatch;
use super::plan::{Action, Change, ClusterError, ClusterPlan, Plan, Summary};
use serde_json::Value;
use std::fmt::Write;

/// A value in a diff line.
pub fn value(v: Option<&Value>) -> String {
    match v {
        None => "(none)".into(),
        Some(Value::String(s)) => format!("{s:?}"),
        Some(v) => {
            let s = serde_json::to_string(v).unwrap_or_default();
            if s.len() > 120 {
                format!(
                    "{}…",
                    &s[..s.char_indices().nth(117).map_or(s.len(), |(i, _)| i)]
                )
            } else {
                s
            }
        }
    }
}

fn error_lines(out: &mut String, indent: &str, e: &ClusterError) {
    let _ = writeln!(out, "{indent}error[{}]: {}", e.code, e.message);
    if let Some(h) = &e.help {
        let _ = writeln!(out, "{indent}  help: {h}");
    }
}

fn change_lines(out: &mut String, c: &Change) {
    let head = format!("  {} {}", c.action.symbol(), c.target);
    match (&c.conflict, &c.error) {
        (Some(k), _) => {
            let _ = writeln!(out, "{head}: {}", k.describe());
            if k.forceable() {
                let _ = writeln!(out, "      help: --force-conflicts takes it over");
            }
        }
        (None, Some(e)) => {
            let _ = writeln!(out, "{head}: error[{}]: {}", e.code, e.message);
            if let Some(h) = &e.help {
                let _ = writeln!(out, "      help: {h}");
            }
        }
        _ => {
            let _ = writeln!(out, "{head}");
        }
    }
    for d in &c.diff {
        let _ = writeln!(
            out,
            "      {}: {} → {}",
            d.path,
            value(d.before.as_ref()),
            value(d.after.as_ref())
        );
    }
}

/// One cluster's plan as text.
pub fn cluster_plan(p: &ClusterPlan) -> String {
    let mut out = String::new();
    let ctx = p
        .context
        .as_deref()
        .map(|c| format!(" (context {c})"))
        .unwrap_or_default();
    let _ = writeln!(out, "cluster {}{ctx}:", p.cluster);
    if let Some(e) = &p.error {
        error_lines(&mut out, "  ", e);
        return out;
    }
    for c in &p.changes {
        change_lines(&mut out, c);
    }
    for n in &p.nodes {
        let symbol = if n.conflict.is_some() { '!' } else { '~' };
        match &n.conflict {
            Some(k) => {
                let _ = writeln!(
                    out,
                    "  {symbol} Node {} (pool {}): {}",
                    n.node,
                    n.pool,
                    k.describe()
                );
            }
            None => {
                let _ = writeln!(out, "  {symbol} Node {} (pool {})", n.node, n.pool);
            }
        }
        for (k, l) in &n.labels {
            let _ = writeln!(
                out,
                "      metadata.labels[{k:?}]: {} → {:?}",
                l.before
                    .as_deref()
                    .map_or("(none)".to_string(), |b| format!("{b:?}")),
                l.after
            );
        }
    }
    if p.changes.is_empty() && p.nodes.is_empty() {
        let _ = writeln!(
            out,
            "  no changes: {} objects are as desired",
            p.summary.unchanged
        );
    }
    let _ = writeln!(out, "  {}", p.summary.line());
    out
}

/// The whole plan as text, with the overall line.
pub fn plan(p: &Plan) -> String {
    let mut out = String::new();
    for c in &p.clusters {
        out.push_str(&cluster_plan(c));
        out.push('\n');
    }
    let failed = p.clusters.iter().filter(|c| c.error.is_some()).count();
    let _ = write!(out, "{}", overall(&p.summary, p.clusters.len(), failed));
    out
}

fn overall(s: &Summary, clusters: usize, failed: usize) -> String {
    let mut line = format!(
        "Overall: {} ({} cluster{}",
        s.line(),
        clusters,
        if clusters == 1 { "" } else { "s" }
    );
    if failed > 0 {
        let _ = write!(line, ", {failed} could not be planned");
    }
    if s.error > 0 {
        let _ = write!(
            line,
            ", {} object error{}",
            s.error,
            if s.error == 1 { "" } else { "s" }
        );
    }
    line.push_str(")\n");
    line
}

/// The result of an apply as text.
pub fn applied(results: &[ClusterApply]) -> String {
    let mut out = String::new();
    for r in results {
        let applied = r.outcomes.iter().filter(|o| o.status == "applied").count();
        if let Some(e) = &r.error
            && r.outcomes.is_empty()
        {
            let _ = writeln!(out, "cluster {}:", r.cluster);
            error_lines(&mut out, "  ", e);
            continue;
        }
        if r.outcomes.is_empty() {
            let _ = writeln!(
                out,
                "cluster {}: no changes, {} write{}",
                r.cluster,
                r.writes,
                if r.writes == 1 { "" } else { "s" }
            );
            continue;
        }
        let _ = writeln!(
            out,
            "cluster {}: {applied} applied, {} skipped, {} failed ({} write{})",
            r.cluster,
            r.skipped(),
            r.failed(),
            r.writes,
            if r.writes == 1 { "" } else { "s" }
        );
        for o in &r.outcomes {
            let symbol = o.action.symbol();
            match &o.error {
                Some(e) => {
                    let _ = writeln!(
                        out,
                        "  {symbol} {}: {} [{}]: {}",
                        o.target, o.status, e.code, e.message
                    );
                    if let Some(h) = &e.help {
                        let _ = writeln!(out, "      help: {h}");
                    }
                }
                None => {
                    let _ = writeln!(out, "  {symbol} {}: {}", o.target, o.status);
                }
            }
        }
        for n in &r.rollout {
            let state = serde_json::to_value(n.state)
                .ok()
                .and_then(|v| v.as_str().map(str::to_string))
                .unwrap_or_default();
            let _ = writeln!(
                out,
                "  MIG {} (pool {}) → {}: {state}{}",
                n.node,
                n.pool,
                n.config,
                if n.timed_out { " (timed out)" } else { "" }
            );
        }
        if let Some(e) = &r.error {
            error_lines(&mut out, "  ", e);
        }
    }
    out
}

fn md_escape(s: &str) -> String {
    s.replace('|', "\\|").replace('`', "'")
}

/// The drift of a plan as a Markdown issue body.
pub fn drift_markdown(p: &Plan) -> String {
    let mut out = String::new();
    let drifted: Vec<&ClusterPlan> = p
        .clusters
        .iter()
        .filter(|c| c.summary.drifted() || c.error.is_some() || c.summary.error > 0)
        .collect();
    let _ = writeln!(out, "## capops drift: `{}`\n", md_escape(&p.repository));
    // A cluster that could not be checked is not one that differs.
    let unchecked = drifted.iter().filter(|c| c.error.is_some()).count();
    let differ = drifted.len() - unchecked;
    let _ = writeln!(
        out,
        "Checked {} cluster{} against revision `{}` at {}: {differ} differ{}{}.\n",
        p.clusters.len(),
        if p.clusters.len() == 1 { "" } else { "s" },
        md_escape(&p.revision),
        p.at,
        if differ == 1 { "s" } else { "" },
        if unchecked > 0 {
            format!(", {unchecked} could not be checked")
        } else {
            String::new()
        }
    );
    for c in drifted {
        let _ = writeln!(out, "### `{}`\n", md_escape(&c.cluster));
        if let Some(e) = &c.error {
            let _ = writeln!(
                out,
                "Could not be checked: **{}** {}\n",
                e.code,
                md_escape(&e.message)
            );
            continue;
        }
        let _ = writeln!(out, "| | object | what differs |\n| --- | --- | --- |");
        for ch in &c.changes {
            let what = match (ch.action, &ch.conflict, &ch.error) {
                (_, Some(k), _) => md_escape(&k.describe()),
                (_, None, Some(e)) => format!("{}: {}", e.code, md_escape(&e.message)),
                (Action::Create, _, _) => "missing from the cluster".into(),
                (Action::Delete, _, _) => "owned by capops, no longer desired".into(),
                _ => ch
                    .diff
                    .iter()
                    .map(|d| {
                        format!(
                            "`{}`: `{}` → `{}`",
                            md_escape(&d.path),
                            md_escape(&value(d.before.as_ref())),
                            md_escape(&value(d.after.as_ref()))
                        )
                    })
                    .collect::<Vec<_>>()
                    .join("<br>"),
            };
            let _ = writeln!(
                out,
                "| {} | {} `{}` | {what} |",
                ch.action.symbol(),
                ch.target.kind,
                md_escape(&match &ch.target.namespace {
                    Some(ns) => format!("{ns}/{}", ch.target.name),
                    None => ch.target.name.clone(),
                }),
            );
        }
        for n in &c.nodes {
            let what = n
                .labels
                .iter()
                .map(|(k, l)| {
                    format!(
                        "`{}`: `{}` → `{}`",
                        md_escape(k),
                        md_escape(l.before.as_deref().unwrap_or("(none)")),
                        md_escape(&l.after)
                    )
                })
                .collect::<Vec<_>>()
                .join("<br>");
            let _ = writeln!(out, "| ~ | Node `{}` | {what} |", md_escape(&n.node));
        }
        let _ = writeln!(out, "\n{}\n", c.summary.line());
    }
    let _ = writeln!(
        out,
        "Run `capops plan` to review and `capops apply` to restore the desired state; conflicts need a person."
    );
    out
}

/// Verification mismatches as text.
pub fn mismatches(cluster: &str, m: &[Mismatch]) -> String {
    let mut out = String::new();
    if m.is_empty() {
        let _ = writeln!(out, "cluster {cluster}: every pool's nodes match");
        return out;
    }
    let _ = writeln!(
        out,
        "cluster {cluster}: {} mismatch{} [node-mismatch]",
        m.len(),
        if m.len() == 1 { "" } else { "es" }
    );
    for x in m {
        let at = match &x.node {
            Some(n) => format!("pool {} node {n}", x.pool),
            None => format!("pool {}", x.pool),
        };
        let _ = writeln!(
            out,
            "  {at}: {}: expected {}, found {}",
            x.check, x.expected, x.found
        );
    }
    out
}
