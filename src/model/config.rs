//! Config: the organisation's settings, one per repository, in `capops.yaml`.

use super::{Money, Quantity, Ratio, Spanned};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The roles capops fills from the Teams' `leads` (`team-lead`, and
/// `receiving-team-lead` for a request handed to another team): a Config
/// may not define them.
pub const LEAD_ROLES: [&str; 2] = ["team-lead", "receiving-team-lead"];

/// `spec` of the Config document.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ConfigSpec {
    /// Organisation name shown in reports.
    #[serde(default)]
    pub organization: Option<String>,
    /// Currency of every amount in the repository (ISO 4217 code).
    #[serde(default = "default_currency")]
    #[schemars(regex(pattern = r"^[A-Z]{3}$"))]
    pub currency: String,
    /// Approver roles: role name to the GitHub teams (`org/team-slug`) and users (`login`) who act in it.
    /// `team-lead` and `receiving-team-lead` are filled from the Teams' `leads` alone and may not be defined here.
    #[serde(default)]
    pub roles: BTreeMap<Spanned<String>, Role>,
    /// Numbers the policy and reports use.
    #[serde(default)]
    pub thresholds: Thresholds,
    /// Defaults applied to documents that leave a field out.
    #[serde(default)]
    pub defaults: Defaults,
    /// Repository paths capops does not read: folder prefixes (`drafts/`) or globs (`**/*.draft.yaml`).
    /// Hidden paths and the `rendered/`, `templates/` and `tests/` folders are always skipped.
    #[serde(default)]
    pub ignore: Vec<Spanned<String>>,
    /// Severity overrides by diagnostic code: `error`, `warning`, `note` or `allow` (hide).
    #[serde(default)]
    pub severities: BTreeMap<Spanned<String>, SeverityName>,
    /// How `capops render` writes cluster objects.
    #[serde(default)]
    pub render: RenderSettings,
    /// Refreshing the usage history from Prometheus, and when it counts as stale.
    #[serde(default)]
    pub usage: Box<super::usage_settings::UsageSettings>,
    /// How costs are shared, spot is priced and forecasts are trusted.
    #[serde(default)]
    pub costs: CostSettings,
}

/// How the unallocated cost of a pool is shared among its teams.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Chargeback {
    /// In proportion to each team's allocated GPU-hours in the pool (the default).
    #[default]
    Proportional,
    /// Equally among the teams with allocations in the pool.
    Even,
    /// Not shared: it stays with the platform, as its own line.
    NotShared,
}

impl Chargeback {
    pub fn as_str(self) -> &'static str {
        match self {
            Chargeback::Proportional => "proportional",
            Chargeback::Even => "even",
            Chargeback::NotShared => "not-shared",
        }
    }
}

/// Settings of the cost report, the commitment mix and the forecasts' reach.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct CostSettings {
    /// How a pool's unallocated cost (capacity no team is allocated) is charged back:
    /// `proportional` to allocation (default), `even`, or `not-shared`.
    #[serde(default)]
    pub chargeback: Chargeback,
    /// Extra spot GPU-hours to allow for work lost to interruptions, as a share (default 0.10):
    /// spot is priced at its catalog price times one plus this.
    #[serde(default = "d_interruption")]
    pub spot_interruption_allowance: Ratio,
    /// A forecast further ahead than this multiple of the measured history says so, and a
    /// reservation whose term ends beyond it needs a business case or the top tier (default 2).
    #[serde(default = "d_history_multiple")]
    pub history_multiple: Ratio,
}

impl Default for CostSettings {
    fn default() -> Self {
        CostSettings {
            chargeback: Chargeback::default(),
            spot_interruption_allowance: d_interruption(),
            history_multiple: d_history_multiple(),
        }
    }
}

fn d_interruption() -> Ratio {
    Ratio::from_str_const("0.10")
}
fn d_history_multiple() -> Ratio {
    Ratio::from_str_const("2")
}

/// Settings of `capops render`.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct RenderSettings {
    /// Namespace of the NVIDIA GPU operator, where the MIG and device-plugin ConfigMaps go (default `gpu-operator`).
    #[serde(default = "d_operator_ns")]
    pub gpu_operator_namespace: Spanned<String>,
    /// Also render one ResourceQuota per priority class a team's requests use, scoped with `scopeSelector` (default false).
    #[serde(default)]
    pub priority_class_quotas: bool,
    /// Name of the Kueue LocalQueue in each team namespace, the value of workloads' `kueue.x-k8s.io/queue-name` label (default `gpu`).
    #[serde(default = "d_local_queue")]
    pub local_queue: Spanned<String>,
    /// The folder of the repository `capops render` writes to when no `--out` is given
    /// (default `rendered`); the only folder inside the repository it writes to.
    #[serde(default = "d_output")]
    pub output_folder: Spanned<String>,
}

impl Default for RenderSettings {
    fn default() -> Self {
        RenderSettings {
            gpu_operator_namespace: d_operator_ns(),
            priority_class_quotas: false,
            local_queue: d_local_queue(),
            output_folder: d_output(),
        }
    }
}

