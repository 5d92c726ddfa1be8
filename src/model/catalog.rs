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

/// The catalog entry for an instance type: same provider and instance type,
/// and the same region when one is given (a pool of an on-premises cluster
/// without a region takes the first entry in catalog order, then list order).
pub fn entry<'r>(
    repo: &'r super::Repo,
    provider: Provider,
    region: Option<&str>,
    instance_type: &str,
) -> Option<&'r PriceEntry> {
    entry_in(
        repo.catalogs.values().map(|c| &c.spec),
        provider,
        region,
        instance_type,
    )
}

/// [`entry`] among `catalogs` (in catalog-name order).
pub fn entry_in<'r>(
    catalogs: impl IntoIterator<Item = &'r CatalogSpec>,
    provider: Provider,
    region: Option<&str>,
    instance_type: &str,
) -> Option<&'r PriceEntry> {
    catalogs.into_iter().flat_map(|c| &c.prices).find(|e| {
        e.provider.value == provider
            && e.instance_type.value == instance_type
            && region.is_none_or(|r| e.region.value == r)
    })
}
