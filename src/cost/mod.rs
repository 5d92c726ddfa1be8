//! Costs, budgets, utilization and reservations: the money side of a
//! capacity repository, at a given time.
//!
//! [`Analysis`] is built once per repository and time (`--at`). It puts the
//! usage history on hourly grids, prices every pool, and computes on first
//! use (and then keeps) each pool's demand outlook (history, forecast and the
//! approved requests' timeline: [`approved`]), each pool's lookback account
//! ([`waste`]), each team's measured utilization and monthly spend
//! projection, and each reservation's analysis; the commitment mix ([`mix`])
//! and the plan of recommendations ([`plan`]) are built from them. It is shared by the policy facts, `capops check`,
//! `capops forecast` and `capops report`, and is safe to read from several
//! threads. Pure: no I/O, the time is passed in.

pub mod approved;
pub mod budget;
pub mod chart;
pub mod forecasts;
pub mod history;
pub mod mix;
mod mix_hour;
mod mix_release;
mod mix_term;
mod parts;
pub mod plan;
mod plan_changes;
mod pool_mix;
pub mod prices;
mod recommendation;
pub mod report;
mod requests;
pub mod reservation;
mod reservation_share;
mod resize;
mod ser;
pub mod usage;
pub use requests::{Piece, RequestCost};
pub mod waste;

use crate::forecast::demand::{Hourly, Outlook, SeriesSet};
use crate::model::*;
use std::collections::BTreeMap;
use std::sync::OnceLock;

/// How far ahead pool outlooks reach at least (hours): 90 days.
pub const OUTLOOK_HOURS: i64 = 90 * 24;
/// Utilization and chargeback look back this many hours from `--at`: 30 days.
pub const LOOKBACK_HOURS: i64 = 30 * 24;
/// Budgets are projected for this many calendar months, from the month of `--at`.
pub const BUDGET_MONTHS: usize = 12;
/// The furthest an outlook reaches (hours): three years.
pub const MAX_OUTLOOK_HOURS: i64 = 3 * 365 * 24;

/// A pool, priced, with its usage series.
pub struct PoolEntry<'r> {
    pub cluster: &'r Document<ClusterSpec>,
    pub pool: &'r NodePool,
    pub price: prices::PoolPrice,
    /// Usage series ids of the pool's teams.
    pub series: Vec<usize>,
    /// The pool's requests, sized.
    pub requests: Vec<approved::PoolRequest>,
    /// In a change being judged, the base's requests of the pool that the
    /// change removes or moves out of it ([`approved::with_base`]): only
    /// the demand outlook reads them (what the measurements held goes away).
    pub gone: Vec<approved::PoolRequest>,
    /// The first hour an outlook without history must cover (the earliest
    /// reservation term on the pool, or the lookback's start).
    from: i64,
    /// The hour the outlook must reach.
    until: i64,
    outlook: OnceLock<Option<Outlook>>,
    preemptible: OnceLock<Option<Outlook>>,
    steady: OnceLock<Option<Outlook>>,
    /// The measured demand of all the pool's teams (see [`Analysis::pool_demand`]).
    demand: OnceLock<Hourly>,
    /// Per hour, the allocation of the teams whose allocation is known then:
    /// (first hour, values).
    measured_allocation: OnceLock<(i64, Vec<f64>)>,
    /// The commitment mix before rightsizing (see [`Analysis::mix`]).
    mix: OnceLock<Option<mix::Mix>>,
    /// See [`budget::pool_scale`].
    budget_scale: OnceLock<Vec<f64>>,
}

/// One team's usage series in one pool.
pub struct TeamSeries {
    pub cluster: String,
    pub pool: String,
    pub id: usize,
}

