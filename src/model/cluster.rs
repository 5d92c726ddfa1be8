//! Cluster: a Kubernetes cluster and its GPU node pools.

use super::{Count, Name, Quantity, Spanned};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// `spec` of a Cluster.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ClusterSpec {
    /// What the cluster is for.
    pub environment: Spanned<Environment>,
    /// Where it runs.
    pub provider: Spanned<Provider>,
    /// Cloud region (`us-east-1`, `us-central1`, `eastus`); required for cloud providers.
    #[serde(default)]
    #[schemars(regex(pattern = r"^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$"))]
    pub region: Option<Spanned<String>>,
    /// kubeconfig context used by `plan` and `apply`.
    #[serde(default)]
    pub kube_context: Option<String>,
    /// The API server `kubeContext` must reach (`https://host[:port][/path]`): `plan`, `apply` and `drift` refuse the cluster when the context's server is another (`api-server-mismatch`), so a kubeconfig whose context was pointed elsewhere is never written to. Compared in one spelling (case, default port, trailing slash).
    #[serde(default)]
    #[schemars(regex(pattern = super::api_server::API_SERVER_PATTERN))]
    pub api_server: Option<Spanned<String>>,
    /// Kueue settings; absent means the cluster does not run Kueue.
    #[serde(default)]
    pub kueue: Option<KueueSpec>,
    /// How the NVIDIA device plugin exposes MIG instances (default `mixed`).
    #[serde(default)]
    pub mig_strategy: Spanned<MigStrategy>,
    /// GPU node pools.
    pub node_pools: Vec<NodePool>,
    /// Where `capops usage pull` reads this cluster's metrics (default: the Config's `usage.prometheus`).
    #[serde(default)]
    pub prometheus: Option<super::usage_settings::ClusterPrometheus>,
}

#[derive(
    Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Deserialize, Serialize, JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum Environment {
    Production,
    Staging,
    Development,
    Research,
}

impl Environment {
    pub fn as_str(self) -> &'static str {
        match self {
            Environment::Production => "production",
            Environment::Staging => "staging",
            Environment::Development => "development",
            Environment::Research => "research",
        }
    }
}

#[derive(
    Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Deserialize, Serialize, JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum Provider {
    Aws,
    Gcp,
    Azure,
    Onprem,
}

impl Provider {
    pub fn as_str(self) -> &'static str {
        match self {
            Provider::Aws => "aws",
            Provider::Gcp => "gcp",
            Provider::Azure => "azure",
            Provider::Onprem => "onprem",
        }
    }

    pub fn is_cloud(self) -> bool {
        self != Provider::Onprem
    }
}

/// NVIDIA device-plugin MIG strategy.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum MigStrategy {
    /// Every GPU of a node has the same single profile, advertised as `nvidia.com/gpu`.
    Single,
    /// Each profile is its own resource, `nvidia.com/mig-<profile>`.
    #[default]
    Mixed,
}

/// Kueue settings of a cluster.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct KueueSpec {
    /// Render Kueue objects for this cluster (default true).
    #[serde(default = "yes")]
    pub enabled: bool,
    /// Cohort the teams' ClusterQueues share (default: the cluster's name).
    #[serde(default)]
    pub cohort: Option<Spanned<Name>>,
}

fn yes() -> bool {
    true
}

/// The Kueue cohort a cluster's ClusterQueues share: `None` when the
/// cluster does not run Kueue (no `kueue`, or `enabled: false`), else the
/// cohort written or, by default, the cluster's name.
pub fn kueue_cohort<'a>(name: &'a str, spec: &'a ClusterSpec) -> Option<&'a str> {
    let k = spec.kueue.as_ref().filter(|k| k.enabled)?;
    Some(k.cohort.as_ref().map_or(name, |c| c.value.as_str()))
}

/// A group of identical GPU nodes.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct NodePool {
    /// Pool name, unique within the cluster.
    pub name: Spanned<Name>,
    /// GPU model from the built-in catalog (`h100-80gb-sxm`, `a100-80gb`, `l4`, ...).
    pub gpu_model: Spanned<String>,
    /// Cloud instance type (`p5.48xlarge`), used to look up prices.
    #[serde(default)]
    #[schemars(regex(pattern = r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$"))]
    pub instance_type: Option<Spanned<String>>,
    /// GPUs in each node.
    pub gpus_per_node: Spanned<Count>,
    /// Nodes in the pool.
    pub nodes: Spanned<Quantity>,
    /// How the nodes are bought; absent means all on-demand (all owned on premises).
    #[serde(default)]
    pub purchase: Option<Spanned<PurchaseMix>>,
    /// Availability zone of the nodes.
    #[serde(default)]
    pub zone: Option<Spanned<String>>,
    /// Node labels that select this pool's nodes (used by Kueue ResourceFlavors).
    #[serde(default)]
    pub node_labels: Labels,
    /// Taints on the pool's nodes; workloads need matching tolerations.
    #[serde(default)]
    pub taints: Vec<Taint>,
    /// MIG partitioning of every GPU in the pool.
    #[serde(default)]
    pub mig: Option<MigSpec>,
    /// Time-slicing: each GPU is advertised this many times.
    #[serde(default)]
    pub time_slicing: Option<TimeSlicing>,
}

