//! Which nodes a changed cluster's pools reach, compared with the base. A
//! pool's `nodeLabels` are its identity on the nodes: its queues, MIG layout
//! and time-slicing land wherever they match. A selector is a conjunction of
//! label equalities, so any two selectors may reach a common node unless they
//! ask for different values of one label; and a selector that asks for every
//! label the old one asked for (with the same values) reaches no node the old
//! one did not. Any change of a pool's selector is judged (a label added can
//! leave the pool without nodes, or aim it at spot capacity); the base pools
//! whose nodes a changed or added selector newly reaches change hands.

use crate::model::*;
use std::collections::BTreeSet;

pub use crate::model::selectors_may_overlap as may_overlap;

/// The pools of a change whose selectors reach nodes they could not reach before.
#[derive(Debug, Default, PartialEq)]
pub struct Retargeted {
    /// Pools in both revisions whose `nodeLabels` change (even a label added,
    /// which can leave the pool without its nodes or aim it at spot capacity),
    /// and pools added whose `nodeLabels` may match a base pool's nodes.
    pub pools: Vec<String>,
    /// GPUs of the base pools whose nodes one of those now may match and did
    /// not before (each base pool counted once): nodes that change hands. A
    /// narrowing (a label added) reaches no new node, so it counts none.
    pub gpus: f64,
}