/// The cost and forecast view of a repository at a time.
pub struct Analysis<'r> {
    pub repo: &'r Repo,
    pub at: Timestamp,
    pub config: std::borrow::Cow<'r, ConfigSpec>,
    pub series: SeriesSet<'r>,
    /// By (cluster, pool).
    pub pools: BTreeMap<(String, String), PoolEntry<'r>>,
    /// By team name.
    pub team_series: BTreeMap<String, Vec<TeamSeries>>,
    /// Each team's requests, by team name (built once: per-team
    /// computations read it instead of scanning every request).
    team_requests: std::collections::HashMap<&'r str, Vec<&'r Document<RequestSpec>>>,
    /// Hour the budget projections end (exclusive).
    pub budget_end: i64,
    usage: OnceLock<BTreeMap<String, usage::TeamUsage>>,
    waste: OnceLock<Vec<waste::PoolWaste>>,
    budgets: BTreeMap<String, OnceLock<Vec<budget::MonthSpend>>>,
    reservations: BTreeMap<String, OnceLock<Option<reservation::ReservationOutlook>>>,
    /// By cluster, the hours (sorted) where a reservation's term starts or
    /// ends: where what its pools cost an hour can change.
    price_changes: std::collections::HashMap<String, Vec<i64>>,
    /// By cluster, each pool's blended price from each hour of
    /// `price_changes` on (and from the hour before the first), built once
    /// when a request of the cluster is first priced.
    piece_prices: std::collections::HashMap<String, OnceLock<requests::PriceTable>>,
}

