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
//!   have beyond what its requests in (or netted with) the measured level
//!   still allow. Future work on both sides, and a request new to its team
//!   beyond the GPUs of running work the change removes from that team,
//!   count their own difference in full instead, and never also hold the
//!   measured level up.
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
    /// A request the change hands to this team from another in the same
    /// pool: the team the measurements hold it under (the same work, so its
    /// demand stays measured as it was, not counted again in full).
    pub measured_team: Option<String>,
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
            measured_team: None,
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
    // Work is matched by what it is before its name: a request the change
    // touches that holds what one of the base's touched requests here held
    // (the same window and size) is that work, whatever it is called now
    // (renamed, or two names swapped); under another team it is handed
    // over, measured under the team that held it. Only then by name.
    let touched = |r: &PoolRequest| base.contains_key(&r.name) || added.contains(&r.name);
    type Key = (i64, i64, u64);
    let key = |h: Hours, g: f64| (h.start, h.end, g.to_bits());
    let mut spare: std::collections::HashMap<Key, Vec<&Document<RequestSpec>>> = Default::default();
    for b in base.values().filter(|b| here(b)) {
        let (h, g) = size(b);
        spare.entry(key(h, g)).or_default().push(b);
    }
    let mut accounted: std::collections::HashSet<&str> = Default::default();
    let mut matched = vec![false; requests.len()];
    // Same team first, then another team (handed over).
    for same_team in [true, false] {
        for (i, r) in requests.iter_mut().enumerate() {
            if matched[i] || !touched(r) {
                continue;
            }
            let Some(list) = spare.get_mut(&key(r.hours, r.gpus)) else {
                continue;
            };
            let Some(k) = list
                .iter()
                .position(|b| (b.spec.team.value == r.team) == same_team)
            else {
                continue;
            };
            let b = list.swap_remove(k);
            accounted.insert(b.name());
            matched[i] = true;
            r.base = None;
            if !same_team {
                r.measured_team = Some(b.spec.team.value.clone());
            }
        }
    }
    for (i, r) in requests.iter_mut().enumerate() {
        if matched[i] {
            continue;
        }
        r.base = match base.get(&r.name) {
            // In a file the change did not touch: as the base has it.
            None if !added.contains(&r.name) => None,
            None => Some((r.hours, 0.0)),
            // Its base version is other work's now: this is new.
            Some(b) if accounted.contains(b.name()) => Some((r.hours, 0.0)),
            // A name handed to another team over another window is not the
            // same work: new to its team, and the base's request is gone
            // from the team that held it.
            Some(b) if here(b) && b.spec.team.value != r.team && size(b).0 != r.hours => {
                Some((r.hours, 0.0))
            }
            Some(b) if here(b) => {
                accounted.insert(b.name());
                // Handed from another team in the pool: the same work,
                // measured under that team.
                if b.spec.team.value != r.team {
                    r.measured_team = Some(b.spec.team.value.clone());
                }
                let sized = size(b);
                (sized != (r.hours, r.gpus)).then_some(sized)
            }
            // Moved here from another pool.
            Some(_) => Some((r.hours, 0.0)),
        };
    }
    // By name, once (a pool of 100,000 requests is not searched for each).
    let names: std::collections::HashSet<&str> = requests.iter().map(|r| r.name.as_str()).collect();
    let mut gone = Vec::new();
    for b in base_of_pool {
        let taken = accounted.contains(b.name())
            || (!base.contains_key(b.name()) && names.contains(b.name()));
        if !taken {
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
        measured_team: None,
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
    /// The part of `base_changed` not in the measured level (a request not
    /// started at `e`, the unmeasured part of one started lately).
    unmeasured_changed: Timeline,
    head_changed: Timeline,
    head_all: Timeline,
    /// Its changed requests that are future work in the base and the head
    /// (starting at `e` or later), as each has them: counted in full.
    future_base: Timeline,
    future_head: Timeline,
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
        // What they hold less comes first off the part not measured (the
        // base counted it in full, so it leaves in full), then off the
        // measured level, capped so.
        let (b, h) = (self.base_changed.at(hour), self.head_changed.at(hour));
        let grow = (h - b).max(0.0);
        let shrink = (b - h).max(0.0);
        let off_unmeasured = shrink.min(self.unmeasured_changed.at(hour));
        let off_measured = shrink - off_unmeasured;
        // The measured level still standing (work added in full is not
        // measured: it is not given up through the measured level).
        let measured = level - removed;
        let future = self.future_head.at(hour) - self.future_base.at(hour);
        adjust + grow + future
            - off_unmeasured
            - off_measured.min((measured - self.head_all.at(hour)).max(0.0))
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
        // Grouped by the team the measurements hold each request under.
        fn key(r: &PoolRequest) -> &str {
            r.measured_team.as_deref().unwrap_or(&r.team)
        }
        let mut base: Vec<(&str, Hours, f64, bool)> = requests
            .iter()
            .filter_map(|r| match r.base {
                // Marked changed where the change nets it (not future work
                // on both sides: that moves the demand by its own difference).
                Some((h, g)) => {
                    (g > 0.0).then_some((key(r), h, g, r.hours.start < e || h.start < e))
                }
                None => Some((key(r), r.hours, r.gpus, false)),
            })
            .collect();
        // Requests started lately claim the team's rise in the order they
        // started: two that start together share one rise, not count it twice.
        base.sort_by_key(|r| r.1.start);
        let mut teams: std::collections::BTreeMap<&str, (Option<Held>, Parts)> = Default::default();
        for &(team, h, gpus, changed) in &base {
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
                let w = Hours {
                    start: h.start.max(e),
                    end: h.end,
                };
                parts.adds.push((w, gpus));
                if changed {
                    parts.unmeasured_changed.push((w, gpus));
                }
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
                let w = Hours {
                    start: e,
                    end: h.end,
                };
                parts.adds.push((w, gpus - measured));
                if changed {
                    parts.unmeasured_changed.push((w, gpus - measured));
                }
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
        // The change, team by team. A request that is future work on both
        // sides (it starts at `e` or later, and so did its base version)
        // was counted in full and is counted in full: it moves the demand
        // by its own difference, and a new run beside a trimmed one is not
        // netted against the trim. The others (running in the base or
        // dated back in the head) are netted together: the same work under
        // another name or size.
        //
        // A request new to its team (added, renamed with another window or
        // size, handed over with another window) is new work, counted in
        // full whenever it starts, except as far as the change removes
        // running work of that team: up to those GPUs it may be that work
        // under a new name (re-filed from today, split, merged) and is
        // netted with it; beyond them it is new (deleting a 1-GPU request
        // does not net a 128-GPU run).
        let mut removed: std::collections::HashMap<&str, f64> = Default::default();
        for r in requests.iter().filter(|r| r.gpus <= 0.0) {
            if let Some((bh, bg)) = r.base
                && bg > 0.0
                && bh.start < e
                && bh.end > e
            {
                *removed.entry(key(r)).or_default() += bg;
            }
        }
        let mut new: Vec<&&PoolRequest> = requests
            .iter()
            .filter(|r| r.gpus > 0.0 && r.base.is_some_and(|(_, bg)| bg <= 0.0))
            .collect();
        new.sort_by(|a, b| (a.hours.start, &a.name).cmp(&(b.hours.start, &b.name)));
        // Of each new request, the GPUs netted as re-filed work.
        let mut netted: std::collections::HashMap<&str, f64> = Default::default();
        for r in new {
            let left = removed.entry(key(r)).or_default();
            let n = r.gpus.min(*left);
            *left -= n;
            netted.insert(r.name.as_str(), n);
        }
        for r in &requests {
            let Some((bh, bg)) = r.base else { continue };
            let (_, parts) = teams
                .entry(key(r))
                .or_insert_with(|| (held(key(r)), Parts::default()));
            if bg <= 0.0 {
                // New: netted as far as re-filed, the rest in full.
                let n = netted.get(r.name.as_str()).copied().unwrap_or(0.0);
                if n > 0.0 {
                    parts.head_changed.push((r.hours, n));
                    parts.head_all.push((r.hours, n));
                }
                if r.gpus - n > 1e-9 {
                    parts.future_head.push((r.hours, r.gpus - n));
                }
                continue;
            }
            let future = r.hours.start >= e && bh.start >= e;
            let (to_base, to_head) = if future {
                (&mut parts.future_base, &mut parts.future_head)
            } else {
                (&mut parts.base_changed, &mut parts.head_changed)
            };
            to_base.push((bh, bg));
            if r.gpus > 0.0 {
                to_head.push((r.hours, r.gpus));
                // What the team's requests still allow its measured work:
                // those in the measured level or netted with it. Work
                // counted in full (future work, new work, an untouched
                // request not started at `e`) does not also hold it up.
                if !future {
                    parts.head_all.push((r.hours, r.gpus));
                }
            }
        }
        if requests.iter().any(|r| r.base.is_some()) {
            for r in requests
                .iter()
                .filter(|r| r.base.is_none() && r.hours.start < e)
            {
                if let Some((_, parts)) = teams.get_mut(key(r))
                    && r.gpus > 0.0
                {
                    parts.head_all.push((r.hours, r.gpus));
                }
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
                    unmeasured_changed: Timeline::build(p.unmeasured_changed),
                    head_changed: Timeline::build(p.head_changed),
                    head_all: Timeline::build(p.head_all),
                    future_base: Timeline::build(p.future_base),
                    future_head: Timeline::build(p.future_head),
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
    unmeasured_changed: Vec<(Hours, f64)>,
    head_changed: Vec<(Hours, f64)>,
    head_all: Vec<(Hours, f64)>,
    future_base: Vec<(Hours, f64)>,
    future_head: Vec<(Hours, f64)>,
}

/// What the requests hold at each hour: the demand of a pool without history.
pub fn held<'a>(requests: impl IntoIterator<Item = &'a PoolRequest>) -> Timeline {
    Timeline::build(requests.into_iter().map(|r| (r.hours, r.gpus)))
}

#[cfg(test)]
#[path = "approved_tests.rs"]
mod tests;
