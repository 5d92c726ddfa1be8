//! The lookback's edges, worked out by hand: a reservation's partial first
//! and last hours, and a team's empty rows at either end of its series.

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

/// Eight one-GPU nodes on demand at 1.00; team a holds 2 and uses 1 every
/// hour of the 30 days; team b holds 3 and uses 3, its cells as `b` says.
fn two_teams(b: impl Fn(i64) -> (Option<f64>, Option<f64>)) -> waste::Costs {
    let now = at("2026-11-20T00:00:00Z");
    let repo = repo_of(&[
        ("capops.yaml", CONFIG.into()),
        (
            "prices.yaml",
            catalog(
                "    - {provider: aws, region: us-east-2, instanceType: i1, gpusPerInstance: 1, onDemand: 1, source: test}\n",
            ),
        ),
        (
            "cluster.yaml",
            cluster(
                "    - {name: p, gpuModel: h100-80gb-sxm, instanceType: i1, gpusPerNode: 1, nodes: 8}\n",
            ),
        ),
        (
            "teams.yaml",
            format!("{}---\n{}", team("a", None), team("b", None)),
        ),
        (
            "usage/c.csv",
            format!(
                "{HEADER}{}{}",
                rows(now, "a", |_| (Some(2.0), Some(1.0))),
                rows(now, "b", b)
            ),
        ),
    ]);
    let a = Analysis::new(&repo, now);
    a.pool_waste("c", "p").unwrap().costs.clone().unwrap()
}

#[test]
fn an_empty_row_is_a_gap_at_either_end_of_a_teams_series() {
    // b's first and last rows are empty: both hours are unmeasured past a's
    // 2 GPUs, 2 x (8 - 2) = 12.00. Allocated: a 720 x 2 = 1,440, b 718 x 3 =
    // 2,154: 3,594.00. Stranded: 5,760 - 3,594 - 12 = 2,154.00.
    let full = |_: i64| (Some(3.0), Some(3.0));
    let ends = |h: i64| {
        if h == 0 || h == 719 {
            (None, None)
        } else {
            full(h)
        }
    };
    let c = two_teams(ends);
    assert_eq!(c.capacity, d(576_000));
    assert_eq!(c.allocated, d(359_400));
    assert_eq!(c.unmeasured, d(1_200));
    assert_eq!(c.stranded, d(215_400));
    // A last row with use but no allocation is a gap too, not b gone.
    let no_allocation = |h: i64| match h {
        0 => (None, None),
        719 => (None, Some(3.0)),
        _ => full(h),
    };
    assert_eq!(two_teams(no_allocation), c);
    // Every cell reported: nothing unmeasured, 5,760 - 1,440 - 2,160 = 2,160
    // stranded.
    let whole = two_teams(full);
    assert_eq!(whole.unmeasured, d(0));
    assert_eq!(whole.stranded, d(216_000));
}
