//! Reservations against forecast demand: expected utilization, stranded
//! spend and shortfall.
//!
//! Over the term, demand fills reserved capacity first (it is paid for
//! whether used or not), then on-demand and spot nodes. Where several
//! reservations cover the same pool at the same hour, the demand they serve
//! is split in proportion to their GPUs. Past hours use the measured demand;
//! later hours the forecast: P50 gives the expected stranded spend (idle
//! reserved GPU-hours times the reservation's price per GPU-hour, upfront fees
//! included), P10 the risk (demand that low leaves more idle). Hours before
//! the first measurement count at the measured hours' mean demand, shared
//! with the reservations in force at each of them (not at the measured
//! hours' utilization, which reservations that began since share), hours
//! beyond the forecast at the utilization of all the hours that are known.
//! A shortfall hour is one where P90 demand exceeds everything the pool has:
//! reserved, on-demand and spot nodes.
//!
//! The demand is the pool's outlook: measured, then forecast plus what the
//! approved requests change (`cost::approved`), or the requests alone for a
//! pool without history (then `basis` says so). Two kinds of waste: reserved
//! GPU-hours nothing is allocated to are **stranded**; those allocated but not
//! busy are **idle**, estimated with the pool's measured busy share (used
//! over allocated GPU-hours in the lookback). Stranded, idle and used add up
//! to the reservation's cost. A term that ends further from the last
//! measurement than the Config's history multiple times the history's length
//! is not supported by the history (`term_supported`). A reservation is
//! **locked** when it is prepaid or cannot be cancelled (capacity blocks, GCP
//! commitments, an upfront fee) and bought ([`locked`]: a capacity block from
//! eight weeks before its start, the others from their start): nothing can
//! change what it costs, so nothing is recommended for it.

use super::prices::{self, ReservationCost};
use super::reservation_share::InForce;
pub(crate) use super::reservation_share::suggest;
use crate::forecast::demand::{Basis, Outlook};
use crate::model::*;
use rust_decimal::Decimal;

/// A reservation held up against the demand of the pool it covers.
#[derive(Clone, Debug, PartialEq)]
pub struct ReservationOutlook {
    pub name: String,
    pub cluster: String,
    pub pool: String,
    pub cost: ReservationCost,
    /// GPUs the pool has (reserved, on-demand and spot nodes).
    pub pool_gpus: f64,
    /// Share of the reserved GPU-hours used, at P50 and at P10 demand.
    pub utilization_p50: f64,
    pub utilization_p10: f64,
    /// Idle reserved GPU-hours times the price, at P50 and at P10 demand.
    pub stranded_p50: Decimal,
    pub stranded_p10: Decimal,
    /// `stranded_p50` over the reservation's total cost.
    pub stranded_share: f64,
    /// The share of the reserved GPU-hours from `--at` (or the start, if
    /// later) to the end that P50 demand leaves unallocated: what a change
    /// commits to. Past hours, measured busy, do not dilute it. The whole
    /// term's share once the term has ended.
    pub stranded_share_ahead: f64,
    /// Mean demand over the term (P50), in GPUs.
    pub mean_demand_p50: f64,
    /// Hours of the term where P90 demand exceeds the pool's GPUs.
    pub shortfall_hours: u32,
    /// The most GPUs short at such an hour.
    pub shortfall_gpus: f64,
    /// The first such hour (hour index).
    pub first_shortfall: Option<i64>,
    pub hours_measured: usize,
    pub hours_forecast: usize,
    pub hours_unknown: usize,
    /// How the demand was forecast.
    pub method: String,
    /// The most instances whose expected stranded share stays within
    /// `threshold` (as the other reservations on the pool stand).
    pub suggested_count: u32,
    /// Allocated but unused reserved GPU-hours at P50 demand, priced.
    pub idle_p50: Decimal,
    /// `idle_p50` over the total cost.
    pub idle_share: f64,
    /// The pool's measured busy share (used over allocated), when it has usage.
    pub busy: Option<f64>,
    /// What the demand rests on: usage history, or the requests alone.
    pub basis: Basis,
    /// Hours of measured history behind the forecast.
    pub history_hours: i64,
    /// The last hour the history supports (see the module's docs).
    pub supported_until: i64,
    /// Whether the term ends within what the history supports.
    pub term_supported: bool,
    /// Prepaid or not cancellable, and started.
    pub locked: bool,
}

