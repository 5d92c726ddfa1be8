//! The cost and capacity report's figures: costs, budgets, chargeback,
//! utilization, idle and stranded capacity, and recommendations.
//!
//! [`build`] gathers them from an [`Analysis`] into a [`CostReport`]: plain
//! data, serialized as `capops report --format json` (amounts are decimal
//! strings). The output layer only formats it.

use super::chart::{self, PoolChart};
use super::{Analysis, LOOKBACK_HOURS, prices};
use crate::model::money::percent as pct;
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
}

#[derive(Clone, Debug, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Totals {
    /// Every priced pool's GPUs at its blended price, for an average month.
    pub monthly_cost: Decimal,
    pub gpus: u32,
    pub reserved_commitments: Decimal,
    pub stranded_p50: Decimal,
    pub stranded_p10: Decimal,
    pub chargeback: Decimal,
    pub idle_cost: Decimal,
    pub low_utilization_teams: usize,
    pub teams_over_budget_this_month: usize,
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
    /// Blended GPU-hour price (None: not priced).
    pub gpu_hour_price: Option<Decimal>,
    pub monthly_cost: Option<Decimal>,
    /// Mean demand (allocated GPUs) over the lookback, and its share of the pool.
    pub mean_demand: Option<f64>,
    pub demand_share: Option<f64>,
    /// Mean P50 and peak P90 demand over the next 30 days.
    pub forecast_p50: Option<f64>,
    pub forecast_p90: Option<f64>,
    pub method: Option<String>,
    pub mix: Option<MixRow>,
}

#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct MixRow {
    pub baseline: Option<TierRow>,
    pub flexible: Option<TierRow>,
    pub burst_gpus: f64,
    pub monthly_mix: Decimal,
    pub monthly_on_demand: Decimal,
    pub savings_share: f64,
}

impl MixRow {
    /// The commitments in words: `20 nodes 1-year reserved` when both tiers
    /// are the same kind, else `15 nodes 3-year reserved (baseline) + 5 nodes
    /// capacity block (middle)`; `all on demand` when nothing is worth
    /// committing.
    pub fn phrase(&self) -> String {
        let nodes = |n: u32| format!("{n} node{}", if n == 1 { "" } else { "s" });
        match (&self.baseline, &self.flexible) {
            (None, None) => "all on demand".into(),
            (Some(t), None) | (None, Some(t)) => {
                format!("{} ({} GPUs) {}", nodes(t.nodes), t.gpus, t.kind)
            }
            (Some(b), Some(f)) if b.kind == f.kind => format!(
                "{} ({} GPUs) {}",
                nodes(b.nodes + f.nodes),
                b.gpus + f.gpus,
                b.kind
            ),
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
    pub total_cost: Option<Decimal>,
    pub utilization_p50: Option<f64>,
    pub utilization_p10: Option<f64>,
    pub stranded_p50: Option<Decimal>,
    pub stranded_p10: Option<Decimal>,
    pub stranded_share: Option<f64>,
    pub shortfall_hours: Option<u32>,
    pub suggested_count: Option<u32>,
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
    pub chargeback: Decimal,
    pub idle_cost: Decimal,
    pub monthly_budget: Option<Decimal>,
    pub projected_this_month: Option<Decimal>,
}

#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CostCenterRow {
    pub cost_center: String,
    pub teams: Vec<String>,
    pub chargeback: Decimal,
    pub idle_cost: Decimal,
}

#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct BudgetRow {
    pub team: String,
    pub monthly_budget: Option<Decimal>,
    pub months: Vec<MonthRow>,
}

#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct MonthRow {
    pub month: String,
    pub spend: Decimal,
    pub share: Option<f64>,
    pub alert: Option<Decimal>,
}

#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Recommendation {
    pub kind: RecommendationKind,
    pub subject: String,
    pub text: String,
    /// What following it saves a month, where that can be priced.
    pub monthly_savings: Option<Decimal>,
}

/// What a recommendation is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum RecommendationKind {
    /// Hold fewer GPUs: a team uses far less than it is allocated.
    RightsizeTeam,
    /// Reserve fewer (or more) instances than a reservation holds.
    ResizeReservation,
    /// Buy a pool's steady demand on commitments, its bursts on demand.
    CommitmentMix,
    /// A team's projected spend passes its budget.
    Budget,
}

impl RecommendationKind {
    pub fn as_str(self) -> &'static str {
        match self {
            RecommendationKind::RightsizeTeam => "rightsize-team",
            RecommendationKind::ResizeReservation => "resize-reservation",
            RecommendationKind::CommitmentMix => "commitment-mix",
            RecommendationKind::Budget => "budget",
        }
    }
}

