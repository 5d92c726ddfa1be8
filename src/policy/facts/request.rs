//! The facts of a CapacityRequest: its size, window, cost, its team's quota
//! and usage, its pool's commitments and demand, and what it was before.

use super::model::*;
use super::values::{hour_text, round, round_up, texts};
use super::{Env, Totals};
use crate::capacity::{self, Hours};
use crate::model::types::has_visible_text;
use crate::model::*;
use crate::policy::change::Change;
use std::collections::BTreeMap;

mod priorities;
mod types;
pub use types::*;

/// A request's priority class, the Config's default, or the global default class (empty when none).
fn priority_class_of(env: &Env<'_>, spec: &RequestSpec) -> String {
    spec.priority_class
        .as_ref()
        .map(|c| c.value.clone())
        .unwrap_or_else(|| default_class_of(env))
}

/// The class a request that names none runs at: the Config's default, else
/// the PriorityClass marked `globalDefault` (what Kubernetes gives a pod
/// that names none), else none (empty).
fn default_class_of(env: &Env<'_>) -> String {
    env.config
        .defaults
        .priority_class
        .as_ref()
        .map(|c| c.value.clone())
        .or_else(|| {
            env.world
                .priority_classes
                .values()
                .find(|p| p.spec.global_default.as_ref().is_some_and(|g| g.value))
                .map(|p| p.name().to_string())
        })
        .unwrap_or_default()
}

/// Below every priority Kubernetes allows: what a team that may preempt
/// nothing preempts at.
const PREEMPTS_NOTHING: i64 = -2_147_483_649;

/// Whether a class (by name) may preempt lower priorities: its
/// `preemptionPolicy` is not `Never` (no class: Kubernetes' default, which may).
fn class_preempts(env: &Env<'_>, class: &str) -> bool {
    env.world
        .priority_classes
        .get(class)
        .is_none_or(|p| p.spec.preemption_policy != Some(crate::model::PreemptionPolicy::Never))
}

fn preempts(env: &Env<'_>, spec: &RequestSpec) -> bool {
    class_preempts(env, &priority_class_of(env, spec))
}

fn priority_of(env: &Env<'_>, spec: &RequestSpec) -> i64 {
    env.world
        .priority_classes
        .get(&priority_class_of(env, spec))
        .map(|p| p.spec.value.value)
        .unwrap_or(0)
}

/// By team, the workload classes of the base requests the change removes,
/// hands to another team or shrinks: gathered once for every team (each of
/// a hundred thousand requests looking through every changed request was
/// quadratic).
fn classes_released<'e>(env: &'e Env<'_>) -> &'e std::collections::HashMap<String, Vec<String>> {
    env.aggregates.team_classes_released.get_or_init(|| {
        let Some(b) = env.base else {
            return Default::default();
        };
        let gpus = |s: &RequestSpec| capacity::size(s, capacity::pool_of(env.world, s)).gpus;
        let mut by: std::collections::HashMap<String, std::collections::BTreeSet<String>> =
            Default::default();
        for r in env
            .aggregates
            .changed_requests
            .iter()
            .filter_map(|n| b.requests.get(n.as_str()))
            .filter(|r| match env.world.requests.get(r.name()) {
                None => true,
                Some(h) => {
                    h.spec.team.value != r.spec.team.value || gpus(&h.spec) < gpus(&r.spec) - 1e-9
                }
            })
        {
            by.entry(r.spec.team.value.clone())
                .or_default()
                .insert(r.spec.workload_class.value.as_str().to_string());
        }
        by.into_iter()
            .map(|(team, classes)| (team, classes.into_iter().collect()))
            .collect()
    })
}

