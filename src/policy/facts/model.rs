//! Fact structs shared by several subjects: the Config's thresholds, the
//! change, the cluster, the pool and its demand, and the team.
//!
//! Each field's doc comment is its documentation: it becomes the description
//! in the fact schema, which `docs/policy.md`'s table is generated from.

use crate::model::SmallMap;
use schemars::JsonSchema;
use serde::Serialize;

/// The Config that judges (the base revision's when checking a change).
#[derive(Debug, Clone, Default, Serialize, JsonSchema)]
pub struct ConfigFacts {
    /// The Config's organization (empty when unset).
    pub organization: String,
    /// Currency of every amount (ISO 4217).
    pub currency: String,
    pub thresholds: ThresholdFacts,
    /// Config `costs.historyMultiple`: how many times the usage history's length a forecast may reach.
    pub history_multiple: f64,
    /// Config `costs.chargeback`: how unallocated cost is shared (`proportional`, `even`, `not-shared`).
    pub chargeback: String,
    /// Whether the base's PriceCatalogs price anything: the repository prices its capacity
    /// (then capacity they cannot price is a gap finance fills, not a choice).
    pub priced: bool,
}

#[derive(Debug, Clone, Default, Serialize, JsonSchema)]
pub struct ThresholdFacts {
    /// Config threshold: low utilization share.
    pub low_utilization: f64,
    /// Config threshold: target utilization share.
    pub target_utilization: f64,
    /// Config threshold: stranded-spend share of a reservation's cost.
    pub stranded_spend_share: f64,
    /// Config threshold: idle-spend share (allocated but unused) of a reservation's cost.
    pub idle_spend_share: f64,
    /// Config threshold: monthly cost that needs a capacity review.
    pub monthly_cost_review: f64,
    /// Config threshold: cost a change adds (over its requests' windows, or a reservation's commitment) that needs a director.
    pub director_cost: f64,
    /// Config threshold: cost a change adds that needs a VP.
    pub vp_cost: f64,
    /// Config threshold: GPUs a team may gain without approval over 30 days.
    pub auto_approval_gpus: f64,
}

/// What changed, for every subject.
#[derive(Debug, Clone, Default, Serialize, JsonSchema)]
pub struct ChangeFacts {
    /// `added`, `modified`, `removed`, or `unchanged` (evaluated without `--base`).
    pub kind: String,
    /// Top-level `spec` fields that differ from the base (modified documents; empty otherwise).
    pub fields: Vec<String>,
}

/// The change of a subject with a size in GPUs (reservations, teams).
#[derive(Debug, Clone, Default, Serialize, JsonSchema)]
pub struct SizedChange {
    #[serde(flatten)]
    pub base: ChangeFacts,
    /// GPUs now minus GPUs before (requests, reservations) or quota GPUs now minus before (teams); the whole size when added.
    pub delta_gpus: f64,
    pub previous: PreviousGpus,
}

#[derive(Debug, Clone, Default, Serialize, JsonSchema)]
pub struct PreviousGpus {
    /// GPU-equivalents before the change (0 when added).
    pub gpus: f64,
}

/// The cluster a request or reservation is in.
#[derive(Debug, Clone, Default, Serialize, JsonSchema)]
pub struct ClusterFacts {
    /// The cluster's name.
    pub name: String,
    /// `production`, `staging`, `development` or `research`.
    pub environment: String,
    /// `aws`, `gcp`, `azure` or `onprem`.
    pub provider: String,
    /// Region (empty when none).
    pub region: String,
    /// Whether the cluster runs Kueue.
    pub kueue: bool,
    /// `single` or `mixed`.
    pub mig_strategy: String,
    /// Whether the cluster names its own `prometheus` (where `capops usage pull` reads its
    /// usage) instead of the Config's.
    pub own_usage_source: bool,
}

