//! A reservation the commitment plan would buy again at the same price is
//! kept, not cancelled and re-bought: churn that risks the capacity it holds
//! for no saving.

use super::tests::{CONFIG, at, cluster, repo_of, team, usage};
use super::tests_finops::catalog;
use super::*;

#[test]
fn a_reservation_at_the_price_the_plan_would_pay_is_kept() {
    // Two 8-GPU instances reserved at 50 an instance-hour, the catalog's
    // 1-year price; 16 GPUs held and used all the time. Cancelling it to buy
    // the same 1-year commitment costs the same: the plan keeps it. A cent
    // dearer, the plan may replace it; a cent cheaper, it keeps it too.
    let now = at("2026-11-20T00:00:00Z");
    let kept_at = |price: &str| {
        let reservation = format!(
            "apiVersion: capops.dev/v1alpha1\nkind: Reservation\nmetadata: {{name: ra}}\nspec:\n  provider: aws\n  type: aws-capacity-reservation\n  region: us-east-2\n  zone: us-east-2a\n  instanceType: g8\n  count: 2\n  term: {{start: \"2026-10-01T00:00:00Z\", end: \"2027-10-01T00:00:00Z\"}}\n  hourlyPrice: {price}\n  covers: {{cluster: c, pool: p}}\n"
        );
        let repo = repo_of(&[
            ("capops.yaml", CONFIG.into()),
            (
                "prices.yaml",
                catalog(
                    "    - {provider: aws, region: us-east-2, instanceType: g8, gpusPerInstance: 8, onDemand: 80, reserved1y: 50, source: test}\n",
                ),
            ),
            (
                "cluster.yaml",
                cluster(
                    "    - {name: p, gpuModel: h100-80gb-sxm, instanceType: g8, gpusPerNode: 8, nodes: 2, purchase: {reserved: 2}}\n",
                ),
            ),
            ("team.yaml", team("vision", None)),
            ("reservation.yaml", reservation),
            (
                "usage/c.csv",
                usage(now, 80, "p", "vision", |_| 16.0, |_| 16.0),
            ),
        ]);
        let m = Analysis::new(&repo, now).mix("c", "p", 0.0).unwrap();
        m.kept.iter().map(|k| k.count).sum::<u32>()
    };
    assert_eq!(kept_at("50"), 2);
    assert_eq!(kept_at("49.99"), 2);
}
