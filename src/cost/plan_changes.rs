//! The document changes a rightsizing recommendation applies: a team's
//! requests in a pool cut (or ended) down to what it needs, in the units
//! each asks for, and what it holds beyond them released as held.

use super::Analysis;
use crate::model::*;

/// Requests as rightsizing leaves them: by (request, resource key) the
/// count it keeps, `None` for a request ended whole (all its resources).
pub type Cuts = std::collections::BTreeMap<(String, String), Option<u32>>;

/// One request's change.
struct Cut {
    request: String,
    /// `None`: ended, releasing this many GPU-equivalents.
    unit: Option<(String, String, u32, u32)>,
    released: f64,
}

/// How a team's requests in a pool come down to `rightsized`: its requests
/// in force at `--at`, those that end soonest first, then the largest, in the units each asks for (a
/// time-sliced replica is 1 / replicas of a GPU, a MIG instance its share),
/// whole units only; a request that would keep nothing is ended, not cut to
/// zero. Returns the cuts and the GPU-equivalents they release.
fn cuts_of(
    a: &Analysis<'_>,
    team: &str,
    (cluster, pool): (&str, &str),
    rightsized: u32,
) -> (Vec<Cut>, f64) {
    const EPS: f64 = 1e-9;
    let at = a.at.hour_index();
    let mut reqs: Vec<(&Document<RequestSpec>, Vec<crate::capacity::Units>, f64)> = a
        .team_requests(team)
        .iter()
        .copied()
        .filter(|r| {
            let h = crate::capacity::Hours::of_request(&r.spec);
            r.spec.cluster.value == cluster
                && r.spec.pool.value == pool
                && h.start <= at
                && at < h.end
        })
        .map(|r| {
            let units = crate::capacity::units(&r.spec, crate::capacity::pool_of(a.repo, &r.spec));
            let total = units
                .iter()
                .map(|u| u.count as f64 * u.gpu_equivalent)
                .sum();
            (r, units, total)
        })
        .collect();
    // The requests that end soonest are cut first (then the largest): what
    // the team keeps is in the requests that last, so it still holds its
    // right size when the short ones end (cutting a long request and
    // keeping one that ends next month would leave it short from then on).
    let end = |r: &Document<RequestSpec>| crate::capacity::Hours::of_request(&r.spec).end;
    reqs.sort_by(|x, y| {
        end(x.0)
            .cmp(&end(y.0))
            .then(y.2.total_cmp(&x.2))
            .then(x.0.name().cmp(y.0.name()))
    });
    // The requests come down to what the team needs; what it holds beyond
    // them (borrowed) is released too, but no request asks for it.
    let requested: f64 = reqs.iter().map(|x| x.2).sum();
    let from_requests = (requested - f64::from(rightsized)).max(0.0);
    let mut left = from_requests;
    let mut out = Vec::new();
    for (r, mut units, total) in reqs {
        if left < EPS || total <= 0.0 {
            continue;
        }
        if total <= left + EPS {
            left -= total;
            out.push(Cut {
                request: r.name().to_string(),
                unit: None,
                released: total,
            });
            continue;
        }
        units.sort_by(|x, y| y.gpu_equivalent.total_cmp(&x.gpu_equivalent));
        for u in units {
            if u.gpu_equivalent <= 0.0 {
                continue;
            }
            let cut = (((left + EPS) / u.gpu_equivalent).floor() as u32).min(u.count);
            if cut == 0 {
                continue;
            }
            left -= cut as f64 * u.gpu_equivalent;
            out.push(Cut {
                request: r.name().to_string(),
                unit: Some((u.written, u.key, u.count, u.count - cut)),
                released: cut as f64 * u.gpu_equivalent,
            });
        }
    }
    (out, from_requests - left)
}

/// When a team's steady release falls before `until` (the end of its
/// requests in force): at the end of each steady request the plan ends or
/// cuts, by what the cut released, never more than `steady` (its steady
/// release) in all. After a request's own end the demand has lost it
/// already ([`super::mix_release`]).
fn release_steps(
    a: &Analysis<'_>,
    team: &str,
    at: (&str, &str),
    rightsized: u32,
    (steady, until): (f64, i64),
) -> Vec<super::mix::Step> {
    let requests = a.team_requests(team);
    let mut ends: Vec<(i64, f64)> = cuts_of(a, team, at, rightsized)
        .0
        .into_iter()
        .filter_map(|c| {
            let r = requests.iter().find(|r| r.name() == c.request)?;
            let end = crate::capacity::Hours::of_request(&r.spec).end;
            let preemptible = r.spec.preemptible.as_ref().is_some_and(|p| p.value);
            (!preemptible && end < until).then_some((end, c.released))
        })
        .collect();
    ends.sort_by_key(|x| x.0);
    let mut fallen = 0.0;
    let mut out = Vec::new();
    for (end, gpus) in ends {
        let step = gpus.min(steady - fallen);
        if step > 0.0 {
            fallen += step;
            out.push(super::mix::Step {
                at: end,
                gpus: step,
            });
        }
    }
    out
}