/// Builds the facts of a CapacityRequest.
pub fn request(env: &Env<'_>, req: &Document<RequestSpec>, change: &Change) -> RequestSubject {
    let spec = &req.spec;
    let at_hour = env.at.hour_index();
    let computed;
    let (hours, sized) = match env.ledger.size(req.name()) {
        Some((h, s)) => (*h, s),
        None => {
            computed = capacity::size(spec, capacity::pool_of(env.world, spec));
            (Hours::of_request(spec), &computed)
        }
    };
    let bounded = hours.bounded(at_hour);
    let pool = capacity::pool_of(env.world, spec);
    let provided_here: Vec<crate::gpu::resources::Provided> = pool
        .map(|(p, c)| crate::gpu::resources::provided(p, c.mig_strategy.value))
        .unwrap_or_default();
    let eq_of = |resource: &str| -> f64 {
        provided_here
            .iter()
            .find(|x| x.resource == resource)
            .map(|x| x.gpu_equivalent)
            .unwrap_or(1.0)
    };

    let cost = env.analysis.request_cost(spec);
    let f = |d: Option<rust_decimal::Decimal>| d.map(crate::cost::prices::float).unwrap_or(0.0);
    let request = request_facts(env, req, sized, bounded, &cost, f);

    let team = team_facts(env, spec, hours, sized, &eq_of);
    let cluster = env.shared.cluster(&spec.cluster.value);
    let demand = super::demand_facts(
        env,
        &spec.cluster.value,
        &spec.pool.value,
        (bounded.start, bounded.end),
    );
    let pool = match pool {
        Some((p, c)) => pool_facts(env, spec, p, c, hours, sized, demand, &eq_of),
        None => RequestPoolFacts {
            pool: PoolFacts::missing(&spec.pool.value),
            committed_gpus: 0.0,
            overcommitted: false,
            overcommit_hours: 0,
            shortfall_gpus: 0.0,
            first_overcommit: String::new(),
        },
    };

    // What it was before. A removed request holds nothing now.
    let removed = change.kind == crate::policy::change::ChangeKind::Removed;
    let previous = change.previous::<RequestSpec>();
    let prev_cost = previous.and_then(|p| env.analysis.request_cost(&p.spec));
    let prev_gpus = previous
        .map(|p| capacity::size(&p.spec, capacity::pool_of(env.world, &p.spec)).gpus)
        .unwrap_or(0.0);
    let now_gpus = if removed { 0.0 } else { sized.gpus };
    let now_cost = |pick: fn(&crate::cost::RequestCost) -> rust_decimal::Decimal| {
        f(cost.as_ref().filter(|_| !removed).map(pick))
    };
    let pw = previous.and_then(|p| p.spec.window.as_ref());
    // Without a base (or a change) each request stands alone: its whole size is its ask.
    let alone = Totals {
        gpus: now_gpus,
        monthly_cost: now_cost(|c| c.monthly),
        total_cost: now_cost(|c| c.total),
    };
    let unchanged = change.kind == crate::policy::change::ChangeKind::Unchanged;
    let team_totals = if unchanged {
        alone
    } else {
        env.aggregates
            .by_pool
            .get(&(
                spec.team.value.clone(),
                spec.cluster.value.clone(),
                spec.pool.value.clone(),
            ))
            .copied()
            .unwrap_or_default()
    };
    let pr_totals = if unchanged {
        alone
    } else {
        env.aggregates
            .by_team
            .get(&spec.team.value)
            .copied()
            .unwrap_or_default()
    };
    // Holdings now added, before subtracted, from `now` on.
    let mut held = Vec::new();
    if !removed {
        held.push((hours, now_gpus));
    }
    if let Some(p) = previous {
        held.push((Hours::of_request(&p.spec), -prev_gpus));
    }
    let swing = capacity::swing(held, at_hour);
    let previous_team = previous
        .map(|p| p.spec.team.value.as_str())
        .unwrap_or(&spec.team.value);
    let released = match previous {
        // Handed to another team, or moved to another pool: the old team
        // gives up all it held there.
        Some(p)
            if !removed
                && (p.spec.team.value != spec.team.value
                    || p.spec.cluster.value != spec.cluster.value
                    || p.spec.pool.value != spec.pool.value) =>
        {
            capacity::swing([(Hours::of_request(&p.spec), prev_gpus)], at_hour).0
        }
        Some(_) => swing.1,
        None => 0.0,
    };
    let now_priority = priority_of(env, spec);
    let asks = matches!(
        change.kind,
        crate::policy::change::ChangeKind::Added | crate::policy::change::ChangeKind::Modified
    );
    let before = if asks {
        priorities::held(env, spec)
    } else {
        (None, None)
    };
    // The classes of what the same change takes from the team: its base
    // requests the change removes, hands over or shrinks.
    let team_classes_released: Vec<String> = if asks {
        classes_released(env)
            .get(&spec.team.value)
            .cloned()
            .unwrap_or_default()
    } else {
        Vec::new()
    };
    let team_priority_before = if asks {
        before
            .0
            // A team that holds nothing is at the priority a request gets
            // by default: its first ask above that preempts others too.
            .unwrap_or_else(|| {
                env.world
                    .priority_classes
                    .get(&default_class_of(env))
                    .map_or(now_priority, |p| p.spec.value.value.min(now_priority))
            })
    } else {
        now_priority
    };
    let now_preempts = preempts(env, spec);
    let team_preempting_priority_before = if asks {
        before
            .1
            // Holding none that may: what a request naming no class gets,
            // as for `team_priority_before`, if that class may preempt.
            .unwrap_or_else(|| {
                let default = default_class_of(env);
                match env.world.priority_classes.get(&default) {
                    Some(p) if class_preempts(env, &default) => {
                        p.spec.value.value.min(now_priority)
                    }
                    Some(_) => PREEMPTS_NOTHING,
                    None => now_priority,
                }
            })
    } else {
        now_priority
    };
    let stranded = stranded_in(env, spec, previous);
    let delta_cost = |pick: fn(&crate::cost::RequestCost) -> rust_decimal::Decimal| {
        round(now_cost(pick) - f(prev_cost.as_ref().map(pick)))
    };
    let change = RequestChange {
        base: super::change_facts(change),
        delta_gpus: round(capacity::signed(swing)),
        released_gpus: round(released),
        delta_monthly_cost: delta_cost(|c| c.monthly),
        delta_total_cost: delta_cost(|c| c.total),
        team_delta_gpus: round(team_totals.gpus),
        team_delta_monthly_cost: round(team_totals.monthly_cost),
        team_delta_total_cost: round(team_totals.total_cost),
        team_pr_delta_gpus: round(pr_totals.gpus),
        team_pr_delta_total_cost: round(pr_totals.total_cost),
        team_pr_delta_monthly_cost: round(pr_totals.monthly_cost),
        team_priority_before,
        team_preempting_priority_before,
        team_classes_released,
        reservation_stranded_cost: round(stranded.cost),
        reservation_stranded_share: round_up(stranded.share),
        previous: PreviousRequest {
            gpus: round(prev_gpus),
            team: previous_team.to_string(),
            priority: previous.map_or(now_priority, |p| priority_of(env, &p.spec)),
            resources: previous
                .iter()
                .flat_map(|p| {
                    p.spec
                        .resources
                        .iter()
                        .map(|(k, v)| (k.value.clone(), v.value.0))
                })
                .collect(),
            window: PreviousWindow {
                start: pw.map(|w| w.start.value.to_string()).unwrap_or_default(),
                end: pw.map(|w| w.end.value.to_string()).unwrap_or_default(),
            },
            cluster: previous
                .map(|p| p.spec.cluster.value.clone())
                .unwrap_or_default(),
            pool: previous
                .map(|p| p.spec.pool.value.clone())
                .unwrap_or_default(),
            workload_class: previous
                .map(|p| p.spec.workload_class.value.as_str().to_string())
                .unwrap_or_default(),
            priority_class: previous
                .and_then(|p| p.spec.priority_class.as_ref())
                .map(|c| c.value.clone())
                .unwrap_or_default(),
            preemptible: previous.map_or(request.preemptible, |p| {
                p.spec.preemptible.as_ref().is_some_and(|p| p.value)
            }),
            preempts: previous.map_or(now_preempts, |p| preempts(env, &p.spec)),
            monthly_cost: f(prev_cost.as_ref().map(|c| c.monthly)),
        },
    };
    RequestSubject {
        now: env.at.to_string(),
        config: env.shared.config.clone(),
        effects: env.effects.clone(),
        change,
        request,
        team,
        cluster,
        pool,
    }
}

