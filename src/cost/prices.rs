//! Prices: what a GPU-hour costs in a pool and under a reservation.
//!
//! The PriceCatalog gives instance-hour prices per provider, region and
//! instance type; a GPU-hour is the instance price over the GPUs in one
//! instance. A pool's nodes are bought three ways (reserved, on-demand,
//! spot); its blended GPU-hour price weighs the three by node count. Reserved
//! nodes cost what the reservations that cover the pool cost (their total
//! over their GPU-hours, upfront fees included); without one, the catalog's
//! 1-year price, else its capacity-block price, else on-demand. Every amount
//! is a `Decimal`.

use crate::model::*;
use rust_decimal::Decimal;

/// Hours in an average month (8,760 / 12), for monthly figures.
pub const HOURS_PER_MONTH: i64 = 730;

/// Prices of one GPU for one hour, from a catalog entry.
#[derive(Clone, Debug, PartialEq)]
pub struct GpuHour {
    pub on_demand: Decimal,
    pub spot: Option<Decimal>,
    pub reserved1y: Option<Decimal>,
    pub reserved3y: Option<Decimal>,
    pub capacity_block: Option<Decimal>,
    /// The catalog entry's source.
    pub source: String,
}

impl GpuHour {
    pub fn from_entry(e: &PriceEntry) -> GpuHour {
        let per = Decimal::from(e.gpus_per_instance.value.0.max(1));
        let gpu = |m: &Spanned<Money>| m.value.0 / per;
        GpuHour {
            on_demand: gpu(&e.on_demand),
            spot: e.spot.as_ref().map(gpu),
            reserved1y: e.reserved1y.as_ref().map(gpu),
            reserved3y: e.reserved3y.as_ref().map(gpu),
            capacity_block: e.capacity_block.as_ref().map(gpu),
            source: e.source.value.clone(),
        }
    }
}

pub use crate::model::catalog::{entry, entry_in};

/// What a pool's GPU-hour costs.
#[derive(Clone, Debug, PartialEq)]
pub struct PoolPrice {
    /// Catalog prices of the pool's instance type (None: not in any catalog).
    pub catalog: Option<GpuHour>,
    /// A reserved GPU-hour, and where that figure comes from.
    pub reserved: Option<(Decimal, String)>,
    /// Weighted by the purchase mix; None when the pool has no price.
    pub blended: Option<Decimal>,
    pub reserved_nodes: u32,
    pub on_demand_nodes: u32,
    pub spot_nodes: u32,
    /// Reserved nodes no reservation in force covers (priced at the
    /// catalog's committed price: a discount no commitment document backs).
    pub unbacked_nodes: u32,
    /// Instances the reservations in force hold beyond the reserved nodes
    /// (validation warns): billed all the same, but no node of the pool runs
    /// on them.
    pub excess_instances: u32,
    /// What those instances bill an hour, at the reservations' rate. Not in
    /// `blended` (a request in the pool does not make them cost more): the
    /// report adds it to the pool's cost as capacity nothing can be
    /// allocated to (stranded).
    pub excess_hourly: Decimal,
}

impl PoolPrice {
    /// The blended GPU-hour with `nodes` of the reserved nodes that the
    /// reservations in force do not cover (priced at the catalog's committed
    /// price) at the catalog's on-demand price instead: what the pool costs
    /// until a commitment is bought for them. `None` without a price.
    pub fn with_on_demand(&self, nodes: u32) -> Option<Decimal> {
        let blended = self.blended?;
        let Some(g) = &self.catalog else {
            return Some(blended);
        };
        let all = self.reserved_nodes + self.on_demand_nodes + self.spot_nodes;
        let swapped = nodes.min(self.unbacked_nodes);
        if all == 0 || swapped == 0 {
            return Some(blended);
        }
        // The unbacked nodes are in the blend at the catalog's committed
        // price (as `pool_with` prices them); swap it for on demand.
        let fallback = g.reserved1y.or(g.capacity_block).unwrap_or(g.on_demand);
        Some(blended + Decimal::from(swapped) * (g.on_demand - fallback) / Decimal::from(all))
    }
}

