//! A Config in another currency than the US dollar whose money thresholds
//! are the defaults, which are sized for dollars: 50,000 yen a month would
//! send every request to a capacity review, and 1,000,000 Kuwaiti dinars
//! would let a commitment of three million dollars pass a director alone.

use crate::diag::{Code, Diagnostic};
use crate::model::Repo;
use crate::model::config::Thresholds;

/// Warns once, naming the thresholds left at their dollar defaults.
pub(super) fn check(repo: &Repo, diags: &mut Vec<Diagnostic>) {
    let Some(config) = repo.config.as_ref() else {
        return;
    };
    let s = &config.spec;
    if s.currency == "USD" {
        return;
    }
    let (t, d) = (&s.thresholds, Thresholds::default());
    let left: Vec<&str> = [
        (
            "monthlyCostReview",
            t.monthly_cost_review == d.monthly_cost_review,
        ),
        ("directorCost", t.director_cost == d.director_cost),
        ("vpCost", t.vp_cost == d.vp_cost),
    ]
    .into_iter()
    .filter(|(_, same)| *same)
    .map(|(n, _)| n)
    .collect();
    if left.is_empty() {
        return;
    }
    diags.push(
        Diagnostic::new(
            Code::MoneyThresholdsDefault,
            format!(
                "the Config's currency is {}, but thresholds {} are their defaults, which are sized for US dollars",
                s.currency,
                left.iter().map(|n| format!("`{n}`")).collect::<Vec<_>>().join(", ")
            ),
        )
        .at(config.metadata.name.span, "amounts here are in this Config's currency")
        .help("set them in the Config's currency under `thresholds` (the defaults are 50000, 250000 and 1000000 US dollars)"),
    );
}
