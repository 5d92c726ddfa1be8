//! Reservations a release strands. A reservation is judged on the demand of
//! the pool it covers, and that demand includes the approved requests. A
//! request that made a reservation worth buying can later be removed,
//! shrunk, shortened or moved to another pool by its team alone; the
//! reservation is still billed, and what the request no longer uses of it
//! is stranded. So a change to requests is also measured by what it does to
//! the reservations in force on the pools it touches, from `now` on (hours
//! already past are paid either way):
//!
//! - the demand before is the pool's P50 outlook with the base's versions of
//!   the changed requests (usage history as measured, the approved timeline);
//! - the demand after is the judging world's outlook, where the change
//!   moves each team's demand as `cost::approved` says (a running request
//!   removed takes what it held away from now on, though the measured level
//!   still holds it; a trim of room the team never used takes nothing);
//!   past the outlook, what the changed requests hold in the head minus what
//!   they held in the base; never below zero;
//! - the reservations are the base's, as billed: a locked one as the base
//!   has it (re-pointing or cutting it does not stop the bill), another as
//!   the head leaves it (cutting it in the same change is the remedy).
//!
//! The rise in stranded spend, summed over the reservations, is a fact of
//! the changed requests of that pool (`change.reservation_stranded_cost`),
//! with the largest stranded share of the remaining term it leaves
//! (`change.reservation_stranded_share`); the default policy asks finance to
//! approve a release that leaves a reservation beyond the Config's
//! stranded-spend threshold.

use super::change::{ChangeKind, Changed};
use crate::capacity::Hours;
use crate::cost::Analysis;
use crate::cost::prices::{self, float};
use crate::cost::reservation::{locked, term_hours};
use crate::model::*;
use std::collections::BTreeMap;

/// What a change does to the reservations covering one pool.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Stranded {
    /// Expected stranded spend (P50) added from `now` on over the
    /// reservations in force on the pool: the sum of each one's rise (a
    /// reservation the change leaves better used does not offset another).
    pub cost: f64,
    /// The largest stranded share of the remaining term (stranded spend from
    /// `now` on over what the term costs from `now` on), after the change, of
    /// those whose stranded spend rose (0 when none rose).
    pub share: f64,
}

type Pool = (String, String);

