//! The cost and capacity report's figures: costs, budgets, chargeback,
//! utilization, idle and stranded capacity, and recommendations.
//!
//! [`build`] gathers them from an [`Analysis`] into a [`CostReport`]: plain
//! data, serialized as `capops report --format json` (amounts are decimal
//! strings). The lookback's account adds up: per pool and in total,
//! capacity cost = used + idle + stranded + unmeasured, and the teams'
//! chargeback plus what is unassigned equals the pools' capacity cost
//! ([`super::waste`]). The recommendations come from [`super::plan`]. The
//! output layer only formats it.

use super::chart::{self, PoolChart};
pub use super::plan::{Recommendation, RecommendationKind};
use super::{Analysis, LOOKBACK_HOURS, prices};
use rust_decimal::Decimal;
use serde::Serialize;

/// Everything the report shows.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CostReport {
    pub at: String,
    pub organization: String,
    pub currency: String,
    /// Utilization, idle cost and chargeback cover the days before `at`.
    pub lookback_days: i64,
    pub totals: Totals,
    pub pools: Vec<PoolRow>,
    pub reservations: Vec<ReservationRow>,
    pub teams: Vec<TeamRow>,
    pub cost_centers: Vec<CostCenterRow>,
    pub budgets: Vec<BudgetRow>,
    pub recommendations: Vec<Recommendation>,
    pub charts: Vec<PoolChart>,
    /// Each pool's whole usage history by month (daily roll-ups).
    pub history: Vec<super::history::PoolHistory>,
}

#[derive(Clone, Debug, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Totals {
    /// Every priced pool's GPUs at its blended price, for an average month.
    #[serde(serialize_with = "super::ser::cents")]
    pub monthly_cost: Decimal,
    pub gpus: u32,
    /// GPUs of pools without a price: in `gpus`, not in any cost.
    pub unpriced_gpus: u32,
    /// The lookback's account over the priced pools: capacity = used + idle + stranded + unmeasured.
    pub lookback: Account,
    /// The teams' chargeback (allocation plus shared unallocated cost).
    #[serde(serialize_with = "super::ser::cents")]
    pub chargeback: Decimal,
    /// Unallocated cost charged to no team.
    #[serde(serialize_with = "super::ser::cents")]
    pub unassigned: Decimal,
    /// The unused part of the teams' allocation, and of the allocation of
    /// usage rows of teams with no document (= `lookback.idle`).
    #[serde(serialize_with = "super::ser::cents")]
    pub idle_cost: Decimal,
    /// The part of `idle_cost` from usage rows of teams with no document
    /// (in `unassigned`, in no team's row).
    #[serde(serialize_with = "super::ser::cents")]
    pub unassigned_idle_cost: Decimal,
    /// How unallocated cost is shared (`proportional`, `even`, `not-shared`).
    pub chargeback_rule: String,
    #[serde(serialize_with = "super::ser::cents")]
    pub reserved_commitments: Decimal,
    /// Reservations' expected waste over their terms: stranded (P50, P10) and idle (P50).
    #[serde(serialize_with = "super::ser::cents")]
    pub stranded_p50: Decimal,
    #[serde(serialize_with = "super::ser::cents")]
    pub stranded_p10: Decimal,
    #[serde(serialize_with = "super::ser::cents")]
    pub reserved_idle_p50: Decimal,
    /// What the recommendations save a month together (none counted twice).
    #[serde(serialize_with = "super::ser::cents")]
    pub plan_savings: Decimal,
    pub low_utilization_teams: usize,
    pub teams_over_budget_this_month: usize,
}

/// Where capacity money went over the lookback.
#[derive(Clone, Debug, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Account {
    #[serde(serialize_with = "super::ser::cents")]
    pub capacity: Decimal,
    #[serde(serialize_with = "super::ser::cents")]
    pub allocated: Decimal,
    #[serde(serialize_with = "super::ser::cents")]
    pub used: Decimal,
    #[serde(serialize_with = "super::ser::cents")]
    pub idle: Decimal,
    #[serde(serialize_with = "super::ser::cents")]
    pub stranded: Decimal,
    #[serde(serialize_with = "super::ser::cents")]
    pub unmeasured: Decimal,
}

