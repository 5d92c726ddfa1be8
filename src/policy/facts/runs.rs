//! Runs of back-to-back windows and terms: a request's window, or a
//! reservation's term, joined with those the same change adds or moves for
//! the same team (or the same capacity: provider, region, instance type)
//! where they overlap, touch, or leave less than [`MAX_GAP`] between them.
//! Tier limits on windows and terms read the run, so one long ask split
//! into back-to-back pieces (or pieces an hour apart) is judged as the
//! whole. What the change moved is worked out once ([`moved`]).
//!
//! A piece added in a later pull request is joined, too, with what the base
//! already holds for the same team on the same GPUs (pools of the same
//! model in the same cluster; or, for terms, the same capacity) from
//! `--at` on: a renewal
//! that starts where a merged window ends continues the same hold, and is
//! judged as the whole of it still to come. A held window or term that,
//! by itself, covers the moved one whole is not joined (the moved one
//! extends nothing of it; never the held ones together, which would let a
//! longer request of the team hide a renewal),
//! and the past is not counted (renewing at the end of a window is a new
//! ask of its own length).

use super::Env;
pub use super::run_index::MAX_GAP;
use super::run_index::{Index, Memo, MemoKey};
use crate::model::*;
use crate::policy::change::{ChangeKind, Changed};
use std::collections::HashMap;

/// (document, start, end in seconds) of each window or term moved.
pub type Spans = Vec<(String, i64, i64)>;

/// Provider, region and instance type: reservations of the same capacity.
pub type Capacity = (String, String, String);

fn span(w: &Window) -> (i64, i64) {
    (w.start.value.as_second(), w.end.value.as_second())
}

/// What a change moves, and what the base already holds, as runs join them.
#[derive(Debug, Clone, Default)]
pub struct Runs {
    /// team -> the windows the change adds or moves.
    pub moved_windows: HashMap<String, Spans>,
    /// capacity -> the terms the change adds or moves.
    pub moved_terms: HashMap<Capacity, Spans>,
    /// (team, cluster, GPU model of the pool) -> the windows of the requests
    /// the change leaves alone, from `at` on (the base's, identical in the head).
    pub held_windows: HashMap<(String, String, String), Spans>,
    /// capacity -> the terms of the reservations the change leaves alone, from `at` on.
    pub held_terms: HashMap<Capacity, Spans>,
    /// The spans of each run sorted once, on first use.
    pub index: Memo,
}

/// Held windows continue a request's run on the same capacity: the team's
/// requests in the same cluster on pools of the same GPU model that provide
/// the same resources, by name (a renewal written for the sibling pool of
/// the same GPUs is the same hold). The team's requests on other GPUs, on
/// MIG pools of a whole-GPU one's model, or in other clusters are other
/// capacity.
fn held_key(world: &Repo, s: &RequestSpec) -> (String, String, String) {
    let gpus = crate::capacity::pool_of(world, s)
        .map(|(p, c)| {
            let model = crate::gpu::model(&p.gpu_model.value)
                .map_or_else(|| p.gpu_model.value.clone(), |m| m.id.to_string());
            // What the pool provides: whole GPUs and MIG instances of that
            // model are not the same capacity (two MIG layouts offering the
            // same profiles are).
            let mut provided: Vec<String> =
                crate::gpu::resources::provided(p, c.mig_strategy.value)
                    .into_iter()
                    .map(|r| r.resource)
                    .collect();
            provided.sort();
            provided.dedup();
            format!("{model} {}", provided.join(","))
        })
        // A pool the head does not hold: only its own name joins it.
        .unwrap_or_else(|| format!("pool {}", s.pool.value));
    (s.team.value.clone(), s.cluster.value.clone(), gpus)
}

fn capacity_of(s: &ReservationSpec) -> Capacity {
    (
        s.provider.value.as_str().to_string(),
        s.region.value.clone(),
        s.instance_type.value.clone(),
    )
}

