//! Reservations a release strands. A reservation is judged on the demand of
//! the pool it covers, and that demand includes the approved requests. A
//! request that made a reservation worth buying can later be removed,
//! shrunk, shortened or moved to another pool by its team alone; the
//! reservation is still billed, and what the request no longer uses of it
//! is stranded. So a change to requests is also measured by what it does to
//! the reservations in force on the pools it touches: the demand with the
//! base's version of the changed requests against the demand with the
//! head's, everything else (usage history, the head's reservations) the
//! same. What the stranded spend grows by is a fact of the changed requests
//! of that pool (`change.reservation_stranded_cost`), with the largest
//! stranded share it leaves (`change.reservation_stranded_share`); the
//! default policy asks finance to approve a release that leaves a
//! reservation beyond the Config's stranded-spend threshold.

use super::change::{ChangeKind, Changed};
use crate::cost::Analysis;
use crate::model::*;
use std::collections::{BTreeMap, BTreeSet};

/// What a change does to the reservations covering one pool.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Stranded {
    /// Expected stranded spend (P50) added over the reservations in force on
    /// the pool: the sum of each one's rise (a reservation the change leaves
    /// better used does not offset another).
    pub cost: f64,
    /// The largest stranded share, after the change, of those whose
    /// stranded spend rose (0 when none rose).
    pub share: f64,
}

/// (cluster, pool) -> what the change's requests do to the reservations in
/// force there (from hour `at` on), judged in `world` (the head's requests
/// and reservations) against the same world with the base's versions of
/// the changed requests. Only pools with a rise are listed.
pub fn released(
    world: &Repo,
    analysis: &Analysis<'_>,
    changes: &[Changed],
) -> BTreeMap<(String, String), Stranded> {
    let at = analysis.at.hour_index();
    let requests: Vec<&Changed> = changes
        .iter()
        .filter(|c| c.kind == Kind::CapacityRequest && c.change.kind != ChangeKind::Unchanged)
        .collect();
    // The pools whose demand the changed requests touch, either version.
    let mut pools: BTreeSet<(&str, &str)> = BTreeSet::new();
    for c in &requests {
        if let Some(p) = c.change.previous::<RequestSpec>() {
            pools.insert((&p.spec.cluster.value, &p.spec.pool.value));
        }
        if let Some(d) = world.requests.get(&c.name) {
            pools.insert((&d.spec.cluster.value, &d.spec.pool.value));
        }
    }
    let covering: Vec<&Document<ReservationSpec>> = world
        .reservations
        .values()
        .filter(|r| {
            let covers = (
                r.spec.covers.cluster.value.as_str(),
                r.spec.covers.pool.value.as_str(),
            );
            pools.contains(&covers) && crate::cost::reservation::term_hours(&r.spec.term).1 > at
        })
        .collect();
    if covering.is_empty() {
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
    let mut out: BTreeMap<(String, String), Stranded> = BTreeMap::new();
    for r in covering {
        let stranded = |a: &Analysis<'_>| {
            a.reservation(r.name())
                .map(|o| (crate::cost::prices::float(o.stranded_p50), o.stranded_share))
        };
        let (Some((now, share)), Some((was, _))) = (stranded(analysis), stranded(&then)) else {
            continue;
        };
        // Cents, so that rounding in the forecast does not read as a rise.
        if now - was < 0.01 {
            continue;
        }
        let slot = out
            .entry((
                r.spec.covers.cluster.value.clone(),
                r.spec.covers.pool.value.clone(),
            ))
            .or_default();
        slot.cost += now - was;
        slot.share = slot.share.max(share);
    }
    out
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
        let dir = tempfile::tempdir().unwrap();
        let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("policies/tests/fixture-costs");
        for entry in walk(&fixture) {
            let to = dir.path().join(entry.strip_prefix(&fixture).unwrap());
            std::fs::create_dir_all(to.parent().unwrap()).unwrap();
            std::fs::copy(&entry, to).unwrap();
        }
        std::fs::write(
            dir.path().join("run.yaml"),
            RUN.replace("GPUS", &gpus.to_string()),
        )
        .unwrap();
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
        let (base, head) = (repo(from), repo(to));
        let same = std::collections::HashSet::new();
        let changes = crate::policy::change::diff(&base, &head, &same);
        let world = crate::policy::world::judging(&base, &head, &same);
        let analysis = Analysis::new(&world, "2026-11-22".parse().unwrap());
        released(&world, &analysis, &changes)
            .get(&("cloud".to_string(), "a100".to_string()))
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
}
