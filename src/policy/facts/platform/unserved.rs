//! The reservations a cluster change leaves paid for and unusable: those
//! that could serve a pool of the cluster before and cannot after (its
//! provider, region, instance type or zone moved away, or the pool gone),
//! and those on a pool whose reserved nodes the change cuts below what they
//! hold.

use super::super::Env;
use crate::model::*;

/// The reservations in force that serve a pool of the cluster `before` and
/// not `after` (`None`: removed), and those on a pool whose reserved nodes
/// the change cuts below what they hold. The head's reservations: one the
/// change moves along with the pool serves it still.
pub(super) fn unserved(
    env: &Env<'_>,
    before: Option<&Document<ClusterSpec>>,
    after: Option<&Document<ClusterSpec>>,
) -> Vec<String> {
    let Some(before) = before else {
        return Vec::new();
    };
    let serves = |c: &Document<ClusterSpec>, r: &ReservationSpec| {
        c.spec
            .node_pools
            .iter()
            .find(|p| p.name.value.as_str() == r.covers.pool.value)
            .is_some_and(|p| r.mismatches(&c.spec, p).is_empty())
    };
    let in_force: Vec<&Document<ReservationSpec>> = env
        .world
        .reservations
        .values()
        .filter(|r| r.spec.covers.cluster.value == before.name())
        .filter(|r| r.spec.term.end.value > env.at)
        .collect();
    let mut out: Vec<String> = in_force
        .iter()
        .filter(|r| serves(before, &r.spec) && !after.is_some_and(|a| serves(a, &r.spec)))
        .map(|r| r.name().to_string())
        .collect();
    // A pool that declares fewer reserved nodes than the reservations in
    // force on it hold, when it declared enough before: the others are paid
    // for and serve nothing.
    let reserved = |c: &Document<ClusterSpec>, pool: &str| {
        c.spec
            .node_pools
            .iter()
            .find(|p| p.name.value.as_str() == pool)
            .map(|p| p.purchase.as_ref().map_or(0, |m| m.value.reserved.0))
    };
    let Some(after) = after else {
        return out;
    };
    for pool in &after.spec.node_pools {
        let name = pool.name.value.as_str();
        let (Some(now), Some(then)) = (reserved(after, name), reserved(before, name)) else {
            continue;
        };
        let on_pool: Vec<&&Document<ReservationSpec>> = in_force
            .iter()
            .filter(|r| r.spec.covers.pool.value == name && serves(after, &r.spec))
            .collect();
        // The most instances held at once from `now` on: at `now` or at a
        // term's start.
        let held_at = |t: crate::model::Timestamp| -> u32 {
            on_pool
                .iter()
                .filter(|o| o.spec.term.start.value <= t && t < o.spec.term.end.value)
                .map(|o| o.spec.count.value.0)
                .sum()
        };
        let most = on_pool
            .iter()
            .map(|r| held_at(r.spec.term.start.value.max(env.at)))
            .max()
            .unwrap_or(0);
        if now < then && most > now {
            for r in on_pool {
                if !out.iter().any(|n| n == r.name()) {
                    out.push(r.name().to_string());
                }
            }
        }
    }
    out
}
