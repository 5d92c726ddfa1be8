//! Commitment mix: how a pool's GPUs should be bought, from its demand
//! forecast and its prices.
//!
//! The way the field does it: commit long (3-year, else 1-year) to the
//! baseline that demand stays above almost all the time (the 5th percentile,
//! over the horizon, of the P10 forecast); cover the predictable middle with
//! flexible commitments (capacity blocks, else 1-year) up to the level where a
//! committed GPU pays for itself: demand must exceed it for at least a share
//! of hours equal to the committed price over the on-demand price (the
//! break-even), so the level is that quantile of the P50 forecast; leave the
//! bursts above to on-demand and spot. Commitments are whole instances. The
//! recommendation is priced against buying everything on demand.

use super::prices::{self, GpuHour, HOURS_PER_MONTH};
use crate::forecast::demand::Outlook;
use crate::forecast::quantile;
use rust_decimal::Decimal;

/// One kind of commitment at a price.
#[derive(Clone, Debug, PartialEq)]
pub struct Tier {
    /// `3-year reserved`, `capacity block`, ...
    pub kind: &'static str,
    pub nodes: u32,
    pub gpus: u32,
    /// Per GPU-hour.
    pub price: Decimal,
}

/// A recommended commitment mix for a pool.
#[derive(Clone, Debug, PartialEq)]
pub struct Mix {
    /// Hours of forecast it is based on.
    pub hours: usize,
    pub gpus_per_node: u32,
    /// Mean P50 demand over the horizon.
    pub mean_demand: f64,
    pub baseline: Option<Tier>,
    pub flexible: Option<Tier>,
    /// Mean GPUs above the commitments, bought on demand (or spot).
    pub burst_gpus: f64,
    pub on_demand_price: Decimal,
    /// Monthly cost of the mix and of buying everything on demand.
    pub monthly_mix: Decimal,
    pub monthly_on_demand: Decimal,
    /// `monthly_on_demand - monthly_mix` over `monthly_on_demand`.
    pub savings_share: f64,
}

/// Recommends a mix from the forecast over `[from, from + hours)`.
pub fn recommend(
    outlook: &Outlook,
    from: i64,
    hours: usize,
    gpus_per_node: u32,
    price: &GpuHour,
) -> Option<Mix> {
    let mut p10 = Vec::with_capacity(hours);
    let mut p50 = Vec::with_capacity(hours);
    for h in from..from + hours as i64 {
        if let Some(q) = outlook.at(h) {
            p10.push(q.p10);
            p50.push(q.p50);
        }
    }
    if p50.is_empty() || gpus_per_node == 0 {
        return None;
    }
    let mean_demand = p50.iter().sum::<f64>() / p50.len() as f64;
    p10.sort_by(f64::total_cmp);
    let mut sorted50 = p50.clone();
    sorted50.sort_by(f64::total_cmp);
    let od = price.on_demand;
    let long = price
        .reserved3y
        .map(|p| ("3-year reserved", p))
        .or(price.reserved1y.map(|p| ("1-year reserved", p)));
    let flexible =
        price
            .capacity_block
            .map(|p| ("capacity block", p))
            .or(if price.reserved3y.is_some() {
                price.reserved1y.map(|p| ("1-year reserved", p))
            } else {
                None
            });
    let gpn = gpus_per_node as f64;
    let whole = |gpus: f64| -> u32 { (gpus.max(0.0) / gpn + 1e-9).floor() as u32 };
    // The baseline: what demand stays above almost all the time, even at P10.
    let baseline_nodes = match long.or(flexible) {
        Some((_, p)) if p < od => whole(quantile(&p10, 0.05)),
        _ => 0,
    };
    // The break-even level of the flexible commitment.
    let committed_nodes = match flexible.or(long) {
        Some((_, p)) if p < od && !od.is_zero() => {
            let share = prices::float(p / od);
            whole(quantile(&sorted50, (1.0 - share).clamp(0.0, 1.0))).max(baseline_nodes)
        }
        _ => baseline_nodes,
    };
    let baseline_tier = long
        .or(flexible)
        .filter(|_| baseline_nodes > 0)
        .map(|(kind, p)| Tier {
            kind,
            nodes: baseline_nodes,
            gpus: baseline_nodes * gpus_per_node,
            price: p,
        });
    let flexible_nodes = committed_nodes - baseline_nodes;
    let flexible_tier = flexible
        .or(long)
        .filter(|_| flexible_nodes > 0)
        .map(|(kind, p)| Tier {
            kind,
            nodes: flexible_nodes,
            gpus: flexible_nodes * gpus_per_node,
            price: p,
        });
    let committed = (committed_nodes * gpus_per_node) as f64;
    let burst_gpus = p50.iter().map(|d| (d - committed).max(0.0)).sum::<f64>() / p50.len() as f64;
    let month = Decimal::from(HOURS_PER_MONTH);
    let tier_cost = |t: &Option<Tier>| {
        t.as_ref()
            .map(|t| Decimal::from(t.gpus) * t.price)
            .unwrap_or_default()
    };
    let monthly_mix = ((tier_cost(&baseline_tier)
        + tier_cost(&flexible_tier)
        + prices::decimal(burst_gpus) * od)
        * month)
        .round_dp(2);
    let monthly_on_demand = (prices::decimal(mean_demand) * od * month).round_dp(2);
    let savings_share = if monthly_on_demand.is_zero() {
        0.0
    } else {
        prices::float((monthly_on_demand - monthly_mix) / monthly_on_demand)
    };
    Some(Mix {
        hours: p50.len(),
        gpus_per_node,
        mean_demand,
        baseline: baseline_tier,
        flexible: flexible_tier,
        burst_gpus,
        on_demand_price: od,
        monthly_mix,
        monthly_on_demand,
        savings_share,
    })
}