/// The share of what the plan's document change releases for `team` in a
/// pool that comes off its preemptible requests (the requests it ends or
/// cuts, as [`cuts_of`] chooses them), so that the saving is priced on the
/// demand the change leaves; `None` when it cuts nothing.
pub(super) fn preemptible_cut_share(
    a: &Analysis<'_>,
    team: &str,
    at: (&str, &str),
    rightsized: u32,
) -> Option<f64> {
    let requests = a.team_requests(team);
    let (cuts, _) = cuts_of(a, team, at, rightsized);
    let (mut pre, mut all) = (0.0, 0.0);
    for c in &cuts {
        let preemptible = requests
            .iter()
            .find(|r| r.name() == c.request)
            .is_some_and(|r| r.spec.preemptible.as_ref().is_some_and(|p| p.value));
        all += c.released;
        if preemptible {
            pre += c.released;
        }
    }
    (all > 0.0).then(|| (pre / all).clamp(0.0, 1.0))
}

/// When the releasing teams' steady release falls before `steady_until`:
/// each team's (team, rightsized, steady release, end of its requests)
/// falls as its cut requests end on their own ([`release_steps`]), and
/// stops with its requests. Sorted by hour.
pub(super) fn release_schedule(
    a: &Analysis<'_>,
    at: (&str, &str),
    teams: &[(&str, u32, f64, i64)],
    steady_until: i64,
) -> Vec<super::mix::Step> {
    let mut steps = Vec::new();
    for &(team, rightsized, steady, until) in teams {
        let own = release_steps(a, team, at, rightsized, (steady, until));
        let fallen: f64 = own.iter().map(|s| s.gpus).sum();
        steps.extend(own);
        if until < steady_until && steady > fallen {
            steps.push(super::mix::Step {
                at: until,
                gpus: steady - fallen,
            });
        }
    }
    steps.sort_by_key(|x| x.at);
    steps
}

/// The requests of the releasing teams in a pool as rightsizing leaves
/// them (each team with its rightsized GPUs), for the commitment plan's
/// MIG floor ([`crate::cost::mix::layout_floor`]): slices the plan tells a
/// team to give up are not bought for.
pub(super) fn cuts(a: &Analysis<'_>, teams: &[(&str, u32)], at: (&str, &str)) -> Cuts {
    let mut out = Cuts::new();
    for &(team, rightsized) in teams {
        for c in cuts_of(a, team, at, rightsized).0 {
            match c.unit {
                None => {
                    out.insert((c.request, String::new()), None);
                }
                Some((_, key, _, to)) => {
                    out.insert((c.request, key), Some(to));
                }
            }
        }
    }
    out
}

/// The request changes that leave a team's requests in a pool asking for
/// `rightsized` (a team that holds less than it asks for releases nothing
/// until its requests come down to what it needs), and what of the `gpus`
/// (GPU-equivalents) it releases no request asks for (held beyond its
/// requests, borrowed), as the recommendation states them ([`cuts_of`]).
pub(super) fn request_changes(
    a: &Analysis<'_>,
    team: &str,
    (cluster, pool): (&str, &str),
    gpus: f64,
    rightsized: u32,
) -> Vec<String> {
    const EPS: f64 = 1e-9;
    let (cuts, from_requests) = cuts_of(a, team, (cluster, pool), rightsized);
    let mut out: Vec<String> = cuts
        .into_iter()
        .map(|c| match c.unit {
            None => format!(
                "CapacityRequest `{}`: end it (releases {} GPUs)",
                c.request,
                gpu_text(c.released)
            ),
            Some((written, _, from, to)) => {
                format!("CapacityRequest `{}`: {written} {from} → {to}", c.request)
            }
        })
        .collect();
    let rest = gpus - from_requests;
    if rest >= 1.0 - EPS {
        out.push(format!(
            "Team `{team}`: hold {} fewer GPUs in {cluster}/{pool} (no request in force asks for them)",
            gpu_text(rest.floor())
        ));
    }
    out
}

/// GPUs as people read them: whole when whole, else to the hundredth.
fn gpu_text(g: f64) -> String {
    if (g - g.round()).abs() < 1e-6 {
        format!("{}", g.round() as i64)
    } else {
        format!("{g:.2}")
    }
}