impl Account {
    fn of(c: &super::waste::Costs) -> Account {
        Account {
            capacity: c.capacity,
            allocated: c.allocated,
            used: c.used,
            idle: c.idle,
            stranded: c.stranded,
            unmeasured: c.unmeasured,
        }
    }

    fn add(&mut self, o: &Account) {
        self.capacity += o.capacity;
        self.allocated += o.allocated;
        self.used += o.used;
        self.idle += o.idle;
        self.stranded += o.stranded;
        self.unmeasured += o.unmeasured;
    }
}

#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PoolRow {
    pub cluster: String,
    pub pool: String,
    pub gpu_model: String,
    pub gpus: u32,
    pub reserved_nodes: u32,
    pub on_demand_nodes: u32,
    pub spot_nodes: u32,
    /// Instances the reservations in force hold beyond the reserved nodes
    /// (billed, carried by the blended price).
    pub reserved_beyond_nodes: u32,
    /// Blended GPU-hour price (None: not priced).
    #[serde(serialize_with = "super::ser::price_opt")]
    pub gpu_hour_price: Option<Decimal>,
    #[serde(serialize_with = "super::ser::cents_opt")]
    pub monthly_cost: Option<Decimal>,
    /// Mean demand (allocated GPUs) over the lookback, and its share of the pool.
    pub mean_demand: Option<f64>,
    pub demand_share: Option<f64>,
    /// Mean P50 and peak P90 demand over the next 30 days.
    pub forecast_p50: Option<f64>,
    pub forecast_p90: Option<f64>,
    pub method: Option<String>,
    pub mix: Option<MixRow>,
    /// The lookback's account (None: no price).
    pub account: Option<Account>,
    /// GPU-hours of the lookback allocated beyond the pool's GPUs (scaled away in the account).
    pub over_capacity_gpu_hours: f64,
}

#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct MixRow {
    pub baseline: Option<TierRow>,
    pub flexible: Option<TierRow>,
    pub block_gpus: f64,
    pub spot_gpus: f64,
    pub on_demand_gpus: f64,
    /// Shares of the demand each way of buying serves.
    pub shares: super::mix::Shares,
    #[serde(serialize_with = "super::ser::cents")]
    pub monthly_mix: Decimal,
    #[serde(serialize_with = "super::ser::cents")]
    pub monthly_locked: Decimal,
    /// Unlocked reservations kept because they cost less than what the mix
    /// would buy (their cost is in `monthly_locked`).
    pub kept: Vec<super::mix::Kept>,
    #[serde(serialize_with = "super::ser::cents")]
    pub monthly_on_demand: Decimal,
    pub savings_share: f64,
}

impl MixRow {
    /// The commitments in words: `20 nodes 1-year reserved` when both tiers
    /// are the same kind, else `15 nodes 3-year reserved (baseline) + 5 nodes
    /// 1-year reserved (middle)`; `no commitment` when nothing is worth committing.
    pub fn phrase(&self) -> String {
        let nodes = |n: u32| format!("{n} node{}", if n == 1 { "" } else { "s" });
        match (&self.baseline, &self.flexible) {
            (None, None) => "no commitment".into(),
            (Some(t), None) | (None, Some(t)) => {
                format!("{} ({} GPUs) {}", nodes(t.nodes), t.gpus, t.kind)
            }
            (Some(b), Some(f)) => format!(
                "{} ({} GPUs) {} for the baseline + {} ({} GPUs) {} for the middle",
                nodes(b.nodes),
                b.gpus,
                b.kind,
                nodes(f.nodes),
                f.gpus,
                f.kind
            ),
        }
    }
}

#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TierRow {
    pub kind: &'static str,
    pub nodes: u32,
    pub gpus: u32,
    #[serde(serialize_with = "super::ser::price")]
    pub gpu_hour_price: Decimal,
}