/// Whether a reservation covers the pool with the pool's own instances
/// (same provider, region and instance type): only those can serve its
/// demand or price its nodes.
pub fn holds_pool_instances(
    cluster: &Document<ClusterSpec>,
    pool: &NodePool,
    s: &ReservationSpec,
) -> bool {
    let c = &cluster.spec;
    s.covers.cluster.value == cluster.name()
        && s.covers.pool.value == pool.name.value.as_str()
        && s.provider.value == c.provider.value
        && c.region.as_ref().is_some_and(|r| r.value == s.region.value)
        && pool
            .instance_type
            .as_ref()
            .is_some_and(|t| t.value == s.instance_type.value)
}

/// Whether a reservation of the pool's own instances can hold its nodes:
/// also in the pool's zone, where both name one (a zonal reservation in
/// another zone bills, and serves nothing there).
pub fn serves_pool(cluster: &Document<ClusterSpec>, pool: &NodePool, s: &ReservationSpec) -> bool {
    holds_pool_instances(cluster, pool, s)
        && match (&pool.zone, &s.zone) {
            (Some(p), Some(r)) => p.value == r.value,
            _ => true,
        }
}

/// Prices a pool at `at`: its reserved nodes at the reservations covering it
/// that are in force at `at` (started, not ended; the repository's
/// `pricing_reservations`: the base's when judging a change), else at the
/// catalog's committed price. A reservation bought for later prices the
/// hours of its term, not today.
pub fn pool(
    repo: &Repo,
    cluster: &Document<ClusterSpec>,
    pool: &NodePool,
    at: crate::model::Timestamp,
) -> PoolPrice {
    pool_with(repo, cluster, pool, |s| {
        s.term.start.value <= at && s.term.end.value > at
    })
}

/// Prices a pool for the whole hour `hour` (an hour index): only the
/// reservations in force all of it price its reserved nodes, so an hour a
/// term starts or ends inside is priced without that reservation.
pub fn pool_hour(
    repo: &Repo,
    cluster: &Document<ClusterSpec>,
    pool: &NodePool,
    hour: i64,
) -> PoolPrice {
    pool_with(repo, cluster, pool, |s| {
        s.term.start.value.as_second() <= hour * 3600
            && s.term.end.value.as_second() >= (hour + 1) * 3600
    })
}

