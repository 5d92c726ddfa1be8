//! `capops report`: costs, budgets, chargeback, utilization, idle and
//! stranded capacity, and recommendations, as text, Markdown, JSON or one
//! self-contained HTML file.
//!
//! [`build`] gathers the figures from an [`Analysis`] into a [`CostReport`]
//! (plain data, serialized as the JSON output; amounts are decimal strings);
//! the renderers below only format it.

use super::chart::{self, PoolChart};
use crate::cost::{Analysis, LOOKBACK_HOURS, prices};
use rust_decimal::Decimal;
use serde::Serialize;

/// Everything the report shows.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CostReport {
    pub version: u32,
    pub command: &'static str,
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
    /// `rightsize-team`, `resize-reservation`, `commitment-mix`, `budget`.
    pub kind: &'static str,
    pub subject: String,
    pub text: String,
    /// What following it saves a month, where that can be priced.
    pub monthly_savings: Option<Decimal>,
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
                kind: "commitment-mix",
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
                    kind: "resize-reservation",
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
                    kind: "rightsize-team",
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
                        kind: "budget",
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
        version: super::json::OUTPUT_VERSION,
        command: "report",
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

fn pct(x: f64) -> String {
    format!("{:.0}%", 100.0 * x)
}

fn opt_pct(x: Option<f64>) -> String {
    x.map(pct).unwrap_or_else(|| "–".into())
}

