//! Commitment mix: how a pool's next 90 days of demand should be bought, the
//! way the field does it, and what that costs against all on demand.
//!
//! Hour by hour over the window, the P50 demand (rightsized, when teams are
//! asked to release GPUs) is split:
//!
//! 1. **Locked** commitments (prepaid or not cancellable, and started) are
//!    paid whatever happens: they serve steady demand first, then
//!    preemptible demand.
//! 2. **Preemptible** demand (the teams' allocation times the share of their
//!    requests that tolerate preemption, forecast) goes on **spot**, priced
//!    at the catalog's spot price times one plus the Config's interruption
//!    allowance, when that is below on demand, and when the whole mix costs
//!    less so than with that demand bought like the steady demand below
//!    (preemptible work that runs all the time may be cheaper committed).
//! 3. **Known, bounded bursts** (an approved, non-preemptible request with a
//!    window of at most 182 days that starts after `--at`) go on **capacity
//!    blocks** when the catalog has a capacity-block price below on demand,
//!    up to the 256 instances AWS sells an account at once.
//! 4. What is left is **steady** demand. Its **baseline** (the 5th
//!    percentile, over the window, of its P10) is committed long: 3-year
//!    when the history supports such a term and the catalog has the price,
//!    else 1-year. The **predictable middle** above it goes on a flexible
//!    commitment (1-year, when the baseline is 3-year) up to the break-even
//!    level: a committed GPU pays for itself when demand is above it for at
//!    least the share of hours that its price is of on demand, so the level
//!    is that quantile of the P50 steady demand. With 1-year only, one
//!    1-year tier goes up to its break-even level.
//! 5. Steady demand above the commitments runs **on demand**.
//!
//! A commitment is paid for its whole term, not only the window: each tier
//! is capped at the level its break-even rule gives over the term's hours
//! the outlook knows (the forecast plus the approved requests' timeline, so
//! a request that ends within the term takes its GPUs away).
//!
//! Commitments are whole instances, and so is what each hour buys on spot, on
//! capacity blocks and on demand: once the tiers are sized, each hour buys
//! the cheapest whole instances for what they leave (`mix_hour`), so a
//! burst that fits in an on-demand instance's room is not bought again. Costs
//! are per average month (730 hours). A mix is never dearer than the same
//! demand all on demand: when none is cheaper, the mix is all on demand.

use super::mix_hour;
use super::mix_release::Cut;
pub use super::mix_release::{Release, Step};
use super::prices::{self, GpuHour, HOURS_PER_MONTH};
use crate::capacity::Timeline;
use crate::forecast::demand::Outlook;
use crate::forecast::quantile;
use rust_decimal::Decimal;
use serde::Serialize;

/// The longest capacity block (AWS: up to 182 days).
pub const MAX_BLOCK_HOURS: i64 = 182 * 24;

/// One commitment tier at a price.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Tier {
    /// `3-year reserved` or `1-year reserved`.
    pub kind: &'static str,
    pub nodes: u32,
    pub gpus: u32,
    /// Per GPU-hour.
    pub price: Decimal,
    /// The share of its GPU-hours expected unused over its term (the
    /// demand the outlook knows there, above the tiers below it): what the
    /// gate weighs against the Config's `strandedSpendShare`.
    pub unused: f64,
}

/// Shares of the window's demand (GPU-hours) each way of buying serves.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Shares {
    pub locked: f64,
    pub long: f64,
    pub flexible: f64,
    pub capacity_block: f64,
    pub spot: f64,
    pub on_demand: f64,
}

/// An unlocked reservation the mix keeps, with how many of its instances
/// (all of them, or fewer when a smaller count makes the mix cheaper).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Kept {
    /// The Reservation's name.
    pub name: String,
    /// Instances kept (at most its `count`).
    pub count: u32,
}