/// Nodes by purchase option. The three counts add up to the pool's `nodes`.
#[derive(Clone, Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct PurchaseMix {
    /// Nodes covered by reservations or commitments.
    #[serde(default)]
    pub reserved: Quantity,
    /// Nodes paid by the hour.
    #[serde(default)]
    pub on_demand: Quantity,
    /// Spot or preemptible nodes.
    #[serde(default)]
    pub spot: Quantity,
}

/// A Kubernetes node taint.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Taint {
    pub key: Spanned<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<Spanned<String>>,
    pub effect: TaintEffect,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
pub enum TaintEffect {
    NoSchedule,
    PreferNoSchedule,
    NoExecute,
}

/// MIG layout of each GPU: profile name to instances per GPU.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct MigSpec {
    /// Instances of each profile on every GPU, e.g. `{1g.10gb: 7}`.
    pub layout: Spanned<BTreeMap<Spanned<String>, Spanned<Count>>>,
}

/// NVIDIA device-plugin time-slicing.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct TimeSlicing {
    /// How many workloads share each GPU (at least 2).
    #[schemars(range(min = 2, max = 64))]
    pub replicas: Spanned<u32>,
}

/// Whether one node could match both selectors (`nodeLabels`): no label is
/// asked for with two different values. An empty selector matches every node.
pub fn selectors_may_overlap(a: &Labels, b: &Labels) -> bool {
    a.iter().all(|(k, v)| b.get(k).is_none_or(|w| w == v))
}

/// Node labels as written, each key and value with its place in the file.
pub type Labels = BTreeMap<Spanned<String>, Spanned<String>>;

impl NodePool {
    /// The pool's node labels without their places, for the APIs that select nodes.
    pub fn plain_labels(&self) -> BTreeMap<String, String> {
        self.node_labels
            .iter()
            .map(|(k, v)| (k.value.clone(), v.value.clone()))
            .collect()
    }
}

/// Whether a node label (or taint) marks spot (preemptible) capacity: its
/// value is `spot` or `preemptible` (EKS's `eks.amazonaws.com/capacityType:
/// SPOT`, Karpenter's `karpenter.sh/capacity-type: spot`, GKE's
/// `cloud.google.com/gke-provisioning: spot`, AKS's
/// `kubernetes.azure.com/scalesetpriority: spot`, the common
/// `node.kubernetes.io/lifecycle: spot`), or its name says spot or
/// preemptible and its value is `true` or empty (GKE's `cloud.google.com/gke-spot`,
/// `cloud.google.com/gke-preemptible`; a marker label `…/spot-worker: ""`, a
/// taint `spot` with `value: ""`, which Kubernetes stores as one without a
/// value), or a label whose name says how the
/// node is bought (`lifecycle`, `capacity-type`, `priority`, `provisioning`,
/// `market`, `purchase`, `billing`) has a value that says spot, preemptible
/// or interruptible as a word of its own, not negated (AWS's self-managed
/// `lifecycle: Ec2Spot`, `market-type: spot-fleet`; not `non-preemptible`
/// or `no-spot`). Compared without case.
pub fn marks_spot(key: &str, value: &str) -> bool {
    let raw_value = value;
    let value = value.trim().to_ascii_lowercase();
    let name = key.rsplit('/').next().unwrap_or(key).to_ascii_lowercase();
    let reclaimable = ["spot", "preemptible", "interruptible"];
    let bought = [
        "lifecycle",
        "capacity-type",
        "capacitytype",
        "capacity_type",
        "priority",
        "provisioning",
        "market",
        "purchase",
        "billing",
    ];
    reclaimable.contains(&value.as_str())
        || ((value == "true" || value.is_empty())
            && says_reclaimable(key.rsplit('/').next().unwrap_or(key)))
        || (bought.iter().any(|b| name.contains(b)) && says_reclaimable(raw_value))
}

