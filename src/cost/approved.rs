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
//!   never more, for one team, than that team held at the same hour of the
//!   week in the four weeks before `e` (a team that works weekdays from 8 to
//!   20 gives back its daytime GPUs, though the measurements ended on a
//!   Sunday night): a request whose GPUs never showed up in the measurements
//!   cannot take away other work;
//! - a request that started in the 72 hours before `e` is in the measured
//!   level only as far as its team's allocation rose after its start (the
//!   mean from its start to `e` over the mean of the 24 hours before it):
//!   the rest, not yet picked up by the measurements, counts from `e` like
//!   a request starting then;
//! - a team with requests in the pool but no usage history there is not in
//!   the measured level at all: its requests count over their whole windows
//!   from `e` on;
//! - open-ended requests never end, so they change nothing after `e`;
//! - in a change being judged, a running request the change edits or
//!   removes is in the measured level as the base has it: what it holds
//!   beyond that counts from `e`, what the change cut leaves at `e`.
//!
//! A pool without any usage history is judged on its requests alone: its
//! demand at an hour is what its requests hold then ([`held`]).

use crate::capacity::{self, Hours, Timeline};
use crate::forecast::demand::Hourly;
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
    /// In a change being judged, the base revision's window and size of
    /// this request where the change edits it: the measurements hold that
    /// version, not this one. `None`: unchanged (or no base).
    pub base: Option<(Hours, f64)>,
}

impl PoolRequest {
    /// A known, bounded burst the commitment mix may buy capacity blocks
    /// for: not preemptible, with a window no longer than a capacity block
    /// (AWS: 182 days), starting at `at` or later.
    pub fn is_burst(&self, at: i64) -> bool {
        !self.preemptible
            && !self.hours.is_open()
            && self.hours.start >= at
            && self.hours.len() <= super::mix::MAX_BLOCK_HOURS
    }
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
            base: None,
        })
        .collect()
}

/// Marks the requests of a pool that a change edits with their base
/// versions (`base_of_pool`: the base's documents of the pool; `added`: the
/// requests the change adds, whose base version holds nothing), and
/// returns the base's requests of the pool that the change removes (or moves
/// out of it), as requests of no GPUs whose base versions end at the first
/// forecast hour: what the measurements hold of them goes away.
pub fn with_base<'a>(
    requests: &mut [PoolRequest],
    base_of_pool: impl IntoIterator<Item = &'a Document<RequestSpec>>,
    added: Option<&std::collections::BTreeSet<String>>,
    cluster: &Document<ClusterSpec>,
    pool: &NodePool,
) -> Vec<PoolRequest> {
    // A request the change adds is in no measurement: its base version
    // holds nothing (it counts from the first forecast hour even when its
    // window began before).
    for r in requests.iter_mut() {
        if added.is_some_and(|a| a.contains(&r.name)) {
            r.base = Some((r.hours, 0.0));
        }
    }
    let mut gone = Vec::new();
    for b in base_of_pool {
        let sized = (
            Hours::of_request(&b.spec),
            capacity::size(&b.spec, Some((pool, &cluster.spec))).gpus,
        );
        match requests.iter_mut().find(|r| r.name == b.name()) {
            Some(r) if (r.hours, r.gpus) != sized || r.team != b.spec.team.value => {
                if r.team == b.spec.team.value {
                    r.base = Some(sized);
                } else {
                    // Given to another team: the old team's part goes away.
                    gone.push(gone_request(b, sized));
                }
            }
            Some(_) => {}
            None => gone.push(gone_request(b, sized)),
        }
    }
    gone
}

fn gone_request(b: &Document<RequestSpec>, sized: (Hours, f64)) -> PoolRequest {
    PoolRequest {
        name: b.name().to_string(),
        team: b.spec.team.value.clone(),
        hours: sized.0,
        gpus: 0.0,
        preemptible: b.spec.preemptible.as_ref().is_some_and(|p| p.value),
        class: b.spec.workload_class.value,
        base: Some(sized),
    }
}