/// (cluster, pool) -> what the change's requests do to the reservations in
/// force there from `analysis.at` on. `world` holds the head's requests;
/// `base` the base revision (without one nothing is released). Only pools
/// with a rise are listed.
pub fn released(
    world: &Repo,
    base: Option<&Repo>,
    analysis: &Analysis<'_>,
    changes: &[Changed],
) -> BTreeMap<Pool, Stranded> {
    if base.is_none() {
        return BTreeMap::new();
    }
    let at = analysis.at.hour_index();
    let requests: Vec<&Changed> = changes
        .iter()
        .filter(|c| c.kind == Kind::CapacityRequest && c.change.kind != ChangeKind::Unchanged)
        .collect();
    // Per pool, GPUs the changed requests hold: (hours, gpus, +1 head / -1 base).
    let mut delta: BTreeMap<Pool, Vec<(Hours, f64)>> = BTreeMap::new();
    let mut add = |spec: &RequestSpec, sign: f64| {
        let gpus = crate::capacity::size(spec, crate::capacity::pool_of(world, spec)).gpus;
        delta
            .entry((spec.cluster.value.clone(), spec.pool.value.clone()))
            .or_default()
            .push((Hours::of_request(spec), sign * gpus));
    };
    for c in &requests {
        if let Some(d) = world.requests.get(&c.name) {
            add(&d.spec, 1.0);
        }
        if let Some(p) = c.change.previous::<RequestSpec>() {
            add(&p.spec, -1.0);
        }
    }
    // The reservations as billed, by the pool they cover: one the change
    // leaves alone as it stands; a changed one as the base has it when that
    // was locked, else as the head leaves it.
    let mut billed: BTreeMap<Pool, Vec<&ReservationSpec>> = BTreeMap::new();
    let changed: BTreeMap<&str, &Changed> = changes
        .iter()
        .filter(|c| c.kind == Kind::Reservation && c.change.kind != ChangeKind::Unchanged)
        .map(|c| (c.name.as_str(), c))
        .collect();
    let mut names: std::collections::BTreeSet<&str> =
        world.reservations.keys().map(String::as_str).collect();
    names.extend(changed.keys().copied());
    for name in names {
        let head = world.reservations.get(name).map(|d| &d.spec);
        let previous = changed
            .get(name)
            .and_then(|c| c.change.previous::<ReservationSpec>())
            .map(|d| &d.spec);
        let spec = match (previous, head) {
            (Some(p), _) if locked(p, at) => p,
            (_, Some(h)) => h,
            _ => continue,
        };
        let key = (
            spec.covers.cluster.value.clone(),
            spec.covers.pool.value.clone(),
        );
        if term_hours(&spec.term).1 > at && delta.contains_key(&key) {
            billed.entry(key).or_default().push(spec);
        }
    }
    if billed.is_empty() {
        return BTreeMap::new();
    }
    let mut before = world.clone();
    for c in &requests {
        before.requests.remove(&c.name);
        if let Some(p) = c.change.previous::<RequestSpec>() {
            before.requests.insert(c.name.clone(), p.clone());
        }
    }
    let then = Analysis::new(&before, analysis.at);
    let mut out = BTreeMap::new();
    for (key, reservations) in billed {
        let changed = &delta[&key];
        let outlook = then.outlook(&key.0, &key.1);
        let demand = |h: i64| {
            outlook
                .and_then(|o| o.at(h))
                .map_or(0.0, |q| q.p50.max(0.0))
        };
        // What the change moves the demand by: as the judging world's
        // outlook has it (a trim of room the team never used moves nothing;
        // a running request cut moves what it held), where both outlooks
        // reach the hour; else what the requests hold, head less base.
        let after = analysis.outlook(&key.0, &key.1);
        let moved = |h: i64| -> f64 {
            if let (Some(a), Some(b)) = (after.and_then(|o| o.at(h)), outlook.and_then(|o| o.at(h)))
            {
                return a.p50.max(0.0) - b.p50.max(0.0);
            }
            changed
                .iter()
                .filter(|(w, _)| w.start <= h && h < w.end)
                .map(|(_, g)| g)
                .sum()
        };
        if let Some(s) = pool_rise(world, &reservations, at, demand, moved) {
            out.insert(key, s);
        }
    }
    out
}

/// The rise in stranded spend of `reservations` (one pool's) when demand
/// moves by `moved(h)` from `demand(h)`, hour by hour from `at`: demand
/// fills the reservations in force at an hour in proportion to their GPUs.
fn pool_rise(
    world: &Repo,
    reservations: &[&ReservationSpec],
    at: i64,
    demand: impl Fn(i64) -> f64,
    moved: impl Fn(i64) -> f64,
) -> Option<Stranded> {
    struct Held {
        start: i64,
        end: i64,
        gpus: f64,
        price: f64,
        was: f64,
        now: f64,
    }
    let mut held: Vec<Held> = reservations
        .iter()
        .filter_map(|s| {
            let (start, end) = term_hours(&s.term);
            let price = float(prices::reservation(world, s)?.per_gpu_hour);
            Some(Held {
                start: start.max(at),
                end,
                gpus: prices::reservation_gpus(world, s) as f64,
                price,
                was: 0.0,
                now: 0.0,
            })
        })
        .filter(|h| h.end > h.start && h.gpus > 0.0)
        .collect();
    let from = held.iter().map(|h| h.start).min()?;
    let to = held.iter().map(|h| h.end).max()?;
    for h in from..to {
        let reserved: f64 = held
            .iter()
            .filter(|r| r.start <= h && h < r.end)
            .map(|r| r.gpus)
            .sum();
        if reserved <= 0.0 {
            continue;
        }
        let d = demand(h);
        let after = (d + moved(h)).max(0.0);
        let idle_was = (reserved - d).max(0.0) / reserved;
        let idle_now = (reserved - after).max(0.0) / reserved;
        for r in held.iter_mut().filter(|r| r.start <= h && h < r.end) {
            r.was += idle_was * r.gpus * r.price;
            r.now += idle_now * r.gpus * r.price;
        }
    }
    let mut out = Stranded::default();
    for r in &held {
        // Cents, so that rounding does not read as a rise.
        if r.now - r.was < 0.01 {
            continue;
        }
        let remaining = (r.end - r.start) as f64 * r.gpus * r.price;
        out.cost += r.now - r.was;
        out.share = out.share.max(r.now / remaining);
    }
    (out.cost > 0.0).then_some(out)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::disallowed_methods)] // the test writes its repository to a folder
    use super::*;
    use std::path::Path;

    const RUN: &str = "apiVersion: capops.dev/v1alpha1