/// A recommended commitment mix for a pool.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Mix {
    /// Hours of forecast it is based on.
    pub hours: usize,
    pub gpus_per_node: u32,
    /// Mean P50 demand over the window (after rightsizing), in GPUs.
    pub mean_demand: f64,
    /// GPUs released by rightsizing, taken off the demand.
    pub released_gpus: f64,
    pub baseline: Option<Tier>,
    pub flexible: Option<Tier>,
    /// Mean GPUs bought on capacity blocks, on spot and on demand (whole
    /// instances each hour).
    pub block_gpus: f64,
    pub spot_gpus: f64,
    pub on_demand_gpus: f64,
    pub shares: Shares,
    pub on_demand_price: Decimal,
    /// Spot per GPU-hour with the interruption allowance (None: no spot price).
    pub spot_price: Option<Decimal>,
    /// Monthly cost of what the mix buys (locked commitments not included).
    pub monthly_mix: Decimal,
    /// Monthly cost of the locked commitments (paid whatever is bought).
    pub monthly_locked: Decimal,
    /// Unlocked reservations the mix keeps (cheaper than the catalog's
    /// committed prices), paid like locked ones and in `monthly_locked`.
    pub kept: Vec<Kept>,
    /// Monthly cost of buying the demand the locked commitments leave all on demand.
    pub monthly_on_demand: Decimal,
    /// `monthly_on_demand - monthly_mix` over `monthly_on_demand`.
    pub savings_share: f64,
    /// Whether the long tier fell back to 1-year because the history cannot
    /// support a 3-year term.
    pub three_year_unsupported: bool,
}

impl Mix {
    /// What the plan costs a month: the mix plus the locked commitments.
    pub fn monthly_plan(&self) -> Decimal {
        self.monthly_mix + self.monthly_locked
    }
}

/// What a mix is computed from.
pub struct Inputs<'a> {
    pub demand: &'a Outlook,
    /// The preemptible part of the demand, when any request is preemptible.
    pub preemptible: Option<&'a Outlook>,
    /// The steady rest, forecast on its own (its low quantile sizes the
    /// long commitments), when any request is preemptible.
    pub steady: Option<&'a Outlook>,
    /// The window `[from, from + hours)`.
    pub from: i64,
    pub hours: usize,
    pub gpus_per_node: u32,
    pub price: &'a GpuHour,
    /// The Config's spot interruption allowance.
    pub spot_allowance: f64,
    /// GPUs rightsizing releases.
    pub release: Release<'a>,
    /// When the pool's approved, non-preemptible requests end, and their
    /// GPUs (hour, GPUs), sorted: a commitment's term reaches past what the
    /// outlook knows, and there the demand is its last level less what has
    /// ended since.
    pub ending: &'a [(i64, f64)],
    /// GPUs of locked commitments at each hour, and their monthly cost.
    pub locked: &'a Timeline,
    pub locked_monthly: Decimal,
    /// GPUs of known, bounded bursts at each hour.
    pub bursts: &'a Timeline,
    /// Whether the history supports a 3-year term.
    pub three_years_supported: bool,
    /// Whole GPUs the pool's MIG layout must dedicate to the units its
    /// requests hold at each hour (see [`layout_floor`]): the demand is never
    /// below it, however few GPU-equivalents the slices add up to.
    pub floor: &'a [(Timeline, f64)],
}

/// The GPUs the units in `floor` (a timeline of units of one resource, and
/// the units a GPU holds) need at hour `h`: the most any one resource needs
/// (a lower bound where a mixed layout puts several on one GPU).
pub fn layout_floor(floor: &[(Timeline, f64)], h: i64) -> f64 {
    floor
        .iter()
        .map(|(t, per_gpu)| (t.at(h).max(0.0) / per_gpu - 1e-9).ceil().max(0.0))
        .fold(0.0, f64::max)
}

/// Recommends a mix; `None` without forecast hours or instances. Where
/// spot is offered, the mix is worked out with the preemptible demand on
/// spot and with it bought like the steady demand, and the cheaper is
/// recommended: preemptible demand that runs all the time can cost less on
/// a commitment than on spot with its interruption allowance. A mix is never
/// dearer than buying the same demand all on demand: when no mix is cheaper,
/// the recommendation is all on demand (nothing committed, no blocks, no
/// spot), which saves nothing against it.
pub fn recommend(i: &Inputs<'_>) -> Option<Mix> {
    let all_on_demand = split(i, false, false)?;
    let mut best = split(i, true, true);
    if i.preemptible.is_some()
        && i.price.spot.is_some()
        && let Some(b) = split(i, false, true)
        && best.as_ref().is_none_or(|a| b.monthly_mix < a.monthly_mix)
    {
        best = Some(b);
    }
    match best {
        Some(m) if m.monthly_mix < all_on_demand.monthly_mix => Some(m),
        _ => Some(all_on_demand),
    }
}