/// Compares `head`'s pools with `base`'s.
pub fn retargeted(head: &ClusterSpec, base: &ClusterSpec) -> Retargeted {
    let mut pools = Vec::new();
    let mut reached: BTreeSet<&str> = BTreeSet::new();
    for pool in &head.node_pools {
        let name = pool.name.value.as_str();
        let old = base
            .node_pools
            .iter()
            .find(|o| o.name.value.as_str() == name);
        if old.is_some_and(|o| o.node_labels == pool.node_labels) {
            continue;
        }
        let mut reaches_other = false;
        for other in base
            .node_pools
            .iter()
            .filter(|o| o.name.value.as_str() != name)
        {
            let before = old.is_some_and(|o| may_overlap(&o.node_labels, &other.node_labels));
            if may_overlap(&pool.node_labels, &other.node_labels) && !before {
                reached.insert(other.name.value.as_str());
                reaches_other = true;
            }
        }
        if old.is_some() || reaches_other {
            pools.push(name.to_string());
        }
    }
    let gpus = base
        .node_pools
        .iter()
        .filter(|p| reached.contains(p.name.value.as_str()))
        .map(|p| crate::capacity::pool_gpus(p) as f64)
        .sum();
    Retargeted { pools, gpus }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::model::Labels;

    fn labels(pairs: &[(&str, &str)]) -> Labels {
        let at = crate::diag::Span::default();
        pairs
            .iter()
            .map(|(k, v)| {
                (
                    Spanned::new(k.to_string(), at),
                    Spanned::new(v.to_string(), at),
                )
            })
            .collect()
    }

    type PoolRow<'a> = (&'a str, u32, &'a [(&'a str, &'a str)]);

    fn cluster(pools: &[PoolRow<'_>]) -> ClusterSpec {
        let mut yaml = String::from(
            "apiVersion: capops.dev/v1alpha1\nkind: Cluster\nmetadata: {name: c}\nspec:\n  environment: production\n  provider: onprem\n  nodePools:\n",
        );
        for (name, nodes, ls) in pools {
            let ls: Vec<String> = ls.iter().map(|(k, v)| format!("{k}: {v}")).collect();
            yaml.push_str(&format!(
                "    - {{name: {name}, gpuModel: h100-80gb-sxm, gpusPerNode: 8, nodes: {nodes}, nodeLabels: {{{}}}}}\n",
                ls.join(", ")
            ));
        }
        let out = crate::pipeline::run(vec![crate::load::Input {
            path: "clusters/c.yaml".into(),
            content: crate::load::Content::Bytes(yaml.into_bytes()),
        }]);
        out.repo.clusters["c"].spec.clone()
    }

    #[test]
    fn overlap_follows_label_conjunctions() {
        let a = labels(&[("pool", "a")]);
        let b = labels(&[("pool", "b")]);
        let zone = labels(&[("zone", "x")]);
        assert!(!may_overlap(&a, &b));
        assert!(may_overlap(&a, &zone));
        assert!(may_overlap(&a, &Labels::new()));
    }

    #[test]
    fn swapped_selectors_move_both_pools_nodes() {
        let base = cluster(&[
            ("serve", 6, &[("pool", "serve")]),
            ("mig", 2, &[("pool", "mig")]),
        ]);
        let head = cluster(&[
            ("serve", 6, &[("pool", "mig")]),
            ("mig", 2, &[("pool", "serve")]),
        ]);
        let r = retargeted(&head, &base);
        assert_eq!(r.pools, vec!["serve".to_string(), "mig".to_string()]);
        assert_eq!(r.gpus, 64.0);
    }

    #[test]
    fn a_narrowing_is_a_change_that_moves_nothing_and_disjoint_new_pools_are_not_retargeted() {
        let base = cluster(&[("serve", 6, &[("pool", "serve")])]);
        let head = cluster(&[
            ("serve", 6, &[("pool", "serve"), ("zone", "x")]),
            ("new", 1, &[("pool", "new")]),
        ]);
        let r = retargeted(&head, &base);
        assert_eq!(r.pools, vec!["serve".to_string()]);
        assert_eq!(r.gpus, 0.0);
        let same = cluster(&[
            ("serve", 6, &[("pool", "serve")]),
            ("new", 1, &[("pool", "new")]),
        ]);
        assert_eq!(retargeted(&same, &base), Retargeted::default());
    }

    #[test]
    fn a_new_pool_that_may_match_a_base_pools_nodes_is_retargeted() {
        let base = cluster(&[("serve", 6, &[("pool", "serve")])]);
        let head = cluster(&[
            ("serve", 6, &[("pool", "serve")]),
            ("new", 1, &[("zone", "x")]),
        ]);
        let r = retargeted(&head, &base);
        assert_eq!(r.pools, vec!["new".to_string()]);
        assert_eq!(r.gpus, 48.0);
    }

    #[test]
    fn a_relabel_to_unused_labels_is_a_changed_selector_that_moves_nothing() {
        let base = cluster(&[("serve", 6, &[("pool", "serve")])]);
        let head = cluster(&[("serve", 6, &[("pool", "serve2")])]);
        let r = retargeted(&head, &base);
        assert_eq!(r.pools, vec!["serve".to_string()]);
        assert_eq!(r.gpus, 0.0);
    }

    #[test]
    fn spot_is_marked_by_a_spot_value_or_a_spot_named_label_set_to_true() {
        use crate::model::cluster::marks_spot;
        assert!(marks_spot("eks.amazonaws.com/capacityType", "SPOT"));
        assert!(marks_spot("karpenter.sh/capacity-type", "spot"));
        assert!(marks_spot("cloud.google.com/gke-provisioning", "spot"));
        assert!(marks_spot("node.kubernetes.io/lifecycle", "Spot "));
        assert!(marks_spot("cloud.google.com/gke-spot", "true"));
        assert!(marks_spot("cloud.google.com/gke-preemptible", "TRUE"));
        assert!(marks_spot("kubernetes.azure.com/scalesetpriority", "spot"));
        assert!(marks_spot("lifecycle", "Ec2Spot"));
        assert!(marks_spot("node-lifecycle", "ec2-spot"));
        assert!(marks_spot("example.com/market-type", "spot-fleet"));
        assert!(marks_spot("example.com/interruptible", "true"));
        assert!(!marks_spot("lifecycle", "OnDemand"));
        assert!(!marks_spot("eks.amazonaws.com/capacityType", "ON_DEMAND"));
        assert!(!marks_spot("cloud.google.com/gke-spot", "false"));
        assert!(!marks_spot("acme.ai/gpu-pool", "l4-spot"));
        assert!(!marks_spot("cloud.google.com/gke-accelerator", "nvidia-l4"));
    }
}