kind: CapacityRequest
metadata: {name: big-run}
spec:
  team: steady
  cluster: cloud
  pool: a100
  resources: {nvidia.com/gpu: GPUS}
  window: {start: \"2027-01-04T00:00:00Z\", end: \"2027-01-18T00:00:00Z\"}
  workloadClass: training
  justification: the quarterly run
  successMetrics: [it is used]
---
apiVersion: capops.dev/v1alpha1
kind: Reservation
metadata: {name: for-the-run}
spec:
  provider: aws
  type: aws-capacity-block
  region: us-east-2
  instanceType: p4d.24xlarge
  count: 25
  term: {start: \"2027-01-04T00:00:00Z\", end: \"2027-01-18T00:00:00Z\"}
  covers: {cluster: cloud, pool: a100}
";

    /// The policy tests' cost fixture (team `steady` runs 80 A100s around
    /// the clock in cloud/a100) with the run at `gpus` and its reservation.
    fn repo(gpus: u32) -> Repo {
        repo_of(&RUN.replace("GPUS", &gpus.to_string()))
    }

    /// The cost fixture with `docs` added.
    fn repo_of(docs: &str) -> Repo {
        let dir = tempfile::tempdir().unwrap();
        let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("policies/tests/fixture-costs");
        for entry in walk(&fixture) {
            let to = dir.path().join(entry.strip_prefix(&fixture).unwrap());
            std::fs::create_dir_all(to.parent().unwrap()).unwrap();
            std::fs::copy(&entry, to).unwrap();
        }
        std::fs::write(dir.path().join("run.yaml"), docs).unwrap();
        crate::pipeline::validate_dir(dir.path()).unwrap().repo
    }

    fn walk(dir: &Path) -> Vec<std::path::PathBuf> {
        let mut out = Vec::new();
        for e in std::fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                out.extend(walk(&p));
            } else {
                out.push(p);
            }
        }
        out
    }

    fn stranded(from: u32, to: u32) -> Option<Stranded> {
        change(repo(from), repo(to), "a100")
    }

    fn change(base: Repo, head: Repo, pool: &str) -> Option<Stranded> {
        let same = std::collections::HashSet::new();
        let changes = crate::policy::change::diff(&base, &head, &same);
        let world = crate::policy::world::judging(&base, &head, &same);
        let analysis = Analysis::new(&world, "2026-11-22".parse().unwrap());
        released(&world, Some(&base), &analysis, &changes)
            .get(&("cloud".to_string(), pool.to_string()))
            .copied()
    }

    #[test]
    fn a_release_is_measured_by_the_reserved_gpus_it_leaves_idle() {
        // 25 p4d (200 A100s) for 336 hours at 14.75 / 8 = 1.84375 USD a
        // GPU-hour; demand 80 measured plus the run.
        // 128 -> 8: 200 - 88 = 112 idle, 112 x 336 x 1.84375 = 69,384; 56%.
        let s = stranded(128, 8).unwrap();
        assert!((s.cost - 69_384.0).abs() < 1.0, "{s:?}");
        assert!((s.share - 0.56).abs() < 0.005, "{s:?}");
        // 128 -> 104: 16 idle, 16 x 336 x 1.84375 = 9,912; 8%.
        let s = stranded(128, 104).unwrap();
        assert!((s.cost - 9_912.0).abs() < 1.0, "{s:?}");
        assert!((s.share - 0.08).abs() < 0.005, "{s:?}");
        // 128 -> 150: nothing newly idle (the run grows), nothing listed.
        assert_eq!(stranded(128, 150), None);
        // 200 -> 150: still 230 demanded of 200 reserved, nothing stranded.
        assert_eq!(stranded(200, 150), None);
    }

    const PIPE: &str = "apiVersion: capops.dev/v1alpha1
