//! The lookback's edges, worked out by hand: a reservation's partial first
//! and last hours.

use super::tests::{CONFIG, at, cluster, repo_of, team};
use super::tests_finops::{catalog, d};
use super::*;

/// Hourly rows for the 30 days before `end`, `None` an empty cell.
fn rows(end: Timestamp, team: &str, cell: impl Fn(i64) -> (Option<f64>, Option<f64>)) -> String {
    let mut s = String::new();
    let last = end.hour_index();
    for h in last - 30 * 24..last {
        let t = Timestamp::from_second(h * 3600).unwrap();
        let (x, u) = cell(h - (last - 30 * 24));
        let f = |v: Option<f64>| v.map(|v| format!("{v}")).unwrap_or_default();
        s.push_str(&format!("{t},c,p,{team},{},{}\n", f(x), f(u)));
    }
    s
}

const HEADER: &str = "timestamp,cluster,pool,team,allocated_gpus,used_gpus\n";

#[test]
fn a_reservation_prices_neither_its_partial_first_hour_nor_its_partial_last() {
    // One reserved one-GPU node: catalog 1-year 5.00 (what a reserved node no
    // reservation covers costs), on demand 10.00. A reservation at 0.00 an
    // hour from 2026-11-01 00:30 to 11-10 00:30 covers the whole hours 01:00
    // on 11-01 to 00:00 on 11-10: 9 x 24 - 1 = 215 hours at 0.00. The other
    // 720 - 215 = 505 hours of the 30 days, the two half-covered hours
    // included, cost 5.00: 2,525.00.
    let now = at("2026-11-20T00:00:00Z");
    let reservation = "apiVersion: capops.dev/v1alpha1\nkind: Reservation\nmetadata: {name: r}\nspec:\n  provider: aws\n  type: aws-capacity-reservation\n  region: us-east-2\n  zone: us-east-2a\n  instanceType: i1\n  count: 1\n  term: {start: \"2026-11-01T00:30:00Z\", end: \"2026-11-10T00:30:00Z\"}\n  hourlyPrice: 0\n  covers: {cluster: c, pool: p}\n";
    let repo = repo_of(&[
        ("capops.yaml", CONFIG.into()),
        (
            "prices.yaml",
            catalog(
                "    - {provider: aws, region: us-east-2, instanceType: i1, gpusPerInstance: 1, onDemand: 10, reserved1y: 5, source: test}\n",
            ),
        ),
        (
            "cluster.yaml",
            cluster(
                "    - {name: p, gpuModel: h100-80gb-sxm, zone: us-east-2a, nodeLabels: {a: b}, instanceType: i1, gpusPerNode: 1, nodes: 1, purchase: {reserved: 1}}\n",
            ),
        ),
        ("team.yaml", team("a", None)),
        ("reservation.yaml", reservation.into()),
        (
            "usage/c.csv",
            format!("{HEADER}{}", rows(now, "a", |_| (Some(1.0), Some(1.0)))),
        ),
    ]);
    let a = Analysis::new(&repo, now);
    let costs = a.pool_waste("c", "p").unwrap().costs.clone().unwrap();
    assert_eq!(costs.capacity, d(252_500));
    assert_eq!(costs.used, d(252_500));
}
