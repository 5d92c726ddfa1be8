//! The totals a pull-request comment leads with: how many GPUs the change
//! asks for, what it adds to the monthly bill and over the requests'
//! windows, and the verdict, read from the facts the policy saw.

use crate::model::Subject;
use crate::policy::CheckResult;
use crate::policy::change::ChangeKind;

/// Sums over the judged documents.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Totals {
    /// Requests' GPU-equivalents now minus before.
    pub request_gpus: f64,
    pub monthly_cost: f64,
    /// Cost over the requests' windows, now minus before.
    pub window_cost: f64,
    /// Reservations' GPUs now minus before.
    pub reserved_gpus: f64,
    /// Teams' quota GPUs now minus before.
    pub quota_gpus: f64,
    /// Requests without a price (left out of the costs).
    pub unpriced: usize,
    /// Requests priced in part (counted; their quota reaches a pool without a price).
    pub partial: usize,
    /// Removed documents (their capacity is released; not priced).
    pub removed: usize,
    pub currency: String,
    /// Sums of changes against a base (`false`: of the documents as they stand).
    pub change: bool,
}

pub fn totals(result: &CheckResult) -> Totals {
    let mut t = Totals {
        change: result
            .evaluated
            .iter()
            .any(|e| e.change != ChangeKind::Unchanged),
        ..Totals::default()
    };
    // Without a base every document is "unchanged": sum what they hold.
    let (gpus, monthly, total) = if t.change {
        (
            "change.delta_gpus",
            "change.delta_monthly_cost",
            "change.delta_total_cost",
        )
    } else {
        ("request.gpus", "request.monthly_cost", "request.total_cost")
    };
    for e in &result.evaluated {
        let num = |p: &str| {
            e.decision
                .facts
                .lookup(p)
                .and_then(|v| f64::try_from(v).ok())
                .unwrap_or(0.0)
        };
        if e.change == ChangeKind::Removed {
            t.removed += 1;
            continue;
        }
        if t.currency.is_empty()
            && let Some(c) = e.decision.facts.lookup("config.currency")
        {
            t.currency = c.as_str().unwrap_or_default().to_string();
        }
        match e.subject {
            Subject::CapacityRequest => {
                t.request_gpus += num(gpus);
                let priced = e
                    .decision
                    .facts
                    .lookup("request.has_price")
                    .is_some_and(|v| v.is_true());
                let partial = !priced && num("request.gpu_hour_price") > 0.0;
                if priced || partial {
                    t.monthly_cost += num(monthly);
                    t.window_cost += num(total);
                    t.partial += usize::from(partial);
                } else {
                    t.unpriced += 1;
                }
            }
            Subject::Reservation if t.change => t.reserved_gpus += num("change.delta_gpus"),
            Subject::Reservation => t.reserved_gpus += num("reservation.gpus"),
            Subject::Team if t.change => t.quota_gpus += num("change.delta_gpus"),
            Subject::Team => t.quota_gpus += num("team.quota_gpus"),
            _ => {}
        }
    }
    t
}

fn signed_gpus(x: f64, signed: bool) -> String {
    let s = super::check::fmt_gpus(x.abs());
    if !signed {
        super::check::fmt_gpus(x)
    } else if x > 1e-9 {
        format!("+{s}")
    } else if x < -1e-9 {
        format!("−{s}")
    } else {
        "0".into()
    }
}

fn signed_money(x: f64, currency: &str, signed: bool) -> String {
    let s = crate::model::money::format_f64(x.abs(), currency);
    // Signed where the amount shown is not zero (0.3 JPY shows as `0 JPY`).
    let zero = s
        .split(' ')
        .next()
        .is_some_and(|n| n.chars().all(|c| matches!(c, '0' | '.' | ',')));
    if !signed {
        crate::model::money::format_f64(x, currency)
    } else if zero {
        s
    } else if x > 0.0 {
        format!("+{s}")
    } else {
        format!("−{s}")
    }
}

