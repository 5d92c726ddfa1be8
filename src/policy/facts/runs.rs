//! Runs of back-to-back windows and terms: a request's window, or a
//! reservation's term, joined with those the same change adds or moves for
//! the same team (or the same capacity: provider, region, instance type)
//! where they overlap, touch, or leave less than [`MAX_GAP`] between them.
//! Tier limits on windows and terms read the run, so one long ask split
//! into back-to-back pieces (or pieces an hour apart) is judged as the
//! whole. What the change moved is worked out once ([`moved`]).

use super::Env;
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

/// The windows and terms the change adds or moves (a new document, or one
/// whose window, term or team changed), keyed as [`super::Aggregates`] keeps them.
#[allow(clippy::type_complexity)]
pub fn moved(
    world: &Repo,
    changes: &[Changed],
) -> (
    HashMap<String, Spans>,
    HashMap<(String, String, String), Spans>,
) {
    let mut windows: HashMap<String, Spans> = HashMap::new();
    let mut terms: HashMap<(String, String, String), Spans> = HashMap::new();
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
                let moved = before.is_none_or(|b| {
                    b.spec.team.value != doc.spec.team.value
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
                if before.is_none_or(|b| span(&b.spec.term) != span(&doc.spec.term)) {
                    let s = &doc.spec;
                    let (start, end) = span(&s.term);
                    terms
                        .entry((
                            s.provider.value.as_str().to_string(),
                            s.region.value.clone(),
                            s.instance_type.value.clone(),
                        ))
                        .or_default()
                        .push((c.name.clone(), start, end));
                }
            }
            _ => {}
        }
    }
    (windows, terms)
}

/// Seconds of the run a moved request's window is part of (0 when the
/// change does not add or move its window).
pub fn request(env: &Env<'_>, req: &Document<RequestSpec>) -> i64 {
    env.aggregates
        .moved_windows
        .get(&req.spec.team.value)
        .map_or(0, |spans| run_of(req.name(), spans))
}

/// Seconds of the run a moved reservation's term is part of (0 when the
/// change does not add or move its term).
pub fn reservation(env: &Env<'_>, res: &Document<ReservationSpec>) -> i64 {
    let s = &res.spec;
    let key = (
        s.provider.value.as_str().to_string(),
        s.region.value.clone(),
        s.instance_type.value.clone(),
    );
    env.aggregates
        .moved_terms
        .get(&key)
        .map_or(0, |spans| run_of(res.name(), spans))
}

fn run_of(name: &str, spans: &Spans) -> i64 {
    let Some(own) = spans.iter().find(|(n, _, _)| n == name) else {
        return 0;
    };
    let others = spans
        .iter()
        .filter(|(n, _, _)| n != name)
        .map(|&(_, s, e)| (s, e))
        .collect();
    run_seconds((own.1, own.2), others)
}

/// Pieces less than this far apart (seconds: 30 days) are one run: a gap
/// of an hour between two halves of one ask does not make two asks.
pub const MAX_GAP: i64 = 30 * 86_400;

/// Seconds from the first start to the last end of `own` (start, end) and
/// those of `others` that overlap it, touch it or are less than
/// [`MAX_GAP`] apart from it, directly or through one another.
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
    use super::run_seconds;

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
