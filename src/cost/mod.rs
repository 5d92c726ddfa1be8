//! Costs, budgets, utilization and reservations: the money side of a
//! capacity repository, at a given time.
//!
//! [`Analysis`] is built once per repository and time (`--at`). It puts the
//! usage history on hourly grids, prices every pool, and computes on first
//! use (and then keeps) each pool's demand outlook, each team's measured
//! utilization and monthly spend projection, and each reservation's
//! stranded-spend analysis. It is shared by the policy facts, `capops check`,
//! `capops forecast` and `capops report`, and is safe to read from several
//! threads. Pure: no I/O, the time is passed in.

pub mod budget;
pub mod chart;
pub mod forecasts;
pub mod mix;
pub mod prices;
pub mod report;
pub mod reservation;
pub mod usage;

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
    /// The hour the outlook must reach.
    until: i64,
    outlook: OnceLock<Option<Outlook>>,
}

/// One team's usage series in one pool.
pub struct TeamSeries {
    pub cluster: String,
    pub pool: String,
    pub id: usize,
    outlook: OnceLock<Option<Outlook>>,
}

/// The cost and forecast view of a repository at a time.
pub struct Analysis<'r> {
    pub repo: &'r Repo,
    pub at: Timestamp,
    pub config: std::borrow::Cow<'r, ConfigSpec>,
    pub series: SeriesSet,
    /// By (cluster, pool).
    pub pools: BTreeMap<(String, String), PoolEntry<'r>>,
    /// By team name.
    pub team_series: BTreeMap<String, Vec<TeamSeries>>,
    /// Hour the budget projections end (exclusive).
    pub budget_end: i64,
    usage: OnceLock<BTreeMap<String, usage::TeamUsage>>,
    budgets: BTreeMap<String, OnceLock<Vec<budget::MonthSpend>>>,
    reservations: BTreeMap<String, OnceLock<Option<reservation::ReservationOutlook>>>,
}

impl<'r> Analysis<'r> {
    pub fn new(repo: &'r Repo, at: Timestamp) -> Analysis<'r> {
        let at_hour = at.hour_index();
        let series = SeriesSet::build(&repo.usage);
        let budget_end = budget::month_start_hour(at, BUDGET_MONTHS as i32);
        // How far each pool's outlook must reach: every reservation on it and every request in it.
        let mut reach: std::collections::HashMap<(&str, &str), i64> =
            std::collections::HashMap::new();
        for r in repo.reservations.values() {
            let end = reservation::term_hours(&r.spec.term).1;
            let e = reach
                .entry((
                    r.spec.covers.cluster.value.as_str(),
                    r.spec.covers.pool.value.as_str(),
                ))
                .or_insert(end);
            *e = (*e).max(end);
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
                pools.insert(
                    (key.0.to_string(), key.1.to_string()),
                    PoolEntry {
                        cluster,
                        pool,
                        price: prices::pool(repo, cluster, pool),
                        series: ids_of.remove(&key).unwrap_or_default(),
                        until,
                        outlook: OnceLock::new(),
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
                    outlook: OnceLock::new(),
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
            budget_end,
            usage: OnceLock::new(),
            budgets,
            reservations,
        }
    }

    pub fn pool(&self, cluster: &str, pool: &str) -> Option<&PoolEntry<'r>> {
        self.pools.get(&(cluster.to_string(), pool.to_string()))
    }

    /// The pool's measured demand (allocated GPUs of all its teams).
    pub fn pool_demand(&self, cluster: &str, pool: &str) -> Hourly {
        self.pool(cluster, pool)
            .map(|p| self.series.sum(&p.series))
            .unwrap_or_default()
    }

    /// The pool's demand outlook; `None` without usage history.
    pub fn outlook(&self, cluster: &str, pool: &str) -> Option<&Outlook> {
        let p = self.pool(cluster, pool)?;
        p.outlook
            .get_or_init(|| Outlook::new(self.series.sum(&p.series), p.until))
            .as_ref()
    }

    /// A team's allocation outlook in one pool, up to the end of the budget projection.
    pub fn team_outlook<'a>(&'a self, s: &'a TeamSeries) -> Option<&'a Outlook> {
        s.outlook
            .get_or_init(|| Outlook::new(self.series.allocated[s.id].clone(), self.budget_end))
            .as_ref()
    }

    /// Measured utilization of every team with usage, over the 30 days before `at`.
    pub fn usage(&self) -> &BTreeMap<String, usage::TeamUsage> {
        self.usage.get_or_init(|| usage::measure(self))
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
            let outlook = self.outlook(&doc.spec.covers.cluster.value, &doc.spec.covers.pool.value);
            let threshold = self.config.thresholds.stranded_spend_share.as_f64();
            reservation::analyze(self.repo, name, outlook, threshold)
        })
        .as_ref()
    }

    /// The commitment mix recommended for a pool, over the next 90 days.
    pub fn mix(&self, cluster: &str, pool: &str) -> Option<mix::Mix> {
        let p = self.pool(cluster, pool)?;
        let price = p.price.catalog.as_ref()?;
        let outlook = self.outlook(cluster, pool)?;
        let from = self.at.hour_index().max(outlook.forecast_start);
        mix::recommend(
            outlook,
            from,
            OUTLOOK_HOURS as usize,
            p.pool.gpus_per_node.value.0,
            price,
        )
    }

    /// What a request costs: per hour, per month and over its window.
    pub fn request_cost(&self, spec: &RequestSpec) -> Option<RequestCost> {
        let p = self.pool(&spec.cluster.value, &spec.pool.value)?;
        let per_gpu_hour = p.price.blended?;
        let sized = crate::capacity::size(spec, Some((p.pool, &p.cluster.spec)));
        let gpus = prices::decimal(sized.gpus);
        let hourly = gpus * per_gpu_hour;
        let hours = crate::capacity::Hours::of_request(spec)
            .bounded(self.at.hour_index())
            .len();
        Some(RequestCost {
            per_gpu_hour,
            hourly: hourly.round_dp(4),
            monthly: (hourly * rust_decimal::Decimal::from(prices::HOURS_PER_MONTH)).round_dp(2),
            total: (hourly * rust_decimal::Decimal::from(hours)).round_dp(2),
            hours,
        })
    }
}

/// The cost of a request.
#[derive(Clone, Debug, PartialEq)]
pub struct RequestCost {
    /// The pool's blended GPU-hour price.
    pub per_gpu_hour: rust_decimal::Decimal,
    pub hourly: rust_decimal::Decimal,
    /// Over an average month (730 hours).
    pub monthly: rust_decimal::Decimal,
    /// Over the window (open-ended requests: one year from `--at`).
    pub total: rust_decimal::Decimal,
    pub hours: i64,
}

#[cfg(test)]
mod tests;