/// Prices a pool with the reservations for which `in_force` holds.
fn pool_with(
    repo: &Repo,
    cluster: &Document<ClusterSpec>,
    pool: &NodePool,
    in_force: impl Fn(&ReservationSpec) -> bool,
) -> PoolPrice {
    let c = &cluster.spec;
    let catalog = pool
        .instance_type
        .as_ref()
        .and_then(|t| {
            entry(
                repo,
                c.provider.value,
                c.region.as_ref().map(|r| r.value.as_str()),
                &t.value,
            )
        })
        .map(GpuHour::from_entry);
    let (reserved_nodes, on_demand_nodes, spot_nodes) = match &pool.purchase {
        Some(p) => (p.value.reserved.0, p.value.on_demand.0, p.value.spot.0),
        None => (0, pool.nodes.value.0, 0),
    };
    // Reservations covering the pool and in force: each bills its
    // GPUs at its own rate (its total over its GPU-hours) this hour, so they
    // are weighted by GPUs, not by the length of their terms.
    let mut cost = Decimal::ZERO;
    let mut gpus = Decimal::ZERO;
    let mut instances: u32 = 0;
    let mut names = Vec::new();
    // Reservations of the pool's instances in another zone: they bill an
    // hour beside the pool, and hold none of its nodes.
    let (mut stray_hourly, mut stray_instances) = (Decimal::ZERO, 0u32);
    let reservations = repo
        .pricing_reservations
        .as_deref()
        .unwrap_or(&repo.reservations);
    for r in reservations.values() {
        let s = &r.spec;
        // Only reservations of the pool's own instances, in force, price it.
        if !holds_pool_instances(cluster, pool, s) || !in_force(s) {
            continue;
        }
        let Some(rc) = reservation(repo, s) else {
            continue;
        };
        if rc.gpu_hours.is_zero() {
            continue;
        }
        if !serves_pool(cluster, pool, s) {
            stray_hourly += rc.per_gpu_hour * Decimal::from(rc.gpus);
            stray_instances = stray_instances.saturating_add(s.count.value.0);
            continue;
        }
        cost += rc.per_gpu_hour * Decimal::from(rc.gpus);
        gpus += Decimal::from(rc.gpus);
        instances = instances.saturating_add(s.count.value.0);
        names.push(r.name().to_string());
    }
    // The catalog's committed price: what a reserved node no reservation
    // covers is taken to cost.
    let committed = || {
        catalog.as_ref().and_then(|g| {
            g.reserved1y
                .map(|p| (p, "catalog 1-year price".to_string()))
                .or_else(|| {
                    g.capacity_block
                        .map(|p| (p, "catalog capacity-block price".to_string()))
                })
                .or_else(|| {
                    Some((
                        g.on_demand,
                        "catalog on-demand price (no committed price)".to_string(),
                    ))
                })
        })
    };
    let reserved = if gpus.is_zero() {
        committed()
    } else {
        let rate = cost / gpus;
        let source = format!("reservations {}", names.join(", "));
        match committed() {
            // Reserved nodes beyond the reservations' instances are priced at
            // the catalog's committed price.
            Some((fallback, fallback_source)) if instances < reserved_nodes => {
                let covered = Decimal::from(instances);
                let rest = Decimal::from(reserved_nodes - instances);
                Some((
                    (covered * rate + rest * fallback) / (covered + rest),
                    format!(
                        "{source} ({instances} of {reserved_nodes} reserved nodes), {fallback_source} for the rest"
                    ),
                ))
            }
            _ => Some((rate, source)),
        }
    };
    let excess_instances = if gpus.is_zero() {
        0
    } else {
        instances.saturating_sub(reserved_nodes)
    };
    let blended = catalog.as_ref().map(|g| {
        let nodes = reserved_nodes + on_demand_nodes + spot_nodes;
        if nodes == 0 {
            return g.on_demand;
        }
        let r = reserved.as_ref().map(|r| r.0).unwrap_or(g.on_demand);
        let spot = g.spot.unwrap_or(g.on_demand);
        let sum = Decimal::from(reserved_nodes) * r
            + Decimal::from(on_demand_nodes) * g.on_demand
            + Decimal::from(spot_nodes) * spot;
        sum / Decimal::from(nodes)
    });
    PoolPrice {
        catalog,
        reserved,
        blended,
        reserved_nodes,
        on_demand_nodes,
        spot_nodes,
        unbacked_nodes: reserved_nodes.saturating_sub(instances),
        excess_instances: excess_instances.saturating_add(stray_instances),
        excess_hourly: stray_hourly
            + if gpus.is_zero() {
                Decimal::ZERO
            } else {
                cost / gpus
                    * Decimal::from(excess_instances)
                    * Decimal::from(pool.gpus_per_node.value.0)
            },
    }
}

/// The pool's blended price hour by hour over `[from, to)` (hour indices),
/// as segments: each starts at its hour and lasts until the next. The price
/// changes only where a covering reservation starts or ends, so a lookback
/// that spans a reservation's end is priced at what each hour cost. An hour
/// a term starts or ends inside (its partial first or last hour) is priced
/// without the reservation ([`pool_hour`]). Each segment carries the
/// blended price and what the instances reserved beyond the pool's reserved
/// nodes bill an hour ([`PoolPrice::excess_hourly`]).
pub fn pool_segments(
    repo: &Repo,
    cluster: &Document<ClusterSpec>,
    pool_doc: &NodePool,
    from: i64,
    to: i64,
) -> Vec<(i64, Option<Decimal>, Decimal)> {
    let reservations = repo
        .pricing_reservations
        .as_deref()
        .unwrap_or(&repo.reservations);
    let mut starts: Vec<i64> = vec![from];
    for r in reservations.values() {
        let s = &r.spec;
        if s.covers.cluster.value != cluster.name()
            || s.covers.pool.value != pool_doc.name.value.as_str()
        {
            continue;
        }
        for t in [s.term.start.value, s.term.end.value] {
            // The hour the boundary falls in, and the one after it: a partial
            // hour is priced apart from the whole hours on either side.
            for h in [t.hour_index(), t.hour_index() + 1] {
                if h > from && h < to {
                    starts.push(h);
                }
            }
        }
    }
    starts.sort_unstable();
    starts.dedup();
    let mut out: Vec<(i64, Option<Decimal>, Decimal)> = Vec::with_capacity(starts.len());
    for h in starts {
        let p = pool_hour(repo, cluster, pool_doc, h);
        if out
            .last()
            .is_none_or(|l| l.1 != p.blended || l.2 != p.excess_hourly)
        {
            out.push((h, p.blended, p.excess_hourly));
        }
    }
    out
}