/// The node pool a request or reservation is in.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct PoolFacts {
    /// The pool's name.
    pub name: String,
    /// GPU model id from the catalog.
    pub gpu_model: String,
    /// Instance type (empty when none).
    pub instance_type: String,
    /// Nodes in the pool.
    pub nodes: u32,
    /// GPUs per node.
    pub gpus_per_node: u32,
    /// Physical GPUs in the pool.
    pub gpus: u32,
    /// Whether the pool's GPUs are MIG-partitioned.
    pub mig: bool,
    /// MIG profile to instances per GPU (empty when not MIG).
    pub mig_layout: crate::model::SmallMap<u32>,
    /// Whether the pool is time-sliced.
    pub time_slicing: bool,
    /// Time-slicing replicas (1 when not time-sliced).
    pub replicas: u32,
    /// Nodes bought reserved.
    pub reserved_nodes: u32,
    /// Nodes bought on demand.
    pub on_demand_nodes: u32,
    /// Spot nodes.
    pub spot_nodes: u32,
    /// Whether any node of the pool is spot.
    pub spot: bool,
    /// Resource to units the pool provides.
    pub capacity: crate::model::SmallMap<f64>,
    #[serde(flatten)]
    pub demand: DemandFacts,
}

impl PoolFacts {
    /// The facts of a pool that does not exist (reported by validation).
    pub fn missing(name: &str) -> PoolFacts {
        PoolFacts {
            name: name.to_string(),
            gpu_model: String::new(),
            instance_type: String::new(),
            nodes: 0,
            gpus_per_node: 0,
            gpus: 0,
            mig: false,
            mig_layout: Default::default(),
            time_slicing: false,
            replicas: 1,
            reserved_nodes: 0,
            on_demand_nodes: 0,
            spot_nodes: 0,
            spot: false,
            capacity: Default::default(),
            demand: DemandFacts::default(),
        }
    }
}

/// Forecast demand of a pool over the subject's hours.
#[derive(Debug, Clone, Default, Serialize, JsonSchema)]
pub struct DemandFacts {
    /// Whether the pool has a demand outlook: usage history, or else approved requests (the demand facts below are 0 without).
    pub has_usage: bool,
    /// Mean demand (allocated GPUs) over the request's window or the reservation's term: measured hours as measured, later hours at the P50 forecast plus what the approved requests add or remove (a request that starts after the measurements end is in it).
    pub demand_p50: f64,
    /// Peak P90 demand over the same hours.
    pub demand_p90: f64,
    /// How the demand was forecast (empty without usage).
    pub forecast_method: String,
}

/// A team: who it is, what it holds, how it uses it and what it spends.
#[derive(Debug, Clone, Default, Serialize, JsonSchema)]
pub struct TeamFacts {
    /// The team's name.
    pub name: String,
    /// Its cost center.
    pub cost_center: String,
    /// Its leads (the team-lead role).
    pub leads: Vec<String>,
    /// Monthly budget (0 when none).
    pub monthly_budget: f64,
    /// Whether a monthly budget is set.
    pub has_budget: bool,
    /// The quota in GPU-equivalents (requests: in the request's cluster; teams: across clusters).
    pub quota_gpus: f64,
    #[serde(flatten)]
    pub usage: TeamUsageFacts,
}

