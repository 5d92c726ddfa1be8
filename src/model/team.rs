//! Team: who asks for capacity, who leads them, what they may hold.

use super::{Money, Quantity, Spanned};
use schemars::JsonSchema;
use serde::Deserialize;
use std::collections::BTreeMap;

/// `spec` of a Team.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct TeamSpec {
    /// Human-readable name.
    #[serde(default)]
    pub display_name: Option<String>,
    /// Cost center that chargeback reports bill.
    pub cost_center: Spanned<String>,
    /// The team's leads: GitHub logins (`alice`, `@alice`) or teams (`acme/inference-leads`).
    /// They hold the `team-lead` role for this team's requests.
    #[serde(default)]
    pub leads: Vec<Spanned<String>>,
    /// Monthly GPU budget in the Config's currency.
    #[serde(default)]
    pub monthly_budget: Option<Spanned<Money>>,
    /// Per cluster (by Cluster name): the team's namespace and standing quota.
    #[serde(default)]
    pub clusters: BTreeMap<Spanned<String>, TeamCluster>,
}

/// A team's presence in one cluster.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct TeamCluster {
    /// Kubernetes namespace the team runs in (a DNS label).
    pub namespace: Spanned<String>,
    /// Standing quota: the ceiling on what the team may hold at any moment,
    /// by resource (`nvidia.com/gpu`, `nvidia.com/mig-1g.10gb`).
    #[serde(default)]
    pub quota: BTreeMap<Spanned<String>, Spanned<Quantity>>,
    /// Kueue: how much the team's queue may borrow from its cohort, by resource (unlimited if absent).
    #[serde(default)]
    pub borrowing_limit: BTreeMap<Spanned<String>, Spanned<Quantity>>,
    /// Kueue: how much of its quota the team's queue may lend to its cohort, by resource (all if absent).
    #[serde(default)]
    pub lending_limit: BTreeMap<Spanned<String>, Spanned<Quantity>>,
}
