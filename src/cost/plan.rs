//! One consistent plan of recommendations, pool by pool: rightsizing first,
//! then commitments sized on the rightsized demand; savings never counted
//! twice; nothing for commitments that are locked.
//!
//! For each pool with a price, `today` is what it costs a month as
//! provisioned (its GPUs at the blended price, plus the reserved instances
//! beyond its reserved nodes, as its report `monthlyCost`). The commitment
//! mix is worked out twice: on the forecast demand (`mix0`) and on the
//! demand after the low-utilization teams release what they do not use
//! (`mix1`). Then
//!
//! - each **rightsize-team** recommendation saves its share (by GPUs
//!   released) of `min(mix0, today) - mix1` (never below 0): what the
//!   released GPUs would have cost under the recommended purchase, locked
//!   commitments included (a pool whose GPUs are all locked saves nothing by
//!   rightsizing until they end), and never more than the bill can fall by
//!   when the forecast demand would cost more than today;
//! - the pool's **commitment-mix** recommendation buys `mix1` and saves
//!   `today - max(mix0, mix1)` (never below 0), the rest of the difference
//!   to today's bill (`mix1` can cost more than `mix0` over the window when
//!   a tier capped by its whole term shrinks with the release);
//!
//! so a pool's savings add up to `today - mix1` (or less, never more) and
//! no saving is counted twice. A commitment mix is recommended when it saves
//! at least 10% of today's cost, and whenever the pool's rightsizing saves
//! something (that saving is realised only by buying `mix1`). A reservation
//! that is oversized and can still be changed (not locked) is resized inside
//! its pool's commitment plan; on its own (with its own saving) only when
//! the pool has no plan. Pools without a catalog price credit rightsizing at
//! the blended price. Every recommendation carries its saving, its risk and
//! the document change that would apply it.

use super::plan_changes::request_changes;
use super::usage::rightsize;
use super::{Analysis, LOOKBACK_HOURS, prices};
use crate::model::money::{format as money, percent as pct};
use rust_decimal::Decimal;

/// The smallest saving, as a share of a pool's cost, worth a commitment plan.
pub const MIN_PLAN_SAVING: f64 = 0.10;

pub use super::recommendation::{Recommendation, RecommendationKind};

/// A team's rightsizing across pools: its saving, per-pool texts, document changes and risks.
#[derive(Default)]
struct TeamPlan {
    saving: Decimal,
    texts: Vec<String>,
    changes: Vec<String>,
    risks: Vec<String>,
}

/// A team's release in one pool.
struct Release {
    team: String,
    gpus: f64,
    /// The share of the release off its preemptible requests: as the plan's
    /// document change cuts them, else the share of its requests now.
    preemptible_share: f64,
    /// The hour its requests in force there end (the latest; `i64::MAX`
    /// when one is open): after it, it holds nothing to release.
    until: i64,
    rightsized: u32,
    allocated: f64,
    used_p95: f64,
}

/// The GPUs each low-utilization team can release in a pool: its mean
/// allocation there minus what its mean use needs at the target utilization.
fn releases(a: &Analysis<'_>, cluster: &str, pool: &str) -> Vec<Release> {
    let target = a.config.thresholds.target_utilization.as_f64();
    let at = a.at.hour_index();
    let mut out = Vec::new();
    for t in a.usage().values().filter(|t| t.low) {
        for p in t
            .pools
            .iter()
            .filter(|p| p.cluster == cluster && p.pool == pool)
        {
            let rightsized = rightsize(p.mean_used(), target);
            let series = a
                .team_series
                .get(&t.team)
                .and_then(|v| v.iter().find(|s| s.cluster == cluster && s.pool == pool));
            // Never more than it still holds: a team that has shrunk or left
            // the pool since has released the difference already.
            let pool_end = a.outlook(cluster, pool).map(|o| o.forecast_start);
            let held = series.map_or(p.mean_allocated(), |s| {
                super::budget::held_at_end(a.series.allocated(s.id), pool_end)
            });
            let gpus = p.mean_allocated().min(held) - rightsized as f64;
            if gpus <= 0.0 {
                continue;
            }
            let mut used: Vec<f64> = series
                .map(|s| {
                    let u = a.series.used(s.id);
                    ((at - LOOKBACK_HOURS)..at)
                        .filter_map(|h| u.get(h))
                        .collect()
                })
                .unwrap_or_default();
            used.sort_by(f64::total_cmp);
            let (mut pre, mut all, mut until) = (0.0, 0.0, i64::MIN);
            if let Some(entry) = a.pools.get(&(cluster.to_string(), pool.to_string())) {
                for r in entry.requests.iter().filter(|r| r.team == t.team) {
                    if r.hours.start <= at && at < r.hours.end {
                        all += r.gpus;
                        until = until.max(r.hours.end);
                        if r.preemptible {
                            pre += r.gpus;
                        }
                    }
                }
            }
            // Split as the plan's change cuts (not as the team holds).
            let share =
                super::plan_changes::preemptible_cut_share(a, &t.team, (cluster, pool), rightsized)
                    .unwrap_or(if all > 0.0 { pre / all } else { 0.0 });
            out.push(Release {
                team: t.team.clone(),
                gpus,
                preemptible_share: share,
                // Measured without a request in force: for as long as it lasts.
                until: if all > 0.0 { until } else { i64::MAX },
                rightsized,
                allocated: p.mean_allocated(),
                used_p95: crate::forecast::quantile(&used, 0.95),
            });
        }
    }
    out
}