/// What a reservation costs.
#[derive(Clone, Debug, PartialEq)]
pub struct ReservationCost {
    /// Price per instance-hour.
    pub hourly: Decimal,
    /// Where the price comes from: `reservation` or the catalog column.
    pub price_source: &'static str,
    pub gpus: u32,
    pub hours: i64,
    pub gpu_hours: Decimal,
    /// Instances times hours times the hourly price, plus the upfront fee.
    pub total: Decimal,
    /// `total` over the GPU-hours.
    pub per_gpu_hour: Decimal,
}

/// Costs a reservation; None when neither it nor the catalog has a price.
pub fn reservation(repo: &Repo, s: &ReservationSpec) -> Option<ReservationCost> {
    let (hourly, price_source) = match &s.hourly_price {
        Some(p) => (p.value.0, "reservation"),
        None => catalog_hourly(repo, s)?,
    };
    costed(repo, s, hourly, price_source)
}

/// Costs a reservation as the gate judges it: at its stated price, but
/// never below the catalog's (a price written into the reservation itself
/// cannot make a commitment look smaller than the catalog says it is).
pub fn reservation_judged(repo: &Repo, s: &ReservationSpec) -> Option<ReservationCost> {
    // Where the catalog has no price for the term, the floor is its lowest
    // committed price for the type (else on demand): the price the change
    // states is never what sizes it.
    let floor = catalog_term_hourly(repo, s)
        .or_else(|| cut_reference(repo, s).map(|c| (c, "catalog's lowest committed price")));
    match (&s.hourly_price, floor) {
        (Some(p), Some((c, src))) if c > p.value.0 => costed(repo, s, c, src),
        _ => reservation(repo, s),
    }
}

/// The catalog's hourly price for a reservation's type and term, and which
/// column it is.
pub fn catalog_hourly(repo: &Repo, s: &ReservationSpec) -> Option<(Decimal, &'static str)> {
    let e = entry(
        repo,
        s.provider.value,
        Some(&s.region.value),
        &s.instance_type.value,
    )?;
    let committed = match s.kind.value {
        ReservationType::AwsCapacityBlock => e
            .capacity_block
            .as_ref()
            .map(|p| (p, "catalog capacity-block price")),
        ReservationType::GcpCommitment => match s.commitment_plan.as_ref().map(|p| p.value) {
            Some(CommitmentPlan::ThirtySixMonth) => {
                e.reserved3y.as_ref().map(|p| (p, "catalog 3-year price"))
            }
            _ => e.reserved1y.as_ref().map(|p| (p, "catalog 1-year price")),
        },
        // Capacity reservations bill at the on-demand rate.
        _ => None,
    };
    let (p, src) = committed.unwrap_or((&e.on_demand, "catalog on-demand price"));
    Some((p.value.0, src))
}

