//! What is judged, and with which facts: one subject per changed document of
//! every kind (added, modified or removed: a removed document is judged with
//! its base version), plus the usage history and the templates when they
//! change; and what a change adds up to per team.

use super::change::{Change, ChangeKind, Changed};
use super::facts::{self, Aggregates, Facts, TemplateDelta, Totals, UsageDelta};
use crate::capacity;
use crate::diag::Span;
use crate::model::*;

/// One thing to judge.
#[derive(Clone, Debug)]
pub enum Target {
    /// A document that changed (or, without a base, that stands).
    Document(Box<Changed>),
    /// The usage history, when the change alters it.
    Usage(UsageDelta),
    /// The template overrides, when the change alters them.
    Templates(TemplateDelta),
}

impl Target {
    pub fn subject(&self) -> Subject {
        match self {
            Target::Document(c) => Subject::of_kind(c.kind),
            Target::Usage(_) => Subject::UsageHistory,
            Target::Templates(_) => Subject::Templates,
        }
    }

    pub fn name(&self) -> &str {
        match self {
            Target::Document(c) => &c.name,
            Target::Usage(_) => "usage",
            Target::Templates(_) => "templates",
        }
    }
}

/// A subject's facts, who leads the team it belongs to, and where it is written.
pub struct Judged {
    pub facts: Facts,
    /// The base's leads of the subject's team (the `team-lead` role).
    pub team_leads: Vec<String>,
    /// For a request handed to another team, the base's leads of the team
    /// that receives it (the `receiving-team-lead` role).
    pub receiving_leads: Vec<String>,
    pub location: Option<Span>,
}

/// The document a change is about: the head's, or the base's when it was removed.
fn document<'r, S: Spec>(head: &'r Repo, c: &'r Changed) -> Option<&'r Document<S>> {
    match S::slot(head).find(&c.name) {
        Some(d) => Some(d),
        None => c.change.previous::<S>(),
    }
}

/// When judging without a base, "before" is the document as it stands.
pub fn with_previous_as_current(change: &Change, current: impl FnOnce() -> TypedDoc) -> Change {
    if change.kind != ChangeKind::Unchanged {
        return change.clone();
    }
    Change {
        previous: Some(Box::new(current())),
        ..change.clone()
    }
}

/// The leads of a team as the judging revision has them: the base's (a team
/// the change adds has none until it is merged).
fn leads(env: &facts::Env<'_>, team: &str) -> Vec<String> {
    env.base
        .unwrap_or(env.world)
        .teams
        .get(team)
        .map(|t| t.spec.leads.iter().map(|l| l.value.clone()).collect())
        .unwrap_or_default()
}

/// Builds the facts of one target; `None` when there is nothing to judge.
pub fn facts_of(env: &facts::Env<'_>, head: &Repo, target: &Target) -> Option<Judged> {
    let c = match target {
        Target::Usage(d) => {
            return Some(Judged {
                facts: Facts::UsageHistory(Box::new(facts::history::usage(env, d))),
                team_leads: Vec::new(),
                receiving_leads: Vec::new(),
                location: None,
            });
        }
        Target::Templates(d) => {
            return Some(Judged {
                facts: Facts::Templates(Box::new(facts::history::templates(env, d))),
                team_leads: Vec::new(),
                receiving_leads: Vec::new(),
                location: None,
            });
        }
        Target::Document(c) => c,
    };
    let judged = match c.kind {
        Kind::CapacityRequest => {
            let doc = document::<RequestSpec>(head, c)?;
            let change =
                with_previous_as_current(&c.change, || TypedDoc::CapacityRequest(doc.clone()));
            // The team that holds the request in the base answers for it:
            // handing it to another team is that team's release.
            let owner = c
                .change
                .previous::<RequestSpec>()
                .map_or(doc.spec.team.value.as_str(), |p| p.spec.team.value.as_str());
            let receiving = if owner == doc.spec.team.value {
                Vec::new()
            } else {
                leads(env, &doc.spec.team.value)
            };
            Judged {
                facts: Facts::Request(Box::new(facts::request(env, doc, &change))),
                team_leads: leads(env, owner),
                receiving_leads: receiving,
                location: Some(doc.name_span()),
            }
        }
        Kind::Reservation => {
            let doc = document::<ReservationSpec>(head, c)?;
            let change = with_previous_as_current(&c.change, || TypedDoc::Reservation(doc.clone()));
            Judged {
                facts: Facts::Reservation(Box::new(facts::reservation(env, doc, &change))),
                team_leads: Vec::new(),
                receiving_leads: Vec::new(),
                location: Some(doc.name_span()),
            }
        }
        Kind::Team => {
            let doc = document::<TeamSpec>(head, c)?;
            let change = with_previous_as_current(&c.change, || TypedDoc::Team(doc.clone()));
            Judged {
                facts: Facts::Team(Box::new(facts::team(env, doc, &change))),
                team_leads: leads(env, doc.name()),
                receiving_leads: Vec::new(),
                location: Some(doc.name_span()),
            }
        }
        Kind::Cluster => {
            let doc = document::<ClusterSpec>(head, c)?;
            Judged {
                facts: Facts::Cluster(Box::new(facts::platform::cluster(env, doc, &c.change))),
                team_leads: Vec::new(),
                receiving_leads: Vec::new(),
                location: Some(doc.name_span()),
            }
        }
        Kind::PriorityClass => {
            let doc = document::<PriorityClassSpec>(head, c)?;
            Judged {
                facts: Facts::PriorityClass(Box::new(facts::platform::priority_class(
                    env, doc, &c.change,
                ))),
                team_leads: Vec::new(),
                receiving_leads: Vec::new(),
                location: Some(doc.name_span()),
            }
        }
        Kind::PriceCatalog => {
            let doc = document::<CatalogSpec>(head, c)?;
            Judged {
                facts: Facts::PriceCatalog(Box::new(facts::platform::catalog(env, doc, &c.change))),
                team_leads: Vec::new(),
                receiving_leads: Vec::new(),
                location: Some(doc.name_span()),
            }
        }
        Kind::ApprovalPolicy | Kind::Config => {
            let location = head
                .find(c.kind, &c.name)
                .or_else(|| env.base?.find(c.kind, &c.name))
                .map(|d| d.origin().kind_span);
            Judged {
                facts: Facts::Document(Box::new(facts::document(env, c.kind, &c.name, &c.change))),
                team_leads: Vec::new(),
                receiving_leads: Vec::new(),
                location,
            }
        }
    };
    Some(judged)
}

