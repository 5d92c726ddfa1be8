//! PriceCatalog: what instances cost, per provider, region and instance type.

use super::{Count, Money, Provider, Spanned, Timestamp};
use schemars::JsonSchema;
use serde::Deserialize;

/// `spec` of a PriceCatalog.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct CatalogSpec {
    /// When these prices were read.
    #[serde(default)]
    pub effective: Option<Spanned<Timestamp>>,
    /// Prices per instance-hour.
    pub prices: Vec<PriceEntry>,
}

/// Prices of one instance type in one region, per instance-hour.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct PriceEntry {
    pub provider: Spanned<Provider>,
    #[schemars(regex(pattern = r"^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$"))]
    pub region: Spanned<String>,
    #[schemars(regex(pattern = r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$"))]
    pub instance_type: Spanned<String>,
    /// GPUs in one instance (the GPU-hour price is the instance price divided by this).
    pub gpus_per_instance: Spanned<Count>,
    /// On-demand price.
    pub on_demand: Spanned<Money>,
    /// Spot price.
    #[serde(default)]
    pub spot: Option<Spanned<Money>>,
    /// Effective hourly price under a one-year commitment.
    #[serde(default)]
    pub reserved1y: Option<Spanned<Money>>,
    /// Effective hourly price under a three-year commitment.
    #[serde(default)]
    pub reserved3y: Option<Spanned<Money>>,
    /// Effective hourly price as an AWS capacity block.
    #[serde(default)]
    pub capacity_block: Option<Spanned<Money>>,
    /// Where the numbers come from (a URL or a document and its date).
    pub source: Spanned<String>,
}
