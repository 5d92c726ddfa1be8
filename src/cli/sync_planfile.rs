//! A plan file is data anyone could edit between `plan` and `apply`, so
//! `apply --plan` renders the checkout (at the plan's moment and revision)
//! and refuses a plan whose changes are not what that render asks for:
//! another repository or context, a write whose object is not the rendered
//! one, a delete of something still rendered, a node label value no pool
//! wants. Run from the checkout the plan was made from.

use super::sync_support::Loaded;
use crate::sync::plan::{Action, Plan};
use serde_json::Value;
use std::collections::BTreeMap;

/// The most a plan file may hold (every object of every cluster, as JSON):
/// past it, `apply --plan` refuses rather than reads it into memory.
pub const MAX_PLAN_BYTES: u64 = 256 * 1024 * 1024;

/// A plan file's text. Something other than a file (a FIFO would block,
/// `/dev/zero` would never end) or a file past [`MAX_PLAN_BYTES`] is
/// refused before it is read; the error says why.
pub fn read_text(file: &std::path::Path) -> Result<String, String> {
    #[allow(clippy::disallowed_methods)]
    let meta = std::fs::metadata(file).map_err(|e| e.to_string())?;
    if !meta.is_file() {
        return Err("it is not a plain file".into());
    }
    if meta.len() > MAX_PLAN_BYTES {
        return Err(format!(
            "it is {} bytes, more than a plan holds (at most {MAX_PLAN_BYTES})",
            meta.len()
        ));
    }
    #[allow(clippy::disallowed_methods)]
    std::fs::read_to_string(file).map_err(|e| e.to_string())
}

/// Whether `plan --out` may replace `file`: a file not there yet, an empty
/// (or blank) plain file (what `mktemp` makes), or a capops plan. Anything
/// else (a kubeconfig, a document, a folder) is kept, and the reason given.
pub fn replaceable(file: &std::path::Path) -> Result<(), String> {
    #[allow(clippy::disallowed_methods)]
    match std::fs::symlink_metadata(file) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(e.to_string()),
        Ok(_) => {}
    }
    let text = read_text(file)?;
    if text.trim().is_empty() {
        return Ok(());
    }
    serde_json::from_str::<Plan>(&text)
        .map(|_| ())
        .map_err(|_| {
            "it is there and is not a capops plan, which is all `plan --out` replaces".into()
        })
}

/// What in `plan` the checkout `loaded` would not do, one line each.
pub fn differences(plan: &Plan, loaded: &Loaded) -> Vec<String> {
    let mut out = Vec::new();
    if plan.repository != loaded.repository {
        out.push(format!(
            "the plan is for the capacity repository `{}`; the checkout is `{}`",
            plan.repository, loaded.repository
        ));
        return out;
    }
    for c in &plan.clusters {
        let Some(t) = loaded.targets.iter().find(|t| t.cluster == c.cluster) else {
            out.push(format!(
                "the plan names cluster `{}`, which the checkout does not have",
                c.cluster
            ));
            continue;
        };
        if c.context != t.context {
            out.push(format!(
                "{}: the plan's context {} is not the Cluster's kubeContext {}",
                c.cluster,
                shown(c.context.as_deref()),
                shown(t.context.as_deref())
            ));
        }
        let desired: BTreeMap<String, &Value> = t
            .desired
            .objects
            .iter()
            .map(|d| (crate::sync::plan::key(&d.target), &d.value))
            .collect();
        for ch in &c.changes {
            let key = crate::sync::plan::key(&ch.target);
            match ch.action {
                Action::Delete if desired.contains_key(&key) => out.push(format!(
                    "{}: the plan deletes {key}, which the checkout renders",
                    c.cluster
                )),
                Action::Create | Action::Update | Action::Conflict => {
                    if let Some(o) = &ch.object
                        && desired.get(&key) != Some(&o)
                    {
                        out.push(format!(
                            "{}: the plan writes {key} other than the checkout renders it",
                            c.cluster
                        ));
                    }
                }
                _ => {}
            }
        }
        for n in &c.nodes {
            let wanted = t.desired.pools.iter().find(|p| p.pool == n.pool);
            for (k, l) in &n.labels {
                if wanted.and_then(|p| p.labels.get(k)) != Some(&l.after) {
                    out.push(format!(
                        "{}: the plan sets {k}={} on node {}, which pool `{}` does not ask for",
                        c.cluster, l.after, n.node, n.pool
                    ));
                }
            }
        }
    }
    out
}

/// A context as the messages name it: `name`, or the current context.
fn shown(context: Option<&str>) -> String {
    context.map_or_else(
        || "(the kubeconfig's current context)".to_string(),
        |c| format!("`{}`", c.escape_debug()),
    )
}