fn request_facts(
    env: &Env<'_>,
    req: &Document<RequestSpec>,
    sized: &capacity::Sized,
    bounded: Hours,
    cost: &Option<crate::cost::RequestCost>,
    f: impl Fn(Option<rust_decimal::Decimal>) -> f64,
) -> RequestFacts {
    let spec = &req.spec;
    let (start, end) = match &spec.window {
        Some(w) => (w.start.value.to_string(), w.end.value.to_string()),
        None => (String::new(), String::new()),
    };
    let class = priority_class_of(env, spec);
    let priority = priority_of(env, spec);
    let text =
        |o: &Option<Spanned<String>>| o.as_ref().map(|s| s.value.clone()).unwrap_or_default();
    let justification = text(&spec.justification);
    let business_case = text(&spec.business_case);
    RequestFacts {
        name: req.name().to_string(),
        team: spec.team.value.clone(),
        cluster: spec.cluster.value.clone(),
        pool: spec.pool.value.clone(),
        resources: spec
            .resources
            .iter()
            .map(|(k, v)| (k.value.clone(), v.value.0))
            .collect(),
        units: sized.units.values().sum::<u32>(),
        gpus: round(sized.gpus),
        gpu_hours: round(sized.gpus * bounded.len() as f64),
        has_window: spec.window.is_some(),
        window: WindowFacts {
            start,
            end,
            hours: bounded.len(),
            days: round(bounded.len() as f64 / 24.0),
            active: spec.window.as_ref().is_none_or(|w| w.contains(env.at)),
            starts_in_days: match &spec.window {
                Some(w) => round((w.start.value.as_second() - env.at.as_second()) as f64 / 86400.0),
                None => 0.0,
            },
            ended: spec.window.as_ref().is_some_and(|w| w.end.value <= env.at),
            run_days: round(
                (super::runs::request(env, req) as f64 / 86400.0).max(bounded.len() as f64 / 24.0),
            ),
        },
        workload_class: spec.workload_class.value.as_str().to_string(),
        priority_class: class,
        priority,
        preempts: preempts(env, spec),
        preemptible: spec.preemptible.as_ref().is_some_and(|p| p.value),
        has_justification: has_visible_text(&justification),
        justification,
        success_metrics: texts(&spec.success_metrics),
        has_success_metrics: spec
            .success_metrics
            .iter()
            .any(|s| has_visible_text(&s.value)),
        has_business_case: has_visible_text(&business_case),
        business_case,
        requested_by: spec.requested_by.clone().unwrap_or_default(),
        has_price: cost.as_ref().is_some_and(|c| !c.reaches_unpriced),
        gpu_hour_price: round(f(cost.as_ref().map(|c| c.per_gpu_hour))),
        hourly_cost: round(f(cost.as_ref().map(|c| c.hourly))),
        monthly_cost: f(cost.as_ref().map(|c| c.monthly)),
        total_cost: f(cost.as_ref().map(|c| c.total)),
    }
}