/// What the analysis of a reservation needs besides the repository.
#[derive(Clone, Copy, Debug)]
pub struct Context {
    /// The stranded share the suggested size keeps to.
    pub threshold: f64,
    /// The pool's measured busy share.
    pub busy: Option<f64>,
    /// `--at`, as an hour index.
    pub at_hour: i64,
    /// The Config's history multiple.
    pub history_multiple: f64,
}

pub use super::reservation_share::{CAPACITY_BLOCK_LEAD_HOURS, locked, prepaid, term_hours};

/// What a reservation commits from `at` on, at its judged price (the catalog's
/// at least): the hours of its term from `at` (all of them when it starts
/// later, and always for a GCP commitment, which bills its whole plan from
/// when it is bought), plus the upfront fee when `fee`. Hours before `at`
/// are spent whatever a change does to the document.
pub fn reservation_from(
    repo: &Repo,
    s: &ReservationSpec,
    at: crate::model::Timestamp,
    fee: bool,
) -> f64 {
    let Some(c) = prices::reservation_judged(repo, s) else {
        return 0.0;
    };
    let (start, end) = (s.term.start.value.as_second(), s.term.end.value.as_second());
    // A GCP commitment starts when it is bought and bills its whole plan,
    // whatever start the document states: one dated in the past commits
    // all of it, not the hours left.
    let from = if s.kind.value == ReservationType::GcpCommitment {
        start
    } else {
        start.max(at.as_second())
    };
    let hours = if from >= end {
        0
    } else {
        (end - from + 3599).div_euclid(3600)
    };
    let upfront = match &s.upfront_fee {
        Some(u) if fee => u.value.0,
        _ => Decimal::ZERO,
    };
    prices::float(
        (Decimal::from(s.count.value.0) * Decimal::from(hours) * c.hourly + upfront).round_dp(2),
    )
}

fn upfront(s: &ReservationSpec) -> Decimal {
    s.upfront_fee
        .as_ref()
        .map(|u| u.value.0)
        .unwrap_or_default()
}

/// Whether two versions of a reservation bill the same: provider, type,
/// region, zone, instance type, count, term, prices, upfront fee and
/// commitment plan (its pool, description and business case may differ).
pub fn same_commitment(a: &ReservationSpec, b: &ReservationSpec) -> bool {
    bills(a) == bills(b)
}

fn bills(s: &ReservationSpec) -> String {
    format!(
        "{:?}|{:?}|{}|{:?}|{}|{}|{}|{}|{:?}|{:?}|{:?}",
        s.provider.value,
        s.kind.value,
        s.region.value,
        s.zone.as_ref().map(|z| &z.value),
        s.instance_type.value,
        s.count.value.0,
        s.term.start.value,
        s.term.end.value,
        // By value: `14.75` and `"14.7500"` bill the same.
        s.hourly_price.as_ref().map(|p| p.value.0.normalize()),
        s.upfront_fee.as_ref().map(|p| p.value.0.normalize()),
        s.commitment_plan.as_ref().map(|p| &p.value),
    )
}

/// What a change to a reservation commits at `at`: what `now` commits from
/// `at` on minus what `before` would have (nothing when `before` is locked,
/// prepaid and started: its remaining hours are paid for and cannot be
/// given back, so moving or shrinking it releases nothing; nothing either
/// when `now` holds other capacity: a release never pays for a purchase). An upfront fee
/// counts whole when the reservation is new or its fee changes, and is
/// given back only by a reservation that has not started. A change that
/// leaves what it bills alone (`same_commitment`) commits nothing.
pub fn reservation_delta(
    repo: &Repo,
    now: Option<&ReservationSpec>,
    before: Option<&ReservationSpec>,
    at: crate::model::Timestamp,
) -> f64 {
    if let (Some(n), Some(b)) = (now, before)
        && same_commitment(n, b)
    {
        return 0.0;
    }
    let started = |s: &ReservationSpec| s.term.start.value < at;
    let head = now;
    let now = now.map_or(0.0, |s| {
        let fee = before.is_none_or(|b| upfront(b) != upfront(s)) || !started(s);
        reservation_from(repo, s, at, fee)
    });
    // An edit that buys other capacity (another provider, region, zone,
    // instance type or pool) releases the old commitment and buys a new one:
    // the release offsets none of the purchase, as for two documents.
    let released = before
        .filter(|b| !locked(b, at.hour_index()))
        .filter(|b| head.is_none_or(|n| same_capacity(n, b)))
        .map_or(0.0, |b| reservation_from(repo, b, at, !started(b)));
    now - released
}

