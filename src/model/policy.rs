//! ApprovalPolicy: approval tiers and rules, as written in the repository.
//!
//! This module holds the shape only. Conditions are compiled and evaluated by
//! the `policy` stage.

use super::{Count, Name, Spanned};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// `spec` of an ApprovalPolicy.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct PolicySpec {
    /// What the policy is for.
    #[serde(default)]
    pub description: Option<String>,
    /// Approval tiers, smallest first. A request lands in the first tier whose `when` holds.
    #[serde(default)]
    pub tiers: Vec<Tier>,
    /// Rules that deny, warn, require an extra approval or escalate one tier.
    #[serde(default)]
    pub rules: Vec<Rule>,
}

/// An approval tier.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Tier {
    /// Tier name (`auto`, `team-lead`, `director`, `vp`).
    pub name: Spanned<Name>,
    /// Condition over the request's facts (a minijinja expression).
    pub when: Spanned<String>,
    /// Approvals this tier needs; none means approved automatically.
    #[serde(default)]
    pub approvals: Vec<Approval>,
    /// Request fields this tier requires to be filled in.
    #[serde(default)]
    pub requires: Vec<Spanned<RequiredField>>,
    /// What the tier means, for people.
    #[serde(default)]
    pub description: Option<String>,
    /// The longest request window this tier may approve, in days; a longer
    /// (or open-ended) window moves up to the first tier that allows it, and
    /// is denied when none does. No limit when absent.
    #[serde(default)]
    pub max_window_days: Option<Spanned<Count>>,
    /// The longest reservation term this tier may approve, in days (as above).
    #[serde(default)]
    pub max_term_days: Option<Spanned<Count>>,
}

/// Approvals needed from a role.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Approval {
    /// Role from the Config (`team-lead`, `director`, ...).
    pub role: Spanned<String>,
    /// How many distinct people in the role must approve (default 1).
    #[serde(default = "one")]
    pub count: Count,
}

fn one() -> Count {
    Count(1)
}

/// Request fields a tier can require.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum RequiredField {
    Justification,
    Window,
    SuccessMetrics,
    BusinessCase,
    PriorityClass,
}

impl RequiredField {
    pub fn as_str(self) -> &'static str {
        match self {
            RequiredField::Justification => "justification",
            RequiredField::Window => "window",
            RequiredField::SuccessMetrics => "successMetrics",
            RequiredField::BusinessCase => "businessCase",
            RequiredField::PriorityClass => "priorityClass",
        }
    }
}

/// A policy rule.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Rule {
    /// Rule name, shown with its findings.
    pub name: Spanned<Name>,
    /// What happens when the condition holds.
    pub effect: Spanned<Effect>,
    /// Condition over the facts (a minijinja expression).
    pub when: Spanned<String>,
    /// Message shown when the rule fires (a minijinja template over the same facts).
    pub message: Spanned<String>,
    /// For `require-approval`: the role whose approval is required.
    #[serde(default)]
    pub role: Option<Spanned<String>>,
    /// For `escalate`: move to at least this tier instead of one tier up.
    #[serde(default)]
    pub tier: Option<Spanned<Name>>,
    /// What the rule looks at (default `CapacityRequest`).
    #[serde(default)]
    pub applies_to: Option<Spanned<Subject>>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Effect {
    /// The change is refused.
    Deny,
    /// A finding is shown; nothing is blocked.
    Warn,
    /// An approval from `role` is needed in addition to the tier's.
    RequireApproval,
    /// The request moves up one tier.
    Escalate,
}

impl Effect {
    pub fn as_str(self) -> &'static str {
        match self {
            Effect::Deny => "deny",
            Effect::Warn => "warn",
            Effect::RequireApproval => "require-approval",
            Effect::Escalate => "escalate",
        }
    }
}

/// What a rule is evaluated against: a document of each kind, the usage
/// history, and the templates.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Deserialize, Serialize, JsonSchema,
)]
pub enum Subject {
    CapacityRequest,
    Reservation,
    Team,
    Cluster,
    PriorityClass,
    PriceCatalog,
    ApprovalPolicy,
    Config,
    /// The usage history (`usage/*.csv`), as one subject.
    UsageHistory,
    /// The template overrides (`templates/`), as one subject.
    Templates,
}

impl Subject {
    pub const ALL: [Subject; 10] = [
        Subject::CapacityRequest,
        Subject::Reservation,
        Subject::Team,
        Subject::Cluster,
        Subject::PriorityClass,
        Subject::PriceCatalog,
        Subject::ApprovalPolicy,
        Subject::Config,
        Subject::UsageHistory,
        Subject::Templates,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Subject::CapacityRequest => "CapacityRequest",
            Subject::Reservation => "Reservation",
            Subject::Team => "Team",
            Subject::Cluster => "Cluster",
            Subject::PriorityClass => "PriorityClass",
            Subject::PriceCatalog => "PriceCatalog",
            Subject::ApprovalPolicy => "ApprovalPolicy",
            Subject::Config => "Config",
            Subject::UsageHistory => "UsageHistory",
            Subject::Templates => "Templates",
        }
    }

    /// The subject a document kind's changes are judged as.
    pub fn of_kind(kind: super::Kind) -> Subject {
        use super::Kind;
        match kind {
            Kind::Config => Subject::Config,
            Kind::Team => Subject::Team,
            Kind::Cluster => Subject::Cluster,
            Kind::CapacityRequest => Subject::CapacityRequest,
            Kind::PriorityClass => Subject::PriorityClass,
            Kind::Reservation => Subject::Reservation,
            Kind::ApprovalPolicy => Subject::ApprovalPolicy,
            Kind::PriceCatalog => Subject::PriceCatalog,
        }
    }
}