/// The recommendations of every pool, and the budget alerts, largest saving first.
pub fn recommendations(a: &Analysis<'_>) -> Vec<Recommendation> {
    let cur = a.config.currency.clone();
    let month = Decimal::from(prices::HOURS_PER_MONTH);
    let mut out = Vec::new();
    let mut teams: std::collections::BTreeMap<String, TeamPlan> = Default::default();
    for ((cluster, pool), entry) in &a.pools {
        let Some(blended) = entry.price.blended else {
            continue;
        };
        let pool_gpus = crate::capacity::pool_gpus(entry.pool);
        // As the report's pool `monthlyCost`: with the reserved instances
        // beyond the pool's reserved nodes, which bill too.
        let today =
            ((blended * Decimal::from(pool_gpus) + entry.price.excess_hourly) * month).round_dp(2);
        let rel = releases(a, cluster, pool);
        let released: f64 = rel.iter().map(|r| r.gpus).sum();
        let mix0 = a.mix(cluster, pool, 0.0);
        let mix1 = if released > 0.0 {
            // A team's released GPUs come off its preemptible work in the
            // share its requests there are preemptible, off steady work for
            // the rest.
            let preemptible: f64 = rel.iter().map(|r| r.gpus * r.preemptible_share).sum();
            let steady_until = rel
                .iter()
                .filter(|r| r.preemptible_share < 1.0)
                .map(|r| r.until)
                .max()
                .unwrap_or(i64::MIN);
            let steady: Vec<(&str, u32, f64, i64)> = rel
                .iter()
                .filter(|r| r.preemptible_share < 1.0)
                .map(|r| {
                    (
                        r.team.as_str(),
                        r.rightsized,
                        r.gpus * (1.0 - r.preemptible_share),
                        r.until,
                    )
                })
                .collect();
            let steps =
                super::plan_changes::release_schedule(a, (cluster, pool), &steady, steady_until);
            // In a MIG pool the floor counts the slices the teams keep.
            let keep: Vec<(&str, u32)> = rel
                .iter()
                .map(|r| (r.team.as_str(), r.rightsized))
                .collect();
            let cuts = super::plan_changes::cuts(a, &keep, (cluster, pool));
            a.mix_cut(
                cluster,
                pool,
                super::mix::Release {
                    gpus: released,
                    preemptible,
                    steady_until,
                    preemptible_until: rel
                        .iter()
                        .filter(|r| r.preemptible_share > 0.0)
                        .map(|r| r.until)
                        .max()
                        .unwrap_or(i64::MIN),
                    steps: &steps,
                },
                &cuts,
            )
        } else {
            mix0.clone()
        };
        // What the bill can fall by: from today's cost at most (a pool whose
        // forecast outgrows today's cost saves only down from today).
        let rightsizing = match (&mix0, &mix1) {
            (Some(m0), Some(m1)) => {
                (m0.monthly_plan().min(today) - m1.monthly_plan()).max(Decimal::ZERO)
            }
            _ => (prices::decimal(released) * blended * month).round_dp(2),
        };
        let mut given = Decimal::ZERO;
        for (k, r) in rel.iter().enumerate() {
            let part = if k + 1 == rel.len() {
                rightsizing - given
            } else {
                (rightsizing * prices::decimal(r.gpus / released)).round_dp(2)
            };
            given += part;
            let e = teams.entry(r.team.clone()).or_default();
            e.saving += part;
            e.texts.push(format!(
                "{cluster}/{pool}: {} → {} GPUs",
                gpus(r.allocated),
                r.rightsized
            ));
            e.changes.extend(request_changes(
                a,
                &r.team,
                (cluster, pool),
                r.gpus,
                r.rightsized,
            ));
            e.risks.push(if r.used_p95 > r.rightsized as f64 + 1e-9 {
                format!(
                    "in {cluster}/{pool} its busiest hours (P95) used {} GPUs, above {}: that work would queue",
                    gpus(r.used_p95),
                    r.rightsized
                )
            } else {
                format!(
                    "in {cluster}/{pool} its busiest hours (P95) used {} GPUs, within {}",
                    gpus(r.used_p95),
                    r.rightsized
                )
            });
        }
        let (mut planned, mut commits) = (false, false);
        if let (Some(m0), Some(m1)) = (&mix0, &mix1) {
            // The plan buys mix1: with whole instances it can cost more than
            // mix0, and the pool's savings never exceed today - mix1. It is
            // recommended when it saves enough on its own, and whenever
            // rightsizing's saving rests on it (rightsizing saves only
            // because the pool then buys mix1 instead of what it has).
            let saving = (today - m0.monthly_plan().max(m1.monthly_plan())).max(Decimal::ZERO);
            let enough = !today.is_zero() && prices::float(saving / today) >= MIN_PLAN_SAVING;
            if enough || (rightsizing > Decimal::ZERO && m1.monthly_plan() < today) {
                planned = true;
                // Only commitments the plan buys serve the demand a later
                // reservation was sized on (a plan all on demand and spot
                // leaves it to be resized on its own).
                commits = m1.baseline.as_ref().is_some_and(|t| t.nodes > 0)
                    || m1.flexible.as_ref().is_some_and(|t| t.nodes > 0);
                out.push(commitment(a, cluster, pool, entry, m1, today, saving, &cur));
            }
        }
        // With a plan, the reservations it leaves alone (those starting
        // after its 90 days) are still resized on their own.
        out.extend(super::resize::resizes(
            a, cluster, pool, &cur, planned, commits,
        ));
    }
    for (
        team,
        TeamPlan {
            saving,
            texts,
            changes,
            risks,
        },
    ) in teams
    {
        let u = &a.usage()[&team];
        let target = a.config.thresholds.target_utilization.as_f64();
        out.push(Recommendation {
            kind: RecommendationKind::RightsizeTeam,
            subject: team.clone(),
            text: format!(
                "used {} of its GPUs over {} days ({:.1} of {:.1} on average): at {:.0}% its work needs {} team-wide; each pool is rightsized on its own use, rounded up ({})",
                pct(u.utilization.unwrap_or(0.0)),
                LOOKBACK_HOURS / 24,
                u.mean_used,
                u.mean_allocated,
                100.0 * target,
                u.rightsized_gpus,
                texts.join("; ")
            ),
            monthly_savings: Some(prices::cents(saving)),
            risk: risks.join("; "),
            changes,
        });
    }
    out.extend(budgets(a, &cur));
    out.sort_by(|x, y| {
        y.monthly_savings
            .unwrap_or_default()
            .cmp(&x.monthly_savings.unwrap_or_default())
            .then(x.subject.cmp(&y.subject))
    });
    out
}