/// The windows and terms the change adds or moves (a new document, or one
/// whose window or term changed, or that moved to another team or pool, or
/// to other capacity), and the others (held) from `at`
/// (seconds) on, keyed as [`super::Aggregates`] keeps them. `world` holds
/// the head's requests and reservations.
pub fn moved(world: &Repo, changes: &[Changed], at: i64) -> Runs {
    let mut out = Runs::default();
    let windows = &mut out.moved_windows;
    let terms = &mut out.moved_terms;
    for c in changes {
        if matches!(c.change.kind, ChangeKind::Unchanged | ChangeKind::Removed) {
            continue;
        }
        match c.kind {
            Kind::CapacityRequest => {
                let Some(doc) = world.requests.get(&c.name) else {
                    continue;
                };
                let Some(w) = &doc.spec.window else { continue };
                let before = c.change.previous::<RequestSpec>();
                // A window handed to another team or pool is a new hold there.
                let moved = before.is_none_or(|b| {
                    held_key(world, &b.spec) != held_key(world, &doc.spec)
                        || b.spec.window.as_ref().map(span) != Some(span(w))
                });
                if moved {
                    let (s, e) = span(w);
                    windows
                        .entry(doc.spec.team.value.clone())
                        .or_default()
                        .push((c.name.clone(), s, e));
                }
            }
            Kind::Reservation => {
                let Some(doc) = world.reservations.get(&c.name) else {
                    continue;
                };
                let before = c.change.previous::<ReservationSpec>();
                // So is a term moved to other capacity.
                if before.is_none_or(|b| {
                    span(&b.spec.term) != span(&doc.spec.term)
                        || capacity_of(&b.spec) != capacity_of(&doc.spec)
                }) {
                    let (start, end) = span(&doc.spec.term);
                    terms.entry(capacity_of(&doc.spec)).or_default().push((
                        c.name.clone(),
                        start,
                        end,
                    ));
                }
            }
            _ => {}
        }
    }
    // Held: every other window and term of the head, from `at` on. A
    // document the change edits without moving its window or term (a new
    // justification, more GPUs) still holds it.
    fn names<K>(spans: &HashMap<K, Spans>) -> std::collections::HashSet<&str> {
        spans
            .values()
            .flatten()
            .map(|(n, _, _)| n.as_str())
            .collect()
    }
    let moved_requests = names(&out.moved_windows);
    let moved_reservations = names(&out.moved_terms);
    let from_now = |(s, e): (i64, i64)| (e > at).then_some((s.max(at), e));
    for (name, doc) in &world.requests {
        let Some(w) = &doc.spec.window else { continue };
        if moved_requests.contains(name.as_str()) {
            continue;
        }
        if let Some((s, e)) = from_now(span(w)) {
            out.held_windows
                .entry(held_key(world, &doc.spec))
                .or_default()
                .push((name.clone(), s, e));
        }
    }
    for (name, doc) in &world.reservations {
        if moved_reservations.contains(name.as_str()) {
            continue;
        }
        if let Some((s, e)) = from_now(span(&doc.spec.term)) {
            out.held_terms
                .entry(capacity_of(&doc.spec))
                .or_default()
                .push((name.clone(), s, e));
        }
    }
    out
}

/// Seconds of the run a moved request's window is part of (0 when the
/// change does not add or move its window).
pub fn request(env: &Env<'_>, req: &Document<RequestSpec>) -> i64 {
    let runs = &env.aggregates.runs;
    let Some(spans) = runs.moved_windows.get(&req.spec.team.value) else {
        return 0;
    };
    let (team, cluster, gpus) = held_key(env.world, &req.spec);
    let key = MemoKey::Windows(team.clone(), cluster.clone(), gpus.clone());
    let held = runs.held_windows.get(&(team, cluster, gpus));
    runs.index
        .get(key, || {
            Index::new(spans, held.map_or(&[], |h| h.as_slice()))
        })
        .run(req.name())
}

/// Seconds of the run a moved reservation's term is part of (0 when the
/// change does not add or move its term).
pub fn reservation(env: &Env<'_>, res: &Document<ReservationSpec>) -> i64 {
    let runs = &env.aggregates.runs;
    let key = capacity_of(&res.spec);
    let Some(spans) = runs.moved_terms.get(&key) else {
        return 0;
    };
    let held = runs.held_terms.get(&key);
    let (provider, region, instance) = key.clone();
    runs.index
        .get(MemoKey::Terms(provider, region, instance), || {
            Index::new(spans, held.map_or(&[], |h| h.as_slice()))
        })
        .run(res.name())
}

/// The run of `name`'s span among the others the change moves and those
/// held, less each held span that covers it whole: a window inside one held
/// window extends nothing of it. Coverage is decided span by span, never by
/// the held spans together: a renewal that continues one request is joined
/// with it even where another, longer request of the team spans it. The
/// plain statement of what [`Index::run`] finds faster.
#[cfg(test)]
fn run_of(name: &str, spans: &Spans, held: Option<&Spans>) -> i64 {
    let Some(own) = spans.iter().find(|(n, _, _)| n == name) else {
        return 0;
    };
    let own_span = (own.1, own.2);
    let others = spans
        .iter()
        .filter(|(n, _, _)| n != name)
        .map(|&(_, s, e)| (s, e))
        .chain(
            held.into_iter()
                .flatten()
                .map(|&(_, s, e)| (s, e))
                .filter(|&(s, e)| !(s <= own_span.0 && own_span.1 <= e)),
        )
        .collect();
    run_seconds(own_span, others)
}

/// Seconds from the first start to the last end of `own` (start, end) and
/// those of `others` that overlap it, touch it or are less than
/// [`MAX_GAP`] apart from it, directly or through one another.
#[cfg(test)]
pub fn run_seconds(own: (i64, i64), mut others: Vec<(i64, i64)>) -> i64 {
    others.push(own);
    others.sort_unstable();
    let mut run: Option<(i64, i64)> = None;
    for (start, end) in others {
        match run {
            Some((s, e)) if start < e.saturating_add(MAX_GAP) => run = Some((s, e.max(end))),
            Some((s, e)) if s <= own.0 && own.1 <= e => return e - s,
            _ => run = Some((start, end)),
        }
    }
    run.map_or(own.1 - own.0, |(s, e)| e - s)
}