fn d_operator_ns() -> Spanned<String> {
    Spanned::new("gpu-operator".into(), Default::default())
}
fn d_output() -> Spanned<String> {
    Spanned::new("rendered".into(), Default::default())
}
fn d_local_queue() -> Spanned<String> {
    Spanned::new("gpu".into(), Default::default())
}

impl Default for ConfigSpec {
    fn default() -> Self {
        ConfigSpec {
            organization: None,
            currency: default_currency(),
            roles: BTreeMap::new(),
            thresholds: Thresholds::default(),
            defaults: Defaults::default(),
            ignore: Vec::new(),
            severities: BTreeMap::new(),
            render: RenderSettings::default(),
            usage: Default::default(),
            costs: CostSettings::default(),
        }
    }
}

fn default_currency() -> String {
    "USD".into()
}

/// Who can approve in a role.
#[derive(Clone, Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Role {
    /// What the role is for.
    #[serde(default)]
    pub description: Option<String>,
    /// GitHub teams, as `org/team-slug`.
    #[serde(default)]
    pub teams: Vec<Spanned<String>>,
    /// GitHub users, as logins (a leading `@` is allowed).
    #[serde(default)]
    pub users: Vec<Spanned<String>>,
}

/// Thresholds used by the policy, forecasts and reports.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Thresholds {
    /// A team whose measured utilization over the last 30 days is below this share is flagged (default 0.40).
    #[serde(default = "d_low_util")]
    pub low_utilization: Ratio,
    /// Utilization a rightsizing recommendation aims for (default 0.70).
    #[serde(default = "d_target_util")]
    pub target_utilization: Ratio,
    /// A reservation whose expected stranded spend exceeds this share of its cost is denied (default 0.20).
    #[serde(default = "d_stranded")]
    pub stranded_spend_share: Ratio,
    /// A reservation whose expected idle spend (allocated but unused GPU-hours) exceeds this share of its cost is denied (default 0.50).
    #[serde(default = "d_idle")]
    pub idle_spend_share: Ratio,
    /// A request whose monthly cost exceeds this amount needs a capacity review (default 50000).
    #[serde(default = "d_cost_review")]
    pub monthly_cost_review: Money,
    /// What a change may add to a team's cost over its requests' windows (or commit to a reservation) before a director approves (default 250000, in the Config's currency).
    #[serde(default = "d_director_cost")]
    pub director_cost: Money,
    /// The same before a VP approves (default 1000000, in the Config's currency).
    #[serde(default = "d_vp_cost")]
    pub vp_cost: Money,
    /// Budget alert levels as shares of a team's monthly budget (default 0.8, 1.0, 1.2).
    #[serde(default = "d_alerts")]
    pub budget_alerts: Vec<Ratio>,
    /// GPUs a team may gain without approval over 30 days, counted from the base
    /// revision's git history plus the pull request (default 16).
    #[serde(default = "d_auto_budget")]
    pub auto_approval_gpus: Quantity,
}

impl Default for Thresholds {
    fn default() -> Self {
        Thresholds {
            low_utilization: d_low_util(),
            target_utilization: d_target_util(),
            stranded_spend_share: d_stranded(),
            idle_spend_share: d_idle(),
            monthly_cost_review: d_cost_review(),
            director_cost: d_director_cost(),
            vp_cost: d_vp_cost(),
            budget_alerts: d_alerts(),
            auto_approval_gpus: d_auto_budget(),
        }
    }
}

fn d_low_util() -> Ratio {
    Ratio::from_str_const("0.40")
}
fn d_target_util() -> Ratio {
    Ratio::from_str_const("0.70")
}
fn d_stranded() -> Ratio {
    Ratio::from_str_const("0.20")
}
fn d_idle() -> Ratio {
    Ratio::from_str_const("0.50")
}
fn d_cost_review() -> Money {
    Money(rust_decimal::Decimal::from(50_000))
}
fn d_director_cost() -> Money {
    Money(rust_decimal::Decimal::from(250_000))
}
fn d_vp_cost() -> Money {
    Money(rust_decimal::Decimal::from(1_000_000))
}
fn d_auto_budget() -> Quantity {
    Quantity(16)
}
fn d_alerts() -> Vec<Ratio> {
    vec![
        Ratio::from_str_const("0.8"),
        Ratio::from_str_const("1.0"),
        Ratio::from_str_const("1.2"),
    ]
}

/// Defaults for fields a document leaves out.
#[derive(Clone, Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Defaults {
    /// Priority class of requests that name none.
    #[serde(default)]
    pub priority_class: Option<Spanned<String>>,
}

/// A severity name in the Config's overrides.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum SeverityName {
    Error,
    Warning,
    Note,
    Allow,
}

impl SeverityName {
    pub fn severity(self) -> crate::diag::Severity {
        use crate::diag::Severity;
        match self {
            SeverityName::Error => Severity::Error,
            SeverityName::Warning => Severity::Warning,
            SeverityName::Note => Severity::Note,
            SeverityName::Allow => Severity::Allow,
        }
    }
}
