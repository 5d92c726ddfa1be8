//! Resizing oversized reservations that can still change, in a pool without
//! a commitment plan: how many instances would keep the stranded share
//! within the Config's threshold, and what dropping the rest saves. In a
//! pool with a plan, a reservation that starts after the plan's 90 days
//! (which the plan neither keeps nor replaces) runs beside the commitments
//! the plan buys: released whole where no instance of it would be used, and
//! otherwise named for review with the plan, with no saving of its own,
//! since a count sized alone would reserve their demand twice (a plan that
//! buys no commitments leaves it to be resized on its own). A reservation
//! whose term is over is never resized.

use super::recommendation::{Recommendation, RecommendationKind};
use super::{Analysis, prices};
use crate::model::money::{format as money, percent as pct};
use rust_decimal::Decimal;

/// Oversized reservations that can still be changed, in a pool without a
/// commitment plan; with one (`planned`), those starting after its 90 days:
/// released whole where that is their size, else named for review with the
/// plan where it buys commitments (`commits`), else resized on their own.
pub(super) fn resizes(
    a: &Analysis<'_>,
    cluster: &str,
    pool: &str,
    cur: &str,
    planned: bool,
    commits: bool,
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
        // Paid whatever is done, or over: nothing to resize.
        if r.locked || super::reservation::term_hours(&s.term).1 <= a.at.hour_index() {
            continue;
        }
        if planned {
            // Inside the plan's 90 days the plan keeps or replaces it.
            if super::reservation::term_hours(&s.term).0 < plan_end {
                continue;
            }
            // After them it runs beside the commitments the plan buys, which
            // serve the demand it was sized on: a count sized on its own
            // would reserve that demand twice, so it is left to be reviewed
            // with the plan, with no saving of its own counted. Released
            // whole, it is consistent with any plan.
            if r.suggested_count > 0 && commits {
                out.push(review_with_plan(name, s, r.suggested_count));
                continue;
            }
        }
        if r.stranded_share <= threshold {
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

/// A reservation that starts after a pool's commitment plan's 90 days, to be
/// reviewed with the plan rather than resized on its own.
fn review_with_plan(name: &str, s: &crate::model::ReservationSpec, alone: u32) -> Recommendation {
    let count = s.count.value.0;
    Recommendation {
        kind: RecommendationKind::ResizeReservation,
        subject: name.to_string(),
        text: format!(
            "starts {}, after the 90 days the commitment plan above covers, and runs while the commitments it buys do; on its own it would be sized at {alone} of {count}, but the plan's commitments already serve the demand it was sized on: review it with the plan (release it, or buy that much less in the plan)",
            s.term.start.value
        ),
        monthly_savings: None,
        risk: "kept as it is beside the plan, it and the plan's new commitments reserve the same demand twice while both run".into(),
        changes: vec![format!(
            "Reservation `{name}`: review its count ({count}) with the commitment plan"
        )],
    }
}