/// How long before the forecast a request may have started and still not
/// be in the measurements (usage lags an allocation by hours, and a job can
/// take a day to scale up).
pub const RECENT_START_HOURS: i64 = 72;

/// Weeks of a team's history its hour-of-week profile is read from.
const PROFILE_WEEKS: i64 = 4;

/// What a team held in a pool, hour by hour, up to the end of the
/// measurements (its series summed; gaps are gaps).
#[derive(Clone, Debug, Default)]
pub struct Held {
    start: i64,
    values: Vec<Option<f64>>,
}

impl Held {
    /// The hours of `series` from `RECENT_START_HOURS` and four weeks
    /// before `e` to `e`, summed (an hour none of them has is a gap).
    pub fn of<'a>(series: impl IntoIterator<Item = &'a Hourly>, e: i64) -> Held {
        let start = e - (PROFILE_WEEKS * 168).max(RECENT_START_HOURS + 24);
        let mut values: Vec<Option<f64>> = vec![None; (e - start) as usize];
        for s in series {
            for (i, slot) in values.iter_mut().enumerate() {
                if let Some(v) = s.get(start + i as i64) {
                    *slot = Some(slot.unwrap_or(0.0) + v);
                }
            }
        }
        Held { start, values }
    }

    /// The mean of the hours in `[from, to)` that have a value.
    fn mean(&self, from: i64, to: i64) -> Option<f64> {
        let (mut sum, mut n) = (0.0, 0usize);
        for h in from.max(self.start)..to.min(self.start + self.values.len() as i64) {
            if let Some(v) = self.values[(h - self.start) as usize] {
                sum += v;
                n += 1;
            }
        }
        (n > 0).then(|| sum / n as f64)
    }

    /// What the team held at each hour of the week (by `hour % 168`) over
    /// the four weeks before `e`, the mean at that hour; where no week has
    /// that hour, the mean of all of them (0 without any).
    fn weekly(&self, e: i64) -> Vec<f64> {
        let mut sum = vec![0.0; 168];
        let mut n = vec![0usize; 168];
        for h in (e - PROFILE_WEEKS * 168).max(self.start)..e {
            if let Some(Some(v)) = self.values.get((h - self.start) as usize) {
                let k = h.rem_euclid(168) as usize;
                sum[k] += v;
                n[k] += 1;
            }
        }
        let all = self.mean(e - PROFILE_WEEKS * 168, e).unwrap_or(0.0);
        (0..168)
            .map(|k| if n[k] > 0 { sum[k] / n[k] as f64 } else { all }.max(0.0))
            .collect()
    }
}

/// What the approved requests change after the measurements end.
#[derive(Debug, Default)]
pub struct Approved {
    /// Requests not in the measured level, over their windows from `e` on.
    adds: Timeline,
    /// Per team: GPUs of its running requests that have ended by an hour,
    /// and the most that may be taken away at each hour of the week (what
    /// it held then, [`Held::weekly`], and what requests started lately
    /// added to it).
    removals: Vec<(Timeline, Vec<f64>)>,
}

