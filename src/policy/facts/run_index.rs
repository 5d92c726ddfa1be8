//! The spans one run can join, sorted once: the windows a change adds or
//! moves for a team with those the base holds on the same GPUs (or the
//! terms of one capacity), so that many pieces of one team cost one sort,
//! not one each (a pull request of 20,000 requests of one team and pool
//! sorted 20,000 spans 20,000 times).
//!
//! A run is the spans joined where they overlap, touch, or leave less than
//! [`MAX_GAP`] between them, less each held span that covers the piece
//! whole (`super::runs`). Where no held span covers the piece, its run is
//! the joined group it falls in, found by binary search; where one does,
//! the sorted spans are swept once without it.

use std::collections::HashMap;

/// Pieces less than this far apart (seconds: 30 days) are one run: a gap
/// of an hour between two halves of one ask does not make two asks.
pub const MAX_GAP: i64 = 30 * 86_400;

/// One team's (or capacity's) spans, sorted.
#[derive(Debug, Default)]
pub struct Index {
    /// The moved pieces by name.
    moved: HashMap<String, (i64, i64)>,
    /// Every span, moved and held, sorted; `true` for a held one.
    all: Vec<(i64, i64, bool)>,
    /// The held spans sorted by start, and the latest end up to each.
    held: Vec<(i64, i64)>,
    held_latest_end: Vec<i64>,
    /// The joined groups of every span, in order.
    groups: Vec<(i64, i64)>,
}

impl Index {
    /// Indexes the moved pieces (name, start, end) and the held spans.
    pub fn new(moved: &[(String, i64, i64)], held: &[(String, i64, i64)]) -> Index {
        let mut all: Vec<(i64, i64, bool)> = moved
            .iter()
            .map(|&(_, s, e)| (s, e, false))
            .chain(held.iter().map(|&(_, s, e)| (s, e, true)))
            .collect();
        all.sort_unstable();
        let mut groups: Vec<(i64, i64)> = Vec::new();
        for &(s, e, _) in &all {
            match groups.last_mut() {
                Some(g) if s < g.1.saturating_add(MAX_GAP) => g.1 = g.1.max(e),
                _ => groups.push((s, e)),
            }
        }
        let mut held: Vec<(i64, i64)> = held.iter().map(|&(_, s, e)| (s, e)).collect();
        held.sort_unstable();
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
        }
    }

    /// Seconds of the run the moved piece `name` is part of; 0 when the
    /// change does not move it.
    pub fn run(&self, name: &str) -> i64 {
        let Some(&own) = self.moved.get(name) else {
            return 0;
        };
        let covers = |s: i64, e: i64| s <= own.0 && own.1 <= e;
        // A held span starting no later than the piece and ending no
        // earlier covers it.
        let k = self.held.partition_point(|&(s, _)| s <= own.0);
        let covered = k > 0 && self.held_latest_end[k - 1] >= own.1;
        if !covered {
            // The piece is one of the spans, so some group starts at or
            // before it; the last such holds it (groups are apart).
            let g = self.groups.partition_point(|&(s, _)| s <= own.0);
            return self
                .groups
                .get(g.wrapping_sub(1))
                .map_or(own.1 - own.0, |&(s, e)| e - s);
        }
        let mut run: Option<(i64, i64)> = None;
        for &(start, end, held) in &self.all {
            if held && covers(start, end) {
                continue;
            }
            match run {
                Some((s, e)) if start < e.saturating_add(MAX_GAP) => run = Some((s, e.max(end))),
                Some((s, e)) if covers(s, e) => return e - s,
                _ => run = Some((start, end)),
            }
        }
        run.map_or(own.1 - own.0, |(s, e)| e - s)
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
