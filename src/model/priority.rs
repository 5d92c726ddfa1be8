//! PriorityClass: scheduling priority, rendered to Kubernetes and Kueue.

use super::Spanned;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The highest value a user-defined Kubernetes PriorityClass may have.
pub const HIGHEST_USER_PRIORITY: i64 = 1_000_000_000;
/// The lowest value (int32).
pub const LOWEST_PRIORITY: i64 = i32::MIN as i64;

/// `spec` of a PriorityClass.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct PriorityClassSpec {
    /// Priority; higher runs first. At most 1000000000 (Kubernetes' limit for user classes).
    pub value: Spanned<i64>,
    /// Whether pods of this class may preempt lower-priority pods (default `PreemptLowerPriority`).
    #[serde(default)]
    pub preemption_policy: Option<PreemptionPolicy>,
    /// Whether pods without a class get this one. At most one class may be the global default.
    #[serde(default)]
    pub global_default: Option<Spanned<bool>>,
    /// What the class is for.
    #[serde(default)]
    pub description: Option<String>,
}

impl PriorityClassSpec {
    /// The class's preemption policy, `PreemptLowerPriority` when not written.
    pub fn preemption(&self) -> PreemptionPolicy {
        self.preemption_policy
            .unwrap_or(PreemptionPolicy::PreemptLowerPriority)
    }

    /// Whether the class is written as the global default.
    pub fn is_global_default(&self) -> bool {
        self.global_default.as_ref().is_some_and(|g| g.value)
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
pub enum PreemptionPolicy {
    PreemptLowerPriority,
    Never,
}

impl PreemptionPolicy {
    pub fn as_str(self) -> &'static str {
        match self {
            PreemptionPolicy::PreemptLowerPriority => "PreemptLowerPriority",
            PreemptionPolicy::Never => "Never",
        }
    }
}
