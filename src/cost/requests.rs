//! What a request costs: each unit at its pool's blended GPU-hour price,
//! or at the dearest priced pool of its cluster that provides the same
//! resource (the namespace quota it grants can be used there), per hour,
//! per month and over its window.

use super::{Analysis, prices};
use crate::model::RequestSpec;

impl Analysis<'_> {
    /// What a request costs: per hour, per month and over its window.
    ///
    /// The namespace quota a request grants is one key per resource in its
    /// cluster, which pods may use on any pool that provides the resource:
    /// a unit is priced at its pool's blended price, or where another priced
    /// pool of the cluster makes the same unit dearer, at that pool's.
    pub fn request_cost(&self, spec: &RequestSpec) -> Option<RequestCost> {
        let cluster = spec.cluster.value.as_str();
        let p = self.pool(cluster, &spec.pool.value)?;
        let own = p.price.blended?;
        let here = Some((p.pool, &p.cluster.spec));
        let sized = crate::capacity::size(spec, here);
        let gpus = prices::decimal(sized.gpus);
        let mut hourly = gpus * own;
        let mut reaches_unpriced = false;
        for unit in crate::capacity::units(spec, here) {
            let at_home = own * prices::decimal(unit.gpu_equivalent);
            let (dearest, unpriced) = self.dearest_unit(cluster, &unit.key);
            reaches_unpriced |= unpriced;
            let dearest = dearest.unwrap_or(at_home);
            if dearest > at_home {
                hourly += (dearest - at_home) * rust_decimal::Decimal::from(unit.count);
            }
        }
        let per_gpu_hour = if gpus.is_zero() {
            own
        } else {
            (hourly / gpus).round_dp(4)
        };
        let hours = crate::capacity::Hours::of_request(spec)
            .bounded(self.at.hour_index())
            .len();
        Some(RequestCost {
            per_gpu_hour,
            hourly: hourly.round_dp(4),
            monthly: (hourly * rust_decimal::Decimal::from(prices::HOURS_PER_MONTH)).round_dp(2),
            total: (hourly * rust_decimal::Decimal::from(hours)).round_dp(2),
            hours,
            reaches_unpriced,
        })
    }

    /// The most one unit of `resource` costs an hour in a priced pool of
    /// `cluster` that provides it (its blended GPU-hour price times what a
    /// unit is worth there), and whether a pool without a price provides it
    /// too (the quota reaches capacity nothing prices).
    fn dearest_unit(&self, cluster: &str, resource: &str) -> (Option<rust_decimal::Decimal>, bool) {
        let mut dearest: Option<rust_decimal::Decimal> = None;
        let mut unpriced = false;
        let pools = self
            .pools
            .range((cluster.to_string(), String::new())..)
            .take_while(|((c, _), _)| c == cluster);
        for (_, e) in pools {
            let strategy = e.cluster.spec.mig_strategy.value;
            for x in crate::gpu::resources::provided(e.pool, strategy) {
                if x.resource != resource {
                    continue;
                }
                match e.price.blended {
                    Some(price) => {
                        let unit = price * prices::decimal(x.gpu_equivalent);
                        dearest = Some(dearest.map_or(unit, |d| d.max(unit)));
                    }
                    None => unpriced = true,
                }
            }
        }
        (dearest, unpriced)
    }
}

/// The cost of a request.
#[derive(Clone, Debug, PartialEq)]
pub struct RequestCost {
    /// The GPU-hour price it is costed at: its pool's blended price, or
    /// more where its units are dearer in another pool of the cluster.
    pub per_gpu_hour: rust_decimal::Decimal,
    pub hourly: rust_decimal::Decimal,
    /// Over an average month (730 hours).
    pub monthly: rust_decimal::Decimal,
    /// Over the window (open-ended requests: one year from `--at`).
    pub total: rust_decimal::Decimal,
    pub hours: i64,
    /// Another pool of the cluster that provides one of its resources has no
    /// price: the quota reaches capacity the cost cannot count.
    pub reaches_unpriced: bool,
}