/// Gathers the report.
pub fn build(a: &Analysis<'_>) -> CostReport {
    let at = a.at.hour_index();
    let currency = a.config.currency.clone();
    let mut totals = Totals::default();
    let mut recommendations = Vec::new();
    let month = Decimal::from(prices::HOURS_PER_MONTH);

    let mut pools = Vec::new();
    let mut charts = Vec::new();
    for ((cluster, pool), entry) in &a.pools {
        let gpus = crate::capacity::pool_gpus(entry.pool);
        totals.gpus += gpus;
        let monthly_cost = entry
            .price
            .blended
            .map(|p| (p * Decimal::from(gpus) * month).round_dp(2));
        totals.monthly_cost += monthly_cost.unwrap_or_default();
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
        let mix = a.mix(cluster, pool).map(|m| {
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
                burst_gpus: m.burst_gpus,
                monthly_mix: m.monthly_mix,
                monthly_on_demand: m.monthly_on_demand,
                savings_share: m.savings_share,
            }
        });
        if let Some(m) = &mix
            && m.savings_share >= 0.10
        {
            recommendations.push(Recommendation {
                kind: RecommendationKind::CommitmentMix,
                subject: format!("{cluster}/{pool}"),
                text: format!(
                    "commit {}, bursts of {:.1} GPUs on average on demand or spot: {} a month against {} all on demand ({:.0}% less)",
                    m.phrase(),
                    m.burst_gpus,
                    crate::model::money::format(m.monthly_mix, &currency),
                    crate::model::money::format(m.monthly_on_demand, &currency),
                    100.0 * m.savings_share
                ),
                monthly_savings: Some(m.monthly_on_demand - m.monthly_mix),
            });
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
            gpu_hour_price: entry.price.blended.map(|p| p.round_dp(4)),
            monthly_cost,
            mean_demand,
            demand_share: mean_demand.filter(|_| gpus > 0).map(|d| d / gpus as f64),
            forecast_p50: next.map(|s| s.mean_p50),
            forecast_p90: next.map(|s| s.peak_p90),
            method: outlook.map(|o| o.forecast.method.clone()),
            mix,
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
            if r.stranded_share > a.config.thresholds.stranded_spend_share.as_f64() {
                let per = r.cost.total / Decimal::from(s.count.value.0.max(1));
                recommendations.push(Recommendation {
                    kind: RecommendationKind::ResizeReservation,
                    subject: name.clone(),
                    text: format!(
                        "{} of {} GPUs used at P50: {} stranded ({} at P10); {} × {} would keep the stranded share within {:.0}%",
                        pct(r.utilization_p50),
                        r.cost.gpus,
                        crate::model::money::format(r.stranded_p50, &currency),
                        crate::model::money::format(r.stranded_p10, &currency),
                        r.suggested_count,
                        s.instance_type.value,
                        100.0 * a.config.thresholds.stranded_spend_share.as_f64()
                    ),
                    monthly_savings: Some(
                        (per * Decimal::from(s.count.value.0.saturating_sub(r.suggested_count)) * month
                            / Decimal::from(r.cost.hours.max(1)))
                        .round_dp(2),
                    ),
                });
            }
        }
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
        });
    }

    let usage = a.usage();
    let target = a.config.thresholds.target_utilization.as_f64();
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
            totals.chargeback += u.cost;
            totals.idle_cost += u.idle_cost;
            if u.low {
                totals.low_utilization_teams += 1;
                let fewer = u.mean_allocated - u.rightsized_gpus as f64;
                recommendations.push(Recommendation {
                    kind: RecommendationKind::RightsizeTeam,
                    subject: name.clone(),
                    text: format!(
                        "used {} of its GPUs over {} days ({:.1} of {:.1} on average): {} GPU{} would run the same work at {:.0}%",
                        pct(u.utilization.unwrap_or(0.0)),
                        LOOKBACK_HOURS / 24,
                        u.mean_used,
                        u.mean_allocated,
                        u.rightsized_gpus,
                        if u.rightsized_gpus == 1 { "" } else { "s" },
                        100.0 * target
                    ),
                    monthly_savings: (fewer > 0.0 && u.mean_allocated > 0.0).then(|| {
                        // At the team's average price per allocated GPU-hour.
                        let hours: f64 = u.pools.iter().map(|p| p.hours).max().unwrap_or(0) as f64;
                        let per = if hours > 0.0 {
                            u.cost / prices::decimal(u.mean_allocated * hours)
                        } else {
                            Decimal::ZERO
                        };
                        (prices::decimal(fewer) * per * month).round_dp(2)
                    }),
                });
            }
        }
        if let Some(now) = months.first()
            && now.share.is_some_and(|s| s >= 1.0)
        {
            totals.teams_over_budget_this_month += 1;
        }
        if budget.is_some()
            && let Some(first) = months.iter().find(|m| m.alert.is_some())
        {
            let peak = months
                .iter()
                .filter_map(|m| m.share.map(|s| (s, m)))
                .max_by(|x, y| x.0.total_cmp(&y.0));
            if let Some((share, m)) = peak {
                recommendations.push(Recommendation {
                        kind: RecommendationKind::Budget,
                        subject: name.clone(),
                        text: format!(
                            "projected spend reaches the {} alert in {} and peaks at {:.0}% of the budget in {} ({})",
                            pct(first.alert.map(prices::float).unwrap_or(0.0)),
                            first.label(),
                            100.0 * share,
                            m.label(),
                            crate::model::money::format(m.spend, &currency)
                        ),
                        monthly_savings: None,
                    });
            }
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
            chargeback: u.map(|u| u.cost).unwrap_or_default(),
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
    recommendations.sort_by(|x, y| {
        y.monthly_savings
            .unwrap_or_default()
            .cmp(&x.monthly_savings.unwrap_or_default())
            .then(x.subject.cmp(&y.subject))
    });
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
    }
}