impl<'r> Analysis<'r> {
    pub fn new(repo: &'r Repo, at: Timestamp) -> Analysis<'r> {
        let at_hour = at.hour_index();
        let series = SeriesSet::build(&repo.usage, at_hour);
        let budget_end = budget::month_start_hour(at, BUDGET_MONTHS as i32);
        // How far each pool's outlook must reach: every reservation on it and every request in it.
        let mut reach: std::collections::HashMap<(&str, &str), i64> =
            std::collections::HashMap::new();
        let mut earliest: std::collections::HashMap<(&str, &str), i64> =
            std::collections::HashMap::new();
        let mut price_changes: std::collections::HashMap<String, Vec<i64>> =
            std::collections::HashMap::new();
        // Where prices change: the terms that price pools (the base's, in a check).
        let pricing = repo
            .pricing_reservations
            .as_deref()
            .unwrap_or(&repo.reservations);
        for r in pricing.values() {
            // The hours a term starts and ends inside, and the first whole
            // hours after them: a term that starts at 11:30 prices the pool
            // from 12:00 on, and the hour it starts in without it.
            let (start, end) = reservation::term_hours(&r.spec.term);
            let (second_start, second_end) = (
                r.spec.term.start.value.as_second(),
                r.spec.term.end.value.as_second(),
            );
            price_changes
                .entry(r.spec.covers.cluster.value.clone())
                .or_default()
                .extend([
                    start,
                    (second_start + 3599).div_euclid(3600),
                    second_end.div_euclid(3600),
                    end,
                ]);
        }
        for r in repo.reservations.values() {
            let (start, end) = reservation::term_hours(&r.spec.term);
            let key = (
                r.spec.covers.cluster.value.as_str(),
                r.spec.covers.pool.value.as_str(),
            );
            let s = earliest.entry(key).or_insert(start);
            *s = (*s).min(start);
            let e = reach
                .entry((
                    r.spec.covers.cluster.value.as_str(),
                    r.spec.covers.pool.value.as_str(),
                ))
                .or_insert(end);
            *e = (*e).max(end);
        }
        for changes in price_changes.values_mut() {
            changes.sort_unstable();
            changes.dedup();
        }
        for q in repo.requests.values() {
            if let Some(w) = &q.spec.window {
                let end = reservation::term_hours(w).1;
                let e = reach
                    .entry((q.spec.cluster.value.as_str(), q.spec.pool.value.as_str()))
                    .or_insert(end);
                *e = (*e).max(end);
            }
        }
        // The requests, indexed once by pool and by team.
        let mut pool_requests: std::collections::HashMap<
            (&str, &str),
            Vec<&Document<RequestSpec>>,
        > = std::collections::HashMap::new();
        let mut team_requests: std::collections::HashMap<&str, Vec<&Document<RequestSpec>>> =
            std::collections::HashMap::new();
        for q in repo.requests.values() {
            pool_requests
                .entry((q.spec.cluster.value.as_str(), q.spec.pool.value.as_str()))
                .or_default()
                .push(q);
            team_requests
                .entry(q.spec.team.value.as_str())
                .or_default()
                .push(q);
        }
        let mut base_requests: std::collections::HashMap<
            (&str, &str),
            Vec<&Document<RequestSpec>>,
        > = std::collections::HashMap::new();
        for q in repo.measured_requests.iter().flat_map(|m| m.base.values()) {
            base_requests
                .entry((q.spec.cluster.value.as_str(), q.spec.pool.value.as_str()))
                .or_default()
                .push(q);
        }
        let mut ids_of: std::collections::HashMap<(&str, &str), Vec<usize>> =
            std::collections::HashMap::new();
        for (i, k) in repo.usage.series.iter().enumerate() {
            ids_of
                .entry((k.cluster.as_str(), k.pool.as_str()))
                .or_default()
                .push(i);
        }
        let mut pools = BTreeMap::new();
        for cluster in repo.clusters.values() {
            for pool in &cluster.spec.node_pools {
                let key = (cluster.name(), pool.name.value.as_str());
                let until = (at_hour + OUTLOOK_HOURS)
                    .max(budget_end)
                    .max(reach.get(&key).copied().unwrap_or(i64::MIN))
                    .min(at_hour + MAX_OUTLOOK_HOURS);
                let mut requests = approved::requests(
                    pool_requests
                        .get(&key)
                        .map(Vec::as_slice)
                        .unwrap_or_default(),
                    cluster,
                    pool,
                );
                let gone = match repo.measured_requests.as_deref() {
                    Some(m) => approved::with_base(
                        &mut requests,
                        base_requests.remove(&key).unwrap_or_default(),
                        &m.base,
                        &m.added,
                        cluster,
                        pool,
                    ),
                    None => Vec::new(),
                };
                pools.insert(
                    (key.0.to_string(), key.1.to_string()),
                    PoolEntry {
                        cluster,
                        pool,
                        price: prices::pool(repo, cluster, pool, at),
                        series: ids_of.remove(&key).unwrap_or_default(),
                        requests,
                        gone,
                        from: (at_hour - LOOKBACK_HOURS)
                            .min(earliest.get(&key).copied().unwrap_or(i64::MAX)),
                        until,
                        outlook: OnceLock::new(),
                        preemptible: OnceLock::new(),
                        steady: OnceLock::new(),
                        demand: OnceLock::new(),
                        measured_allocation: OnceLock::new(),
                        mix: OnceLock::new(),
                        budget_scale: OnceLock::new(),
                    },
                );
            }
        }
        let mut team_series: BTreeMap<String, Vec<TeamSeries>> = BTreeMap::new();
        for (i, k) in repo.usage.series.iter().enumerate() {
            team_series
                .entry(k.team.clone())
                .or_default()
                .push(TeamSeries {
                    cluster: k.cluster.clone(),
                    pool: k.pool.clone(),
                    id: i,
                });
        }
        let budgets = repo
            .teams
            .keys()
            .map(|t| (t.clone(), OnceLock::new()))
            .collect();

        let reservations = repo
            .reservations
            .keys()
            .map(|r| (r.clone(), OnceLock::new()))
            .collect();
        Analysis {
            repo,
            at,
            config: repo.config_spec(),
            series,
            pools,
            team_series,
            team_requests,
            budget_end,
            usage: OnceLock::new(),
            waste: OnceLock::new(),
            budgets,
            reservations,
            piece_prices: price_changes
                .keys()
                .map(|c| (c.clone(), OnceLock::new()))
                .collect(),
            price_changes,
        }
    }

    /// The team's requests (none for an unknown team).
    pub fn team_requests(&self, team: &str) -> &[&'r Document<RequestSpec>] {
        self.team_requests
            .get(team)
            .map(Vec::as_slice)
            .unwrap_or_default()
    }

    pub fn pool(&self, cluster: &str, pool: &str) -> Option<&PoolEntry<'r>> {
        self.pools.get(&(cluster.to_string(), pool.to_string()))
    }

    /// The pool's measured demand (allocated GPUs of all its teams).
    pub fn pool_demand(&self, cluster: &str, pool: &str) -> Hourly {
        self.pool_demand_ref(cluster, pool)
            .cloned()
            .unwrap_or_default()
    }

    /// [`Analysis::pool_demand`], computed once per pool.
    pub fn pool_demand_ref(&self, cluster: &str, pool: &str) -> Option<&Hourly> {
        let p = self.pool(cluster, pool)?;
        Some(p.demand.get_or_init(|| self.series.sum(&p.series)))
    }

