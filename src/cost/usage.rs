//! Measured utilization, idle cost and chargeback, over the 30 days before `--at`.
//!
//! Utilization is used GPU-hours over allocated GPU-hours, counting only the
//! hours where both were measured (a gap is not a zero). A team below the
//! Config's low-utilization threshold is flagged, with the GPUs it would need
//! at the target utilization: its mean GPUs used over the target, rounded up.
//! Its costs come from the pools' accounts ([`super::waste`]): allocated
//! GPU-hours at each pool's blended price, the unused part of that (idle),
//! and its share of the pools' unallocated cost; chargeback is the first plus
//! the last.

use super::{Analysis, LOOKBACK_HOURS};
use rust_decimal::Decimal;
use std::collections::BTreeMap;

/// One team's usage of one pool over the lookback.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PoolUsage {
    pub cluster: String,
    pub pool: String,
    /// Hours with both allocated and used measured.
    pub hours: usize,
    pub allocated_gpu_hours: f64,
    pub used_gpu_hours: f64,
    /// Allocated GPU-hours at the pool's blended price (None: the pool has no price).
    pub cost: Option<Decimal>,
    /// The unused part of `cost`.
    pub idle_cost: Option<Decimal>,
    /// The team's share of the pool's unallocated cost.
    pub shared_cost: Option<Decimal>,
}

impl PoolUsage {
    pub fn mean_allocated(&self) -> f64 {
        if self.hours == 0 {
            0.0
        } else {
            self.allocated_gpu_hours / self.hours as f64
        }
    }
    pub fn mean_used(&self) -> f64 {
        if self.hours == 0 {
            0.0
        } else {
            self.used_gpu_hours / self.hours as f64
        }
    }
}

/// One team's usage over the lookback, across pools.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TeamUsage {
    pub team: String,
    pub cost_center: String,
    pub pools: Vec<PoolUsage>,
    /// Used over allocated GPU-hours; None when nothing was allocated.
    pub utilization: Option<f64>,
    /// Mean GPUs allocated and used (summed over pools).
    pub mean_allocated: f64,
    pub mean_used: f64,
    /// Below the Config's low-utilization threshold.
    pub low: bool,
    /// GPUs the team needs at the target utilization.
    pub rightsized_gpus: u32,
    /// Allocated GPU-hours priced (pools without a price left out).
    pub cost: Decimal,
    pub idle_cost: Decimal,
    /// Its share of the unallocated cost of the pools it uses.
    pub shared_cost: Decimal,
    /// What it is charged: `cost + shared_cost`.
    pub chargeback: Decimal,
    /// Whether a pool the team used has no price.
    pub unpriced: bool,
}

/// Measures every team with usage in the lookback.
pub fn measure(a: &Analysis<'_>) -> BTreeMap<String, TeamUsage> {
    let at = a.at.hour_index();
    let from = at - LOOKBACK_HOURS;
    let low = a.config.thresholds.low_utilization.as_f64();
    let target = a.config.thresholds.target_utilization.as_f64();
    let mut out = BTreeMap::new();
    // Each team's part of each priced pool, found by key (a search of the
    // pool's teams for every team was quadratic in the teams).
    let parts: std::collections::HashMap<(&str, &str, &str), &super::waste::TeamPart> = a
        .waste()
        .iter()
        .filter(|w| w.costs.is_some())
        .flat_map(|w| {
            w.teams
                .iter()
                .map(move |x| ((w.cluster.as_str(), w.pool.as_str(), x.team.as_str()), x))
        })
        .collect();
    for (team, series) in &a.team_series {
        // Rows of a team with no document count in their pool and in no
        // team's utilization or chargeback (`usage-unknown-reference`).
        let Some(doc) = a.repo.teams.get(team) else {
            continue;
        };
        let mut t = TeamUsage {
            team: team.clone(),
            cost_center: doc.spec.cost_center.value.clone(),
            ..TeamUsage::default()
        };
        for s in series {
            let alloc = a.series.allocated(s.id);
            let used = a.series.used(s.id);
            let mut p = PoolUsage {
                cluster: s.cluster.clone(),
                pool: s.pool.clone(),
                ..PoolUsage::default()
            };
            for h in from.max(alloc.start)..at.min(alloc.end()) {
                if let (Some(x), Some(u)) = (alloc.get(h), used.get(h)) {
                    p.hours += 1;
                    p.allocated_gpu_hours += x;
                    p.used_gpu_hours += u.min(x);
                }
            }
            if p.hours == 0 {
                continue;
            }
            let part = parts
                .get(&(s.cluster.as_str(), s.pool.as_str(), team.as_str()))
                .copied();
            match part {
                Some(x) => {
                    t.cost += x.allocated_cost;
                    t.idle_cost += x.idle_cost;
                    t.shared_cost += x.shared_cost;
                    p.cost = Some(x.allocated_cost);
                    p.idle_cost = Some(x.idle_cost);
                    p.shared_cost = Some(x.shared_cost);
                }
                None => t.unpriced = true,
            }
            t.mean_allocated += p.mean_allocated();
            t.mean_used += p.mean_used();
            t.pools.push(p);
        }
        if t.pools.is_empty() {
            continue;
        }
        t.chargeback = t.cost + t.shared_cost;
        let allocated: f64 = t.pools.iter().map(|p| p.allocated_gpu_hours).sum();
        let used: f64 = t.pools.iter().map(|p| p.used_gpu_hours).sum();
        t.utilization = (allocated > 0.0).then(|| used / allocated);
        t.low = t.utilization.is_some_and(|u| u < low);
        t.rightsized_gpus = rightsize(t.mean_used, target);
        out.insert(team.clone(), t);
    }
    out
}

/// GPUs needed to run `mean_used` GPUs of work at `target` utilization.
pub fn rightsize(mean_used: f64, target: f64) -> u32 {
    if target <= 0.0 {
        return mean_used.ceil() as u32;
    }
    // A hair under a whole number is that whole number (float noise).
    (mean_used / target - 1e-9).ceil().max(0.0) as u32
}

/// Chargeback and idle cost per cost center: the teams' summed.
pub fn by_cost_center(
    usage: &BTreeMap<String, TeamUsage>,
) -> BTreeMap<String, (Decimal, Decimal, Vec<String>)> {
    let mut out: BTreeMap<String, (Decimal, Decimal, Vec<String>)> = BTreeMap::new();
    for t in usage.values() {
        let key = if t.cost_center.is_empty() {
            "(no cost center)".to_string()
        } else {
            t.cost_center.clone()
        };
        let e = out.entry(key).or_default();
        e.0 += t.chargeback;
        e.1 += t.idle_cost;
        e.2.push(t.team.clone());
    }
    out
}