/// The capacity blocks a commitment plan prices (`block_gpus` on average
/// over its days): one for each known burst of the pool, over the burst's
/// window, with the instances the plan's block GPU-hours come to, shared
/// among the bursts by their GPU-hours (the plan buys blocks only where
/// they pay: part of a burst may run on demand).
pub(super) fn capacity_blocks(
    a: &Analysis<'_>,
    entry: &super::PoolEntry<'_>,
    (cluster, pool): (&str, &str),
    block_gpus: f64,
) -> Vec<String> {
    let at = a.at.hour_index();
    let end = at + super::OUTLOOK_HOURS;
    let gpn = f64::from(entry.pool.gpus_per_node.value.0.max(1));
    let itype = entry
        .pool
        .instance_type
        .as_ref()
        .map_or("instance", |t| t.value.as_str());
    let bursts: Vec<(&super::approved::PoolRequest, f64)> = entry
        .requests
        .iter()
        .filter(|r| r.is_burst(at) && r.hours.start < end)
        .map(|r| (r, (r.hours.end.min(end) - r.hours.start) as f64))
        .collect();
    let gpu_hours: f64 = bursts.iter().map(|(r, h)| r.gpus * h).sum();
    let instance_hours = block_gpus * super::OUTLOOK_HOURS as f64 / gpn;
    bursts
        .iter()
        .filter_map(|&(r, hours)| {
            let share = if gpu_hours > 0.0 { r.gpus * hours / gpu_hours } else { 0.0 };
            let n = (instance_hours * share / hours.max(1.0)).round() as u32;
            (n > 0).then(|| {
                format!(
                    "Reservation (new): an AWS capacity block of {n} × {itype} covering {cluster}/{pool} for CapacityRequest `{}` ({} → {}), in the lengths AWS sells (whole days up to 14, whole weeks beyond: the last week may run past the burst): its instances run as reserved nodes of the pool while it lasts, so `purchase.reserved` must count them then (validate warns otherwise)",
                    r.name,
                    super::forecasts::hour_text(r.hours.start),
                    super::forecasts::hour_text(r.hours.end),
                )
            })
        })
        .collect()
}

/// The risk of giving up `n` instances a reservation holds for the pool.
pub(super) fn gives_up(name: &str, n: u32) -> String {
    format!(
        "cutting `{name}` gives up {n} instance{} it holds for the pool: what the plan buys on demand or spot instead is not guaranteed when the region runs short",
        if n == 1 { "" } else { "s" }
    )
}

/// The mix buys on demand, spot and blocks by the hour of demand: its
/// saving needs the pool's `others` nodes beyond its commitments to follow
/// demand (an autoscaler), or to go when it buys nothing by the hour.
/// capops prices a pool as its `nodes` say, all month.
pub(super) fn autoscaling(others: u32, hourly_gpus: f64) -> Option<String> {
    if others == 0 {
        return None;
    }
    let follow = if hourly_gpus > 0.0 {
        format!(
            "follow demand hour by hour ({hourly_gpus:.1} GPUs on average: a cluster autoscaler, Karpenter or node auto-provisioning)"
        )
    } else {
        "scale to zero or are released (no demand is forecast beyond the commitments)".into()
    };
    Some(format!(
        "the saving assumes the pool's {others} other nodes {follow}; held all month, they are paid every hour (on demand, at the purchase the plan writes: more than today where it moves reserved or spot nodes to on demand) and this saving is not realised"
    ))
}

/// The running, non-preemptible requests of the pool that end inside the
/// plan's days as their windows say: the forecast drops their GPUs then,
/// and so does the plan's purchase, so its saving rests on their ending
/// (renewed, the pool needs them). Named, largest first, at most three.
pub(super) fn ending_requests(a: &Analysis<'_>, entry: &super::PoolEntry<'_>) -> Option<String> {
    let at = a.at.hour_index();
    let mut ending: Vec<&super::approved::PoolRequest> = entry
        .requests
        .iter()
        .filter(|r| {
            !r.preemptible
                && r.gpus > 0.0
                && r.hours.start <= at
                && r.hours.end > at
                && r.hours.end <= at + super::OUTLOOK_HOURS
        })
        .collect();
    if ending.is_empty() {
        return None;
    }
    ending.sort_by(|x, y| y.gpus.total_cmp(&x.gpus).then(x.name.cmp(&y.name)));
    let named: Vec<String> = ending
        .iter()
        .take(3)
        .map(|r| {
            let end = crate::model::Timestamp::from_second(r.hours.end * 3600)
                .map_or_else(String::new, |t| format!(", {}", t.date()));
            format!("`{}` ({} GPUs{end})", r.name, gpu_text(r.gpus))
        })
        .collect();
    let more = ending.len().saturating_sub(3);
    let (verb, whose) = if ending.len() == 1 {
        ("ends as its window says", "its")
    } else {
        ("end as their windows say", "their")
    };
    let more = if more > 0 {
        format!(" and {more} more")
    } else {
        String::new()
    };
    Some(format!(
        "the plan buys for the demand left once {}{more} {verb}: renewed, the pool needs {whose} GPUs again",
        named.join(", "),
    ))
}

/// A commitment tier the plan sizes at break-even that would leave more of
/// its GPU-hours unused over its term than the Config's stranded share: it
/// saves money against on demand, and the gate (at that threshold) denies
/// it. Said, so that the report and the gate never disagree in silence.
pub(super) fn over_stranded(t: &super::mix::Tier, limit: f64) -> Option<String> {
    (t.unused > limit + 1e-9).then(|| {
        format!(
            "about {:.0}% of the {} tier's GPU-hours are expected unused over its term, above the Config's strandedSpendShare ({:.0}%): it still costs less than on demand, but the default policy denies such a reservation (`reservations-must-be-used`) unless the threshold is raised",
            t.unused * 100.0,
            t.kind,
            limit * 100.0
        )
    })
}
