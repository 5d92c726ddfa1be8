//! Resizing oversized reservations that can still change, in a pool without
//! a commitment plan (with one, those that start after the plan's 90 days,
//! which it neither keeps nor replaces): how many instances would keep the
//! stranded share within the Config's threshold, and what dropping the rest
//! saves.

use super::recommendation::{Recommendation, RecommendationKind};
use super::{Analysis, prices};
use crate::model::money::{format as money, percent as pct};
use rust_decimal::Decimal;

/// Oversized reservations that can still be changed, in a pool without a
/// commitment plan; with one (`planned`), only those starting after its 90 days.
pub(super) fn resizes(
    a: &Analysis<'_>,
    cluster: &str,
    pool: &str,
    cur: &str,
    planned: bool,
) -> Vec<Recommendation> {
    let plan_end = a.at.hour_index() + super::OUTLOOK_HOURS;
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
        if planned && super::reservation::term_hours(&s.term).0 < plan_end {
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
            monthly_savings: Some(prices::cents(
                per * Decimal::from(s.count.value.0.saturating_sub(r.suggested_count)) * month
                    / Decimal::from(r.cost.hours.max(1)),
            )),
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