/// What the change adds up to per team: each changed request's holdings
/// now added and before subtracted, per (team, cluster, pool) and per team.
/// GPUs are the largest rise of that sum at any hour from `--at` on (or, for
/// a pure release, minus its largest fall): moving a request later in time,
/// or reviving an expired one, asks for what it holds in hours it did not
/// hold before. Costs count the part of each window from `--at` on. (Without
/// a base each request stands alone and its facts use its own size.)
pub fn aggregates(
    world: &Repo,
    analysis: &crate::cost::Analysis<'_>,
    changes: &[Changed],
    recent_growth: &std::collections::BTreeMap<String, f64>,
) -> Aggregates {
    let mut out = Aggregates {
        recent_growth: recent_growth.clone(),
        ..Aggregates::default()
    };
    let at = analysis.at.hour_index();
    type Key = (String, String, String);
    let mut held: std::collections::HashMap<Key, Vec<(capacity::Hours, f64)>> =
        std::collections::HashMap::new();
    let mut costs: std::collections::HashMap<Key, Totals> = std::collections::HashMap::new();
    // team -> each changed request's monthly cost over its hours (the rate
    // the team pays while it runs), across pools.
    let mut rates: std::collections::HashMap<String, Vec<(capacity::Hours, f64)>> =
        std::collections::HashMap::new();
    let mut pool_rates: std::collections::HashMap<Key, Vec<(capacity::Hours, f64)>> =
        std::collections::HashMap::new();
    let mut add = |spec: &RequestSpec, sign: f64| {
        let gpus = capacity::size(spec, capacity::pool_of(world, spec)).gpus;
        let (monthly, total) = future_cost(analysis, spec, at);
        let key = (
            spec.team.value.clone(),
            spec.cluster.value.clone(),
            spec.pool.value.clone(),
        );
        held.entry(key.clone())
            .or_default()
            .push((capacity::Hours::of_request(spec), sign * gpus));
        let spans = rate_spans(analysis, spec, sign);
        rates
            .entry(key.0.clone())
            .or_default()
            .extend(spans.iter().cloned());
        pool_rates.entry(key.clone()).or_default().extend(spans);
        bump(
            costs.entry(key).or_default(),
            Totals {
                gpus: 0.0,
                monthly_cost: sign * monthly,
                total_cost: sign * total,
            },
        );
    };
    for c in changes.iter().filter(|c| c.kind == Kind::CapacityRequest) {
        if c.change.kind == ChangeKind::Unchanged {
            continue;
        }
        if let Some(doc) = world.requests.get(&c.name) {
            add(&doc.spec, 1.0);
        }
        if let Some(prev) = c.change.previous::<RequestSpec>() {
            add(&prev.spec, -1.0);
        }
    }
    for c in changes.iter().filter(|c| c.kind == Kind::Reservation) {
        if c.change.kind == ChangeKind::Unchanged {
            continue;
        }
        let now = world
            .reservations
            .get(&c.name)
            .filter(|_| c.change.kind != ChangeKind::Removed)
            .map(|d| &d.spec);
        let before = c.change.previous::<ReservationSpec>().map(|p| &p.spec);
        // Rises only: a reservation released or cut pays for no other
        // commitment the change makes (cancelling one and buying another
        // elsewhere is a purchase).
        out.reservations_total_cost +=
            crate::cost::reservation::reservation_delta(world, now, before, analysis.at).max(0.0);
    }
    // Each team's holdings across its pools, hour by hour: a release that
    // ends soon in one pool does not pay for a gain that lasts in others.
    let mut across: std::collections::HashMap<String, Vec<(capacity::Hours, f64)>> =
        std::collections::HashMap::new();
    for ((team, _, _), entries) in &held {
        across
            .entry(team.clone())
            .or_default()
            .extend(entries.iter().cloned());
    }
    // Across pools a team's gains add up and its releases offset none
    // (moving 50 GPUs into each of five pools while releasing 250 in a
    // sixth asks for 250, as one pool would): the pools' rises summed, or,
    // when it only releases, its falls.
    let mut falls: std::collections::HashMap<String, Totals> = std::collections::HashMap::new();
    for (key, mut t) in costs {
        t.gpus = capacity::signed(capacity::swing(held.remove(&key).unwrap_or_default(), at));
        let rise = Totals {
            gpus: t.gpus.max(0.0),
            monthly_cost: t.monthly_cost.max(0.0),
            total_cost: t.total_cost.max(0.0),
        };
        let fall = Totals {
            gpus: t.gpus.min(0.0),
            monthly_cost: t.monthly_cost.min(0.0),
            total_cost: t.total_cost.min(0.0),
        };
        bump(out.by_team.entry(key.0.clone()).or_default(), rise);
        bump(falls.entry(key.0.clone()).or_default(), fall);
        out.by_pool.insert(key, t);
    }
    for (team, t) in out.by_team.iter_mut() {
        let fall = falls.remove(team).unwrap_or_default();
        if t.gpus <= 0.0 {
            t.gpus = fall.gpus;
        }
        if t.total_cost <= 0.0 {
            t.total_cost = fall.total_cost;
        }
        if t.monthly_cost <= 0.0 {
            t.monthly_cost = fall.monthly_cost;
        }
    }
    // What the team gains across its pools: the pools' gains summed, or the
    // largest rise of its holdings at any hour across them, whichever is
    // more.
    for (team, t) in out.by_team.iter_mut() {
        let union = capacity::signed(capacity::swing(across.remove(team).unwrap_or_default(), at));
        t.gpus = t.gpus.max(union);
    }
    // A team's monthly cost across pools is the largest rise of its rate at
    // any hour: requests split back to back do not add up, overlapping ones do.
    out.runs = facts::runs::moved(world, changes, analysis.at.as_second());
    out.changed_requests = changes
        .iter()
        .filter(|c| c.kind == Kind::CapacityRequest)
        .map(|c| c.name.clone())
        .collect();
    // A pool where the rate falls pays for no rise in another (the rises of
    // pools that gain at once add up); when it only falls, the fall.
    for (team, t) in out.by_team.iter_mut() {
        let rise = capacity::clipped_rise(
            pool_rates
                .iter()
                .filter(|(k, _)| &k.0 == team)
                .map(|(_, v)| v.as_slice()),
            at,
        );
        t.monthly_cost = if rise > 0.0 {
            rise
        } else {
            capacity::signed(capacity::swing(
                rates.get(team).cloned().unwrap_or_default(),
                at,
            ))
        };
    }
    out.monthly_rates = rates;
    out
}