fn gpus(x: f64) -> String {
    let t = format!("{x:.1}");
    t.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// A table: header and rows, rendered as aligned text or Markdown.
struct Table {
    head: Vec<String>,
    rows: Vec<Vec<String>>,
    /// Columns aligned right (numbers).
    right: Vec<bool>,
}

impl Table {
    fn new(head: &[(&str, bool)]) -> Table {
        Table {
            head: head.iter().map(|h| h.0.to_string()).collect(),
            right: head.iter().map(|h| h.1).collect(),
            rows: Vec::new(),
        }
    }

    fn text(&self) -> String {
        let widths: Vec<usize> = (0..self.head.len())
            .map(|i| {
                self.rows
                    .iter()
                    .map(|r| r[i].chars().count())
                    .chain([self.head[i].chars().count()])
                    .max()
                    .unwrap_or(0)
            })
            .collect();
        let line = |cells: Vec<&str>| -> String {
            let parts: Vec<String> = cells
                .iter()
                .enumerate()
                .map(|(i, c)| {
                    let pad = widths[i].saturating_sub(c.chars().count());
                    if self.right[i] {
                        format!("{}{c}", " ".repeat(pad))
                    } else {
                        format!("{c}{}", " ".repeat(pad))
                    }
                })
                .collect();
            format!("  {}\n", parts.join("  ").trim_end())
        };
        let mut out = line(self.head.iter().map(String::as_str).collect());
        for r in &self.rows {
            out.push_str(&line(r.iter().map(String::as_str).collect()));
        }
        out
    }

    fn markdown(&self) -> String {
        let mut out = format!("| {} |\n|", self.head.join(" | "));
        for r in &self.right {
            out.push_str(if *r { " ---: |" } else { " --- |" });
        }
        out.push('\n');
        for r in &self.rows {
            let cells: Vec<String> = r.iter().map(|c| c.replace('|', "\\|")).collect();
            out.push_str(&format!("| {} |\n", cells.join(" | ")));
        }
        out
    }

    fn html(&self) -> String {
        let mut out = String::from("<table>\n<thead><tr>");
        for (h, r) in self.head.iter().zip(&self.right) {
            out.push_str(&format!(
                "<th{}>{}</th>",
                if *r { " class=\"n\"" } else { "" },
                chart::escape(h)
            ));
        }
        out.push_str("</tr></thead>\n<tbody>\n");
        for row in &self.rows {
            out.push_str("<tr>");
            for (c, r) in row.iter().zip(&self.right) {
                out.push_str(&format!(
                    "<td{}>{}</td>",
                    if *r { " class=\"n\"" } else { "" },
                    chart::escape(c)
                ));
            }
            out.push_str("</tr>\n");
        }
        out.push_str("</tbody>\n</table>\n");
        out
    }
}

/// The report's sections, each a title, a note and a table.
fn sections(r: &CostReport) -> Vec<(&'static str, String, Table)> {
    let cur = r.currency.as_str();
    let m = |d: Decimal| crate::model::money::format(d, cur);
    let om = |d: Option<Decimal>| {
        d.map(|d| crate::model::money::format(d, cur))
            .unwrap_or_else(|| "–".into())
    };
    let mut out = Vec::new();

    let mut t = Table::new(&[
        ("pool", false),
        ("GPUs", true),
        ("reserved/od/spot nodes", true),
        ("GPU-hour", true),
        ("a month", true),
        (
            if r.lookback_days == 30 {
                "demand, 30 d"
            } else {
                "demand"
            },
            true,
        ),
        ("P50 next 30 d", true),
        ("P90 peak", true),
        ("recommended mix", false),
    ]);
    for p in &r.pools {
        t.rows.push(vec![
            format!("{}/{}", p.cluster, p.pool),
            p.gpus.to_string(),
            format!(
                "{}/{}/{}",
                p.reserved_nodes, p.on_demand_nodes, p.spot_nodes
            ),
            p.gpu_hour_price
                .map(|d| crate::model::money::format(d, cur))
                .unwrap_or_else(|| "no price".into()),
            om(p.monthly_cost),
            p.mean_demand
                .map(|d| format!("{} ({})", gpus(d), opt_pct(p.demand_share)))
                .unwrap_or_else(|| "no usage".into()),
            p.forecast_p50.map(gpus).unwrap_or_else(|| "–".into()),
            p.forecast_p90.map(gpus).unwrap_or_else(|| "–".into()),
            p.mix
                .as_ref()
                .map(|x| {
                    if x.baseline.is_none() && x.flexible.is_none() {
                        return format!("all on demand: {}", m(x.monthly_on_demand));
                    }
                    format!(
                        "{}: {} vs {} on demand",
                        x.phrase(),
                        m(x.monthly_mix),
                        m(x.monthly_on_demand)
                    )
                })
                .unwrap_or_else(|| "–".into()),
        ]);
    }
    out.push((
        "Pools",
        "What each pool costs as provisioned (its GPUs at the purchase mix's blended price), its demand, and the commitment mix its forecast calls for (nodes).".to_string(),
        t,
    ));

    let mut t = Table::new(&[
        ("reservation", false),
        ("pool", false),
        ("GPUs", true),
        ("term", false),
        ("cost", true),
        ("used P50", true),
        ("stranded P50", true),
        ("stranded P10", true),
        ("shortfall h", true),
        ("suggested count", true),
    ]);
    for x in &r.reservations {
        t.rows.push(vec![
            x.name.clone(),
            format!("{}/{}", x.cluster, x.pool),
            x.gpus.to_string(),
            format!(
                "{} → {}",
                &x.start[..10.min(x.start.len())],
                &x.end[..10.min(x.end.len())]
            ),
            om(x.total_cost),
            opt_pct(x.utilization_p50),
            x.stranded_p50
                .map(|s| format!("{} ({})", m(s), opt_pct(x.stranded_share)))
                .unwrap_or_else(|| "no usage".into()),
            om(x.stranded_p10),
            x.shortfall_hours
                .map(|h| h.to_string())
                .unwrap_or_else(|| "–".into()),
            x.suggested_count
                .map(|c| format!("{c} of {}", x.count))
                .unwrap_or_else(|| "–".into()),
        ]);
    }
    out.push((
        "Reservations",
        "Reserved GPU-hours against forecast demand over each term: utilization and stranded spend at P50 (expected) and P10 (the risk), hours where P90 demand exceeds the whole pool, and the most instances that keep within the stranded-spend threshold.".to_string(),
        t,
    ));

    let mut t = Table::new(&[
        ("team", false),
        ("cost center", false),
        ("utilization", true),
        ("allocated", true),
        ("used", true),
        ("rightsized", true),
        ("chargeback", true),
        ("idle cost", true),
        ("this month", true),
        ("budget", true),
    ]);
    for x in &r.teams {
        t.rows.push(vec![
            if x.low {
                format!("{} (low)", x.team)
            } else {
                x.team.clone()
            },
            x.cost_center.clone(),
            opt_pct(x.utilization),
            gpus(x.mean_allocated),
            gpus(x.mean_used),
            if x.utilization.is_some() {
                x.rightsized_gpus.to_string()
            } else {
                "–".into()
            },
            m(x.chargeback),
            m(x.idle_cost),
            om(x.projected_this_month),
            om(x.monthly_budget),
        ]);
    }
    out.push((
        "Teams",
        format!(
            "Over the {} days before {}: used over allocated GPU-hours, mean GPUs allocated and used, the GPUs the work needs at the target utilization, allocated GPU-hours priced (chargeback) and the unused part (idle cost); then this month's projected spend.",
            r.lookback_days, r.at
        ),
        t,
    ));

    let mut t = Table::new(&[
        ("cost center", false),
        ("teams", false),
        ("chargeback", true),
        ("idle cost", true),
    ]);
    for c in &r.cost_centers {
        t.rows.push(vec![
            c.cost_center.clone(),
            c.teams.join(", "),
            m(c.chargeback),
            m(c.idle_cost),
        ]);
    }
    out.push((
        "Chargeback by cost center",
        format!("The {} days before {}.", r.lookback_days, r.at),
        t,
    ));

    let month_names: Vec<String> = r
        .budgets
        .first()
        .map(|b| b.months.iter().map(|m| m.month.clone()).collect())
        .unwrap_or_default();
    let mut head: Vec<(&str, bool)> = vec![("team", false), ("budget", true)];
    head.extend(month_names.iter().map(|s| (s.as_str(), true)));
    let mut t = Table::new(&head);
    for b in r
        .budgets
        .iter()
        .filter(|b| b.monthly_budget.is_some() || b.months.iter().any(|m| !m.spend.is_zero()))
    {
        let mut row = vec![b.team.clone(), om(b.monthly_budget)];
        for mo in &b.months {
            let alert = mo
                .alert
                .map(|a| format!(" ⚠{:.0}%", 100.0 * prices::float(a)))
                .unwrap_or_default();
            row.push(format!(
                "{}{alert}",
                crate::model::money::format(mo.spend, "")
            ));
        }
        t.rows.push(row);
    }
    out.push((
        "Budgets",
        format!(
            "Projected spend by calendar month ({}): measured hours, then the allocation forecast, requests starting and requests ending. ⚠ marks the highest alert level a month reaches.",
            cur
        ),
        t,
    ));

    let mut t = Table::new(&[
        ("kind", false),
        ("subject", false),
        ("recommendation", false),
        ("saves a month", true),
    ]);
    for x in &r.recommendations {
        t.rows.push(vec![
            x.kind.to_string(),
            x.subject.clone(),
            x.text.clone(),
            om(x.monthly_savings),
        ]);
    }
    out.push((
        "Recommendations",
        "Largest monthly savings first.".into(),
        t,
    ));
    out
}

fn headline(r: &CostReport) -> Vec<String> {
    let cur = r.currency.as_str();
    let t = &r.totals;
    vec![
        format!(
            "{} GPUs cost {} a month as provisioned",
            t.gpus,
            crate::model::money::format(t.monthly_cost, cur)
        ),
        format!(
            "reservations commit {}; {} of it expected stranded (P50), {} at P10",
            crate::model::money::format(t.reserved_commitments, cur),
            crate::model::money::format(t.stranded_p50, cur),
            crate::model::money::format(t.stranded_p10, cur)
        ),
        format!(
            "last {} days: {} charged back, {} of it idle",
            r.lookback_days,
            crate::model::money::format(t.chargeback, cur),
            crate::model::money::format(t.idle_cost, cur)
        ),
        format!(
            "{} team{} below the utilization threshold; {} over budget this month",
            t.low_utilization_teams,
            if t.low_utilization_teams == 1 {
                ""
            } else {
                "s"
            },
            t.teams_over_budget_this_month
        ),
    ]
}

fn title(r: &CostReport) -> String {
    let org = if r.organization.is_empty() {
        String::new()
    } else {
        format!("{}: ", r.organization)
    };
    format!("{org}GPU cost and capacity report, {}", r.at)
}

/// Plain text, with a sparkline of each pool's demand.
pub fn text(r: &CostReport) -> String {
    let mut out = format!("{}\n\n", title(r));
    for h in headline(r) {
        out.push_str(&format!("  {h}\n"));
    }
    for (name, note, table) in sections(r) {
        out.push_str(&format!("\n{name}\n  {note}\n\n"));
        if table.rows.is_empty() {
            out.push_str("  (none)\n");
        } else {
            out.push_str(&table.text());
        }
    }
    if !r.charts.is_empty() {
        out.push_str(
            "\nDemand, 30 days measured │ 90 days forecast (P50), scaled to each pool's GPUs\n\n",
        );
        let width = r
            .charts
            .iter()
            .map(|c| c.cluster.len() + c.pool.len() + 1)
            .max()
            .unwrap_or(0);
        for c in &r.charts {
            let measured: Vec<f64> = c
                .days
                .iter()
                .filter(|d| d.measured)
                .map(|d| d.p50)
                .collect();
            let forecast: Vec<f64> = c
                .days
                .iter()
                .filter(|d| !d.measured)
                .map(|d| d.p50)
                .collect();
            out.push_str(&format!(
                "  {:<width$}  {}│{}  of {}\n",
                format!("{}/{}", c.cluster, c.pool),
                chart::sparkline(&measured, c.capacity),
                chart::sparkline(&forecast, c.capacity),
                gpus(c.capacity)
            ));
        }
    }
    out
}

/// Markdown, with a Mermaid chart per pool.
pub fn markdown(r: &CostReport) -> String {
    let mut out = format!("# {}\n\n", title(r));
    for h in headline(r) {
        out.push_str(&format!("- {h}\n"));
    }
    for (name, note, table) in sections(r) {
        out.push_str(&format!("\n## {name}\n\n{note}\n\n"));
        if table.rows.is_empty() {
            out.push_str("_None._\n");
        } else {
            out.push_str(&table.markdown());
        }
    }
    if !r.charts.is_empty() {
        out.push_str("\n## Demand against capacity\n\n");
        for c in &r.charts {
            out.push_str(&chart::mermaid(c));
            out.push('\n');
        }
    }
    out
}

/// One self-contained HTML file: inline styles and SVG charts, no scripts,
/// nothing fetched.
pub fn html(r: &CostReport) -> String {
    let mut out = format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>{}</title>\n<style>\n{}\n</style>\n</head>\n<body>\n<h1>{}</h1>\n<ul class=\"headline\">\n",
        chart::escape(&title(r)),
        STYLE,
        chart::escape(&title(r))
    );
    for h in headline(r) {
        out.push_str(&format!("<li>{}</li>\n", chart::escape(&h)));
    }
    out.push_str("</ul>\n");
    for (name, note, table) in sections(r) {
        out.push_str(&format!(
            "<h2>{}</h2>\n<p>{}</p>\n",
            chart::escape(name),
            chart::escape(&note)
        ));
        if table.rows.is_empty() {
            out.push_str("<p><em>None.</em></p>\n");
        } else {
            out.push_str(&table.html());
        }
    }
    if !r.charts.is_empty() {
        out.push_str("<h2>Demand against capacity</h2>\n");
        for c in &r.charts {
            out.push_str(&format!(
                "<figure>\n<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 900 300\" width=\"900\" height=\"300\" font-family=\"sans-serif\" font-size=\"12\" role=\"img\" aria-label=\"{}/{}\">\n{}</svg>\n<figcaption>{}</figcaption>\n</figure>\n",
                chart::escape(&c.cluster),
                chart::escape(&c.pool),
                chart::panel(c, 900.0, 300.0),
                chart::escape(&format!("Forecast: {}", c.method))
            ));
        }
    }
    out.push_str("<footer>Generated by capops. Amounts are in ");
    out.push_str(&chart::escape(&r.currency));
    out.push_str(".</footer>\n</body>\n</html>\n");
    out
}

const STYLE: &str = "body{font-family:system-ui,sans-serif;margin:2em;color:#222;max-width:1200px}\
table{border-collapse:collapse;margin:0.5em 0 1.5em}th,td{border-bottom:1px solid #ddd;padding:4px 8px;text-align:left}\
th{background:#f4f4f4}.n{text-align:right;font-variant-numeric:tabular-nums}.headline li{margin:0.2em 0}\
figure{margin:1em 0}figcaption{color:#666;font-size:0.9em}footer{margin-top:2em;color:#888;font-size:0.85em}";
