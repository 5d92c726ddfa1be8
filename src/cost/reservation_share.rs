//! How a pool's reserved GPUs are shared out: what the reservations in
//! force hold at each hour (a step function), and the most instances of a
//! reservation whose idle share over the demand left for it stays within
//! the stranded threshold; which other reservations share a pool's
//! reserved nodes, in what order; and when a reservation is locked.

use crate::model::*;

/// What terms `[start, end)` of some GPUs each hold at any hour, as a step
/// function: the sum changes only where a term starts or ends.
pub(super) struct InForce {
    /// From each hour on (ascending), what is held until the next.
    steps: Vec<(i64, f64)>,
}

impl InForce {
    pub(super) fn new(terms: &[(i64, i64, f64)]) -> InForce {
        let mut events: Vec<(i64, f64)> = terms
            .iter()
            .filter(|(a, b, _)| a < b)
            .flat_map(|&(a, b, g)| [(a, g), (b, -g)])
            .collect();
        events.sort_by_key(|e| e.0);
        let mut steps: Vec<(i64, f64)> = Vec::new();
        let mut held = 0.0;
        for (h, g) in events {
            held += g;
            match steps.last_mut() {
                Some(last) if last.0 == h => last.1 = held,
                _ => steps.push((h, held)),
            }
        }
        InForce { steps }
    }

    pub(super) fn at(&self, h: i64) -> f64 {
        match self.steps.partition_point(|s| s.0 <= h) {
            0 => 0.0,
            i => self.steps[i - 1].1,
        }
    }
}