/// What the change's clusters gain, as the head has them against the base:
/// GPUs and monthly cost (priced with the judging world's catalogs), summed
/// over the clusters that grow (one that shrinks offsets none).
pub fn clusters_gained(world: &Repo, head: &Repo, changes: &[Changed], at: Timestamp) -> Totals {
    let mut out = Totals::default();
    for c in changes.iter().filter(|c| c.kind == Kind::Cluster) {
        if c.change.kind == ChangeKind::Unchanged {
            continue;
        }
        let now = head
            .clusters
            .get(&c.name)
            .filter(|_| c.change.kind != ChangeKind::Removed);
        let before = c.change.previous::<ClusterSpec>();
        let gpus = |d: Option<&Document<ClusterSpec>>| -> f64 {
            d.map_or(0.0, |d| {
                d.spec
                    .node_pools
                    .iter()
                    .map(|p| capacity::pool_gpus(p) as f64)
                    .sum()
            })
        };
        let cost = |d: Option<&Document<ClusterSpec>>| -> f64 {
            d.map_or(0.0, |d| crate::policy::measure::monthly_cost(world, d, at))
        };
        out.gpus += (gpus(now) - gpus(before)).max(0.0);
        out.monthly_cost += (cost(now) - cost(before)).max(0.0);
    }
    out
}

