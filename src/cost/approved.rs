//! The approved future of a pool: what its requests add to, and take away
//! from, the measured demand after the measurements end.
//!
//! A pool's forecast extends its measured demand, and the measured demand
//! already holds the requests that were running when the measurements ended.
//! So, from the first forecast hour `e`:
//!
//! - a request that starts at or after `e` adds its GPUs over its window;
//! - a request running at `e` (started before it) is in the measured level:
//!   it adds nothing, and when its window ends it takes its GPUs away, but
//!   never more, for one team, than that team held when the measurements
//!   ended (the mean of its measured values in the 24 hours before): a request whose GPUs
//!   never showed up in the measurements cannot take away other work;
//! - a team with requests in the pool but no usage history there is not in
//!   the measured level at all: its requests count over their whole windows
//!   from `e` on;
//! - open-ended requests never end, so they change nothing after `e`.
//!
//! A pool without any usage history is judged on its requests alone: its
//! demand at an hour is what its requests hold then ([`held`]).

use crate::capacity::{self, Hours, Timeline};
use crate::model::*;

/// One request of a pool, sized.
#[derive(Clone, Debug, PartialEq)]
pub struct PoolRequest {
    pub name: String,
    pub team: String,
    pub hours: Hours,
    /// GPU-equivalents.
    pub gpus: f64,
    pub preemptible: bool,
    pub class: WorkloadClass,
}

/// The requests of a pool (`of_pool`: those that name it), sized against it.
pub fn requests(
    of_pool: &[&Document<RequestSpec>],
    cluster: &Document<ClusterSpec>,
    pool: &NodePool,
) -> Vec<PoolRequest> {
    of_pool
        .iter()
        .map(|r| PoolRequest {
            name: r.name().to_string(),
            team: r.spec.team.value.clone(),
            hours: Hours::of_request(&r.spec),
            gpus: capacity::size(&r.spec, Some((pool, &cluster.spec))).gpus,
            preemptible: r.spec.preemptible.as_ref().is_some_and(|p| p.value),
            class: r.spec.workload_class.value,
        })
        .collect()
}

/// What the approved requests change after the measurements end.
#[derive(Debug, Default)]
pub struct Approved {
    /// Requests not in the measured level, over their windows from `e` on.
    adds: Timeline,
    /// Per team: GPUs of its running requests that have ended by an hour,
    /// and the most that may be taken away (what it held at `e`).
    removals: Vec<(Timeline, f64)>,
}

impl Approved {
    /// The change for a forecast that starts at hour `e`. `level(team)` is
    /// what the team held when the measurements ended, `None` when it has no
    /// usage history in the pool.
    pub fn new<'a>(
        requests: impl IntoIterator<Item = &'a PoolRequest>,
        e: i64,
        level: impl Fn(&str) -> Option<f64>,
    ) -> Approved {
        let mut adds = Vec::new();
        let mut ends: std::collections::BTreeMap<&str, Vec<(Hours, f64)>> = Default::default();
        for r in requests {
            let h = r.hours;
            if h.end <= e {
                continue;
            }
            if h.start >= e || level(&r.team).is_none() {
                adds.push((
                    Hours {
                        start: h.start.max(e),
                        end: h.end,
                    },
                    r.gpus,
                ));
            } else if h.end != i64::MAX {
                ends.entry(&r.team).or_default().push((
                    Hours {
                        start: h.end,
                        end: i64::MAX,
                    },
                    r.gpus,
                ));
            }
        }
        let removals = ends
            .into_iter()
            .map(|(team, v)| (Timeline::build(v), level(team).unwrap_or(0.0).max(0.0)))
            .collect();
        Approved {
            adds: Timeline::build(adds),
            removals,
        }
    }

    /// GPUs added (positive) or taken away (negative) at `hour`.
    pub fn at(&self, hour: i64) -> f64 {
        let removed: f64 = self
            .removals
            .iter()
            .map(|(t, cap)| t.at(hour).min(*cap))
            .sum();
        self.adds.at(hour) - removed
    }
}

/// What the requests hold at each hour: the demand of a pool without history.
pub fn held<'a>(requests: impl IntoIterator<Item = &'a PoolRequest>) -> Timeline {
    Timeline::build(requests.into_iter().map(|r| (r.hours, r.gpus)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(team: &str, start: i64, end: i64, gpus: f64) -> PoolRequest {
        PoolRequest {
            name: format!("{team}-{start}"),
            team: team.into(),
            hours: Hours { start, end },
            gpus,
            preemptible: false,
            class: WorkloadClass::Training,
        }
    }

    #[test]
    fn new_requests_add_running_ones_end_and_none_counts_twice() {
        // Measurements end at hour 100 (e = 100). Team a held 40 GPUs then.
        let rs = [
            // Running since hour 50, ends at 120: in the measured level; -16 from 120.
            req("a", 50, 120, 16.0),
            // Merged, starts at 130 for 20 hours: +256 over [130, 150).
            req("a", 130, 150, 256.0),
            // Ended before the forecast: changes nothing.
            req("a", 10, 90, 8.0),
            // Open-ended and running: already measured, never ends.
            req("a", 0, i64::MAX, 4.0),
            // Team b has no usage in the pool: its running request counts from e.
            req("b", 80, 110, 5.0),
        ];
        let level = |t: &str| (t == "a").then_some(40.0);
        let ap = Approved::new(&rs, 100, level);
        assert_eq!(ap.at(100), 5.0); // b's request only
        assert_eq!(ap.at(110), 0.0); // b's request has ended
        assert_eq!(ap.at(120), -16.0); // a's running request has ended
        assert_eq!(ap.at(135), 256.0 - 16.0);
        assert_eq!(ap.at(150), -16.0);
    }

    #[test]
    fn an_ending_request_never_takes_away_more_than_its_team_held() {
        // Team a asked for 64 GPUs but held only 10 when the measurements ended.
        let rs = [req("a", 0, 200, 64.0)];
        let ap = Approved::new(&rs, 100, |_| Some(10.0));
        assert_eq!(ap.at(150), 0.0);
        assert_eq!(ap.at(200), -10.0);
    }

    #[test]
    fn a_pool_without_history_is_what_its_requests_hold() {
        let rs = [req("a", 0, 10, 8.0), req("b", 5, 20, 4.0)];
        let t = held(&rs);
        assert_eq!(
            (t.at(0), t.at(7), t.at(15), t.at(20)),
            (8.0, 12.0, 4.0, 0.0)
        );
    }
}