/// The most instances (up to `count`) of `per` GPUs whose idle share, over
/// the demand `left` for them, stays within `threshold`: with `past` hours
/// more before the first measurement, each at the mean of the first
/// `measured` entries (the measured hours; all of `left` when none), as the
/// utilization counts them. Idle share grows with the count, so a binary
/// search finds it.
pub(crate) fn suggest(
    left: &[f64],
    measured: usize,
    past: usize,
    per: f64,
    count: u32,
    threshold: f64,
) -> u32 {
    if left.is_empty() || per <= 0.0 {
        return count;
    }
    let stand_in = if measured > 0 {
        &left[..measured]
    } else {
        left
    };
    let idle_share = |k: u32| -> f64 {
        let cap = k as f64 * per;
        let served: f64 = left.iter().map(|d| d.min(cap)).sum();
        let before: f64 = stand_in.iter().map(|d| d.min(cap)).sum::<f64>()
            * (past as f64 / stand_in.len() as f64);
        1.0 - (served + before) / (cap * (left.len() + past) as f64)
    };
    let (mut lo, mut hi) = (0u32, count);
    while lo < hi {
        let mid = (lo + hi).div_ceil(2);
        if idle_share(mid) <= threshold + 1e-9 {
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    lo
}

/// The other reservations of `doc`'s pool that can serve its demand, as
/// (term start, end, GPUs, whether it takes reserved nodes before `doc`).
/// The order reserved nodes are taken in: in a world judging a change, the
/// reservations the base holds as they are come before those the change
/// adds or edits (a new reservation dated back cannot take the nodes of one
/// in force); then the earlier term first, then by name. A reservation the
/// base holds locked at `at_hour` (prepaid or not cancellable, and started)
/// holds its nodes as the base has it, whatever the change does to it
/// (removed or cut, it is billed all the same), and what the change gives
/// it beyond that as well (grown, extended, moved to another pool).
pub(super) fn others(
    repo: &Repo,
    name: &str,
    doc: &Document<ReservationSpec>,
    covered: Option<(&ClusterSpec, &NodePool)>,
    at_hour: i64,
) -> Vec<(i64, i64, f64, bool)> {
    let base = repo.pricing_reservations.as_deref();
    let changed = |n: &str, d: &Document<ReservationSpec>| {
        base.is_some_and(|b| b.get(n).is_none_or(|x| x.fingerprint != d.fingerprint))
    };
    let start = term_hours(&doc.spec.term).0;
    let order = (changed(name, doc), start, name);
    let locked_base = |n: &str| {
        base.and_then(|b| b.get(n))
            .filter(|b| locked(&b.spec, at_hour))
    };
    let serves = |r: &Document<ReservationSpec>| {
        let s = &doc.spec;
        r.spec.covers.cluster.value == s.covers.cluster.value
            && r.spec.covers.pool.value == s.covers.pool.value
            && covered.is_some_and(|(c, p)| r.spec.mismatches(c, p).is_empty())
    };
    let gpus =
        |r: &Document<ReservationSpec>| super::prices::reservation_gpus(repo, &r.spec) as f64;
    // Each reservation as the pool holds it: (the document, term, GPUs).
    let mut held: Vec<(&Document<ReservationSpec>, i64, i64, f64)> = Vec::new();
    for r in repo.reservations.values().filter(|r| r.name() != name) {
        let (a, b) = term_hours(&r.spec.term);
        match locked_base(r.name()) {
            None => {
                if serves(r) {
                    held.push((r, a, b, gpus(r)));
                }
            }
            // Locked in the base: its base version's nodes stay held (it is
            // billed all the same), and what the change gives it beyond
            // that (more instances, a longer term, another pool) is held
            // too: per hour, the larger of the two.
            Some(old) => {
                let (oa, ob) = term_hours(&old.spec.term);
                let og = gpus(old);
                if serves(old) {
                    held.push((old, oa, ob, og));
                }
                if serves(r) {
                    let g = gpus(r);
                    if serves(old) {
                        let (ia, ib) = (a.max(oa), b.min(ob));
                        if ia < ib && g > og {
                            held.push((r, ia, ib, g - og));
                        }
                        for (pa, pb) in [(a, b.min(oa)), (a.max(ob), b)] {
                            if pa < pb {
                                held.push((r, pa, pb, g));
                            }
                        }
                    } else {
                        held.push((r, a, b, g));
                    }
                }
            }
        }
    }
    // Removed by the change but locked in the base: held as the base has it.
    for old in base
        .into_iter()
        .flat_map(|b| b.values())
        .filter(|b| b.name() != name && !repo.reservations.contains_key(b.name()))
        .filter(|b| locked_base(b.name()).is_some() && serves(b))
    {
        let (a, b) = term_hours(&old.spec.term);
        held.push((old, a, b, gpus(old)));
    }
    held.into_iter()
        .map(|(r, a, b, g)| {
            let (ta, _) = term_hours(&r.spec.term);
            (a, b, g, (changed(r.name(), r), ta, r.name()) < order)
        })
        .collect()
}

/// How far ahead AWS sells capacity blocks: eight weeks.
pub const CAPACITY_BLOCK_LEAD_HOURS: i64 = 8 * 7 * 24;

/// Whether a reservation is paid whatever happens once bought: a capacity
/// block, a GCP commitment, or one with an upfront fee.
pub fn prepaid(s: &ReservationSpec) -> bool {
    match s.kind.value {
        ReservationType::AwsCapacityBlock | ReservationType::GcpCommitment => true,
        _ => s.upfront_fee.as_ref().is_some_and(|f| !f.value.0.is_zero()),
    }
}

/// Whether a reservation can no longer be changed: prepaid or not
/// cancellable, and bought. A reservation on the main branch is bought when
/// its Terraform can buy it: a capacity block from eight weeks before its
/// start (AWS sells them that far ahead and takes the whole price at
/// purchase), a commitment or a reservation with an upfront fee when its
/// term starts (GCP commitments start when bought; a queued reserved
/// instance can be cancelled until then).
pub fn locked(s: &ReservationSpec, at_hour: i64) -> bool {
    let start = term_hours(&s.term).0;
    match s.kind.value {
        ReservationType::AwsCapacityBlock => start - CAPACITY_BLOCK_LEAD_HOURS <= at_hour,
        ReservationType::GcpCommitment => start <= at_hour,
        _ => s.upfront_fee.as_ref().is_some_and(|f| !f.value.0.is_zero()) && start <= at_hour,
    }
}

/// A term as hours `[start, end)`.
pub fn term_hours(term: &Window) -> (i64, i64) {
    (
        term.start.value.as_second().div_euclid(3600),
        (term.end.value.as_second() + 3599).div_euclid(3600),
    )
}