#[cfg(test)]
mod tests {
    use super::{Spans, run_of, run_seconds};

    #[test]
    fn a_renewal_continues_what_is_held_and_a_window_inside_it_does_not() {
        const D: i64 = 86_400;
        let moved = |s: i64, e: i64| -> Spans { vec![("own".into(), s * D, e * D)] };
        let held = |spans: &[(i64, i64)]| -> Spans {
            spans
                .iter()
                .map(|&(s, e)| ("held".to_string(), s * D, e * D))
                .collect()
        };
        // Renewed where the held window ends, or 10 days later: one run.
        assert_eq!(
            run_of("own", &moved(180, 364), Some(&held(&[(0, 180)]))),
            364 * D
        );
        assert_eq!(
            run_of("own", &moved(190, 364), Some(&held(&[(0, 180)]))),
            364 * D
        );
        // A held window before it, then a 30-day gap: its own.
        assert_eq!(
            run_of("own", &moved(210, 364), Some(&held(&[(0, 180)]))),
            154 * D
        );
        // Reaching beyond a held window it overlaps: the whole.
        assert_eq!(
            run_of("own", &moved(170, 364), Some(&held(&[(0, 180)]))),
            364 * D
        );
        // Inside a held window: it extends nothing of it.
        assert_eq!(
            run_of("own", &moved(50, 71), Some(&held(&[(0, 180)]))),
            21 * D
        );
        // Continuing one held window (0-90) inside another, longer one
        // (0-300, another request of the team): joined with the first, so
        // a renewal cannot hide under an unrelated long hold.
        assert_eq!(
            run_of("own", &moved(90, 200), Some(&held(&[(0, 90), (0, 300)]))),
            200 * D
        );
        // Bridging two held windows: it continues both.
        assert_eq!(
            run_of("own", &moved(80, 110), Some(&held(&[(0, 90), (100, 180)]))),
            180 * D
        );
        // Nothing held, or not the change's: as before.
        assert_eq!(run_of("own", &moved(0, 21), None), 21 * D);
        assert_eq!(run_of("other", &moved(0, 21), Some(&held(&[(0, 180)]))), 0);
    }

    #[test]
    fn the_index_finds_every_run_as_the_plain_statement_does() {
        // Random pieces and held spans, days apart or overlapping, some
        // held ones covering pieces whole: the index and `run_of` agree.
        const D: i64 = 86_400;
        let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut next = |n: u64| {
            seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
            ((seed >> 33) % n) as i64
        };
        for case in 0..400 {
            let pieces = 1 + next(12);
            let helds = next(8);
            let mut span = |i: i64, prefix: &str| {
                let start = next(400) * D + next(3) * 3600;
                let len = (1 + next(if case % 3 == 0 { 300 } else { 40 })) * D;
                (format!("{prefix}{i}"), start, start + len)
            };
            let moved: Spans = (0..pieces).map(|i| span(i, "m")).collect();
            let held: Spans = (0..helds).map(|i| span(i, "h")).collect();
            let index = super::Index::new(&moved, &held);
            for (name, _, _) in &moved {
                assert_eq!(
                    index.run(name),
                    run_of(name, &moved, Some(&held)),
                    "case {case}, {name}: {moved:?} held {held:?}"
                );
            }
            assert_eq!(index.run("absent"), 0);
        }
    }

    #[test]
    fn back_to_back_pieces_make_one_run() {
        const D: i64 = 86_400;
        // 0-10 and 10-20 touch, 20-25 touches that; 60-70 stands apart
        // (35 days after).
        let others = vec![(10 * D, 20 * D), (20 * D, 25 * D), (60 * D, 70 * D)];
        assert_eq!(run_seconds((0, 10 * D), others.clone()), 25 * D);
        assert_eq!(
            run_seconds((60 * D, 70 * D), vec![(0, 10 * D), (10 * D, 20 * D)]),
            10 * D
        );
        // Overlapping pieces count their union once.
        assert_eq!(
            run_seconds((0, 10 * D), vec![(5 * D, 12 * D), (2 * D, 3 * D)]),
            12 * D
        );
        assert_eq!(run_seconds((5 * D, 8 * D), vec![]), 3 * D);
        // A piece reached only through another.
        assert_eq!(
            run_seconds(
                (20 * D, 25 * D),
                vec![(0, 10 * D), (10 * D, 20 * D), (60 * D, 70 * D)]
            ),
            25 * D
        );
        assert_eq!(run_seconds((20 * D, 25 * D), others), 15 * D);
        // An hour apart, or 29 days: one run from the first start to the
        // last end; 30 days apart: two.
        assert_eq!(
            run_seconds((0, 10 * D), vec![(10 * D + 3600, 20 * D)]),
            20 * D
        );
        assert_eq!(run_seconds((0, 10 * D), vec![(39 * D, 50 * D)]), 50 * D);
        assert_eq!(run_seconds((0, 10 * D), vec![(40 * D, 50 * D)]), 10 * D);
    }
}
