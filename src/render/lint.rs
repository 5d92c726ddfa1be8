//! Rules Kueue and Kubernetes enforce on what capops renders, checked on the
//! repository before anything is rendered (and by every command, through the
//! pipeline), so that a violation is a diagnostic on the document it comes
//! from rather than an object the API server rejects.

use crate::diag::{Code, Diagnostic, Span};
use crate::gpu::resources;
use crate::model::*;
use std::collections::BTreeSet;

/// Kueue's limits (CRD schema, CEL rules and webhook; Kueue v0.19, v1beta2).
pub mod kueue {
    /// Flavors in one resource group, and covered resources.
    pub const MAX_FLAVORS: usize = 64;
    pub const MAX_RESOURCES: usize = 64;
    /// Flavor × resource combinations in one resource group.
    pub const MAX_COMBINATIONS: usize = 512;
    /// Node labels, node taints and tolerations of one ResourceFlavor.
    pub const MAX_FLAVOR_LIST: usize = 8;
    /// Characters of a WorkloadPriorityClass description.
    pub const MAX_DESCRIPTION: usize = 2048;
}

/// A Kubernetes qualified name (label key, resource name): an optional DNS
/// subdomain prefix of at most 253 characters and `/`, then a name of at
/// most 63 alphanumerics, `-`, `_` or `.`, starting and ending alphanumeric.
pub fn label_key(s: &str) -> bool {
    let (prefix, name) = match s.rsplit_once('/') {
        Some((p, n)) => (Some(p), n),
        None => (None, s),
    };
    if let Some(p) = prefix
        && (p.is_empty()
            || p.len() > 253
            || !p.split('.').all(|l| {
                !l.is_empty()
                    && l.len() <= 63
                    && l.bytes()
                        .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == b'-')
                    && !l.starts_with('-')
                    && !l.ends_with('-')
            }))
    {
        return false;
    }
    !name.is_empty() && label_value(name)
}

/// A Kubernetes label value: empty, or at most 63 alphanumerics, `-`, `_`
/// or `.`, starting and ending alphanumeric.
pub fn label_value(s: &str) -> bool {
    let b = s.as_bytes();
    b.is_empty()
        || (b.len() <= 63
            && b[0].is_ascii_alphanumeric()
            && b[b.len() - 1].is_ascii_alphanumeric()
            && b.iter()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'_' | b'.')))
}

/// Node label keys and values and taints of a pool that are not what
/// Kubernetes accepts on a node (and so cannot select its nodes), each at
/// the key or value it is about.
fn label_problems(pool: &NodePool) -> Vec<(Span, String)> {
    let mut problems = Vec::new();
    for (k, v) in &pool.node_labels {
        if !label_key(k) {
            problems.push((
                k.span,
                format!(
                    "node label key `{}` is not a valid label key",
                    k.escape_debug()
                ),
            ));
        }
        if !label_value(v) {
            problems.push((
                v.span,
                format!(
                    "node label value `{}` (of `{}`) is not a valid label value",
                    v.escape_debug(),
                    k.escape_debug()
                ),
            ));
        }
    }
    for t in &pool.taints {
        if !label_key(&t.key) {
            problems.push((
                t.key.span,
                format!(
                    "taint key `{}` is not a valid label key",
                    t.key.escape_debug()
                ),
            ));
        }
        if let Some(v) = &t.value
            && !label_value(v)
        {
            problems.push((
                v.span,
                format!(
                    "taint value `{}` is not a valid label value",
                    v.escape_debug()
                ),
            ));
        }
    }
    problems
}

/// Node labels and taints no node can carry: one `name-invalid` each, at
/// the key or value, whether or not the cluster runs Kueue (with Kueue they
/// would be its ResourceFlavor's; without, the node-label plan's selector).
fn invalid_labels(pool: &NodePool, cluster: &str, diags: &mut Vec<Diagnostic>) {
    for (at, problem) in label_problems(pool) {
        diags.push(
            Diagnostic::new(
                Code::NameInvalid,
                format!(
                    "pool `{}` of `{cluster}` cannot select its nodes: {problem}",
                    pool.name.value
                ),
            )
            .at(at, "not a Kubernetes label")
            .help("label keys are `prefix/name` with a DNS prefix; names and values are at most 63 letters, digits, `-`, `_` or `.`, starting and ending with a letter or digit"),
        );
    }
}

/// Node labels and taints of a pool that Kueue would reject on its ResourceFlavor.
fn flavor(pool: &NodePool, at: Span, diags: &mut Vec<Diagnostic>) {
    let mut problems = Vec::new();
    if pool.node_labels.len() > kueue::MAX_FLAVOR_LIST {
        problems.push(format!(
            "{} node labels (Kueue allows {})",
            pool.node_labels.len(),
            kueue::MAX_FLAVOR_LIST
        ));
    }
    if pool.taints.len() > kueue::MAX_FLAVOR_LIST {
        problems.push(format!(
            "{} taints, so {} tolerations (Kueue allows {})",
            pool.taints.len(),
            pool.taints.len(),
            kueue::MAX_FLAVOR_LIST
        ));
    }
    if !problems.is_empty() {
        diags.push(
            Diagnostic::new(
                Code::KueueLimitExceeded,
                format!(
                    "pool `{}` cannot be a Kueue ResourceFlavor: {}",
                    pool.name.value,
                    problems.join("; ")
                ),
            )
            .at(at, "pool")
            .help("select the pool's nodes with fewer labels, or move taints the workloads need not tolerate off these nodes"),
        );
    }
}