/// What the change's requests do to the reservations on this request's pool
/// (the base's, and the head's when it moved).
fn stranded_in(
    env: &Env<'_>,
    now: &RequestSpec,
    previous: Option<&Document<RequestSpec>>,
) -> crate::policy::stranding::Stranded {
    let key = |s: &RequestSpec| (s.cluster.value.clone(), s.pool.value.clone());
    let mut keys = vec![key(now)];
    keys.extend(previous.map(|p| key(&p.spec)).filter(|k| *k != keys[0]));
    let mut out = crate::policy::stranding::Stranded::default();
    for s in keys.iter().filter_map(|k| env.aggregates.stranding.get(k)) {
        out.cost += s.cost;
        out.share = out.share.max(s.share);
    }
    out
}

/// The team, with its quota as the base revision had it when checking a change.
fn team_facts(
    env: &Env<'_>,
    spec: &RequestSpec,
    hours: Hours,
    sized: &capacity::Sized,
    eq_of: &dyn Fn(&str) -> f64,
) -> RequestTeamFacts {
    let team_doc = env.world.teams.get(&spec.team.value);
    let quota_doc = env
        .base
        .and_then(|b| b.teams.get(&spec.team.value))
        .or(team_doc);
    let quota: SmallMap<u32> = quota_doc
        .and_then(|t| t.spec.clusters.get(spec.cluster.value.as_str()))
        .map(|c| {
            c.quota
                .iter()
                .map(|(k, v)| (k.value.clone(), v.value.0))
                .collect()
        })
        .unwrap_or_default();
    let mut team = super::team_base(env, team_doc, &spec.team.value);
    team.quota_gpus = round(quota.iter().map(|(r, n)| *n as f64 * eq_of(r)).sum());
    let peak = env
        .ledger
        .team_gpus(&spec.team.value, &spec.cluster.value)
        .map(|t| t.peak(hours))
        .unwrap_or(sized.gpus);
    let mut over = BTreeMap::new();
    let mut over_gpus: f64 = 0.0;
    for (resource, units) in &sized.units {
        let held = env
            .ledger
            .team_units(&spec.team.value, &spec.cluster.value, resource)
            .map(|t| t.peak(hours))
            .unwrap_or(*units as f64);
        let ceiling = quota.get(resource).copied().unwrap_or(0) as f64;
        if held > ceiling {
            over.insert(resource.clone(), (held - ceiling).round() as i64);
            over_gpus += (held - ceiling) * eq_of(resource);
        }
    }
    let of_team = |m: &std::collections::BTreeMap<String, f64>| {
        round(m.get(&spec.team.value).copied().unwrap_or(0.0))
    };
    RequestTeamFacts {
        team,
        namespace: team_doc
            .and_then(|t| t.spec.clusters.get(spec.cluster.value.as_str()))
            .map(|c| c.namespace.value.clone())
            .unwrap_or_default(),
        quota,
        held_gpus: round((peak - sized.gpus).max(0.0)),
        peak_gpus: round(peak),
        within_quota: over.is_empty(),
        over_quota: over.into(),
        over_quota_gpus: round(over_gpus),
        recent_growth_gpus: of_team(&env.aggregates.recent_growth),
        recent_growth_cost: of_team(&env.aggregates.recent_growth_cost),
        monthly_growth_with_recent: of_team(&env.aggregates.monthly_growth_with_recent),
        recent_growth_units: of_team(&env.aggregates.platform_growth.units),
    }
}