    /// The pool's demand outlook: its measured demand and forecast plus
    /// what its approved requests change ([`approved`]), or, without usage
    /// history, its requests alone. `None` with neither.
    pub fn outlook(&self, cluster: &str, pool: &str) -> Option<&Outlook> {
        let p = self.pool(cluster, pool)?;
        p.outlook
            .get_or_init(|| self.outlook_until(cluster, pool, p.until))
            .as_ref()
    }

    /// A fresh outlook of a pool's demand up to hour `until` (see [`Analysis::outlook`]).
    pub fn outlook_until(&self, cluster: &str, pool: &str, until: i64) -> Option<Outlook> {
        let p = self.pool(cluster, pool)?;
        self.build_outlook(p, until, |_| true, |_, _| 1.0)
    }

    /// An outlook of the requests `keep` selects, with each team's measured
    /// allocation weighted by `weight(team, hour)`.
    fn build_outlook(
        &self,
        p: &PoolEntry<'r>,
        until: i64,
        keep: impl Fn(&approved::PoolRequest) -> bool,
        weight: impl Fn(&str, i64) -> f64,
    ) -> Option<Outlook> {
        let team_of = |id: usize| self.repo.usage.series[id].team.as_str();
        // What was measured before `--at` only: a report or check as of a
        // past moment forecasts from the history it had then, and says how
        // long that was.
        let at_hour = self.at.hour_index();
        let weighted: Vec<crate::forecast::demand::Hourly> = p
            .series
            .iter()
            .map(|&id| {
                let s = self.series.allocated(id);
                let team = team_of(id);
                let before = usize::try_from(at_hour - s.start).unwrap_or(0);
                crate::forecast::demand::Hourly::new(
                    s.start,
                    s.values()
                        .take(before)
                        .enumerate()
                        .map(|(i, v)| v.map(|x| x * weight(team, s.start + i as i64))),
                )
            })
            .collect();
        let history = crate::forecast::demand::sum(weighted.iter());
        let requests = p.requests.iter().chain(&p.gone).filter(|r| keep(r));
        match history.last_observed() {
            Some(last) => {
                let e = last + 1;
                // What each team held in the weeks before the measurements ended.
                let held = |team: &str| -> Option<approved::Held> {
                    let any = p.series.iter().any(|&id| team_of(id) == team);
                    any.then(|| {
                        let series = p
                            .series
                            .iter()
                            .zip(&weighted)
                            .filter(|(id, _)| team_of(**id) == team)
                            .map(|x| x.1);
                        approved::Held::of(series, e)
                    })
                };
                let ap = approved::Approved::new(requests, e, held);
                Outlook::forecast_from(history, until, |h| ap.at(h), |last| self.read_from(last))
            }
            None => {
                let held = approved::held(requests);
                if held.peak(crate::capacity::Hours::ALWAYS) <= 0.0 {
                    return None;
                }
                let from = p.from.min(self.at.hour_index());
                Some(Outlook::requests_only(from, until, |h| held.at(h)))
            }
        }
    }

    /// How many times the history's length a forecast may reach before it
    /// says it extrapolates (the Config's `costs.historyMultiple`).
    pub fn history_multiple(&self) -> f64 {
        self.config.costs.history_multiple.as_f64()
    }

    /// A team's allocation outlook in one pool, up to the end of the budget
    /// projection. Built anew on each call and not kept: only the team's
    /// budget projection reads it, and that is kept.
    pub fn team_outlook(&self, s: &TeamSeries) -> Option<Outlook> {
        // What was measured before `--at` only, as the pools' outlooks read.
        let all = self.series.allocated(s.id);
        let before = usize::try_from(self.at.hour_index() - all.start).unwrap_or(0);
        let history = if all.hours() <= before {
            all.clone()
        } else {
            crate::forecast::demand::Hourly::new(all.start, all.values().take(before))
        };
        Outlook::forecast_from(
            history,
            self.budget_end,
            |_| 0.0,
            |last| self.read_from(last),
        )
    }

    /// The first hour a forecast reads of a series measured up to hour
    /// `last`: with the Config's `usage.hourlyDays`, that many days up to
    /// the end of the UTC day of `last`; without, every hour. Older hours
    /// still count as measured (the lookback, charts, a reservation's past
    /// hours, the history's length) and in the daily roll-ups ([`history`]).
    pub fn read_from(&self, last: i64) -> i64 {
        match self.config.usage.hourly_days {
            Some(days) => (last.div_euclid(24) + 1 - i64::from(days)) * 24,
            None => i64::MIN,
        }
    }

