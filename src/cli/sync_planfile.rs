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
                "{}: the plan's context {:?} is not the Cluster's kubeContext {:?}",
                c.cluster, c.context, t.context
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
