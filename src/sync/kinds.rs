//! The kinds capops writes to a cluster, in the order it applies them.
//!
//! One table: API group, version, kind, plural, scope and apply order. Plans
//! list each kind once per cluster (by label selector), apply in the table's
//! order (priority classes and flavors before the queues that name them,
//! quotas and ConfigMaps after, node labels last) and prune in reverse.

/// A kind capops writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Kind {
    /// Position in apply order (0 first).
    pub order: u8,
    /// API group; empty for the core group.
    pub group: &'static str,
    pub version: &'static str,
    pub kind: &'static str,
    pub plural: &'static str,
    pub namespaced: bool,
    /// A Kueue custom resource (its CRD may be missing from a cluster).
    pub kueue: bool,
}

impl Kind {
    /// `group/version`, or `version` for the core group.
    pub fn api_version(&self) -> String {
        if self.group.is_empty() {
            self.version.to_string()
        } else {
            format!("{}/{}", self.group, self.version)
        }
    }

    /// The collection URL path, cluster-wide or in a namespace.
    pub fn path(&self, namespace: Option<&str>) -> String {
        let base = if self.group.is_empty() {
            format!("/api/{}", self.version)
        } else {
            format!("/apis/{}/{}", self.group, self.version)
        };
        match namespace {
            Some(ns) if self.namespaced => format!("{base}/namespaces/{ns}/{}", self.plural),
            _ => format!("{base}/{}", self.plural),
        }
    }
}

const fn kind(
    order: u8,
    group: &'static str,
    version: &'static str,
    kind: &'static str,
    plural: &'static str,
    namespaced: bool,
    kueue: bool,
) -> Kind {
    Kind {
        order,
        group,
        version,
        kind,
        plural,
        namespaced,
        kueue,
    }
}

/// Every kind capops renders, in apply order.
pub const KINDS: &[Kind] = &[
    kind(
        0,
        "scheduling.k8s.io",
        "v1",
        "PriorityClass",
        "priorityclasses",
        false,
        false,
    ),
    kind(
        1,
        "kueue.x-k8s.io",
        "v1beta2",
        "WorkloadPriorityClass",
        "workloadpriorityclasses",
        false,
        true,
    ),
    kind(
        2,
        "kueue.x-k8s.io",
        "v1beta2",
        "ResourceFlavor",
        "resourceflavors",
        false,
        true,
    ),
    kind(
        3,
        "kueue.x-k8s.io",
        "v1beta2",
        "Cohort",
        "cohorts",
        false,
        true,
    ),
    kind(
        4,
        "kueue.x-k8s.io",
        "v1beta2",
        "ClusterQueue",
        "clusterqueues",
        false,
        true,
    ),
    kind(
        5,
        "kueue.x-k8s.io",
        "v1beta2",
        "LocalQueue",
        "localqueues",
        true,
        true,
    ),
    kind(6, "", "v1", "ResourceQuota", "resourcequotas", true, false),
    kind(7, "", "v1", "ConfigMap", "configmaps", true, false),
];

/// Nodes: capops only sets labels on them.
pub const NODE: Kind = kind(8, "", "v1", "Node", "nodes", false, false);

/// The kind of an `apiVersion` and `kind`.
pub fn find(api_version: &str, kind: &str) -> Option<&'static Kind> {
    KINDS
        .iter()
        .find(|k| k.kind == kind && k.api_version() == api_version)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_is_in_apply_order_with_paths() {
        for (i, k) in KINDS.iter().enumerate() {
            assert_eq!(usize::from(k.order), i);
        }
        let rq = find("v1", "ResourceQuota").unwrap();
        assert_eq!(rq.path(None), "/api/v1/resourcequotas");
        assert_eq!(rq.path(Some("ml")), "/api/v1/namespaces/ml/resourcequotas");
        let cq = find("kueue.x-k8s.io/v1beta2", "ClusterQueue").unwrap();
        assert_eq!(
            cq.path(Some("ml")),
            "/apis/kueue.x-k8s.io/v1beta2/clusterqueues"
        );
        assert!(find("v1", "Secret").is_none());
    }
}