/// The mix with the preemptible demand on spot (`use_spot`) or not, and
/// with commitments and capacity blocks (`commit`) or all on demand.
fn split(i: &Inputs<'_>, use_spot: bool, commit: bool) -> Option<Mix> {
    let price = i.price;
    let od = price.on_demand;
    if i.gpus_per_node == 0 || od.is_zero() {
        return None;
    }
    let allowance = prices::decimal(1.0 + i.spot_allowance.max(0.0));
    let spot = price
        .spot
        .map(|s| s * allowance)
        .filter(|s| use_spot && *s < od);
    let block = price.capacity_block.filter(|b| commit && *b < od);
    let cut = Cut::new(i.release, i.preemptible, i.from, i.hours);
    // On-demand, spot and capacity-block capacity comes in whole instances:
    // an hour that needs 3.1 GPUs of an 8-GPU instance pays for 8.
    let gpn = i.gpus_per_node as f64;
    let whole_up = |gpus: f64| -> f64 {
        if gpus <= 1e-9 {
            0.0
        } else {
            (gpus / gpn - 1e-9).ceil() * gpn
        }
    };
    let max_blocks = f64::from(crate::validate::cloud::BLOCKS_MAX_INSTANCES);
    // Hourly split of the demand: the steady part (what the tiers are sized
    // on), the known burst and the preemptible work, after the locked
    // commitments. What each hour buys is chosen once the tiers are known.
    let mut uncovered_whole = 0.0;
    let mut hourly = Vec::with_capacity(i.hours);
    let mut steady10 = Vec::with_capacity(i.hours);
    let (mut locked_served, mut total) = (0.0, 0.0);
    for h in i.from..i.from + i.hours as i64 {
        let Some(q) = i.demand.at(h) else { continue };
        let (off, pre_left) = cut.at(i.preemptible, h);
        let least = layout_floor(i.floor, h);
        let d50 = (q.p50 - off).max(0.0).max(least);
        let d10 = (q.p10 - off).max(0.0).max(least);
        let p = match (spot, i.preemptible) {
            (Some(_), Some(_)) => pre_left.min(d50),
            _ => 0.0,
        };
        let lock = i.locked.at(h).max(0.0);
        let steady = d50 - p;
        // Locked capacity serves steady demand first, then preemptible.
        let steady_left = (steady - lock).max(0.0);
        let pre_left = (p - (lock - steady).max(0.0)).max(0.0);
        locked_served += d50 - steady_left - pre_left;
        uncovered_whole += whole_up(steady_left + pre_left);
        // AWS sells an account at most 256 instances of capacity blocks at
        // once: the rest of a burst is steady demand.
        let burst = if block.is_some() {
            i.bursts
                .at(h)
                .max(0.0)
                .min(steady_left)
                .min(max_blocks * gpn)
        } else {
            0.0
        };
        total += d50;
        hourly.push(mix_hour::Demand {
            steady: steady_left - burst,
            burst,
            preemptible: pre_left,
        });
        // The steady part's low quantile: from its own outlook where spot
        // takes the preemptible work (the pool's P10 less the preemptible
        // P50 would let work that swings on spot make the steady demand
        // beside it look uncertain), else from the pool's.
        let s10 = match i.steady.and_then(|o| o.at(h)) {
            Some(sq) if spot.is_some() && i.preemptible.is_some() => {
                (sq.p10 - cut.steady_at(h)).max(0.0)
            }
            _ => (d10 - p).max(0.0),
        };
        steady10.push(
            ((s10 - lock).max(0.0) - burst)
                .min(steady_left - burst)
                .max(0.0),
        );
    }
    let steady50: Vec<f64> = hourly.iter().map(|d| d.steady).collect();
    let n = steady50.len();
    if n == 0 {
        return None;
    }
    let whole = |gpus: f64| -> u32 { (gpus.max(0.0) / gpn + 1e-9).floor() as u32 };
    let mut sorted50 = steady50.clone();
    sorted50.sort_by(f64::total_cmp);
    let mut sorted10: Vec<f64> = steady10.iter().map(|x| x.max(0.0)).collect();
    sorted10.sort_by(f64::total_cmp);
    let three = price
        .reserved3y
        .filter(|p| commit && *p < od && i.three_years_supported);
    let one = price.reserved1y.filter(|p| commit && *p < od);
    // Instance k is needed whenever the demand is above k - 1 instances
    // (on demand comes in whole instances), so it is worth committing when
    // that holds in more hours than the committed price's share of on
    // demand: the quantile rounded up to whole instances.
    let break_even = |p: Decimal| -> u32 {
        let share = prices::float(p / od).clamp(0.0, 1.0);
        let q = quantile(&sorted50, 1.0 - share).max(0.0);
        (q / gpn - 1e-9).ceil().max(0.0) as u32
    };
    // A commitment is paid for its whole term: instance k is worth it only
    // if, over the term's hours the outlook knows (the forecast plus the
    // approved requests, which take their GPUs away when they end), the
    // steady demand is above k - 1 instances for at least the price's share
    // of them. The window alone would commit a year to a request that ends
    // in four months.
    let term_values = |term_hours: i64| -> Option<Vec<f64>> {
        // Past the last hour the outlook knows, its last week is repeated
        // (the days and weeks demand cycles over), less what has ended since.
        let mut last: Option<i64> = None;
        let mut next_end = i.ending.partition_point(|&(end, _)| end <= i.from);
        let mut ended = 0.0;
        let term: Vec<f64> = (i.from..i.from + term_hours)
            .filter_map(|h| {
                let (p50, off, pre_left) = match i.demand.at(h) {
                    Some(q) => {
                        let (off, pre_left) = cut.at(i.preemptible, h);
                        last = Some(h);
                        (q.p50, off, pre_left)
                    }
                    None => {
                        let l = last?;
                        while next_end < i.ending.len() && i.ending[next_end].0 <= h {
                            if i.ending[next_end].0 > l {
                                ended += i.ending[next_end].1;
                            }
                            next_end += 1;
                        }
                        let period = (l - i.from + 1).clamp(1, 168);
                        let src = l - period + 1 + (h - l - 1).rem_euclid(period);
                        let q = i.demand.at(src)?;
                        let (off_src, pre_left) = cut.at(i.preemptible, src);
                        // The steady release as it stands at `h`, not at `src`.
                        let off = off_src - cut.steady_at(src) + cut.steady_at(h);
                        ((q.p50 - ended).max(0.0), off, pre_left)
                    }
                };
                let q = crate::forecast::demand::Quantiles {
                    p10: p50,
                    p50,
                    p90: p50,
                    measured: false,
                };
                let d50 = (q.p50 - off).max(0.0);
                let p = match (spot, i.preemptible) {
                    (Some(_), Some(_)) => pre_left.min(d50),
                    _ => 0.0,
                };
                let left = (d50 - p - i.locked.at(h).max(0.0)).max(0.0);
                let burst = if block.is_some() {
                    i.bursts
                        .at(h)
                        .max(0.0)
                        .min(left)
                        .min(f64::from(crate::validate::cloud::BLOCKS_MAX_INSTANCES) * gpn)
                } else {
                    0.0
                };
                Some(left - burst)
            })
            .collect();
        // Nothing known past the window (no outlook at all): the window decides.
        (term.len() > n).then_some(term)
    };
    let term_cap = |term_hours: i64, p: Decimal| -> u32 {
        let Some(mut term) = term_values(term_hours) else {
            return u32::MAX;
        };
        term.sort_by(f64::total_cmp);
        let share = prices::float(p / od).clamp(0.0, 1.0);
        let q = quantile(&term, 1.0 - share).max(0.0);
        (q / gpn - 1e-9).ceil().max(0.0) as u32
    };
    const ONE_YEAR: i64 = 365 * 24;
    // The share of a tier's GPU-hours unused over its term: `nodes`
    // instances stacked on `lo` committed ones below it.
    let unused = |term_hours: i64, lo: u32, nodes: u32| -> f64 {
        let values = term_values(term_hours).unwrap_or_else(|| steady50.clone());
        let room = f64::from(nodes) * gpn;
        if values.is_empty() || room <= 0.0 {
            return 0.0;
        }
        let base = f64::from(lo) * gpn;
        let used: f64 = values.iter().map(|d| (d - base).clamp(0.0, room)).sum();
        (1.0 - used / (room * values.len() as f64)).max(0.0)
    };
    let tier = |kind: &'static str, nodes: u32, p, lo: u32| {
        let term = if kind.starts_with('3') {
            3 * ONE_YEAR
        } else {
            ONE_YEAR
        };
        (nodes > 0).then(|| Tier {
            kind,
            nodes,
            gpus: nodes * i.gpus_per_node,
            price: p,
            unused: unused(term, lo, nodes),
        })
    };
    let (baseline, flexible) = match (three, one) {
        (Some(p3), one) => {
            // Never a 3-year instance that a year at a time (1-year or on
            // demand) would buy for less over its term.
            let f = prices::float;
            let cheaper = term_values(3 * ONE_YEAR).map_or(u32::MAX, |t| {
                super::mix_term::three_year_instances(&t, gpn, f(p3), one.map(f), f(od))
            });
            let b = whole(quantile(&sorted10, 0.05))
                .min(term_cap(3 * ONE_YEAR, p3))
                .min(cheaper);
            let flex = one.map(|p1| {
                (
                    break_even(p1).min(term_cap(ONE_YEAR, p1)).saturating_sub(b),
                    p1,
                )
            });
            (
                tier("3-year reserved", b, p3, 0),
                flex.and_then(|(m, p1)| tier("1-year reserved", m, p1, b)),
            )
        }
        (None, Some(p1)) => {
            let b = whole(quantile(&sorted10, 0.05))
                .max(break_even(p1))
                .min(term_cap(ONE_YEAR, p1));
            (tier("1-year reserved", b, p1, 0), None)
        }
        (None, None) => (None, None),
    };
    let gpus_of = |t: &Option<Tier>| t.as_ref().map_or(0.0, |t| t.gpus as f64);
    let (long_gpus, flex_gpus) = (gpus_of(&baseline), gpus_of(&flexible));
    // Each hour buys the cheapest whole instances for what the tiers leave
    // (their spare room serves bursts and preemptible work first).
    let hour_prices = mix_hour::Prices {
        on_demand: prices::float(od),
        block: block.map(prices::float),
        spot: spot.map(prices::float),
    };
    let (mut long_served, mut flex_served, mut on_demand) = (0.0, 0.0, 0.0);
    let (mut pre, mut blocks) = (0.0, 0.0);
    // What is paid for: whole instances.
    let (mut on_demand_paid, mut pre_paid, mut blocks_paid) = (0.0, 0.0, 0.0);
    for d in &hourly {
        let b = mix_hour::buy(*d, long_gpus + flex_gpus, gpn, max_blocks, hour_prices);
        long_served += b.committed_served.min(long_gpus);
        flex_served += (b.committed_served - long_gpus).max(0.0);
        on_demand += b.on_demand_served;
        on_demand_paid += b.on_demand_paid;
        pre += b.spot_served;
        pre_paid += b.spot_paid;
        blocks += b.block_served;
        blocks_paid += b.block_paid;
    }
    let nf = n as f64;
    let month = Decimal::from(HOURS_PER_MONTH);
    let tier_cost = |t: &Option<Tier>| {
        t.as_ref()
            .map(|t| Decimal::from(t.gpus) * t.price)
            .unwrap_or_default()
    };
    let per_hour = |gpu_hours: f64| prices::decimal(gpu_hours / nf);
    let monthly_mix = prices::cents(
        (tier_cost(&baseline)
            + tier_cost(&flexible)
            + per_hour(on_demand_paid) * od
            + per_hour(pre_paid) * spot.unwrap_or(od)
            + per_hour(blocks_paid) * block.unwrap_or(od))
            * month,
    );
    // The comparison: the same demand all on demand, in whole instances.
    let monthly_on_demand = prices::cents(per_hour(uncovered_whole) * od * month);
    let savings_share = if monthly_on_demand.is_zero() {
        0.0
    } else {
        prices::float((monthly_on_demand - monthly_mix) / monthly_on_demand)
    };
    // Shares of a whole: float dust from the hour-by-hour sums (4e-19 of a
    // pool with nothing locked) is no share.
    let share = |x: f64| {
        let s = if total > 0.0 { x / total } else { 0.0 };
        if s.abs() < 1e-12 { 0.0 } else { s }
    };
    Some(Mix {
        hours: n,
        gpus_per_node: i.gpus_per_node,
        mean_demand: total / nf,
        released_gpus: i.release.gpus,
        shares: Shares {
            locked: share(locked_served),
            long: share(long_served),
            flexible: share(flex_served),
            capacity_block: share(blocks),
            spot: share(pre),
            on_demand: share(on_demand),
        },
        baseline,
        flexible,
        block_gpus: blocks_paid / nf,
        spot_gpus: pre_paid / nf,
        on_demand_gpus: on_demand_paid / nf,
        on_demand_price: od,
        spot_price: spot,
        monthly_mix,
        monthly_locked: prices::cents(i.locked_monthly),
        kept: Vec::new(),
        monthly_on_demand,
        savings_share,
        three_year_unsupported: commit
            && price.reserved3y.is_some_and(|p| p < od)
            && !i.three_years_supported,
    })
}