/// The totals as a one-row Markdown table, with `verdict` as its last cell.
pub fn markdown(t: &Totals, verdict: &str) -> String {
    let c = t.change;
    let mut head = if c {
        vec![
            "GPUs requested",
            "Requests' monthly cost",
            "Requests' cost over the windows",
        ]
    } else {
        vec![
            "GPUs in requests",
            "Requests' monthly cost",
            "Requests' cost over the windows",
        ]
    };
    let mut row = vec![
        signed_gpus(t.request_gpus, c),
        signed_money(t.monthly_cost, &t.currency, c),
        signed_money(t.window_cost, &t.currency, c),
    ];
    if t.reserved_gpus.abs() > 1e-9 {
        head.push("Reserved GPUs");
        row.push(signed_gpus(t.reserved_gpus, c));
    }
    if t.quota_gpus.abs() > 1e-9 {
        head.push("Quota GPUs");
        row.push(signed_gpus(t.quota_gpus, c));
    }
    head.push("Decision");
    row.push(verdict.to_string());
    let mut out = format!(
        "| {} |\n|{}\n| {} |\n",
        head.join(" | "),
        "---|".repeat(head.len()),
        row.join(" | ")
    );
    let mut notes = Vec::new();
    if t.unpriced > 0 {
        notes.push(format!(
            "{} request{} without a price left out of the costs",
            t.unpriced,
            if t.unpriced == 1 { "" } else { "s" }
        ));
    }
    if t.partial > 0 {
        notes.push(format!(
            "{} request{} priced in part (the quota reaches a pool without a price: the costs shown are the least {} cost{})",
            t.partial,
            if t.partial == 1 { "" } else { "s" },
            if t.partial == 1 { "it" } else { "they" },
            if t.partial == 1 { "s" } else { "" }
        ));
    }
    if t.removed > 0 {
        notes.push(format!(
            "{} removed document{} release{} capacity (not priced)",
            t.removed,
            if t.removed == 1 { "" } else { "s" },
            if t.removed == 1 { "s" } else { "" }
        ));
    }
    if !notes.is_empty() {
        out.push_str(&format!("\n<sub>{}.</sub>\n", notes.join("; ")));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_signs_its_numbers_and_shows_only_what_moved() {
        let t = Totals {
            request_gpus: 64.0,
            monthly_cost: 142_080.0,
            window_cost: -1_000.0,
            unpriced: 1,
            partial: 1,
            removed: 2,
            currency: "USD".into(),
            change: true,
            ..Totals::default()
        };
        let md = markdown(&t, "🟡 1 awaiting approval");
        assert!(md.starts_with("| GPUs requested | Requests' monthly cost | Requests' cost over the windows | Decision |\n|---|---|---|---|\n"));
        assert!(md.contains("| +64 | +142,080 USD | −1,000 USD | 🟡 1 awaiting approval |"));
        assert!(md.contains("1 request without a price"));
        assert!(md.contains("1 request priced in part"));
        assert!(md.contains("2 removed documents release capacity"));
        let q = markdown(
            &Totals {
                quota_gpus: -8.0,
                change: true,
                ..Totals::default()
            },
            "ok",
        );
        assert!(q.contains("| Quota GPUs |") && q.contains("| −8 |"), "{q}");
        // An amount that shows as zero has no sign, in any currency.
        assert_eq!(signed_money(0.3, "JPY", true), "0 JPY");
        assert_eq!(signed_money(0.6, "JPY", true), "+1 JPY");
        assert_eq!(signed_money(-0.004, "USD", true), "0 USD");
        assert_eq!(signed_money(-0.006, "USD", true), "−0.01 USD");
        let standing = markdown(
            &Totals {
                request_gpus: 320.0,
                currency: "USD".into(),
                ..Totals::default()
            },
            "ok",
        );
        assert!(standing.contains("| GPUs in requests |") && standing.contains("| 320 | 0 USD |"));
    }
}