/// Measured utilization, chargeback and budget projection of a team.
#[derive(Debug, Clone, Default, Serialize, JsonSchema)]
pub struct TeamUsageFacts {
    /// Whether the team has usage samples in the 30 days before `now`.
    pub has_usage: bool,
    /// Used over allocated GPU-hours in the 30 days before `now`, across pools (0 without usage).
    pub utilization: f64,
    /// Whether `team.utilization` is below `config.thresholds.low_utilization` (false without usage).
    pub low_utilization: bool,
    /// Mean GPUs allocated over those 30 days.
    pub mean_allocated_gpus: f64,
    /// Mean GPUs used over those 30 days.
    pub mean_used_gpus: f64,
    /// GPUs the team needs at `config.thresholds.target_utilization`: mean GPUs used over the target, rounded up (more than it holds when it is busier than the target).
    pub rightsized_gpus: u32,
    /// Allocated but unused GPU-hours of those 30 days, priced.
    pub idle_cost: f64,
    /// Allocated GPU-hours of those 30 days, priced (the allocation part of its chargeback).
    pub cost_30d: f64,
    /// Its chargeback for those 30 days: `team.cost_30d` plus its share of its pools' unallocated cost (`config.chargeback`).
    pub chargeback_30d: f64,
    /// Projected spend in the calendar month of `now` (measured hours, then forecast and requests).
    pub projected_spend: f64,
    /// `team.projected_spend` over the monthly budget (0 without a budget, and for a budget of 0, whose spend has no share: read `team.budget_alert` there), rounded down to four places: `>= 0.8` holds exactly where the 80% alert does.
    pub budget_share: f64,
    /// The highest budget alert level the month of `now` reaches (`0.8`, `1.0`, `1.2`; 0 when none): a budget of 0 with any spend reaches the highest.
    pub budget_alert: f64,
    /// The highest monthly spend over budget in the next 12 months, this month included (0 without a budget), rounded down to four places.
    pub max_budget_share: f64,
}

/// An ApprovalPolicy or the Config, changed.
#[derive(Debug, Clone, Default, Serialize, JsonSchema)]
pub struct DocumentFacts {
    /// `ApprovalPolicy` or `Config`.
    pub kind: String,
    /// The document's name.
    pub name: String,
}

/// What a change does to the objects and files capops renders: the base's
/// render against the head's, on the clusters and clouds the change touches.
#[derive(Debug, Clone, Default, PartialEq, Serialize, JsonSchema)]
pub struct EffectFacts {
    /// Rendered objects and files the change adds, on every cluster and cloud.
    pub objects_added: u32,
    /// Rendered objects and files whose content the change changes.
    pub objects_changed: u32,
    /// Rendered objects and files the change removes.
    pub objects_removed: u32,
    /// GPUs' worth of units the change adds to namespace quotas: whole-GPU units
    /// (`requests.nvidia.com/gpu`) at 1 each, and each MIG profile's units
    /// (`requests.nvidia.com/mig-*`) at what one is worth in the pool of the namespace's
    /// cluster where it is worth most (in the base or the head; 1 where no pool provides it),
    /// as Team quotas are weighed: a namespace's quota holds in every pool of its cluster,
    /// so units asked for in a time-sliced pool are usable as whole MIG instances elsewhere.
    /// Per namespace, the largest rise at `now` or at any start or end of the change's
    /// windows, summed over the namespaces that rise (a cut in one does not offset a rise in
    /// another, nor a cut of one resource a rise of another). A priority class's own quota
    /// (`render.priorityClassQuotas`) is part of its namespace's and is not counted again.
    pub quota_delta_gpus: f64,
    /// Terraform files the change adds, changes or removes.
    pub cloud_files_changed: u32,
}

#[derive(Debug, Clone, Default, Serialize, JsonSchema)]
pub struct PreviousRequest {
    /// GPU-equivalents before the change (0 when added).
    pub gpus: f64,
    /// The team that held the request before the change (the team now when added).
    pub team: String,
    /// Value of its priority class before the change (the value now when added).
    pub priority: i64,
    /// Resources before the change (empty when added).
    pub resources: SmallMap<u32>,
    pub window: PreviousWindow,
    /// Cluster before the change (empty when added).
    pub cluster: String,
    /// Pool before the change (empty when added).
    pub pool: String,
    /// Workload class before the change (empty when added).
    pub workload_class: String,
    /// Priority class before the change (empty when added).
    pub priority_class: String,
    /// Whether its workloads tolerated preemption before the change (the value now when added).
    pub preemptible: bool,
    /// Whether its priority class let it preempt before the change (the value now when added).
    pub preempts: bool,
    /// Monthly cost before the change (0 when added).
    pub monthly_cost: f64,
}

#[derive(Debug, Clone, Default, Serialize, JsonSchema)]
pub struct PreviousWindow {
    /// Window start before the change (empty when added or open).
    pub start: String,
    /// Window end before the change (empty when added or open).
    pub end: String,
}
