//! `capops report` for people: the [`CostReport`] as text, Markdown or one
//! self-contained HTML file with its charts (JSON is the report serialized).

use super::chart;
use super::table::Table;
use crate::cost::report::CostReport;
use rust_decimal::Decimal;

use crate::cost::prices;
use crate::model::money::percent as pct;

mod reservations;

fn opt_pct(x: Option<f64>) -> String {
    x.map(pct).unwrap_or_else(|| "–".into())
}

fn gpus(x: f64) -> String {
    let t = format!("{x:.1}");
    t.trim_end_matches('0').trim_end_matches('.').to_string()
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
            if p.reserved_beyond_nodes > 0 {
                format!(
                    "{}/{}/{} (+{} reserved, no node)",
                    p.reserved_nodes, p.on_demand_nodes, p.spot_nodes, p.reserved_beyond_nodes
                )
            } else {
                format!(
                    "{}/{}/{}",
                    p.reserved_nodes, p.on_demand_nodes, p.spot_nodes
                )
            },
            p.gpu_hour_price
                .map(|d| crate::model::money::format_rate(d, cur))
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
                    let mut parts = vec![x.phrase()];
                    if !x.kept.is_empty() && x.baseline.is_none() && x.flexible.is_none() {
                        parts.clear();
                    }
                    for k in &x.kept {
                        parts.push(format!("keep {} of `{}`", k.count, k.name));
                    }
                    if x.spot_gpus > 0.0 {
                        parts.push(format!("{} GPUs spot", gpus(x.spot_gpus)));
                    }
                    if x.block_gpus > 0.0 {
                        parts.push(format!("{} GPUs capacity blocks", gpus(x.block_gpus)));
                    }
                    let held = if x.kept.is_empty() {
                        "locked"
                    } else {
                        "locked and kept"
                    };
                    if x.monthly_locked.is_zero() {
                        format!(
                            "{}: {} vs {} on demand",
                            parts.join(", "),
                            m(x.monthly_mix),
                            m(x.monthly_on_demand)
                        )
                    } else {
                        // What the mix buys is compared with buying the same
                        // (what the held reservations leave) on demand.
                        format!(
                            "{}: {} {held} + {} to buy for the rest (vs {} on demand)",
                            parts.join(", "),
                            m(x.monthly_locked),
                            m(x.monthly_mix),
                            m(x.monthly_on_demand)
                        )
                    }
                })
                .unwrap_or_else(|| "–".into()),
        ]);
    }
    out.push((
        "Pools",
        "What each pool costs as provisioned (its GPUs at the purchase mix's blended price), its demand, and the commitment mix its forecast (with the approved requests) calls for, before rightsizing.".to_string(),
        t,
    ));

    let mut t = Table::new(&[
        ("pool", false),
        ("capacity", true),
        ("allocated", true),
        ("used", true),
        ("idle", true),
        ("stranded", true),
        ("unmeasured", true),
        ("wasted", true),
    ]);
    for p in &r.pools {
        let Some(a) = &p.account else { continue };
        let wasted = a.idle + a.stranded;
        t.rows.push(vec![
            format!("{}/{}", p.cluster, p.pool),
            m(a.capacity),
            m(a.allocated),
            m(a.used),
            m(a.idle),
            m(a.stranded),
            m(a.unmeasured),
            if a.capacity.is_zero() {
                "–".into()
            } else {
                pct(prices::float(wasted / a.capacity))
            },
        ]);
    }
    out.push((
        "Where the money went",
        format!(
            "The {} days before {}: each pool's GPUs at its price, used (allocated and busy), idle (allocated, not busy), stranded (provisioned, allocated to nobody) or unmeasured (no usage reported). Capacity = allocated + stranded + unmeasured; allocated = used + idle; wasted = idle + stranded (to the cent in the JSON; each figure here is rounded on its own, so a sum may differ from its parts by a unit).",
            r.lookback_days, r.at
        ),
        t,
    ));

    out.push(reservations::section(r));

    let mut t = Table::new(&[
        ("team", false),
        ("cost center", false),
        ("utilization", true),
        ("allocated", true),
        ("used", true),
        ("rightsized", true),
        ("allocation", true),
        ("shared", true),
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
            m(x.allocated_cost),
            m(x.shared_cost),
            m(x.chargeback),
            m(x.idle_cost),
            om(x.projected_this_month),
            om(x.monthly_budget),
        ]);
    }
    out.push((
        "Teams",
        format!(
            "Over the {} days before {}: used over allocated GPU-hours, mean GPUs allocated and used, the GPUs the work needs at the target utilization, allocated GPU-hours priced, the team's share of its pools' unallocated cost ({}), their sum (chargeback) and the unused part of the allocation (idle cost); then this month's projected spend. Each figure is rounded on its own (the JSON is exact to the cent).",
            r.lookback_days, r.at, r.totals.chargeback_rule
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
    if !r.totals.unassigned.is_zero() {
        t.rows.push(vec![
            "(unassigned)".into(),
            "the platform".into(),
            m(r.totals.unassigned),
            // The idle cost of usage rows of teams with no document.
            m(r.totals.unassigned_idle_cost),
        ]);
    }
    out.push((
        "Chargeback by cost center",
        format!(
            "The {} days before {}. Teams {} + unassigned {} = the pools' capacity cost {}.",
            r.lookback_days,
            r.at,
            m(r.totals.chargeback),
            m(r.totals.unassigned),
            m(r.totals.lookback.capacity)
        ),
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
            let unpriced = if mo.unpriced { " +unpriced" } else { "" };
            row.push(format!(
                "{}{alert}{unpriced}",
                crate::model::money::format_bare(mo.spend, cur)
            ));
        }
        t.rows.push(row);
    }
    out.push((
        "Budgets",
        format!(
            "Projected spend by calendar month ({}): measured hours, then the allocation forecast, requests starting and requests ending. ⚠ marks the highest alert level a month reaches; +unpriced, a month that leaves out GPUs of pools with no price (the month costs more than shown).",
            cur
        ),
        t,
    ));

    let mut t = Table::new(&[
        ("kind", false),
        ("subject", false),
        ("recommendation", false),
        ("risk", false),
        ("change", false),
        ("saves a month", true),
    ]);
    for x in &r.recommendations {
        t.rows.push(vec![
            x.kind.as_str().to_string(),
            x.subject.clone(),
            x.text.clone(),
            x.risk.clone(),
            x.changes.join("; "),
            om(x.monthly_savings),
        ]);
    }
    out.push((
        "Recommendations",
        format!(
            "One plan, largest monthly saving first: rightsizing first, commitments sized on the rightsized demand; no saving is counted twice, so they add up to {} a month.",
            m(r.totals.plan_savings)
        ),
        t,
    ));

    let mut t = Table::new(&[
        ("pool", false),
        ("measured", false),
        ("days", true),
        ("allocated, first month", true),
        ("allocated, last month", true),
        ("utilization, first month", true),
        ("utilization, last month", true),
        ("busiest day", true),
    ]);
    for h in &r.history {
        let (Some(first), Some(last)) = (h.months.first(), h.months.last()) else {
            continue;
        };
        t.rows.push(vec![
            format!("{}/{}", h.cluster, h.pool),
            format!("{} to {}", h.first_day, h.last_day),
            h.days.to_string(),
            format!("{} ({})", gpus(first.allocated_mean), first.month),
            format!("{} ({})", gpus(last.allocated_mean), last.month),
            opt_pct(first.utilization),
            opt_pct(last.utilization),
            gpus(h.months.iter().map(|m| m.busiest_day).fold(0.0, f64::max)),
        ]);
    }
    let window = match r.history.iter().find_map(|h| h.hourly_days) {
        Some(d) => format!(
            "forecasts are fitted on the last {d} days of it, hour by hour (`usage.hourlyDays`)"
        ),
        None => "forecasts are fitted on all of it, hour by hour".into(),
    };
    out.push((
        "Usage history",
        format!(
            "Each pool's whole measured history, from daily roll-ups (a day is the sum of its teams' mean GPUs over the hours each was measured; a month is the mean of its days; utilization pairs used and allocated team by team; every month is in the JSON report); {window}."
        ),
        t,
    ));
    out
}

fn headline(r: &CostReport) -> Vec<String> {
    let cur = r.currency.as_str();
    let t = &r.totals;
    let m = |d: Decimal| crate::model::money::format(d, cur);
    let l = &t.lookback;
    vec![
        if t.unpriced_gpus == 0 {
            format!(
                "{} GPUs cost {} a month as provisioned",
                t.gpus,
                m(t.monthly_cost)
            )
        } else {
            format!(
                "{} GPUs cost {} a month as provisioned, and {} more have no price (their pools' instance types are in no PriceCatalog) and count in no cost",
                t.gpus - t.unpriced_gpus,
                m(t.monthly_cost),
                t.unpriced_gpus
            )
        },
        format!(
            "last {} days: capacity {} = allocated {} (used {} + idle {}, allocated but not busy) + stranded {} (allocated to nobody) + unmeasured {}",
            r.lookback_days,
            m(l.capacity),
            m(l.allocated),
            m(l.used),
            m(l.idle),
            m(l.stranded),
            m(l.unmeasured)
        ),
        format!(
            "charged back: teams {} + unassigned {} = {} (unallocated cost shared: {})",
            m(t.chargeback),
            m(t.unassigned),
            m(t.chargeback + t.unassigned),
            t.chargeback_rule
        ),
        format!(
            "reservations commit {}; over their terms {} expected stranded (P50; {} at P10) and {} idle",
            m(t.reserved_commitments),
            m(t.stranded_p50),
            m(t.stranded_p10),
            m(t.reserved_idle_p50)
        ),
        format!(
            "the recommendations save {} a month together",
            m(t.plan_savings)
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
    let mut out = format!("# {}\n\n", super::escape::escape(&title(r)));
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
