//! What a request costs: each unit at its pool's blended GPU-hour price,
//! or at the dearest priced pool of its cluster that provides the same
//! resource (the namespace quota it grants can be used there), per hour,
//! per month and over its window.

use super::{Analysis, PoolEntry, prices};
use crate::model::RequestSpec;

impl Analysis<'_> {
    /// What a request costs: per hour, per month and over its window.
    ///
    /// The namespace quota a request grants is one key per resource in its
    /// cluster, which pods may use on any pool that provides the resource:
    /// a unit is priced at its pool's blended price, or where another priced
    /// pool of the cluster makes the same unit dearer, at that pool's. The
    /// window is priced piece by piece between the hours where a
    /// reservation of the cluster starts or ends (an hour after a discounted
    /// term ends costs what the pool costs then, never less than at `--at`);
    /// `hourly` and `monthly` are the dearest piece's rate, `total` the sum
    /// of the pieces.
    pub fn request_cost(&self, spec: &RequestSpec) -> Option<RequestCost> {
        let cluster = spec.cluster.value.as_str();
        let p = self.pool(cluster, &spec.pool.value)?;
        let own = p.price.blended?;
        let here = Some((p.pool, &p.cluster.spec));
        let sized = crate::capacity::size(spec, here);
        let gpus = prices::decimal(sized.gpus);
        let units = crate::capacity::units(spec, here);
        let at_hour = self.at.hour_index();
        let window = crate::capacity::Hours::of_request(spec).bounded(at_hour);
        // The pieces: from the window's start (priced as at `--at` until
        // then) to each change of price after `--at`, to its end.
        let from = window.start.max(at_hour);
        let mut cuts = vec![window.start];
        cuts.extend(
            self.price_changes
                .get(cluster)
                .into_iter()
                .flatten()
                .copied()
                .filter(|&h| h > from && h < window.end),
        );
        cuts.push(window.end.max(window.start));
        let mut hourly = rust_decimal::Decimal::ZERO;
        let mut total = rust_decimal::Decimal::ZERO;
        let mut reaches_unpriced = false;
        let mut pieces: Vec<Piece> = Vec::with_capacity(cuts.len().saturating_sub(1));
        for piece in cuts.windows(2) {
            let (start, end) = (piece[0], piece[1]);
            // Up to `--at`, the pools' prices as they stand then; after it,
            // the dearer of that and what they cost when the piece starts
            // (a term that ends makes hours dearer; one that starts does
            // not make a request judged cheaper than it costs today).
            let priced = |e: &PoolEntry<'_>| {
                let now = e.price.blended;
                if start <= at_hour {
                    return now;
                }
                let then = self.price_from(e, start);
                match (now, then) {
                    (Some(a), Some(b)) => Some(a.max(b)),
                    (a, b) => a.or(b),
                }
            };
            let home = priced(p).unwrap_or(own);
            let mut rate = gpus * home;
            for unit in &units {
                let at_home = home * prices::decimal(unit.gpu_equivalent);
                let (dearest, unpriced) = self.dearest_unit(cluster, &unit.key, &priced);
                reaches_unpriced |= unpriced;
                let dearest = dearest.unwrap_or(at_home);
                if dearest > at_home {
                    rate += (dearest - at_home) * rust_decimal::Decimal::from(unit.count);
                }
            }
            hourly = hourly.max(rate);
            total += rate * rust_decimal::Decimal::from(end - start);
            // A piece at the rate of the one before it extends it.
            match pieces.last_mut() {
                Some(last) if last.rate == rate && last.end == start => last.end = end,
                _ => pieces.push(Piece { start, end, rate }),
            }
        }
        let per_gpu_hour = if gpus.is_zero() {
            own
        } else {
            (hourly / gpus).round_dp(4)
        };
        Some(RequestCost {
            per_gpu_hour,
            hourly: hourly.round_dp(4),
            monthly: (hourly * rust_decimal::Decimal::from(prices::HOURS_PER_MONTH)).round_dp(2),
            total: total.round_dp(2),
            hours: window.len(),
            reaches_unpriced,
            pieces,
        })
    }

    /// What pool `e` costs a GPU-hour in the whole hour `hour` and every
    /// hour after it up to the next change of its cluster's prices (only
    /// the reservations in force all of that hour price its reserved nodes).
    fn price_from(&self, e: &PoolEntry<'_>, hour: i64) -> Option<rust_decimal::Decimal> {
        let cluster = e.cluster.name();
        let Some(slot) = self.piece_prices.get(cluster) else {
            // No reservation of the cluster ever changes its prices.
            return prices::pool_hour(self.repo, e.cluster, e.pool, hour).blended;
        };
        let table = slot.get_or_init(|| {
            let changes = self.price_changes.get(cluster).cloned().unwrap_or_default();
            let pools: Vec<&PoolEntry<'_>> = self
                .pools
                .range((cluster.to_string(), String::new())..)
                .take_while(|((c, _), _)| c == cluster)
                .map(|(_, p)| p)
                .collect();
            let first = changes.first().map_or(0, |h| h - 1);
            std::iter::once(first)
                .chain(changes.iter().copied())
                .map(|h| {
                    let prices = pools
                        .iter()
                        .map(|p| {
                            let price = prices::pool_hour(self.repo, p.cluster, p.pool, h);
                            (p.pool.name.value.to_string(), price.blended)
                        })
                        .collect();
                    (h, prices)
                })
                .collect()
        });
        // The last change at or before the hour; before the first, what the
        // hour before it costs (nothing changes until then).
        let i = table.partition_point(|(h, _)| *h <= hour).max(1) - 1;
        table
            .get(i)
            .and_then(|(_, prices)| prices.get(e.pool.name.value.as_str()))
            .copied()
            .flatten()
    }

    /// The most one unit of `resource` costs an hour in a pool of `cluster`
    /// that provides it and that `priced` prices (its blended GPU-hour price
    /// times what a unit is worth there), and whether a pool without a price
    /// provides it too (the quota reaches capacity nothing prices).
    fn dearest_unit(
        &self,
        cluster: &str,
        resource: &str,
        priced: &dyn Fn(&PoolEntry<'_>) -> Option<rust_decimal::Decimal>,
    ) -> (Option<rust_decimal::Decimal>, bool) {
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
                match priced(e) {
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

/// By hour where a cluster's prices change (sorted), each pool's blended
/// GPU-hour price from that hour on.
pub(super) type PriceTable = Vec<(
    i64,
    std::collections::HashMap<String, Option<rust_decimal::Decimal>>,
)>;

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
    /// The window's pieces, each at its own hourly rate (an open-ended
    /// request's: one year from `--at`); neighbours at one rate are one.
    pub pieces: Vec<Piece>,
}

/// Hours `[start, end)` (hour indexes) of a request's window at one hourly
/// rate.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Piece {
    pub start: i64,
    pub end: i64,
    pub rate: rust_decimal::Decimal,
}

impl RequestCost {
    /// What the hours from hour `from` on cost, each piece at its own rate
    /// (hours before `from` cost nothing here).
    pub fn from_hour(&self, from: i64) -> rust_decimal::Decimal {
        self.pieces
            .iter()
            .map(|p| p.rate * rust_decimal::Decimal::from((p.end - p.start.max(from)).max(0)))
            .sum()
    }
}
