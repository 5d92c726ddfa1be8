//! The report's Reservations section: each reservation's term against the
//! demand that falls on it, and what the plan does with it.

use super::opt_pct;
use crate::cost::report::CostReport;
use crate::output::table::Table;
use rust_decimal::Decimal;

/// The Reservations section: its title, note and table.
pub(super) fn section(r: &CostReport) -> (&'static str, String, Table) {
    let cur = r.currency.as_str();
    let m = |d: Decimal| crate::model::money::format(d, cur);
    let om = |d: Option<Decimal>| {
        d.map(|d| crate::model::money::format(d, cur))
            .unwrap_or_else(|| "–".into())
    };
    let mut t = Table::new(&[
        ("reservation", false),
        ("pool", false),
        ("GPUs", true),
        ("term", false),
        ("cost", true),
        ("allocated P50", true),
        ("stranded P50", true),
        ("stranded P10", true),
        ("idle P50", true),
        ("shortfall h", true),
        ("suggested count", true),
        ("notes", false),
    ]);
    for x in &r.reservations {
        let mut notes = Vec::new();
        if x.locked {
            notes.push("locked (prepaid, started)".to_string());
        }
        // What the plan does with it, so the suggested count (a ceiling on
        // its own) never reads as other advice than the plan's.
        let own = format!("Reservation `{}`: ", x.name);
        if let Some(c) = r
            .recommendations
            .iter()
            .flat_map(|rec| &rec.changes)
            .find_map(|c| c.strip_prefix(own.as_str()))
        {
            notes.push(format!("the plan: {c}"));
        }
        if x.basis.as_deref() == Some("requests") {
            notes.push("no usage history: judged on its requests".to_string());
        }
        if x.term_supported == Some(false) && x.basis.as_deref() == Some("history") {
            notes.push(format!(
                "history supports the forecast to {}",
                x.supported_until
                    .as_deref()
                    .map(|d| &d[..10.min(d.len())])
                    .unwrap_or("–")
            ));
        }
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
            x.idle_p50
                .map(|s| format!("{} ({})", m(s), opt_pct(x.idle_share)))
                .unwrap_or_else(|| "–".into()),
            x.shortfall_hours
                .map(|h| h.to_string())
                .unwrap_or_else(|| "–".into()),
            if x.locked {
                "locked".into()
            } else {
                x.suggested_count
                    .map(|c| format!("{c} of {}", x.count))
                    .unwrap_or_else(|| "–".into())
            },
            notes.join("; "),
        ]);
    }
    (
        "Reservations",
        "Reserved GPU-hours against demand over each term (measured, then forecast plus the approved requests): the share allocated and stranded spend (allocated to nobody) at P50 (expected) and P10 (the risk), idle spend (allocated, not busy, at the pool's measured busy share: a part of the allocated share, not beside it), hours where P90 demand exceeds the whole pool, and the most instances that keep within the stranded-spend threshold on their own (none for a locked one; where a plan changes the reservation, the notes say how, and the plan is the advice).".to_string(),
        t,
    )
}
