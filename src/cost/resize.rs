//! Resizing oversized reservations that can still change, in a pool without
//! a commitment plan: how many instances would keep the stranded share
//! within the Config's threshold, what dropping the rest saves, and the cap
//! that keeps that saving from being counted again beside rightsizing.

use super::recommendation::{Recommendation, RecommendationKind};
use super::{Analysis, prices};
use crate::model::money::{format as money, percent as pct};
use rust_decimal::Decimal;

/// Scales the savings of `recs` down so that they add up to `room` at most
/// (the last one takes the rounding), and says so in their text.
pub(super) fn cap_savings(recs: &mut [Recommendation], room: Decimal, cur: &str) {
    let total: Decimal = recs.iter().filter_map(|r| r.monthly_savings).sum();
    if total <= room || total.is_zero() {
        return;
    }
    let mut given = Decimal::ZERO;
    let n = recs.len();
    for (k, r) in recs.iter_mut().enumerate() {
        let Some(own) = r.monthly_savings else {
            continue;
        };
        let part = if k + 1 == n {
            (room - given).max(Decimal::ZERO)
        } else {
            (room * own / total).round_dp(2)
        };
        given += part;
        r.monthly_savings = Some(part);
        r.text.push_str(&format!(
            "; it saves {} of its {} on its own: the rest is already counted in the pool's rightsizing, which needs fewer committed GPUs",
            money(part, cur),
            money(own, cur)
        ));
    }
}

/// Oversized reservations that can still be changed, in a pool without a commitment plan.
pub(super) fn resizes(
    a: &Analysis<'_>,
    cluster: &str,
    pool: &str,
    cur: &str,
) -> Vec<Recommendation> {
    let month = Decimal::from(prices::HOURS_PER_MONTH);
    let threshold = a.config.thresholds.stranded_spend_share.as_f64();
    let mut out = Vec::new();
    for (name, doc) in
        a.repo.reservations.iter().filter(|(_, r)| {
            r.spec.covers.cluster.value == cluster && r.spec.covers.pool.value == pool
        })
    {
        let s = &doc.spec;
        let Some(r) = a.reservation(name) else {
            continue;
        };
        if r.locked || r.stranded_share <= threshold {
            continue;
        }
        let per = r.cost.total / Decimal::from(s.count.value.0.max(1));
        out.push(Recommendation {
            kind: RecommendationKind::ResizeReservation,
            subject: name.clone(),
            text: format!(
                "{} of {} GPUs used at P50: {} stranded ({} at P10); {} × {} would keep the stranded share within {:.0}%",
                pct(r.utilization_p50),
                r.cost.gpus,
                money(r.stranded_p50, cur),
                money(r.stranded_p10, cur),
                r.suggested_count,
                s.instance_type.value,
                100.0 * threshold
            ),
            monthly_savings: Some(
                (per * Decimal::from(s.count.value.0.saturating_sub(r.suggested_count)) * month
                    / Decimal::from(r.cost.hours.max(1)))
                .round_dp(2),
            ),
            risk: format!(
                "P90 demand would exceed the smaller reservation; the pool's on-demand nodes take it ({} shortfall hours over the whole pool)",
                r.shortfall_hours
            ),
            changes: vec![format!(
                "Reservation `{name}`: count {} → {}",
                s.count.value.0, r.suggested_count
            )],
        });
    }
    out
}