/// Whether a value says spot, preemptible or interruptible as a word of its
/// own (`Ec2Spot`, `spot-fleet`, `SpotInstance`) that the word before it does
/// not negate (`non-preemptible`, `no-spot`, `nonpreemptible`, `not_spot`).
fn says_reclaimable(value: &str) -> bool {
    // Words: split at anything not a letter or digit, and where a lower-case
    // letter or digit is followed by an upper-case one (`Ec2Spot`).
    let mut words: Vec<String> = Vec::new();
    let mut word = String::new();
    let mut prev_lower = false;
    for c in value.trim().chars() {
        if !c.is_ascii_alphanumeric() {
            words.push(std::mem::take(&mut word));
            prev_lower = false;
            continue;
        }
        if c.is_ascii_uppercase() && prev_lower {
            words.push(std::mem::take(&mut word));
        }
        prev_lower = c.is_ascii_lowercase() || c.is_ascii_digit();
        word.push(c.to_ascii_lowercase());
    }
    words.push(word);
    let words: Vec<&str> = words
        .iter()
        .map(String::as_str)
        .filter(|w| !w.is_empty())
        .collect();
    const RECLAIMABLE: [&str; 3] = ["spot", "preemptible", "interruptible"];
    const NEGATIONS: [&str; 6] = ["non", "no", "not", "never", "without", "false"];
    // A word that is one of them, or one of them joined to what is bought
    // (`spotinstance`, `spotvm`); not a longer word (`spotless`).
    let says = |w: &str| {
        RECLAIMABLE.iter().any(|r| {
            w.strip_prefix(r).is_some_and(|rest| {
                matches!(
                    rest,
                    "" | "instance" | "instances" | "vm" | "vms" | "node" | "nodes" | "capacity"
                )
            })
        })
    };
    // Negated by the word right before it (`non-preemptible`, `no spot`,
    // `not-a-spot`; joined, `nonpreemptible` is no word of theirs), or by a
    // flag's value after it that ends the text (`spot-false`,
    // `spot-disabled`): `spot-nonprod` and `preemptible-not-reserved` still
    // say spot.
    const OFF: [&str; 5] = ["false", "disabled", "off", "no", "none"];
    let negated = |i: usize| {
        let before = |k: usize| i >= k && NEGATIONS.contains(&words[i - k]);
        before(1)
            || (i >= 2 && matches!(words[i - 1], "a" | "an") && before(2))
            || (i + 2 == words.len() && OFF.contains(&words[i + 1]))
    };
    words
        .iter()
        .enumerate()
        .any(|(i, w)| says(w) && !negated(i))
}

/// The label or taint of a pool that marks its nodes as spot
/// ([`marks_spot`]; a taint without a value counts as `true`), as `key: value`.
pub fn spot_marker(pool: &NodePool) -> Option<String> {
    pool.node_labels
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .chain(pool.taints.iter().map(|t| {
            (
                t.key.as_str(),
                t.value.as_ref().map_or("true", |v| v.as_str()),
            )
        }))
        .find(|(k, v)| marks_spot(k, v))
        .map(|(k, v)| format!("{k}: {v}"))
}

/// A pool's nodes as bought: (reserved, on demand, spot). Without a purchase
/// mix every node is on demand; a pool whose labels or taints mark spot
/// capacity ([`spot_marker`]) is spot throughout.
pub fn purchase_nodes(pool: &NodePool) -> (u32, u32, u32) {
    if spot_marker(pool).is_some() {
        return (0, 0, pool.nodes.value.0);
    }
    match &pool.purchase {
        Some(p) => (p.value.reserved.0, p.value.on_demand.0, p.value.spot.0),
        None => (0, pool.nodes.value.0, 0),
    }
}

#[cfg(test)]
mod tests {
    use super::marks_spot;

    #[test]
    fn a_purchase_label_marks_spot_only_where_a_word_of_it_says_so_unnegated() {
        for (k, v) in [
            ("lifecycle", "Ec2Spot"),
            ("acme.ai/market-type", "spot-fleet"),
            ("eks.amazonaws.com/capacityType", "SPOT"),
            ("acme.ai/priority", "preemptible"),
            ("cloud.google.com/gke-spot", "true"),
            // An empty value is a marker (a taint's `value: ""` is one
            // without a value).
            ("node-role.kubernetes.io/spot-worker", ""),
            ("spot", ""),
            // A negation elsewhere in the value does not cancel the word.
            ("acme.ai/market", "spot-nonprod"),
            ("acme.ai/market", "spot-no-fallback"),
            ("acme.ai/billing", "preemptible-not-reserved"),
            ("acme.ai/market", "SpotInstance"),
            ("acme.ai/market", "spotinstance"),
        ] {
            assert!(marks_spot(k, v), "{k}: {v}");
        }
        for (k, v) in [
            ("acme.ai/priority", "non-preemptible"),
            ("acme.ai/priority", "nonpreemptible"),
            ("lifecycle", "no-spot"),
            ("acme.ai/billing", "not_interruptible"),
            ("acme.ai/market", "spotless"),
            ("acme.ai/priority", "high"),
            ("node-role.kubernetes.io/worker", ""),
            // A negated name says nothing, whatever its value.
            ("acme.ai/non-preemptible", ""),
            ("acme.ai/no-spot", "true"),
            ("acme.ai/spotless", ""),
            ("lifecycle", "OnDemand"),
            ("lifecycle", "nospot"),
            ("acme.ai/market", "no spot"),
            // A flag's value after the word, and "not a".
            ("acme.ai/market", "spot-false"),
            ("acme.ai/market", "spot-disabled"),
            ("acme.ai/market", "Spot_Off"),
            ("acme.ai/market", "not-a-spot"),
        ] {
            assert!(!marks_spot(k, v), "{k}: {v}");
        }
    }
}
