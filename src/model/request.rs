//! CapacityRequest: a team asks for GPUs in a pool for a window of time.

use super::{Count, Spanned, Timestamp};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// `spec` of a CapacityRequest.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct RequestSpec {
    /// The Team asking.
    pub team: Spanned<String>,
    /// The Cluster the capacity is in.
    pub cluster: Spanned<String>,
    /// The node pool of that cluster.
    pub pool: Spanned<String>,
    /// What is asked for, by resource: `nvidia.com/gpu` on whole-GPU pools,
    /// `nvidia.com/mig-<profile>` on MIG pools under the mixed strategy.
    #[schemars(extend("minProperties" = 1))]
    pub resources: BTreeMap<Spanned<String>, Spanned<Count>>,
    /// When the capacity is held. A request without a window holds its capacity indefinitely.
    #[serde(default)]
    pub window: Option<Window>,
    /// What the capacity runs.
    pub workload_class: Spanned<WorkloadClass>,
    /// PriorityClass the workloads run at (default: the Config's default priority class).
    #[serde(default)]
    pub priority_class: Option<Spanned<String>>,
    /// Whether the workloads tolerate being preempted (default false).
    #[serde(default)]
    pub preemptible: Option<Spanned<bool>>,
    /// Why the capacity is needed.
    #[serde(default)]
    pub justification: Option<Spanned<String>>,
    /// How the team will show the capacity was used well.
    #[serde(default)]
    pub success_metrics: Vec<Spanned<String>>,
    /// Written business case (text or a link); required for the largest requests.
    #[serde(default)]
    pub business_case: Option<Spanned<String>>,
    /// Who asked (GitHub login).
    #[serde(default)]
    pub requested_by: Option<String>,
    /// Links to tickets or documents.
    #[serde(default)]
    pub links: Vec<String>,
}

/// A half-open interval of time: from `start` (inclusive) to `end` (exclusive).
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Window {
    pub start: Spanned<Timestamp>,
    pub end: Spanned<Timestamp>,
}

impl Window {
    /// Whole hours covered (ceiling), 0 for an inverted window.
    pub fn hours(&self) -> i64 {
        let secs = self.end.value.as_second() - self.start.value.as_second();
        if secs <= 0 { 0 } else { (secs + 3599) / 3600 }
    }

    pub fn contains(&self, at: Timestamp) -> bool {
        self.start.value <= at && at < self.end.value
    }
}

#[derive(
    Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Deserialize, Serialize, JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum WorkloadClass {
    Inference,
    Training,
    Research,
    Development,
}

impl WorkloadClass {
    pub fn as_str(self) -> &'static str {
        match self {
            WorkloadClass::Inference => "inference",
            WorkloadClass::Training => "training",
            WorkloadClass::Research => "research",
            WorkloadClass::Development => "development",
        }
    }
}