#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ReservationRow {
    pub name: String,
    pub cluster: String,
    pub pool: String,
    pub kind: String,
    pub instance_type: String,
    pub count: u32,
    pub gpus: u32,
    pub start: String,
    pub end: String,
    #[serde(serialize_with = "super::ser::cents_opt")]
    pub total_cost: Option<Decimal>,
    pub utilization_p50: Option<f64>,
    pub utilization_p10: Option<f64>,
    #[serde(serialize_with = "super::ser::cents_opt")]
    pub stranded_p50: Option<Decimal>,
    #[serde(serialize_with = "super::ser::cents_opt")]
    pub stranded_p10: Option<Decimal>,
    pub stranded_share: Option<f64>,
    pub shortfall_hours: Option<u32>,
    pub suggested_count: Option<u32>,
    /// Allocated but unused reserved GPU-hours at P50, priced, and their share of the cost.
    #[serde(serialize_with = "super::ser::cents_opt")]
    pub idle_p50: Option<Decimal>,
    pub idle_share: Option<f64>,
    /// Prepaid or not cancellable, and started: nothing is recommended for it.
    pub locked: bool,
    /// `history` or `requests` (no usage history: judged on the requests alone).
    pub basis: Option<String>,
    /// Whether the history supports the whole term; else the date it supports up to.
    pub term_supported: Option<bool>,
    pub supported_until: Option<String>,
}

#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TeamRow {
    pub team: String,
    pub cost_center: String,
    pub utilization: Option<f64>,
    pub mean_allocated: f64,
    pub mean_used: f64,
    pub low: bool,
    pub rightsized_gpus: u32,
    /// Allocated GPU-hours priced.
    #[serde(serialize_with = "super::ser::cents")]
    pub allocated_cost: Decimal,
    /// Its share of the unallocated cost of its pools.
    #[serde(serialize_with = "super::ser::cents")]
    pub shared_cost: Decimal,
    /// `allocated_cost + shared_cost`.
    #[serde(serialize_with = "super::ser::cents")]
    pub chargeback: Decimal,
    #[serde(serialize_with = "super::ser::cents")]
    pub idle_cost: Decimal,
    #[serde(serialize_with = "super::ser::cents_opt")]
    pub monthly_budget: Option<Decimal>,
    #[serde(serialize_with = "super::ser::cents_opt")]
    pub projected_this_month: Option<Decimal>,
}

#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CostCenterRow {
    pub cost_center: String,
    pub teams: Vec<String>,
    #[serde(serialize_with = "super::ser::cents")]
    pub chargeback: Decimal,
    #[serde(serialize_with = "super::ser::cents")]
    pub idle_cost: Decimal,
}

#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct BudgetRow {
    pub team: String,
    #[serde(serialize_with = "super::ser::cents_opt")]
    pub monthly_budget: Option<Decimal>,
    pub months: Vec<MonthRow>,
}

#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct MonthRow {
    pub month: String,
    #[serde(serialize_with = "super::ser::cents")]
    pub spend: Decimal,
    pub share: Option<f64>,
    /// The alert level reached (`0.8`, `1.0`, `1.2`): a share, not money.
    pub alert: Option<Decimal>,
    /// A pool the team uses or asks for that month has no price: its GPUs
    /// are not in `spend`, which is then less than the month will cost.
    pub unpriced: bool,
}