/// The Kueue limits of one cluster's resource group and flavors, and pools
/// whose ResourceFlavor would match every node. Empty when Kueue is off.
pub fn kueue_cluster(cluster: &Document<ClusterSpec>) -> Vec<Diagnostic> {
    let mut diags = Vec::new();
    let spec = &cluster.spec;
    if !spec.kueue.as_ref().is_some_and(|k| k.enabled) {
        return diags;
    }
    let name = cluster.name();
    let strategy = spec.mig_strategy.value;
    let covered: BTreeSet<String> = spec
        .node_pools
        .iter()
        .flat_map(|p| resources::provided(p, strategy))
        .map(|p| p.resource)
        .collect();
    let flavors = spec.node_pools.len();
    let combos = flavors * covered.len();
    if flavors > kueue::MAX_FLAVORS
        || covered.len() > kueue::MAX_RESOURCES
        || combos > kueue::MAX_COMBINATIONS
    {
        diags.push(
            Diagnostic::new(
                Code::KueueLimitExceeded,
                format!(
                    "cluster `{name}` would need a Kueue resource group of {flavors} flavors and {} resources ({combos} combinations); Kueue allows {} flavors, {} resources and {} combinations",
                    covered.len(),
                    kueue::MAX_FLAVORS,
                    kueue::MAX_RESOURCES,
                    kueue::MAX_COMBINATIONS
                ),
            )
            .at(cluster.name_span(), "cluster")
            .help("split the cluster's pools, or use fewer MIG profiles"),
        );
    }
    for pool in &spec.node_pools {
        flavor(pool, pool.name.span, &mut diags);
        invalid_labels(pool, name, &mut diags);
        if pool.node_labels.is_empty() {
            diags.push(unlabelled(
                pool,
                name,
                "its Kueue ResourceFlavor would match every node",
            ));
        }
    }
    diags
}

/// A pool without node labels cannot be selected.
pub fn unlabelled(pool: &NodePool, cluster: &str, why: &str) -> Diagnostic {
    Diagnostic::new(
        Code::PoolWithoutNodeLabels,
        format!(
            "pool `{}` of `{cluster}` has no nodeLabels: {why}",
            pool.name.value
        ),
    )
    .at(pool.name.span, "pool")
    .help("add nodeLabels that select the pool's nodes, e.g. the node group label your cloud sets")
}

/// Every rule of this module, over the whole repository.
pub fn lint(repo: &Repo, diags: &mut Vec<Diagnostic>) {
    if let Some(first) = repo
        .clusters
        .values()
        .find(|c| c.spec.kueue.as_ref().is_some_and(|k| k.enabled))
    {
        description_limit(repo, first, diags);
    }
    for cluster in repo.clusters.values() {
        if cluster.spec.kueue.as_ref().is_some_and(|k| k.enabled) {
            diags.extend(kueue_cluster(cluster));
            continue;
        }
        // Without Kueue the node labels still select the pool's nodes (the
        // node-label plan, `capops apply`).
        for pool in &cluster.spec.node_pools {
            invalid_labels(pool, cluster.name(), diags);
        }
    }
}

/// A PriorityClass whose description Kueue's WorkloadPriorityClass refuses,
/// where a cluster runs Kueue (`cluster`, the first; render would stop at it).
fn description_limit(repo: &Repo, cluster: &Document<ClusterSpec>, diags: &mut Vec<Diagnostic>) {
    diags.extend(
        repo.priority_classes
            .values()
            .filter_map(|pc| description_too_long(pc, cluster.name())),
    );
}

/// The diagnostic for a PriorityClass whose description is longer than
/// Kueue's WorkloadPriorityClass takes, on cluster `cluster`.
pub fn description_too_long(pc: &Document<PriorityClassSpec>, cluster: &str) -> Option<Diagnostic> {
    pc.spec
        .description
        .as_ref()
        .is_some_and(|d| d.chars().count() > kueue::MAX_DESCRIPTION)
        .then(|| {
            Diagnostic::new(
                Code::KueueLimitExceeded,
                format!(
                    "priority class `{}` has a description over {} characters, which Kueue's WorkloadPriorityClass on cluster `{cluster}` refuses",
                    pc.name(),
                    kueue::MAX_DESCRIPTION,
                ),
            )
            .at(pc.name_span(), "priority class")
            .help("shorten the description")
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_follow_kubernetes_rules() {
        assert!(label_key("nvidia.com/mig-1g.10gb"));
        assert!(label_key("acme.ai/gpu-pool"));
        assert!(label_key("pool"));
        assert!(!label_key("Acme.ai/pool"));
        assert!(!label_key("a/b/c"));
        assert!(!label_key("acme.ai/"));
        assert!(label_value(""));
        assert!(label_value("h100-mig"));
        assert!(!label_value("-x"));
        assert!(!label_value(&"x".repeat(64)));
    }
}
