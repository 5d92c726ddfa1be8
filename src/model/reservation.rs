//! Reservation: a cloud capacity commitment that covers a node pool.

use super::{Count, Money, Provider, Spanned, Window};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// `spec` of a Reservation.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ReservationSpec {
    /// Cloud provider.
    pub provider: Spanned<Provider>,
    /// What kind of commitment it is.
    #[serde(rename = "type")]
    pub kind: Spanned<ReservationType>,
    /// Cloud region.
    #[schemars(regex(pattern = r"^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$"))]
    pub region: Spanned<String>,
    /// Zone, where the reservation is zonal.
    #[serde(default)]
    pub zone: Option<Spanned<String>>,
    /// Instance type (`p4d.24xlarge`, `a3-highgpu-8g`, `Standard_ND96isr_H100_v5`).
    #[schemars(regex(pattern = r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$"))]
    pub instance_type: Spanned<String>,
    /// Number of instances reserved.
    pub count: Spanned<Count>,
    /// When the reservation holds: start inclusive, end exclusive.
    pub term: Window,
    /// Price per instance-hour; defaults to the PriceCatalog's price for the type.
    #[serde(default)]
    pub hourly_price: Option<Spanned<Money>>,
    /// One-time fee paid up front (capacity blocks are prepaid).
    #[serde(default)]
    pub upfront_fee: Option<Spanned<Money>>,
    /// The node pool whose demand the reservation serves.
    pub covers: PoolRef,
    /// GCP commitments: the plan length (`12-month` when left out). Refused on other types.
    #[serde(default)]
    pub commitment_plan: Option<Spanned<CommitmentPlan>>,
    /// Why the commitment is worth its term (text or a link): what a reservation needs when its
    /// term reaches beyond what the usage history can support.
    #[serde(default)]
    pub business_case: Option<Spanned<String>>,
}

/// A node pool of a cluster.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct PoolRef {
    pub cluster: Spanned<String>,
    pub pool: Spanned<String>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum ReservationType {
    /// AWS On-Demand Capacity Reservation.
    AwsCapacityReservation,
    /// AWS EC2 Capacity Block for ML (prepaid, fixed duration).
    AwsCapacityBlock,
    /// GCP specific reservation.
    GcpReservation,
    /// GCP committed-use discount (with a reservation).
    GcpCommitment,
    /// Azure capacity reservation.
    AzureCapacityReservation,
}

impl ReservationType {
    pub fn as_str(self) -> &'static str {
        match self {
            ReservationType::AwsCapacityReservation => "aws-capacity-reservation",
            ReservationType::AwsCapacityBlock => "aws-capacity-block",
            ReservationType::GcpReservation => "gcp-reservation",
            ReservationType::GcpCommitment => "gcp-commitment",
            ReservationType::AzureCapacityReservation => "azure-capacity-reservation",
        }
    }

    /// The provider this type belongs to.
    pub fn provider(self) -> Provider {
        match self {
            ReservationType::AwsCapacityReservation | ReservationType::AwsCapacityBlock => {
                Provider::Aws
            }
            ReservationType::GcpReservation | ReservationType::GcpCommitment => Provider::Gcp,
            ReservationType::AzureCapacityReservation => Provider::Azure,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum CommitmentPlan {
    #[serde(rename = "12-month")]
    TwelveMonth,
    #[serde(rename = "36-month")]
    ThirtySixMonth,
}

impl ReservationSpec {
    /// Why this reservation cannot serve `pool` of `cluster`, in words (none:
    /// it can): a reservation serves only instances of its own provider,
    /// region, instance type and, when both name one, zone.
    pub fn mismatches(
        &self,
        cluster: &super::ClusterSpec,
        pool: &super::cluster::NodePool,
    ) -> Vec<String> {
        let mut out = Vec::new();
        if cluster.provider.value != self.provider.value {
            out.push(format!(
                "the cluster runs on {}, the reservation is on {}",
                cluster.provider.value.as_str(),
                self.provider.value.as_str()
            ));
        }
        if let Some(region) = &cluster.region
            && region.value != self.region.value
        {
            out.push(format!(
                "the cluster is in {}, the reservation in {}",
                region.value, self.region.value
            ));
        }
        match &pool.instance_type {
            Some(it) if it.value != self.instance_type.value => out.push(format!(
                "the pool's nodes are {}, the reservation is for {}",
                it.value, self.instance_type.value
            )),
            Some(_) => {}
            // Nothing says the pool's nodes are what the reservation holds.
            None => out.push(format!(
                "the pool names no instance type, so nothing says its nodes are {}",
                self.instance_type.value
            )),
        }
        if let (Some(pz), Some(rz)) = (&pool.zone, &self.zone)
            && pz.value != rz.value
        {
            out.push(format!(
                "the pool's nodes are in zone {}, the reservation in {}",
                pz.value, rz.value
            ));
        }
        out
    }
}