kind: CapacityRequest
metadata: {name: pipe}
spec:
  team: pipeline
  cluster: cloud
  pool: a100-pipeline
  resources: {nvidia.com/gpu: 200}
  window: {start: \"2026-09-01T00:00:00Z\", end: \"2027-06-01T00:00:00Z\"}
  workloadClass: training
  justification: the data pipeline's training
  successMetrics: [it is used]
";

    const BLOCK: &str = "apiVersion: capops.dev/v1alpha1
kind: Reservation
metadata: {name: pipe-block}
spec:
  provider: aws
  type: aws-capacity-block
  region: us-east-2
  instanceType: p4d.24xlarge
  count: 25
  term: {start: \"2026-12-01T00:00:00Z\", end: \"2027-01-01T00:00:00Z\"}
  covers: {cluster: cloud, pool: POOL}
";

    #[test]
    fn a_running_request_removed_takes_its_gpus_away_from_now_on() {
        // Team pipeline has held all 200 A100s of its pool, measured, under
        // a request running to June; a capacity block of the 200 for
        // December (744 hours at 1.84375 USD a GPU-hour) is all used.
        // Removing the running request strands all of it:
        // 200 x 744 x 1.84375 = 274,350 USD, 100% of the term.
        let block = BLOCK.replace("POOL", "a100-pipeline");
        let base = repo_of(&format!("{PIPE}---\n{block}"));
        let s = change(base, repo_of(&block), "a100-pipeline").unwrap();
        assert!((s.cost - 274_350.0).abs() < 1.0, "{s:?}");
        assert!((s.share - 1.0).abs() < 0.001, "{s:?}");
        // Re-pointing the block at another pool in the same change does not
        // stop its bill: it is locked (bought eight weeks ahead), so it is
        // measured as the base has it.
        let base = repo_of(&format!("{PIPE}---\n{block}"));
        let moved = BLOCK.replace("POOL", "a100");
        let s = change(base, repo_of(&moved), "a100-pipeline").unwrap();
        assert!((s.cost - 274_350.0).abs() < 1.0, "{s:?}");
        // Adding demand releases nothing.
        let base = repo_of(&format!("{PIPE}---\n{block}"));
        let more = PIPE
            .replace("name: pipe}", "name: pipe-2}")
            .replace("200}", "8}");
        let head = repo_of(&format!("{PIPE}---\n{more}---\n{block}"));
        assert_eq!(change(base, head, "a100-pipeline"), None);
    }

    /// The judging world's pool demand moves with a change to a running
    /// request by its difference from the base: shrunk or removed, its GPUs
    /// leave from the first forecast hour; renamed (removed and added), it
    /// changes nothing.
    #[test]
    fn the_judging_worlds_demand_follows_a_running_request_as_the_change_leaves_it() {
        let at: Timestamp = "2026-11-22".parse().unwrap();
        let p50 = |base: &Repo, head: &Repo| {
            let world = crate::policy::world::judging(base, head, &Default::default());
            let a = Analysis::new(&world, at);
            let o = a.outlook("cloud", "a100-pipeline").unwrap();
            o.at(at.hour_index() + 24 * 20).unwrap().p50
        };
        let base = repo_of(PIPE);
        let same = p50(&base, &repo_of(PIPE));
        assert!((same - 200.0).abs() < 1.0, "{same}");
        let shrunk = p50(&base, &repo_of(&PIPE.replace("200}", "40}")));
        assert!((shrunk - 40.0).abs() < 1.0, "{shrunk}");
        let grown = p50(&base, &repo_of(&PIPE.replace("200}", "240}")));
        assert!((grown - 240.0).abs() < 1.0, "{grown}");
        let renamed = p50(
            &base,
            &repo_of(&PIPE.replace("name: pipe}", "name: pipe-renamed}")),
        );
        assert!((renamed - same).abs() < 1e-9, "{renamed} vs {same}");
        let removed = p50(&base, &repo_of(""));
        assert!(removed < 1.0, "{removed}");
    }
}
