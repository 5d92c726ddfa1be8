//! A recommendation of the cost plan: what it is about, its text, its
//! monthly saving, its risk and the document changes that would apply it.

use rust_decimal::Decimal;
use serde::Serialize;

#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Recommendation {
    pub kind: RecommendationKind,
    pub subject: String,
    pub text: String,
    /// What following it saves a month, where that can be priced.
    #[serde(serialize_with = "super::ser::cents_opt")]
    pub monthly_savings: Option<Decimal>,
    /// What could go wrong.
    pub risk: String,
    /// The document changes that apply it.
    pub changes: Vec<String>,
}

/// What a recommendation is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum RecommendationKind {
    /// Hold fewer GPUs: a team uses far less than it is allocated.
    RightsizeTeam,
    /// Reserve fewer instances than a reservation holds.
    ResizeReservation,
    /// Buy a pool's demand the way the field does: commitments, spot, on demand.
    CommitmentMix,
    /// A team's projected spend passes its budget.
    Budget,
}

impl RecommendationKind {
    pub fn as_str(self) -> &'static str {
        match self {
            RecommendationKind::RightsizeTeam => "rightsize-team",
            RecommendationKind::ResizeReservation => "resize-reservation",
            RecommendationKind::CommitmentMix => "commitment-mix",
            RecommendationKind::Budget => "budget",
        }
    }
}