#[allow(clippy::too_many_arguments)]
fn pool_facts(
    env: &Env<'_>,
    spec: &RequestSpec,
    p: &NodePool,
    c: &ClusterSpec,
    hours: Hours,
    sized: &capacity::Sized,
    demand: DemandFacts,
    eq_of: &dyn Fn(&str) -> f64,
) -> RequestPoolFacts {
    let at_hour = env.at.hour_index();
    let committed = env
        .ledger
        .pool_gpus(&spec.cluster.value, &spec.pool.value)
        .map(|t| t.peak(hours))
        .unwrap_or(sized.gpus);
    let caps = capacity::pool_capacity(p, c);
    let mut worst = capacity::Overcommit::default();
    let mut shortfall_gpus: f64 = 0.0;
    for resource in sized.units.keys() {
        let Some(line) = env
            .ledger
            .pool_units(&spec.cluster.value, &spec.pool.value, resource)
        else {
            continue;
        };
        let cap = caps.get(resource).copied().unwrap_or(0.0);
        let o = capacity::overcommit(line, cap, hours, at_hour);
        if o.hours > 0 {
            worst.hours = worst.hours.max(o.hours);
            shortfall_gpus = shortfall_gpus.max(o.shortfall * eq_of(resource));
            worst.first_hour = match (worst.first_hour, o.first_hour) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            };
        }
    }
    RequestPoolFacts {
        pool: super::pool_facts(p, c, demand),
        committed_gpus: round(committed),
        overcommitted: worst.hours > 0,
        overcommit_hours: worst.hours,
        shortfall_gpus: round(shortfall_gpus),
        first_overcommit: worst.first_hour.map(hour_text).unwrap_or_default(),
    }
}
