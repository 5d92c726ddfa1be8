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
//! - in a change being judged, the measurements hold the base's versions of
//!   the requests it touches; the change moves each team's demand by the
//!   difference: what its changed requests hold beyond the base's counts in
//!   full, what they hold less takes away only the demand the team would
//!   have beyond what all its requests still allow.
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

/// Marks the requests of a pool with their base versions where a change
/// edits them (`base`: the base's requests of the files the change touched,
/// by name; `added`: the names the change adds), and returns the base's
/// requests of the pool (`base_of_pool`) that the change removes, moves out
/// of it or hands to another team, as requests of no GPUs with their base
/// versions. A request new to the pool or to its team (added, moved in,
/// handed over) has a base version of nothing.
pub fn with_base<'a>(
    requests: &mut [PoolRequest],
    base_of_pool: impl IntoIterator<Item = &'a Document<RequestSpec>>,
    base: &std::collections::BTreeMap<String, Document<RequestSpec>>,
    added: &std::collections::BTreeSet<String>,
    cluster: &Document<ClusterSpec>,
    pool: &NodePool,
) -> Vec<PoolRequest> {
    let size = |b: &Document<RequestSpec>| {
        (
            Hours::of_request(&b.spec),
            capacity::size(&b.spec, Some((pool, &cluster.spec))).gpus,
        )
    };
    let here = |b: &Document<RequestSpec>| {
        b.spec.cluster.value == cluster.name() && b.spec.pool.value == pool.name.value.as_str()
    };
    for r in requests.iter_mut() {
        r.base = match base.get(&r.name) {
            // In a file the change did not touch: as the base has it.
            None if !added.contains(&r.name) => None,
            None => Some((r.hours, 0.0)),
            Some(b) if here(b) && b.spec.team.value == r.team => {
                let sized = size(b);
                (sized != (r.hours, r.gpus)).then_some(sized)
            }
            // Moved here from another pool, or handed to this team.
            Some(_) => Some((r.hours, 0.0)),
        };
    }
    // By name, once (a pool of 100,000 requests is not searched for each).
    let teams: std::collections::HashMap<&str, &str> = requests
        .iter()
        .map(|r| (r.name.as_str(), r.team.as_str()))
        .collect();
    let mut gone = Vec::new();
    for b in base_of_pool {
        let stays = teams.get(b.name()).is_some_and(|t| *t == b.spec.team.value);
        if !stays {
            gone.push(gone_request(b, size(b)));
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
    teams: Vec<TeamChange>,
}

/// One team's part of [`Approved`].
#[derive(Debug, Default)]
struct TeamChange {
    /// Its requests not in the measured level (base versions), over their
    /// windows from `e` on.
    adds: Timeline,
    /// GPUs of its running requests (base versions) that have ended by an
    /// hour.
    ends: Timeline,
    /// What it held at each hour of the week ([`Held::weekly`]) plus what
    /// requests started lately added to it: the most its ends take away,
    /// and its measured level. `None`: no usage history in the pool.
    weekly: Option<Vec<f64>>,
    /// In a change being judged: its changed requests as the base has them
    /// and as the change leaves them, and all its requests as the change
    /// leaves them.
    base_changed: Timeline,
    head_changed: Timeline,
    head_all: Timeline,
}

impl TeamChange {
    fn at(&self, hour: i64) -> f64 {
        let k = hour.rem_euclid(168) as usize;
        let level = self.weekly.as_ref().map_or(0.0, |w| w[k]);
        let removed = if self.weekly.is_some() {
            self.ends.at(hour).min(level)
        } else {
            0.0
        };
        let adjust = self.adds.at(hour) - removed;
        // The change: what its requests hold beyond the base's adds in
        // full; what they hold less takes away only the demand the team
        // would have beyond what its requests still allow (a team using 16
        // of a 32-GPU request trimmed to 24 gives up nothing; a request
        // renamed or postponed comes back at the level it was measured at).
        let (b, h) = (self.base_changed.at(hour), self.head_changed.at(hour));
        let demand = level + adjust;
        let grow = (h - b).max(0.0);
        let shrink = (b - h).max(0.0);
        adjust + grow - shrink.min((demand - self.head_all.at(hour)).max(0.0))
    }
}

impl Approved {
    /// The change for a forecast that starts at hour `e`. `held(team)` is
    /// what the team held before the measurements ended, `None` when it has
    /// no usage history in the pool. Requests with a base version
    /// ([`PoolRequest::base`]) are measured as the base has them, and the
    /// change moves the team's demand by the difference.
    pub fn new<'a>(
        requests: impl IntoIterator<Item = &'a PoolRequest>,
        e: i64,
        held: impl Fn(&str) -> Option<Held>,
    ) -> Approved {
        let requests: Vec<&PoolRequest> = requests.into_iter().collect();
        // The base versions: what the measurements and the base's timeline hold.
        let mut base: Vec<(&str, Hours, f64)> = requests
            .iter()
            .filter_map(|r| match r.base {
                Some((h, g)) => (g > 0.0).then_some((r.team.as_str(), h, g)),
                None => Some((r.team.as_str(), r.hours, r.gpus)),
            })
            .collect();
        // Requests started lately claim the team's rise in the order they
        // started: two that start together share one rise, not count it twice.
        base.sort_by_key(|r| r.1.start);
        let mut teams: std::collections::BTreeMap<&str, (Option<Held>, Parts)> = Default::default();
        for &(team, h, gpus) in &base {
            if h.end <= e {
                // Ended when the measurements end, or with no hour measured
                // since (a request ending at midnight, measurements to
                // 23:00): they cannot show it gone, so its GPUs leave at `e`
                // (for one team never more than it held). One that ended
                // with hours measured after is as they show.
                if h.end > e - RECENT_START_HOURS && h.start < h.end {
                    let (held_here, parts) = teams
                        .entry(team)
                        .or_insert_with(|| (held(team), Parts::default()));
                    if held_here
                        .as_ref()
                        .is_some_and(|t| t.mean(h.end, e).is_none())
                    {
                        parts.ends.push((
                            Hours {
                                start: e,
                                end: i64::MAX,
                            },
                            gpus,
                        ));
                    }
                }
                continue;
            }
            let (held_here, parts) = teams
                .entry(team)
                .or_insert_with(|| (held(team), Parts::default()));
            let Some(t) = held_here.as_ref().filter(|_| h.start < e) else {
                parts.adds.push((
                    Hours {
                        start: h.start.max(e),
                        end: h.end,
                    },
                    gpus,
                ));
                continue;
            };
            // Started lately: measured only as far as the team rose since
            // (its level after the start over its level before: the day
            // before, else the week before; with neither, not yet
            // measured), less what requests that started earlier claimed.
            let measured = if h.start >= e - RECENT_START_HOURS {
                let after = t.mean(h.start, e);
                let before = t
                    .mean(h.start - 24, h.start)
                    .or_else(|| t.mean(h.start - 168, h.start));
                let m = match (after, before) {
                    (Some(a), Some(b)) => (a - b - parts.claimed).clamp(0.0, gpus),
                    _ => 0.0,
                };
                parts.claimed += m;
                m
            } else {
                gpus
            };
            if gpus - measured > 1e-9 {
                parts.adds.push((
                    Hours {
                        start: e,
                        end: h.end,
                    },
                    gpus - measured,
                ));
            }
            if h.end != i64::MAX && measured > 0.0 {
                parts.ends.push((
                    Hours {
                        start: h.end,
                        end: i64::MAX,
                    },
                    measured,
                ));
            }
        }
        // The change, team by team.
        for r in &requests {
            let Some((bh, bg)) = r.base else { continue };
            let (held_here, parts) = teams
                .entry(r.team.as_str())
                .or_insert_with(|| (held(&r.team), Parts::default()));
            let _ = held_here;
            if bg > 0.0 {
                parts.base_changed.push((bh, bg));
            }
            if r.gpus > 0.0 {
                parts.head_changed.push((r.hours, r.gpus));
            }
        }
        let any_change = requests.iter().any(|r| r.base.is_some());
        for r in requests.iter().filter(|_| any_change) {
            if let Some((_, parts)) = teams.get_mut(r.team.as_str())
                && r.gpus > 0.0
            {
                parts.head_all.push((r.hours, r.gpus));
            }
        }
        Approved {
            teams: teams
                .into_values()
                .map(|(held_here, p)| TeamChange {
                    adds: Timeline::build(p.adds),
                    ends: Timeline::build(p.ends),
                    weekly: held_here
                        .map(|t| t.weekly(e).into_iter().map(|w| w + p.claimed).collect()),
                    base_changed: Timeline::build(p.base_changed),
                    head_changed: Timeline::build(p.head_changed),
                    head_all: Timeline::build(p.head_all),
                })
                .collect(),
        }
    }

    /// GPUs added (positive) or taken away (negative) at `hour`.
    pub fn at(&self, hour: i64) -> f64 {
        self.teams.iter().map(|t| t.at(hour)).sum()
    }
}

/// A team's contributions while [`Approved::new`] gathers them.
#[derive(Default)]
struct Parts {
    adds: Vec<(Hours, f64)>,
    ends: Vec<(Hours, f64)>,
    /// What its requests started lately claimed of its rise.
    claimed: f64,
    base_changed: Vec<(Hours, f64)>,
    head_changed: Vec<(Hours, f64)>,
    head_all: Vec<(Hours, f64)>,
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
        // One that ends as the measurements end (at e) leaves at e: no hour
        // measured shows it gone.
        let mut at_e = rs.to_vec();
        at_e.push(req("a", 10, 1000, 8.0));
        assert_eq!(Approved::new(&at_e, e, held).at(1000), 5.0 - 8.0);
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
        // A shrink takes away only what the team held beyond what its
        // requests still allow: held 20, the request now 8: 12 leave.
        let ap = Approved::new(&shrunk, e, |_| Some(flat(20.0, e)));
        assert_eq!(ap.at(1000), -12.0);
        // Trimmed to 24 while the team held 16 of its 32: nothing leaves.
        let trimmed = [PoolRequest {
            base: Some((
                Hours {
                    start: 0,
                    end: 2000,
                },
                32.0,
            )),
            ..req("a", 0, 2000, 24.0)
        }];
        let ap = Approved::new(&trimmed, e, |_| Some(flat(16.0, e)));
        assert_eq!(ap.at(1000), 0.0);
        assert_eq!(ap.at(2000), -16.0);
        // Postponed a day, the team holding 150 of 280: 150 leave at e and
        // come back (the level measured, not the 280 asked for).
        let big = Some((
            Hours {
                start: 0,
                end: 2000,
            },
            280.0,
        ));
        let postponed = [PoolRequest {
            base: big,
            ..req("a", 1024, 2000, 280.0)
        }];
        let ap = Approved::new(&postponed, e, |_| Some(flat(150.0, e)));
        assert_eq!(ap.at(1000), -150.0);
        assert_eq!(ap.at(1024), 0.0);
        // Renamed: the base version gone, the same request added under
        // another name: nothing changes.
        let renamed = [
            PoolRequest {
                base: big,
                ..req("a", 0, 2000, 0.0)
            },
            PoolRequest {
                name: "a-new".into(),
                base: Some((
                    Hours {
                        start: 0,
                        end: 2000,
                    },
                    0.0,
                )),
                ..req("a", 0, 2000, 280.0)
            },
        ];
        let ap = Approved::new(&renamed, e, |_| Some(flat(150.0, e)));
        assert_eq!(ap.at(1000), 0.0);
        assert_eq!(ap.at(2000), -150.0);
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