/// Gathers the report.
pub fn build(a: &Analysis<'_>) -> CostReport {
    // The monthly history and the cached analyses are worked out on all
    // cores first; the rows below read them.
    let (history, ()) = rayon::join(|| super::history::build(a), || a.prepare());
    let at = a.at.hour_index();
    let currency = a.config.currency.clone();
    let mut totals = Totals {
        chargeback_rule: a.config.costs.chargeback.as_str().to_string(),
        ..Totals::default()
    };
    let month = Decimal::from(prices::HOURS_PER_MONTH);

    let mut pools = Vec::new();
    let mut charts = Vec::new();
    for ((cluster, pool), entry) in &a.pools {
        let gpus = crate::capacity::pool_gpus(entry.pool);
        totals.gpus += gpus;
        // The pool's GPUs at the blended price, and the instances reserved
        // beyond its reserved nodes, which bill as well.
        let monthly_cost = entry
            .price
            .blended
            .map(|p| ((p * Decimal::from(gpus) + entry.price.excess_hourly) * month).round_dp(2));
        totals.monthly_cost += monthly_cost.unwrap_or_default();
        if monthly_cost.is_none() {
            totals.unpriced_gpus += gpus;
        }
        let demand = a.pool_demand(cluster, pool);
        let mut sum = 0.0;
        let mut n = 0usize;
        for h in (at - LOOKBACK_HOURS)..at {
            if let Some(v) = demand.get(h) {
                sum += v;
                n += 1;
            }
        }
        let mean_demand = (n > 0).then(|| sum / n as f64);
        let outlook = a.outlook(cluster, pool);
        let next =
            outlook.map(|o| o.over(at.max(o.forecast_start), at.max(o.forecast_start) + 30 * 24));
        let mix = a.mix(cluster, pool, 0.0).map(|m| {
            let tier = |t: &Option<crate::cost::mix::Tier>| {
                t.as_ref().map(|t| TierRow {
                    kind: t.kind,
                    nodes: t.nodes,
                    gpus: t.gpus,
                    gpu_hour_price: t.price,
                })
            };
            MixRow {
                baseline: tier(&m.baseline),
                flexible: tier(&m.flexible),
                block_gpus: m.block_gpus,
                spot_gpus: m.spot_gpus,
                on_demand_gpus: m.on_demand_gpus,
                shares: m.shares.clone(),
                monthly_mix: m.monthly_mix,
                monthly_locked: m.monthly_locked,
                kept: m.kept.clone(),
                monthly_on_demand: m.monthly_on_demand,
                savings_share: m.savings_share,
            }
        });
        let waste = a.pool_waste(cluster, pool);
        let account = waste.and_then(|w| w.costs.as_ref()).map(Account::of);
        if let (Some(acc), Some(w)) = (&account, waste) {
            totals.lookback.add(acc);
            totals.unassigned += w.unassigned;
            totals.idle_cost += w.unassigned_idle;
            totals.unassigned_idle_cost += w.unassigned_idle;
        }
        if let Some(c) = chart::pool_chart(a, cluster, pool, at - 30 * 24, at + 90 * 24) {
            charts.push(c);
        }
        pools.push(PoolRow {
            cluster: cluster.clone(),
            pool: pool.clone(),
            gpu_model: entry.pool.gpu_model.value.clone(),
            gpus,
            reserved_nodes: entry.price.reserved_nodes,
            on_demand_nodes: entry.price.on_demand_nodes,
            spot_nodes: entry.price.spot_nodes,
            reserved_beyond_nodes: entry.price.excess_instances,
            gpu_hour_price: entry.price.blended.map(|p| p.round_dp(4)),
            monthly_cost,
            mean_demand,
            demand_share: mean_demand.filter(|_| gpus > 0).map(|d| d / gpus as f64),
            forecast_p50: next.map(|s| s.mean_p50),
            forecast_p90: next.map(|s| s.peak_p90),
            method: outlook.map(|o| o.forecast.method.clone()),
            mix,
            account,
            over_capacity_gpu_hours: waste.map_or(0.0, |w| w.gpu_hours.over_capacity),
        });
    }

    let mut reservations = Vec::new();
    for (name, doc) in &a.repo.reservations {
        let s = &doc.spec;
        let cost = prices::reservation(a.repo, s);
        totals.reserved_commitments += cost
            .as_ref()
            .map(|c| c.total.round_dp(2))
            .unwrap_or_default();
        let r = a.reservation(name);
        if let Some(r) = r {
            totals.stranded_p50 += r.stranded_p50;
            totals.stranded_p10 += r.stranded_p10;
            totals.reserved_idle_p50 += r.idle_p50;
        }
        let hour_text = |h: i64| {
            crate::model::Timestamp::from_second(h * 3600)
                .map(|t| t.to_string())
                .unwrap_or_default()
        };
        reservations.push(ReservationRow {
            name: name.clone(),
            cluster: s.covers.cluster.value.clone(),
            pool: s.covers.pool.value.clone(),
            kind: s.kind.value.as_str().to_string(),
            instance_type: s.instance_type.value.clone(),
            count: s.count.value.0,
            gpus: prices::reservation_gpus(a.repo, s),
            start: s.term.start.value.to_string(),
            end: s.term.end.value.to_string(),
            total_cost: cost.map(|c| c.total.round_dp(2)),
            utilization_p50: r.map(|r| r.utilization_p50),
            utilization_p10: r.map(|r| r.utilization_p10),
            stranded_p50: r.map(|r| r.stranded_p50),
            stranded_p10: r.map(|r| r.stranded_p10),
            stranded_share: r.map(|r| r.stranded_share),
            shortfall_hours: r.map(|r| r.shortfall_hours),
            suggested_count: r.map(|r| r.suggested_count),
            idle_p50: r.map(|r| r.idle_p50),
            idle_share: r.map(|r| r.idle_share),
            locked: super::reservation::locked(s, at),
            basis: r.map(|r| r.basis.as_str().to_string()),
            term_supported: r.map(|r| r.term_supported),
            supported_until: r
                .filter(|r| r.basis == crate::forecast::demand::Basis::History)
                .map(|r| hour_text(r.supported_until)),
        });
    }

    let usage = a.usage();
    let mut teams = Vec::new();
    let mut budgets = Vec::new();
    let mut names: Vec<&String> = a.repo.teams.keys().collect();
    for t in usage.keys() {
        if !a.repo.teams.contains_key(t) {
            names.push(t);
        }
    }
    for name in names {
        let u = usage.get(name);
        let budget = a
            .repo
            .teams
            .get(name)
            .and_then(|t| t.spec.monthly_budget.as_ref())
            .map(|b| b.value.0);
        let months = a.budget(name);
        if let Some(u) = u {
            totals.chargeback += u.chargeback;
            totals.idle_cost += u.idle_cost;
            if u.low {
                totals.low_utilization_teams += 1;
            }
        }
        // Over budget: projected above it, in money (at it exactly is at
        // budget, where the 100% alert fires, not over).
        if let Some(now) = months.first()
            && now.budget.is_some_and(|b| now.spend > b)
        {
            totals.teams_over_budget_this_month += 1;
        }
        teams.push(TeamRow {
            team: name.clone(),
            cost_center: a
                .repo
                .teams
                .get(name)
                .map(|t| t.spec.cost_center.value.clone())
                .unwrap_or_default(),
            utilization: u.and_then(|u| u.utilization),
            mean_allocated: u.map(|u| u.mean_allocated).unwrap_or(0.0),
            mean_used: u.map(|u| u.mean_used).unwrap_or(0.0),
            low: u.is_some_and(|u| u.low),
            rightsized_gpus: u.map(|u| u.rightsized_gpus).unwrap_or(0),
            allocated_cost: u.map(|u| u.cost).unwrap_or_default(),
            shared_cost: u.map(|u| u.shared_cost).unwrap_or_default(),
            chargeback: u.map(|u| u.chargeback).unwrap_or_default(),
            idle_cost: u.map(|u| u.idle_cost).unwrap_or_default(),
            monthly_budget: budget,
            projected_this_month: months.first().map(|m| m.spend),
        });
        budgets.push(BudgetRow {
            team: name.clone(),
            monthly_budget: budget,
            months: months
                .iter()
                .map(|m| MonthRow {
                    month: m.label(),
                    spend: m.spend,
                    share: m.share,
                    alert: m.alert,
                    unpriced: m.unpriced,
                })
                .collect(),
        });
    }
    let cost_centers = crate::cost::usage::by_cost_center(usage)
        .into_iter()
        .map(|(cc, (charge, idle, teams))| CostCenterRow {
            cost_center: cc,
            teams,
            chargeback: charge,
            idle_cost: idle,
        })
        .collect();
    let recommendations = super::plan::recommendations(a);
    totals.plan_savings = recommendations
        .iter()
        .filter_map(|r| r.monthly_savings)
        .sum();
    CostReport {
        at: a.at.to_string(),
        organization: a.config.organization.clone().unwrap_or_default(),
        currency,
        lookback_days: LOOKBACK_HOURS / 24,
        totals,
        pools,
        reservations,
        teams,
        cost_centers,
        budgets,
        recommendations,
        charts,
        history,
    }
}
