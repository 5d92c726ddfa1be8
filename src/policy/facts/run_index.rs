//! The spans one run can join, sorted once: the windows a change adds or
//! moves for a team with those the base holds on the same GPUs (or the
//! terms of one capacity), so that many pieces of one team cost one sort,
//! not one each (a pull request of 20,000 requests of one team and pool
//! sorted 20,000 spans 20,000 times).
//!
//! A run is the spans joined where they overlap, touch, or leave less than
//! [`MAX_GAP`] between them, less each held span that covers the piece
//! whole (`super::runs`). Where no held span covers the piece, its run is
//! the joined group it falls in, found by binary search. Where some do, the
//! spans are joined again without them, once for each set of covering
//! spans: the pieces under one long held window (a pull request of 100,000
//! pieces inside a window the base holds) share one sweep, not one each.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// Pieces less than this far apart (seconds: 30 days) are one run: a gap
/// of an hour between two halves of one ask does not make two asks.
pub const MAX_GAP: i64 = 30 * 86_400;

/// Joined groups of spans (start, end), in order, shared between threads.
type Groups = Arc<Vec<(i64, i64)>>;

/// One team's (or capacity's) spans, sorted.
#[derive(Debug, Default)]
pub struct Index {
    /// The moved pieces by name.
    moved: HashMap<String, (i64, i64)>,
    /// Every span, moved and held, sorted; a held one carries its place in
    /// `held`.
    all: Vec<(i64, i64, Option<usize>)>,
    /// The held spans sorted by start, and the latest end up to each.
    held: Vec<(i64, i64)>,
    held_latest_end: Vec<i64>,
    /// The joined groups of every span, in order.
    groups: Vec<(i64, i64)>,
    /// The joined groups without a set of held spans (their places in
    /// `held`, ascending), built on first use.
    without: Mutex<HashMap<Vec<usize>, Groups>>,
}

/// The spans of `all` joined into groups, in order, leaving out the held
/// spans whose places `skip` (ascending) holds.
fn join(all: &[(i64, i64, Option<usize>)], skip: &[usize]) -> Vec<(i64, i64)> {
    let mut groups: Vec<(i64, i64)> = Vec::new();
    for &(s, e, held) in all {
        if held.is_some_and(|h| skip.binary_search(&h).is_ok()) {
            continue;
        }
        match groups.last_mut() {
            Some(g) if s < g.1.saturating_add(MAX_GAP) => g.1 = g.1.max(e),
            _ => groups.push((s, e)),
        }
    }
    groups
}

/// Seconds of the group holding the span `own`, which is one of those
/// joined (groups are apart, so the last starting at or before it).
fn group_of(groups: &[(i64, i64)], own: (i64, i64)) -> i64 {
    let g = groups.partition_point(|&(s, _)| s <= own.0);
    groups
        .get(g.wrapping_sub(1))
        .map_or(own.1 - own.0, |&(s, e)| e - s)
}

impl Index {
    /// Indexes the moved pieces (name, start, end) and the held spans.
    pub fn new(moved: &[(String, i64, i64)], held: &[(String, i64, i64)]) -> Index {
        let mut held: Vec<(i64, i64)> = held.iter().map(|&(_, s, e)| (s, e)).collect();
        held.sort_unstable();
        let mut all: Vec<(i64, i64, Option<usize>)> = moved
            .iter()
            .map(|&(_, s, e)| (s, e, None))
            .chain(held.iter().enumerate().map(|(i, &(s, e))| (s, e, Some(i))))
            .collect();
        all.sort_unstable();
        let groups = join(&all, &[]);
        let held_latest_end = held
            .iter()
            .scan(i64::MIN, |latest, &(_, e)| {
                *latest = (*latest).max(e);
                Some(*latest)
            })
            .collect();
        Index {
            moved: moved
                .iter()
                .map(|(n, s, e)| (n.clone(), (*s, *e)))
                .collect(),
            all,
            held,
            held_latest_end,
            groups,
            without: Mutex::default(),
        }
    }

    /// Seconds of the run the moved piece `name` is part of; 0 when the
    /// change does not move it.
    pub fn run(&self, name: &str) -> i64 {
        let Some(&own) = self.moved.get(name) else {
            return 0;
        };
        // A held span starting no later than the piece and ending no
        // earlier covers it.
        let k = self.held.partition_point(|&(s, _)| s <= own.0);
        let covered = k > 0 && self.held_latest_end[k - 1] >= own.1;
        if !covered {
            return group_of(&self.groups, own);
        }
        let skip: Vec<usize> = (0..k).filter(|&i| self.held[i].1 >= own.1).collect();
        // A poisoned lock (a thread that panicked while joining) is
        // rebuilt from scratch rather than trusted.
        let groups = {
            let mut map = self.without.lock().unwrap_or_else(|p| {
                let mut m = p.into_inner();
                m.clear();
                m
            });
            map.entry(skip)
                .or_insert_with_key(|skip| Arc::new(join(&self.all, skip)))
                .clone()
        };
        group_of(&groups, own)
    }
}

/// Indexes built on first use, shared by the threads that judge.
#[derive(Default)]
pub struct Memo(std::sync::Mutex<HashMap<MemoKey, std::sync::Arc<Index>>>);

/// A team's windows on some GPUs, or one capacity's terms.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum MemoKey {
    Windows(String, String, String),
    Terms(String, String, String),
}

impl Memo {
    /// The index under `key`, built by `build` the first time.
    pub fn get(&self, key: MemoKey, build: impl FnOnce() -> Index) -> std::sync::Arc<Index> {
        // A poisoned lock (a thread that panicked while building) is
        // rebuilt from scratch rather than trusted.
        let mut map = self.0.lock().unwrap_or_else(|p| {
            let mut m = p.into_inner();
            m.clear();
            m
        });
        map.entry(key)
            .or_insert_with(|| std::sync::Arc::new(build()))
            .clone()
    }
}

impl Clone for Memo {
    /// A copy starts empty: indexes are rebuilt from what they index.
    fn clone(&self) -> Memo {
        Memo::default()
    }
}

impl std::fmt::Debug for Memo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Memo")
    }
}