impl Approved {
    /// The change for a forecast that starts at hour `e`. `held(team)` is
    /// what the team held before the measurements ended, `None` when it has
    /// no usage history in the pool.
    pub fn new<'a>(
        requests: impl IntoIterator<Item = &'a PoolRequest>,
        e: i64,
        held: impl Fn(&str) -> Option<Held>,
    ) -> Approved {
        let mut adds = Vec::new();
        let mut ends: std::collections::BTreeMap<&str, Vec<(Hours, f64)>> = Default::default();
        // Requests started lately claim the team's rise in the order they
        // started: two that start together share one rise, not count it twice.
        let mut requests: Vec<&PoolRequest> = requests.into_iter().collect();
        requests.sort_by_key(|r| r.base.map_or(r.hours.start, |b| b.0.start));
        let mut claimed: std::collections::BTreeMap<&str, f64> = Default::default();
        let mut teams: std::collections::BTreeMap<&str, Option<Held>> = Default::default();
        // Per team: what requests started lately added to its level, which
        // the weeks before hardly show.
        let mut risen: std::collections::BTreeMap<&str, f64> = Default::default();
        for r in requests {
            let h = r.hours;
            // The version the measurements hold: the base's, where the
            // change edits the request.
            let (mh, mg) = r.base.unwrap_or((h, r.gpus));
            if h.end <= e && mh.end <= e {
                continue;
            }
            let team = teams.entry(&r.team).or_insert_with(|| held(&r.team));
            // What the measurements hold of it at `e`: nothing unless it
            // was running then and its team has history in the pool.
            let level = match team.as_ref() {
                Some(team) if mh.start < e && mh.end > e => {
                    if mh.start >= e - RECENT_START_HOURS {
                        // Started lately: measured only as far as the team
                        // rose since (its level after the start over its
                        // level before: the day before, else the week
                        // before; with neither, not yet measured), less what
                        // requests that started earlier claimed of that rise.
                        let after = team.mean(mh.start, e);
                        let before = team
                            .mean(mh.start - 24, mh.start)
                            .or_else(|| team.mean(mh.start - 168, mh.start));
                        let taken = claimed.entry(&r.team).or_default();
                        let m = match (after, before) {
                            (Some(a), Some(b)) => (a - b - *taken).clamp(0.0, mg),
                            _ => 0.0,
                        };
                        *taken += m;
                        *risen.entry(&r.team).or_default() += m;
                        m
                    } else {
                        mg
                    }
                }
                _ => 0.0,
            };
            if h.start < e && h.end > e {
                // Running: the measured part it keeps stays in the level and
                // leaves when it ends; what it holds beyond that counts from
                // `e`; what the change cut from the measured part leaves now.
                let keep = level.min(r.gpus);
                if r.gpus - keep > 1e-9 {
                    adds.push((
                        Hours {
                            start: e,
                            end: h.end,
                        },
                        r.gpus - keep,
                    ));
                }
                if level - keep > 1e-9 {
                    ends.entry(&r.team).or_default().push((
                        Hours {
                            start: e,
                            end: i64::MAX,
                        },
                        level - keep,
                    ));
                }
                if h.end != i64::MAX && keep > 0.0 {
                    ends.entry(&r.team).or_default().push((
                        Hours {
                            start: h.end,
                            end: i64::MAX,
                        },
                        keep,
                    ));
                }
            } else {
                // Not running at `e` as it stands: it adds its window; what
                // the measurements held of its base version leaves now.
                if h.end > e && r.gpus > 0.0 {
                    adds.push((
                        Hours {
                            start: h.start.max(e),
                            end: h.end,
                        },
                        r.gpus,
                    ));
                }
                if level > 1e-9 {
                    ends.entry(&r.team).or_default().push((
                        Hours {
                            start: e,
                            end: i64::MAX,
                        },
                        level,
                    ));
                }
            }
        }
        let removals = ends
            .into_iter()
            .map(|(team, v)| {
                let rise = risen.get(team).copied().unwrap_or(0.0);
                let weekly = teams
                    .get(team)
                    .and_then(|t| t.as_ref())
                    .map_or_else(|| vec![0.0; 168], |t| t.weekly(e))
                    .into_iter()
                    .map(|w| w + rise)
                    .collect();
                (Timeline::build(v), weekly)
            })
            .collect();
        Approved {
            adds: Timeline::build(adds),
            removals,
        }
    }

    /// GPUs added (positive) or taken away (negative) at `hour`.
    pub fn at(&self, hour: i64) -> f64 {
        let k = hour.rem_euclid(168) as usize;
        let removed: f64 = self
            .removals
            .iter()
            .map(|(t, weekly)| t.at(hour).min(weekly[k]))
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
            base: None,
        }
    }

    /// A team that held `gpus` every hour up to `e`.
    fn flat(gpus: f64, e: i64) -> Held {
        Held::of([&Hourly::new(0, (0..e).map(|_| Some(gpus)))], e)
    }

    #[test]
    fn new_requests_add_running_ones_end_and_none_counts_twice() {
        // Measurements end at hour 1000 (e = 1000). Team a held 40 GPUs then.
        let e = 1000;
        let rs = [
            // Running since hour 50, ends at 1020: in the measured level; -16 from 1020.
            req("a", 50, 1020, 16.0),
            // Merged, starts at 1030 for 20 hours: +256 over [1030, 1050).
            req("a", 1030, 1050, 256.0),
            // Ended before the forecast: changes nothing.
            req("a", 10, 990, 8.0),
            // Open-ended and running: already measured, never ends.
            req("a", 0, i64::MAX, 4.0),
            // Team b has no usage in the pool: its running request counts from e.
            req("b", 80, 1010, 5.0),
        ];
        let held = |t: &str| (t == "a").then(|| flat(40.0, e));
        let ap = Approved::new(&rs, e, held);
        assert_eq!(ap.at(1000), 5.0); // b's request only
        assert_eq!(ap.at(1010), 0.0); // b's request has ended
        assert_eq!(ap.at(1020), -16.0); // a's running request has ended
        assert_eq!(ap.at(1035), 256.0 - 16.0);
        assert_eq!(ap.at(1050), -16.0);
    }

    #[test]
    fn a_change_to_a_running_request_moves_the_measured_level_by_its_difference() {
        // Measurements end at 1000; team a held 64 GPUs, its running request
        // in the base is 64 to hour 2000.
        let e = 1000;
        let held = |_: &str| Some(flat(64.0, e));
        let base = Some((
            Hours {
                start: 0,
                end: 2000,
            },
            64.0,
        ));
        // Grown to 96: 32 more from e, all 96 gone at its end.
        let grown = [PoolRequest {
            base,
            ..req("a", 0, 2000, 96.0)
        }];
        let ap = Approved::new(&grown, e, held);
        assert_eq!(ap.at(1000), 32.0);
        assert_eq!(ap.at(1999), 32.0);
        assert_eq!(ap.at(2000), -64.0);
        // Shrunk to 8: 56 leave at e, the other 8 at its end.
        let shrunk = [PoolRequest {
            base,
            ..req("a", 0, 2000, 8.0)
        }];
        let ap = Approved::new(&shrunk, e, held);
        assert_eq!(ap.at(1000), -56.0);
        assert_eq!(ap.at(2000), -64.0);
        // Shortened to end at 1500: the same 64 leave then.
        let shortened = [PoolRequest {
            base,
            ..req("a", 0, 1500, 64.0)
        }];
        let ap = Approved::new(&shortened, e, held);
        assert_eq!(ap.at(1499), 0.0);
        assert_eq!(ap.at(1500), -64.0);
        // Removed (a request of no GPUs with its base version): all 64 leave at e.
        let removed = [PoolRequest {
            base,
            ..req("a", 0, 2000, 0.0)
        }];
        let ap = Approved::new(&removed, e, held);
        assert_eq!(ap.at(1000), -64.0);
        // Postponed to start at 1200: the measured 64 leave at e and come
        // back over its new window.
        let postponed = [PoolRequest {
            base,
            ..req("a", 1200, 2000, 64.0)
        }];
        let ap = Approved::new(&postponed, e, held);
        assert_eq!(ap.at(1100), -64.0);
        assert_eq!(ap.at(1200), 0.0);
        assert_eq!(ap.at(2000), -64.0);
        // A shrink never takes away more than the team held.
        let ap = Approved::new(&shrunk, e, |_| Some(flat(20.0, e)));
        assert_eq!(ap.at(1000), -20.0);
    }

    #[test]
    fn an_ending_request_never_takes_away_more_than_its_team_held() {
        // Team a asked for 64 GPUs but held only 10 before the measurements ended.
        let rs = [req("a", 0, 2000, 64.0)];
        let ap = Approved::new(&rs, 1000, |_| Some(flat(10.0, 1000)));
        assert_eq!(ap.at(1500), 0.0);
        assert_eq!(ap.at(2000), -10.0);
    }

    #[test]
    fn a_weekday_team_gives_back_its_daytime_gpus_though_the_measurements_end_at_night() {
        // Team wk holds 40 GPUs from 8:00 to 20:00 on weekdays and nothing
        // otherwise; the measurements end on a Sunday at midnight, when it
        // held 0 for two days. Its only request ends a week later: from then
        // on it takes away 40 at weekday noons and nothing at night. (The
        // mean of the last 24 hours, 0, took away nothing ever.)
        // Hour 0 of the epoch is a Thursday at 00:00; hour 96 a Monday.
        let monday = 96;
        let e = monday + 5 * 168;
        let held_at = |h: i64| {
            let day = (h - monday).rem_euclid(168) / 24;
            let hour = h.rem_euclid(24);
            if day < 5 && (8..20).contains(&hour) {
                40.0
            } else {
                0.0
            }
        };
        let series = Hourly::new(0, (0..e).map(|h| Some(held_at(h))));
        let rs = [req("wk", 0, e + 168, 40.0)];
        let ap = Approved::new(&rs, e, |_| Some(Held::of([&series], e)));
        // Before the request ends: nothing changes.
        assert_eq!(ap.at(e + 12), 0.0);
        // After: the Monday after at noon, and at 3:00.
        let next_monday = e + 168;
        assert_eq!(ap.at(next_monday + 12), -40.0);
        assert_eq!(ap.at(next_monday + 3), 0.0);
        assert_eq!(ap.at(next_monday + 5 * 24 + 12), 0.0, "a Saturday");
    }

    #[test]
    fn a_request_started_just_before_the_measurements_ended_counts_what_they_missed() {
        // Team a held 158 GPUs; a 256-GPU request started two hours before
        // the end, and the measurements have not picked it up: it adds its
        // 256 from e and, when it ends, takes them away again.
        let e = 1000;
        let series = Hourly::new(0, (0..e).map(|_| Some(158.0)));
        let rs = [req("a", e - 2, e + 100, 256.0)];
        let ap = Approved::new(&rs, e, |_| Some(Held::of([&series], e)));
        assert_eq!(ap.at(e), 256.0);
        assert_eq!(ap.at(e + 100), 0.0);
        // Picked up (the team rose to 414 after the start): measured, so it
        // adds nothing and gives its 256 back at its end.
        let series = Hourly::new(
            0,
            (0..e).map(|h| Some(if h >= e - 2 { 414.0 } else { 158.0 })),
        );
        let ap = Approved::new(&rs, e, |_| Some(Held::of([&series], e)));
        assert_eq!(ap.at(e), 0.0);
        assert_eq!(ap.at(e + 100), -256.0);
        // Half picked up: half each way.
        let series = Hourly::new(
            0,
            (0..e).map(|h| Some(if h >= e - 2 { 286.0 } else { 158.0 })),
        );
        let ap = Approved::new(&rs, e, |_| Some(Held::of([&series], e)));
        assert_eq!(ap.at(e), 128.0);
        // Two 100-GPU requests starting together, and the team rose by 100:
        // one rise, shared, so 100 is still to come.
        let series = Hourly::new(
            0,
            (0..e).map(|h| Some(if h >= e - 2 { 258.0 } else { 158.0 })),
        );
        let rs = [req("a", e - 2, e + 100, 100.0), req("b", 0, 1, 0.0), {
            let mut r = req("a", e - 2, e + 100, 100.0);
            r.name = "a-second".into();
            r
        }];
        let ap = Approved::new(&rs, e, |_| Some(Held::of([&series], e)));
        assert_eq!(ap.at(e), 100.0);
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