    /// Works out every pool's outlooks, then the lookback, utilization,
    /// budgets and reservations, on all cores. Each is computed once and
    /// kept (the same values as asking for them one by one, in any order:
    /// none of them reads another's cache before it is set, and none runs
    /// work on other threads while setting its own).
    pub fn prepare(&self) {
        use rayon::prelude::*;
        self.pools.par_iter().for_each(|((cluster, pool), p)| {
            // The preemptible outlook only where the commitment mix reads it.
            if self.outlook(cluster, pool).is_some() && p.price.catalog.is_some() {
                self.preemptible_outlook(cluster, pool);
            }
        });
        let teams: Vec<&String> = self.budgets.keys().collect();
        let reservations: Vec<&String> = self.reservations.keys().collect();
        rayon::join(
            || {
                rayon::join(|| self.waste(), || self.usage());
            },
            || {
                // Budgets read their pools' scales: worked out first.
                self.pools.par_iter().for_each(|((cluster, pool), _)| {
                    self.budget_scale(cluster, pool);
                });
                teams.par_iter().for_each(|t| {
                    self.budget(t);
                });
                reservations.par_iter().for_each(|r| {
                    self.reservation(r);
                });
            },
        );
    }

    /// Measured utilization of every team with usage, over the 30 days before `at`.
    pub fn usage(&self) -> &BTreeMap<String, usage::TeamUsage> {
        self.usage.get_or_init(|| usage::measure(self))
    }

    /// Every pool's lookback by bucket (used, idle, stranded, unmeasured) and by team.
    pub fn waste(&self) -> &[waste::PoolWaste] {
        self.waste.get_or_init(|| waste::measure(self))
    }

    /// One pool's lookback.
    pub fn pool_waste(&self, cluster: &str, pool: &str) -> Option<&waste::PoolWaste> {
        self.waste()
            .iter()
            .find(|w| w.cluster == cluster && w.pool == pool)
    }

    /// A team's projected spend by calendar month, from the month of `at`.
    pub fn budget(&self, team: &str) -> &[budget::MonthSpend] {
        match self.budgets.get(team) {
            Some(cell) => cell.get_or_init(|| budget::project(self, team)),
            None => &[],
        }
    }

    /// A reservation's analysis; `None` without a price or without demand history.
    pub fn reservation(&self, name: &str) -> Option<&reservation::ReservationOutlook> {
        let cell = self.reservations.get(name)?;
        cell.get_or_init(|| {
            let doc = self.repo.reservations.get(name)?;
            let (cluster, pool) = (&doc.spec.covers.cluster.value, &doc.spec.covers.pool.value);
            // A pool with neither usage history nor requests has no demand:
            // its reservation is judged on that (all of it stranded), not
            // left without a forecast.
            let idle;
            let outlook = match (self.outlook(cluster, pool), self.pool(cluster, pool)) {
                (Some(o), _) => Some(o),
                (None, Some(p)) => {
                    idle =
                        Outlook::requests_only(p.from.min(self.at.hour_index()), p.until, |_| 0.0);
                    Some(&idle)
                }
                (None, None) => None,
            };
            let ctx = reservation::Context {
                threshold: self.config.thresholds.stranded_spend_share.as_f64(),
                // Stale usage is not an idle-free pool: without a measured
                // hour in the 30 days, the last 30 measured days say.
                busy: self
                    .pool_waste(cluster, pool)
                    .and_then(|w| w.busy())
                    .or_else(|| {
                        self.pool(cluster, pool)
                            .and_then(|p| waste::last_busy(self, &p.series))
                    }),
                at_hour: self.at.hour_index(),
                history_multiple: self.history_multiple(),
            };
            reservation::analyze(self.repo, name, outlook, ctx)
        })
        .as_ref()
    }
}

#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_budget;
#[cfg(test)]
mod tests_churn;
#[cfg(test)]
mod tests_finops;
#[cfg(test)]
mod tests_history;
#[cfg(test)]
mod tests_kept;
#[cfg(test)]
mod tests_lab;
#[cfg(test)]
mod tests_layout;
#[cfg(test)]
mod tests_lookback;
#[cfg(test)]
mod tests_mix;
#[cfg(test)]
mod tests_plan;
#[cfg(test)]
mod tests_prehistory;
#[cfg(test)]
mod tests_release;