/// Whether two versions of a reservation hold the same capacity: the same
/// provider, region, zone and instance type, covering the same pool (its
/// kind may change: what that makes prepaid, the prepaid rules judge).
fn same_capacity(a: &ReservationSpec, b: &ReservationSpec) -> bool {
    a.provider.value == b.provider.value
        && a.region.value == b.region.value
        && a.zone.as_ref().map(|z| &z.value) == b.zone.as_ref().map(|z| &z.value)
        && a.instance_type.value == b.instance_type.value
        && a.covers.cluster.value == b.covers.cluster.value
        && a.covers.pool.value == b.covers.pool.value
}

/// Analyses a reservation; `None` when it has no price, or its pool no
/// demand outlook.
pub fn analyze(
    repo: &Repo,
    name: &str,
    outlook: Option<&Outlook>,
    ctx: Context,
) -> Option<ReservationOutlook> {
    let threshold = ctx.threshold;
    let doc = repo.reservations.get(name)?;
    let s = &doc.spec;
    let cost = prices::reservation(repo, s)?;
    let outlook = outlook?;
    let covered = repo.clusters.get(&s.covers.cluster.value).and_then(|c| {
        let p = c
            .spec
            .node_pools
            .iter()
            .find(|p| p.name.value.as_str() == s.covers.pool.value)?;
        Some((&c.spec, p))
    });
    let pool_gpus = covered.map_or(0.0, |(_, p)| crate::capacity::pool_gpus(p) as f64);
    // A reservation of another provider, region, instance type or zone than
    // the pool's nodes cannot serve its demand: all of it is stranded.
    let serves = covered.is_some_and(|(c, p)| s.mismatches(c, p).is_empty());
    // Other reservations on the same pool share the demand: those that can
    // serve it (one of other instances serves none, so takes none).
    let (start, end) = term_hours(&s.term);
    let others = super::reservation_share::others(repo, name, doc, covered, ctx.at_hour);
    let gpus = cost.gpus as f64;
    let (mut served50, mut served10, mut known) = (0.0, 0.0, 0usize);
    let (mut served_ahead, mut known_ahead) = (0.0, 0usize);
    // Hours of the term before the first measurement.
    let mut unknown_past = 0usize;
    let mut out = ReservationOutlook {
        name: name.to_string(),
        cluster: s.covers.cluster.value.clone(),
        pool: s.covers.pool.value.clone(),
        cost: cost.clone(),
        pool_gpus,
        utilization_p50: 0.0,
        utilization_p10: 0.0,
        stranded_p50: Decimal::ZERO,
        stranded_p10: Decimal::ZERO,
        stranded_share: 0.0,
        stranded_share_ahead: 0.0,
        mean_demand_p50: 0.0,
        shortfall_hours: 0,
        shortfall_gpus: 0.0,
        first_shortfall: None,
        hours_measured: 0,
        hours_forecast: 0,
        hours_unknown: 0,
        method: outlook.forecast.method.clone(),
        suggested_count: 0,
        idle_p50: Decimal::ZERO,
        idle_share: 0.0,
        busy: ctx.busy,
        basis: outlook.basis,
        history_hours: outlook.history_hours(),
        supported_until: outlook.supported_until(ctx.history_multiple),
        term_supported: true,
        locked: locked(s, ctx.at_hour),
    };
    out.term_supported =
        out.basis == Basis::History && term_hours(&s.term).1 <= out.supported_until;
    // Demand left for this reservation at each known hour (P50), after the others' share.
    let mut left: Vec<f64> = Vec::new();
    // How many of `left`'s first entries were measured (they come first).
    let mut left_measured = 0usize;
    // The GPUs reserved at hour `h`: this reservation's and the others' in
    // force (a step function, so that a pool of thousands of reservations is
    // not summed again at every hour of every term).
    let terms = |before: bool| -> Vec<(i64, i64, f64)> {
        others
            .iter()
            .filter(|o| !before || o.3)
            .map(|&(a, b, g, _)| (a, b, g))
            .collect()
    };
    let in_force = InForce::new(&terms(false));
    let before_me = InForce::new(&terms(true));
    let reserved_at = |h: i64| -> f64 { gpus + in_force.at(h) };
    // In a pool that states its purchase mix, only its reserved nodes run
    // on reserved instances: instances the reservations in force hold
    // beyond them are billed with no node on them (the report counts them
    // stranded in the pool's cost), so they serve no demand here either. A
    // pool without a mix says nothing of which nodes are reserved: its
    // nodes serve the reservations.
    let reserved_node_gpus = covered.map_or(f64::INFINITY, |(_, p)| match &p.purchase {
        Some(_) => {
            f64::from(crate::model::purchase_nodes(p).0) * f64::from(p.gpus_per_node.value.0)
        }
        None => f64::INFINITY,
    });
    // At hour `h`: the reserved GPUs that have a node to run on, and this
    // reservation's share of them. Reserved nodes go to the reservations in
    // force in order (the earlier term first): instances beyond them are
    // the later ones', stranded whole, not spread over every reservation of
    // the pool (an older reservation is not blamed for a newer one's excess).
    let usable = |h: i64| -> (f64, f64) {
        let total = reserved_at(h).min(reserved_node_gpus);
        let mine = (reserved_node_gpus - before_me.at(h)).clamp(0.0, gpus);
        (total, if total > 0.0 { mine / total } else { 0.0 })
    };
    // Where the hours from `at` on start in `left`.
    let mut ahead_from = 0;
    let mut demand_sum = 0.0;
    // The hours before the first measurement, by the GPUs reserved then
    // (bits of the f64), and the measured hours' demand (P50, P10): the
    // former are judged on the latter with the reservations in force then,
    // not at the measured hours' utilization (a reservation that began
    // inside the history did not share the hours before it).
    // (A BTreeMap: the sum below is the same in every run.)
    let mut past_reserved: std::collections::BTreeMap<(u64, u64), usize> = Default::default();
    let mut measured_demand: Vec<(f64, f64)> = Vec::new();
    for h in start..end {
        let Some(q) = outlook.at(h) else {
            out.hours_unknown += 1;
            if h < ctx.at_hour {
                unknown_past += 1;
                let (total, share) = usable(h);
                *past_reserved
                    .entry((total.to_bits(), share.to_bits()))
                    .or_default() += 1;
            }
            continue;
        };
        known += 1;
        if q.measured {
            out.hours_measured += 1;
        } else {
            out.hours_forecast += 1;
        }
        demand_sum += q.p50;
        let (reserved_here, share) = usable(h);
        let (p50, p10) = if serves {
            (q.p50.min(reserved_node_gpus), q.p10.min(reserved_node_gpus))
        } else {
            (0.0, 0.0)
        };
        served50 += p50.min(reserved_here) * share;
        if h >= ctx.at_hour {
            served_ahead += p50.min(reserved_here) * share;
            known_ahead += 1;
        }
        if h < ctx.at_hour {
            ahead_from = left.len() + 1;
        }
        left.push(p50 * share);
        if q.measured {
            left_measured += 1;
        }
        served10 += p10.min(reserved_here) * share;
        if q.measured {
            measured_demand.push((p50, p10));
        }
        if pool_gpus > 0.0 && q.p90 > pool_gpus + 1e-9 {
            out.shortfall_hours += 1;
            out.shortfall_gpus = out.shortfall_gpus.max(q.p90 - pool_gpus);
            out.first_shortfall.get_or_insert(h);
        }
    }
    if known > 0 && gpus > 0.0 {
        // Hours before the first measurement count at the measured hours'
        // utilization (not at the forecast's, which later reservations may
        // share); unknown hours ahead at the known hours'.
        let known_f = known as f64;
        let past = unknown_past as f64;
        let rest = (out.hours_unknown - unknown_past) as f64;
        // What the hours before the first measurement serve: each at the
        // mean of the measured hours' demand against the GPUs reserved then.
        let past_served = |pick: fn(&(f64, f64)) -> f64| -> Option<f64> {
            if measured_demand.is_empty() {
                return None;
            }
            let n = measured_demand.len() as f64;
            Some(
                past_reserved
                    .iter()
                    .map(|(&(total, share), &hours)| {
                        let (reserved, share) = (f64::from_bits(total), f64::from_bits(share));
                        if reserved <= 0.0 {
                            return 0.0;
                        }
                        let per_hour: f64 = measured_demand
                            .iter()
                            .map(|d| pick(d).min(reserved) * share)
                            .sum::<f64>()
                            / n;
                        per_hour * hours as f64
                    })
                    .sum(),
            )
        };
        let fill = |served: f64, served_past: Option<f64>| -> f64 {
            let u = served / (gpus * known_f);
            let past_served = served_past.unwrap_or(u * gpus * past);
            (u * (known_f + rest) * gpus + past_served) / (gpus * (known_f + rest + past))
        };
        out.utilization_p50 = fill(served50, past_served(|d| d.0));
        out.utilization_p10 = fill(served10, past_served(|d| d.1));
        out.mean_demand_p50 = demand_sum / known as f64;
    } else if known == 0 && unknown_past > 0 && gpus > 0.0 && serves {
        // A term wholly before the usage history (a reservation already
        // over, kept in the repository): no hour of it was measured, so the
        // first week measured stands for it, as the hours before the first
        // measurement of a term that reaches into the history count at its
        // measured hours'. Without any, 0% used would call it all stranded.
        if let Some(first) = outlook.first_measured() {
            let (mut proxy, mut s50, mut s10, mut sum) = (0usize, 0.0, 0.0, 0.0);
            for h in first..first + (end - start).clamp(1, PROXY_HOURS) {
                let Some(q) = outlook.at(h).filter(|q| q.measured) else {
                    break;
                };
                // Shared with the reservations in force at the term's own
                // hour it stands for, not at the week measured.
                let (reserved_here, share) = usable(start + (h - first) % (end - start).max(1));
                s50 += q.p50.min(reserved_here) * share;
                s10 += q.p10.min(reserved_here) * share;
                sum += q.p50;
                left.push(q.p50 * share);
                proxy += 1;
            }
            if proxy > 0 {
                out.utilization_p50 = s50 / (gpus * proxy as f64);
                out.utilization_p10 = s10 / (gpus * proxy as f64);
                out.mean_demand_p50 = sum / proxy as f64;
                left_measured = left.len();
            }
        }
    }
    // The hours before the first measurement weigh in the suggestion as in
    // the utilization: at the measured hours' demand.
    let past_weight = if known > 0 { unknown_past } else { 0 };
    let idle_cost = |utilization: f64| -> Decimal {
        (cost.total * prices::decimal(1.0 - utilization)).round_dp(2)
    };
    out.stranded_p50 = idle_cost(out.utilization_p50);
    out.stranded_p10 = idle_cost(out.utilization_p10);
    // A size that keeps within the threshold over the whole term and over
    // the hours ahead alike (the gate weighs a new commitment on both).
    let per = gpus / f64::from(s.count.value.0.max(1));
    let whole = suggest(
        &left,
        left_measured.min(left.len()),
        past_weight,
        per,
        s.count.value.0,
        threshold,
    );
    out.suggested_count = match &left[ahead_from.min(left.len())..] {
        [] => whole,
        ahead => whole.min(suggest(ahead, 0, 0, per, s.count.value.0, threshold)),
    };
    // Shares of the reserved GPU-hours, whatever they cost: a reservation
    // stated at a price of 0 strands as much capacity as one at list price.
    out.stranded_share = if cost.total.is_zero() {
        1.0 - out.utilization_p50
    } else {
        prices::float(out.stranded_p50 / cost.total)
    };
    out.stranded_share_ahead = if known_ahead > 0 && gpus > 0.0 {
        (1.0 - served_ahead / (gpus * known_ahead as f64)).clamp(0.0, 1.0)
    } else {
        out.stranded_share
    };
    // Idle: the allocated part, times the share of it that is not busy.
    // Priced from the allocated amount (the cost less the stranded spend, in
    // cents), so that used, idle and stranded add up to the cost exactly.
    let not_busy = (1.0 - ctx.busy.unwrap_or(1.0)).clamp(0.0, 1.0);
    let idle = out.utilization_p50 * not_busy;
    let allocated = (cost.total.round_dp(2) - out.stranded_p50).max(Decimal::ZERO);
    out.idle_p50 = (allocated * prices::decimal(not_busy)).round_dp(2);
    out.idle_share = if cost.total.is_zero() {
        idle
    } else {
        prices::float(out.idle_p50 / cost.total)
    };
    Some(out)
}

/// How many measured hours stand for a term wholly before the history.
const PROXY_HOURS: i64 = 7 * 24;

/// The most instances terms `(start, end, count)` hold at once: the sum at
/// the start of some term (where the count can rise), over the terms in
/// force then (`[start, end)`).
pub fn most_held_at_once<T: PartialOrd>(terms: &[(T, T, u32)]) -> u32 {
    terms
        .iter()
        .map(|(t, _, _)| {
            terms
                .iter()
                .filter(|(s, e, _)| s <= t && t < e)
                .map(|(_, _, n)| n)
                .sum::<u32>()
        })
        .max()
        .unwrap_or(0)
}