#[allow(clippy::too_many_arguments)]
fn commitment(
    a: &Analysis<'_>,
    cluster: &str,
    pool: &str,
    entry: &super::PoolEntry<'_>,
    m: &super::mix::Mix,
    today: Decimal,
    saving: Decimal,
    cur: &str,
) -> Recommendation {
    let itype = entry
        .pool
        .instance_type
        .as_ref()
        .map(|t| t.value.clone())
        .unwrap_or_else(|| "instances".into());
    let mut parts = Vec::new();
    let mut changes = Vec::new();
    let mut risks = Vec::new();
    let outlook = a.outlook(cluster, pool);
    let history_days = outlook.map_or(0, |o| o.history_hours() / 24);
    let multiple = a.history_multiple();
    for t in [&m.baseline, &m.flexible].into_iter().flatten() {
        parts.push(format!("{} GPUs {}", t.gpus, t.kind));
        changes.push(format!(
            "Reservation (new): {} × {itype} covering {cluster}/{pool}, {}",
            t.nodes, t.kind
        ));
        let term_days = if t.kind.starts_with('3') {
            3 * 365
        } else {
            365
        };
        if (history_days as f64) * multiple < term_days as f64 {
            risks.push(format!(
                "the {} term ({term_days} days) is more than {multiple}× the {history_days} days of history: it needs a business case",
                t.kind
            ));
        } else {
            risks.push(format!(
                "{} GPUs are paid for {} whether used or not",
                t.gpus, t.kind
            ));
        }
        let limit = a.config.thresholds.stranded_spend_share.as_f64();
        risks.extend(super::plan_changes::over_stranded(t, limit));
    }
    if m.block_gpus > 0.0 {
        parts.push(format!(
            "{} GPUs on capacity blocks for the approved bursts",
            gpus(m.block_gpus)
        ));
    }
    if m.spot_gpus > 0.0 {
        parts.push(format!(
            "{} GPUs of preemptible work on spot",
            gpus(m.spot_gpus)
        ));
        risks.push(format!(
            "spot can be reclaimed at any time: priced with a {} allowance for interrupted work",
            pct(a.config.costs.spot_interruption_allowance.as_f64())
        ));
    }
    if m.on_demand_gpus > 0.0 {
        parts.push(format!("{} GPUs on demand", gpus(m.on_demand_gpus)));
    }
    if m.released_gpus > 0.0 {
        parts.push(format!(
            "sized after rightsizing releases {} GPUs",
            gpus(m.released_gpus)
        ));
    }
    // The mix keeps the locked commitments (and unlocked ones cheaper than
    // what it would buy, when keeping them costs less) and re-buys the rest
    // of the demand, so any other reservation that is not over is replaced
    // by it: its saving is in the plan's, and the change says so.
    let mut locked_terms = Vec::new();
    for r in a.repo.reservations.values().filter(|r| {
        r.spec.covers.cluster.value == cluster
            && r.spec.covers.pool.value == pool
            && r.spec.term.end.value > a.at
    }) {
        // A reservation that starts after the plan's 90 days is outside it:
        // the plan neither keeps nor replaces it.
        if super::reservation::term_hours(&r.spec.term).0
            >= a.at.hour_index() + super::OUTLOOK_HOURS
        {
            continue;
        }
        let serves = prices::serves_pool(entry.cluster, entry.pool, &r.spec);
        let locked = super::reservation::locked(&r.spec, a.at.hour_index());
        let count = r.spec.count.value.0;
        let kept = m.kept.iter().find(|k| k.name == r.name()).map(|k| k.count);
        if serves && (locked || kept.is_some()) {
            let held = if locked { count } else { kept.unwrap_or(count) };
            if !locked && held == count {
                changes.push(format!(
                    "Reservation `{}`: keep its {count} (no dearer than what the plan would buy)",
                    r.name(),
                ));
            } else if !locked {
                changes.push(format!(
                    "Reservation `{}`: count {count} → {held} (keep {held}, no dearer than what the plan would buy; the plan re-buys the rest of the demand)",
                    r.name(),
                ));
                if m.on_demand_gpus + m.spot_gpus > 0.0 {
                    risks.push(super::plan_changes::gives_up(r.name(), count - held));
                }
            }
            locked_terms.push((
                r.spec.term.start.value.max(a.at),
                r.spec.term.end.value,
                held,
            ));
        } else if !locked && r.spec.count.value.0 > 0 {
            if serves && m.on_demand_gpus + m.spot_gpus > 0.0 {
                // A reservation holds instances for the pool; what the plan
                // buys on demand or spot instead is held for no one.
                risks.push(super::plan_changes::gives_up(r.name(), count));
            }
            let why = if serves {
                "the plan above re-buys its demand".to_string()
            } else {
                r.spec
                    .mismatches(&entry.cluster.spec, entry.pool)
                    .first()
                    .map_or("it cannot serve the pool".to_string(), |m| {
                        format!("it cannot serve the pool: {m}")
                    })
            };
            changes.push(format!(
                "Reservation `{}`: count {} → 0 ({why})",
                r.name(),
                r.spec.count.value.0,
            ));
        }
    }
    // The most locked instances held at once, now or later (a bought block
    // that starts next month is reserved nodes all the same).
    let locked_nodes = super::reservation::most_held_at_once(&locked_terms);
    let committed: u32 = [&m.baseline, &m.flexible]
        .into_iter()
        .flatten()
        .map(|t| t.nodes)
        .sum::<u32>()
        + locked_nodes;
    // The purchase mix adds up to the pool's nodes: committing more
    // instances than it has means growing it.
    let nodes = entry.pool.nodes.value.0;
    let grow = if committed > nodes {
        format!("nodes {nodes} → {committed}, ")
    } else {
        String::new()
    };
    if m.block_gpus > 0.0 {
        changes.extend(super::plan_changes::capacity_blocks(
            a,
            entry,
            (cluster, pool),
            m.block_gpus,
        ));
    }
    // A purchase mix adds up to the pool's nodes: what is not reserved is
    // written as on demand, but for the spot nodes the plan prices; beyond
    // the reserved nodes the plan buys by the hour of demand.
    let total = nodes.max(committed);
    // The spot instances the plan prices, in whole nodes (its preemptible
    // work would otherwise run on the on-demand nodes it writes).
    let gpn = f64::from(entry.pool.gpus_per_node.value.0.max(1));
    let spot = ((m.spot_gpus / gpn - 1e-9).ceil().max(0.0) as u32).min(total - committed);
    let on_demand = total - committed - spot;
    let mix_text = match spot {
        0 => format!("{{reserved: {committed}, onDemand: {on_demand}}}"),
        s => format!("{{reserved: {committed}, onDemand: {on_demand}, spot: {s}}}"),
    };
    changes.push(format!(
        "Cluster `{cluster}` pool `{pool}`: {grow}purchase {mix_text}; beyond the reserved nodes, on demand{} as demand needs",
        if m.spot_gpus > 0.0 { " and spot" } else { "" }
    ));
    let held = if m.kept.is_empty() {
        "locked commitments"
    } else {
        "locked and kept commitments"
    };
    if m.monthly_locked > Decimal::ZERO {
        risks.push(format!(
            "{} a month of {held} is paid whatever happens",
            money(m.monthly_locked, cur)
        ));
    }
    let others = nodes.max(committed) - committed;
    let hourly = m.block_gpus + m.spot_gpus + m.on_demand_gpus;
    risks.extend(super::plan_changes::autoscaling(others, hourly));
    risks.extend(super::plan_changes::ending_requests(a, entry));
    let buy = if parts.iter().all(|p| p.starts_with("sized after")) {
        let mut keep = if m.monthly_locked > Decimal::ZERO {
            format!("keep only the {held}, which cover the demand")
        } else {
            "buy nothing: no demand is forecast for the pool".to_string()
        };
        if let Some(p) = parts.first() {
            keep.push_str(&format!(" ({p})"));
        }
        keep
    } else {
        format!("buy {}", parts.join(", "))
    };
    let against_on_demand = if m.savings_share > 0.005 {
        format!("; {:.0}% less than all on demand", 100.0 * m.savings_share)
    } else {
        String::new()
    };
    Recommendation {
        kind: RecommendationKind::CommitmentMix,
        subject: format!("{cluster}/{pool}"),
        text: format!(
            "{buy}: {} a month against {} as provisioned today ({:.0}% less{against_on_demand})",
            money(m.monthly_plan(), cur),
            money(today, cur),
            // The plan's cost against today's, whatever share of the
            // difference rightsizing takes as its own saving.
            if today.is_zero() {
                0.0
            } else {
                100.0 * prices::float((today - m.monthly_plan()).max(Decimal::ZERO) / today)
            },
        ),
        monthly_savings: Some(prices::cents(saving)),
        risk: if risks.is_empty() {
            "none beyond the forecast's".into()
        } else {
            risks.join("; ")
        },
        changes,
    }
}