/// A request's monthly cost and the cost of the part of its window from hour
/// `at` on (0 when unpriced).
/// What each team's request growth of the 30 days before the base costs:
/// per request that grew, its cost from the start of the 30 days on less
/// what it cost then over the same hours (never below 0).
pub fn recent_growth_cost(
    analysis: &crate::cost::Analysis<'_>,
    growth: &crate::policy::world::PlatformGrowth,
) -> std::collections::BTreeMap<String, f64> {
    let mut out = std::collections::BTreeMap::new();
    for (now, then) in &growth.grown_requests {
        let cost = future_cost(analysis, now, growth.from_hour).1
            - then.as_ref().map_or(0.0, |(t, share)| {
                future_cost(analysis, t, growth.from_hour).1 * share
            });
        if cost > 0.0 {
            *out.entry(now.team.value.clone()).or_insert(0.0) += cost;
        }
    }
    out
}

/// What each team's requests, those the change adds or grows
/// (`change_rates`) and those grown in the 30 days before the base, add to
/// its monthly bill at the busiest hour from `at` on: each request's monthly
/// rate over its window, less its rate before over its window before (so
/// requests that never run at once do not add up, and the same weeks asked
/// for over several pull requests do).
pub fn monthly_growth_with_recent(
    analysis: &crate::cost::Analysis<'_>,
    growth: &crate::policy::world::PlatformGrowth,
    change_rates: &std::collections::HashMap<String, Vec<(capacity::Hours, f64)>>,
    at: i64,
) -> std::collections::BTreeMap<String, f64> {
    let mut rates: std::collections::BTreeMap<String, Vec<(capacity::Hours, f64)>> = change_rates
        .iter()
        .map(|(t, r)| (t.clone(), r.clone()))
        .collect();
    for (now, then) in &growth.grown_requests {
        let team = rates.entry(now.team.value.clone()).or_default();
        team.extend(rate_spans(analysis, now, 1.0));
        if let Some((t, share)) = then {
            team.extend(rate_spans(analysis, t, -share));
        }
    }
    rates
        .into_iter()
        .filter_map(|(team, r)| {
            let up = capacity::swing(r, at).0;
            (up > 1e-9).then_some((team, up))
        })
        .collect()
}

pub fn future_cost(
    analysis: &crate::cost::Analysis<'_>,
    spec: &RequestSpec,
    at: i64,
) -> (f64, f64) {
    let f = |d: rust_decimal::Decimal| crate::cost::prices::float(d);
    let Some(cost) = analysis.request_cost(spec) else {
        return (0.0, 0.0);
    };
    let hours = capacity::Hours::of_request(spec);
    if !hours.is_open() && hours.end <= at {
        return (0.0, 0.0);
    }
    // Each hour from `at` on at the rate of its piece: cheap hours already
    // spent do not water down dear ones still to come.
    (f(cost.monthly), f(cost.from_hour(at)))
}

/// A request's monthly rate over each piece of its window (an open-ended
/// request's first and last pieces open, as its hours are), each scaled by
/// `sign`: what it adds to its team's bill at each hour it runs.
pub fn rate_spans(
    analysis: &crate::cost::Analysis<'_>,
    spec: &RequestSpec,
    sign: f64,
) -> Vec<(capacity::Hours, f64)> {
    let Some(cost) = analysis.request_cost(spec) else {
        return Vec::new();
    };
    let hours = capacity::Hours::of_request(spec);
    let month = rust_decimal::Decimal::from(crate::cost::prices::HOURS_PER_MONTH);
    let last = cost.pieces.len().saturating_sub(1);
    cost.pieces
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let span = capacity::Hours {
                start: if i == 0 && hours.start == i64::MIN {
                    i64::MIN
                } else {
                    p.start
                },
                end: if i == last && hours.end == i64::MAX {
                    i64::MAX
                } else {
                    p.end
                },
            };
            (span, sign * crate::cost::prices::float(p.rate * month))
        })
        .collect()
}

fn bump(slot: &mut Totals, t: Totals) {
    slot.gpus += t.gpus;
    slot.monthly_cost += t.monthly_cost;
    slot.total_cost += t.total_cost;
}