/// The catalog's price for a reservation's own type and term: for a
/// capacity block or a commitment, the committed column of its term only
/// (None where the catalog lacks it: a 3-year commitment is not priced, or
/// checked, at the on-demand rate), for a capacity reservation the on-demand
/// rate it bills at.
pub fn catalog_term_hourly(repo: &Repo, s: &ReservationSpec) -> Option<(Decimal, &'static str)> {
    let committed_kind = matches!(
        s.kind.value,
        ReservationType::AwsCapacityBlock | ReservationType::GcpCommitment
    );
    catalog_hourly(repo, s)
        .filter(|(_, source)| !committed_kind || *source != "catalog on-demand price")
}

/// The catalog price a reservation's stated price is measured against for
/// a cut (`reservation.price_cut_vs_catalog`): its type's and term's own
/// ([`catalog_hourly`]); where the catalog lacks that committed price (a
/// 3-year commitment in a catalog with a 1-year price only), the lowest
/// committed price the entry has, so a fair commitment price is not read as
/// a cut from on demand.
pub fn cut_reference(repo: &Repo, s: &ReservationSpec) -> Option<Decimal> {
    let (price, source) = catalog_hourly(repo, s)?;
    let committed_kind = matches!(
        s.kind.value,
        ReservationType::AwsCapacityBlock | ReservationType::GcpCommitment
    );
    if !committed_kind || source != "catalog on-demand price" {
        return Some(price);
    }
    let e = entry(
        repo,
        s.provider.value,
        Some(&s.region.value),
        &s.instance_type.value,
    )?;
    [&e.reserved3y, &e.reserved1y, &e.capacity_block]
        .into_iter()
        .flatten()
        .map(|p| p.value.0)
        .min()
        .or(Some(price))
}

fn costed(
    repo: &Repo,
    s: &ReservationSpec,
    hourly: Decimal,
    price_source: &'static str,
) -> Option<ReservationCost> {
    let gpus = reservation_gpus(repo, s);
    let hours = s.term.hours();
    let upfront = s
        .upfront_fee
        .as_ref()
        .map(|u| u.value.0)
        .unwrap_or_default();
    let total = Decimal::from(s.count.value.0) * Decimal::from(hours) * hourly + upfront;
    let gpu_hours = Decimal::from(gpus) * Decimal::from(hours);
    let per_gpu_hour = if gpu_hours.is_zero() {
        Decimal::ZERO
    } else {
        total / gpu_hours
    };
    Some(ReservationCost {
        hourly,
        price_source,
        gpus,
        hours,
        gpu_hours,
        total,
        per_gpu_hour,
    })
}

/// GPUs a reservation holds: instances times the GPUs of one instance (the
/// covered pool's GPUs per node when its instance type matches, else the
/// catalog's GPUs per instance, else 8).
pub fn reservation_gpus(repo: &Repo, s: &ReservationSpec) -> u32 {
    let per = repo
        .pool(&s.covers.cluster.value, &s.covers.pool.value)
        .filter(|p| {
            p.instance_type
                .as_ref()
                .is_none_or(|t| t.value == s.instance_type.value)
        })
        .map(|p| p.gpus_per_node.value.0)
        .or_else(|| {
            repo.catalogs
                .values()
                .flat_map(|c| &c.spec.prices)
                .find_map(|e| {
                    (e.instance_type.value == s.instance_type.value)
                        .then_some(e.gpus_per_instance.value.0)
                })
        })
        .unwrap_or(8);
    s.count.value.0.saturating_mul(per)
}

/// An amount of money rounded to the cent and written with two decimals
/// (`58400.00`, not `58400` or `44895000.0`).
pub fn cents(d: Decimal) -> Decimal {
    let mut c = d.round_dp(2);
    c.rescale(2);
    c
}

/// A float quantity (GPU-hours, a share) as a decimal, to twelve places:
/// fine enough that a share of a billion-dollar commitment is right to the
/// cent (eight places left 5/12 of 2,803,200 a cent short).
pub fn decimal(x: f64) -> Decimal {
    Decimal::from_f64_retain(x)
        .map(|d| d.round_dp(12))
        .unwrap_or_default()
}

/// A decimal as a float, for policy facts and charts.
pub fn float(d: Decimal) -> f64 {
    rust_decimal::prelude::ToPrimitive::to_f64(&d).unwrap_or(0.0)
}