fn budgets(a: &Analysis<'_>, cur: &str) -> Vec<Recommendation> {
    let mut out = Vec::new();
    for (name, team) in &a.repo.teams {
        let months = a.budget(name);
        if team.spec.monthly_budget.is_none() {
            continue;
        }
        let Some(first) = months.iter().find(|m| m.alert.is_some()) else {
            continue;
        };
        // The first month at the peak (a flat projection peaks from its
        // first month, not in its last).
        let Some((share, m)) = months.iter().filter_map(|m| m.share.map(|s| (s, m))).fold(
            None,
            |best: Option<(f64, _)>, x| match best {
                Some(b) if x.0 <= b.0 => Some(b),
                _ => Some(x),
            },
        ) else {
            continue;
        };
        out.push(Recommendation {
            kind: RecommendationKind::Budget,
            subject: name.clone(),
            text: format!(
                "projected spend reaches the {} alert in {} and peaks at {:.0}% of the budget in {} ({})",
                pct(first.alert.map(prices::float).unwrap_or(0.0)),
                first.label(),
                100.0 * share,
                m.label(),
                money(m.spend, cur)
            ),
            monthly_savings: None,
            risk: "the projection follows the allocation forecast and the approved requests".into(),
            changes: vec![format!(
                "Team `{name}`: raise monthlyBudget, or shorten or shrink its requests"
            )],
        });
    }
    out
}

/// GPUs to one decimal, without a trailing `.0`.
fn gpus(x: f64) -> String {
    let t = format!("{x:.1}");
    t.trim_end_matches('0').trim_end_matches('.').to_string()
}
