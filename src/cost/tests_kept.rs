//! Unlocked reservations cheaper than what the commitment mix would buy:
//! kept whole or in part, at the count that makes the mix cheapest, only of
//! the pool's own instances, and not blocked by one kept before; every
//! number worked out by hand in the comments.

use super::tests::{CONFIG, at, cluster, repo_of, team, usage};
use super::tests_finops::{catalog, d, join};
use super::*;

/// An unlocked AWS capacity reservation of `count` 8-GPU `g8` instances at
/// `price` an instance-hour, covering pool `c/p`.
fn g8_reservation(name: &str, count: u32, price: u32, start: &str, end: &str) -> String {
    format!(
        "apiVersion: capops.dev/v1alpha1\nkind: Reservation\nmetadata: {{name: {name}}}\nspec:\n  provider: aws\n  type: aws-capacity-reservation\n  region: us-east-2\n  zone: us-east-2a\n  instanceType: g8\n  count: {count}\n  term: {{start: \"{start}T00:00:00Z\", end: \"{end}T00:00:00Z\"}}\n  hourlyPrice: {price}\n  covers: {{cluster: c, pool: p}}\n---\n"
    )
}

/// Pool `c/p` of `nodes` g8 instances (on demand 80, 1-year 50) bought as
/// `purchase` says, the reservations, and one team's steady `gpus` for 90 days.
fn g8_repo(now: Timestamp, nodes: u32, purchase: &str, reservations: &[String], gpus: f64) -> Repo {
    g8_repo_with(now, nodes, purchase, reservations, gpus, &[])
}

/// [`g8_repo`] with more files.
fn g8_repo_with(
    now: Timestamp,
    nodes: u32,
    purchase: &str,
    reservations: &[String],
    gpus: f64,
    more: &[(&str, String)],
) -> Repo {
    let mut files = g8_files(nodes, purchase, reservations);
    files.push((
        "usage/c.csv",
        usage(now, 90, "p", "vision", move |_| gpus, move |_| gpus),
    ));
    files.extend(more.iter().cloned());
    repo_of(&files)
}

/// The files of [`g8_repo`] but its usage.
fn g8_files(nodes: u32, purchase: &str, reservations: &[String]) -> Vec<(&'static str, String)> {
    vec![
        ("capops.yaml", CONFIG.into()),
        (
            "prices.yaml",
            catalog(
                "    - {provider: aws, region: us-east-2, instanceType: g8, gpusPerInstance: 8, onDemand: 80, reserved1y: 50, source: test}\n",
            ),
        ),
        (
            "cluster.yaml",
            cluster(&format!(
                "    - {{name: p, gpuModel: h100-80gb-sxm, instanceType: g8, gpusPerNode: 8, nodes: {nodes}, purchase: {purchase}}}\n"
            )),
        ),
        ("team.yaml", team("vision", None)),
        ("reservations.yaml", reservations.concat()),
    ]
}

#[test]
fn cheaper_reservations_are_kept_one_by_one_and_only_of_the_pools_own_instances() {
    // Twelve 8-GPU instances (g8: on demand 80, 1-year 50 = 6.25 a GPU-hour)
    // for a steady 16 GPUs. Unlocked reservations: ra 2 x g8 at 32 (4.00 a
    // GPU-hour), rb 10 x g8 at 40 (5.00), and rc 4 x g8b at 8 (1.00), which
    // cannot serve the pool's demand. Replacing all buys 2 one-year
    // instances: 16 x 6.25 x 730 = 73,000. Keeping ra alone serves all 16:
    // 16 x 4 x 730 = 46,720. Keeping rb too adds 80 x 5 x 730 = 292,000.
    let now = at("2026-11-20T00:00:00Z");
    let res = |name: &str, itype: &str, count: u32, price: u32| {
        format!(
            "apiVersion: capops.dev/v1alpha1\nkind: Reservation\nmetadata: {{name: {name}}}\nspec:\n  provider: aws\n  type: aws-capacity-reservation\n  region: us-east-2\n  zone: us-east-2a\n  instanceType: {itype}\n  count: {count}\n  term: {{start: \"2026-11-01T00:00:00Z\", end: \"2027-11-01T00:00:00Z\"}}\n  hourlyPrice: {price}\n  covers: {{cluster: c, pool: p}}\n---\n"
        )
    };
    let repo = repo_of(&[
        ("capops.yaml", CONFIG.into()),
        (
            "prices.yaml",
            catalog(
                "    - {provider: aws, region: us-east-2, instanceType: g8, gpusPerInstance: 8, onDemand: 80, reserved1y: 50, source: test}\n    - {provider: aws, region: us-east-2, instanceType: g8b, gpusPerInstance: 8, onDemand: 30, source: test}\n",
            ),
        ),
        (
            "cluster.yaml",
            cluster(
                "    - {name: p, gpuModel: h100-80gb-sxm, instanceType: g8, gpusPerNode: 8, nodes: 12, purchase: {reserved: 12}}\n",
            ),
        ),
        ("team.yaml", team("vision", None)),
        (
            "reservations.yaml",
            [
                res("ra", "g8", 2, 32),
                res("rb", "g8", 10, 40),
                res("rc", "g8b", 4, 8),
            ]
            .concat(),
        ),
        (
            "usage/c.csv",
            usage(now, 90, "p", "vision", |_| 16.0, |_| 16.0),
        ),
    ]);
    let a = Analysis::new(&repo, now);
    let m = a.mix("c", "p", 0.0).unwrap();
    assert_eq!(
        m.kept,
        vec![crate::cost::mix::Kept {
            name: "ra".into(),
            count: 2
        }]
    );
    assert_eq!(m.monthly_plan(), d(4_672_000));
    assert!(m.baseline.is_none() && m.flexible.is_none(), "{m:?}");
}

#[test]
fn a_large_cheap_reservation_is_kept_at_the_count_demand_fills() {
    // 100 one-GPU instances reserved at 3.00 (not locked) where the
    // catalog's 1-year is 6.00, for a steady 37 GPUs: keeping exactly 37
    // costs 37 x 3 x 730 = 81,030 (counts are sampled every 4, then refined
    // one by one around the best).
    let now = at("2026-11-20T00:00:00Z");
    let reservation = "apiVersion: capops.dev/v1alpha1\nkind: Reservation\nmetadata: {name: big}\nspec:\n  provider: aws\n  type: aws-capacity-reservation\n  region: us-east-2\n  zone: us-east-2a\n  instanceType: g1\n  count: 100\n  term: {start: \"2026-11-01T00:00:00Z\", end: \"2027-11-01T00:00:00Z\"}\n  hourlyPrice: 3\n  covers: {cluster: c, pool: p}\n";
    let repo = repo_of(&[
        ("capops.yaml", CONFIG.into()),
        (
            "prices.yaml",
            catalog(
                "    - {provider: aws, region: us-east-2, instanceType: g1, gpusPerInstance: 1, onDemand: 10, reserved1y: 6, source: test}\n",
            ),
        ),
        (
            "cluster.yaml",
            cluster(
                "    - {name: p, gpuModel: h100-80gb-sxm, instanceType: g1, gpusPerNode: 1, nodes: 100, purchase: {reserved: 100}}\n",
            ),
        ),
        ("team.yaml", team("vision", None)),
        ("reservation.yaml", reservation.into()),
        (
            "usage/c.csv",
            usage(now, 90, "p", "vision", |_| 37.0, |_| 37.0),
        ),
    ]);
    let m = Analysis::new(&repo, now).mix("c", "p", 0.0).unwrap();
    assert_eq!(
        m.kept,
        vec![crate::cost::mix::Kept {
            name: "big".into(),
            count: 37
        }]
    );
    assert_eq!(m.monthly_plan(), d(8_103_000));
    assert!(m.baseline.is_none() && m.flexible.is_none(), "{m:?}");
}

#[test]
fn a_plan_keeps_an_unlocked_reservation_cheaper_than_what_it_would_buy() {
    // Four 1-GPU nodes (2 reserved, 1 on demand, 1 spot); a reservation of
    // 2 at 5.00 (not locked), while the catalog's 1-year is 6.00. Demand: 3
    // GPUs. Replacing the reservation buys 3 one-year GPUs: 3 x 6 x 730 =
    // 13,140. Keeping it and buying 1 more: (2 x 5 + 6) x 730 = 11,680.
    let now = at("2026-11-20T00:00:00Z");
    let reservation = "apiVersion: capops.dev/v1alpha1\nkind: Reservation\nmetadata: {name: r1}\nspec:\n  provider: aws\n  type: aws-capacity-reservation\n  region: us-east-2\n  zone: us-east-2a\n  instanceType: g1\n  count: 2\n  term: {start: \"2026-10-01T00:00:00Z\", end: \"2027-10-01T00:00:00Z\"}\n  hourlyPrice: 5\n  covers: {cluster: c, pool: p}\n";
    let repo = repo_of(&[
        ("capops.yaml", CONFIG.into()),
        (
            "prices.yaml",
            catalog(
                "    - {provider: aws, region: us-east-2, instanceType: g1, gpusPerInstance: 1, onDemand: 10, spot: 4, reserved1y: 6, source: test}\n",
            ),
        ),
        (
            "cluster.yaml",
            cluster(
                "    - {name: p, gpuModel: h100-80gb-sxm, instanceType: g1, gpusPerNode: 1, nodes: 4, purchase: {reserved: 2, onDemand: 1, spot: 1}}\n",
            ),
        ),
        (
            "teams.yaml",
            format!("{}---\n{}", team("vision", None), team("text", None)),
        ),
        ("reservation.yaml", reservation.into()),
        (
            "usage/c.csv",
            join(
                usage(now, 20, "p", "vision", |_| 2.0, |_| 2.0),
                usage(now, 20, "p", "text", |_| 1.0, |_| 1.0),
            ),
        ),
    ]);
    let a = Analysis::new(&repo, now);
    let m = a.mix("c", "p", 0.0).unwrap();
    assert_eq!(
        m.kept,
        vec![crate::cost::mix::Kept {
            name: "r1".into(),
            count: 2
        }]
    );
    assert_eq!(m.monthly_plan(), d(1_168_000));
    // Today: (2 x 5 + 10 + 4) / 4 = 6.00 a GPU-hour, 4 x 6 x 730 = 17,520:
    // the plan saves 5,840 and keeps r1 rather than cancelling it.
    let recs = plan::recommendations(&a);
    let mix = recs
        .iter()
        .find(|r| r.kind == plan::RecommendationKind::CommitmentMix)
        .unwrap();
    assert_eq!(mix.monthly_savings, Some(d(584_000)));
    assert!(
        mix.changes
            .iter()
            .any(|c| c.starts_with("Reservation `r1`: keep its 2")),
        "{:?}",
        mix.changes
    );
    assert!(
        !mix.changes.iter().any(|c| c.contains("count 2 → 0")),
        "{:?}",
        mix.changes
    );
    assert!(
        mix.changes
            .iter()
            .any(|c| c.contains("purchase {reserved: 3, onDemand: ")),
        "{:?}",
        mix.changes
    );
}

#[test]
fn a_reservation_kept_first_does_not_block_a_cheaper_plan() {
    // 8-GPU instances (on demand 80, 1-year 50); a steady 16 GPUs. ra: 2
    // instances at 32 (4.00 a GPU-hour, the cheapest) ending 70 days into
    // the 90-day window; rb: 10 at 40 (5.00) for the whole window. Keeping
    // ra costs 2 x 32 x 730 x 1680/2160 = 36,337.78 plus its last 20 days on
    // demand, 2 x 80 x 730 x 480/2160 = 25,955.56: 62,293.34, and rb then
    // adds nothing cheaper. Leaving ra out and keeping 2 of rb: 2 x 40 x 730
    // = 58,400.
    let now = at("2026-11-20T00:00:00Z");
    let repo = g8_repo(
        now,
        12,
        "{reserved: 12}",
        &[
            g8_reservation("ra", 2, 32, "2026-11-01", "2027-01-29"),
            g8_reservation("rb", 10, 40, "2026-11-01", "2027-11-01"),
        ],
        16.0,
    );
    let m = Analysis::new(&repo, now).mix("c", "p", 0.0).unwrap();
    assert_eq!(
        m.kept,
        vec![crate::cost::mix::Kept {
            name: "rb".into(),
            count: 2
        }]
    );
    assert_eq!(m.monthly_plan(), d(5_840_000));
    // Money is written with two decimals.
    assert_eq!(m.monthly_mix.to_string(), "0.00");
    assert_eq!(m.monthly_locked.to_string(), "58400.00");
}

#[test]
fn a_reservation_turned_down_early_is_kept_once_another_is() {
    // 8-GPU instances (on demand 80, 1-year 50); a steady 40 GPUs (5
    // instances). r0: 2 at 20 an hour, ending 38 days in; r1: 5 at 30,
    // starting 15 days in and running past the window. Alone, r0 does not
    // pay (the 1-year tier serves the demand for less); with r1 kept it
    // fills the first 15 days. Over the 2,160-hour window, per month
    // (x 730/2160): r0 2 x 20 x 912 h = 12,328.89; r1 5 x 30 x 1,800 h =
    // 91,250.00; on demand 3 x 80 x 360 h = 29,200.00; total 132,778.89.
    let now = at("2026-11-20T00:00:00Z");
    let repo = g8_repo(
        now,
        8,
        "{reserved: 8}",
        &[
            g8_reservation("r0", 2, 20, "2026-11-01", "2026-12-28"),
            g8_reservation("r1", 5, 30, "2026-12-05", "2027-11-01"),
        ],
        40.0,
    );
    let m = Analysis::new(&repo, now).mix("c", "p", 0.0).unwrap();
    let kept: Vec<(&str, u32)> = m.kept.iter().map(|k| (k.name.as_str(), k.count)).collect();
    assert_eq!(kept, vec![("r0", 2), ("r1", 5)]);
    assert_eq!(m.monthly_plan(), d(13_277_889));
}

#[test]
fn a_reservation_starting_after_the_plans_window_is_left_alone() {
    // 16 GPUs on demand today (80 an 8-GPU instance-hour); rf: 4 at 20,
    // starting in March 2027, after the plan's 90 days. The plan buys for
    // its window and says nothing of rf (before, it said `count 4 → 0`).
    let now = at("2026-11-20T00:00:00Z");
    let repo = g8_repo(
        now,
        4,
        "{onDemand: 4}",
        &[g8_reservation("rf", 4, 20, "2027-03-01", "2028-03-01")],
        16.0,
    );
    let a = Analysis::new(&repo, now);
    let recs = plan::recommendations(&a);
    let mix = recs
        .iter()
        .find(|r| r.kind == plan::RecommendationKind::CommitmentMix)
        .expect("a commitment plan: 2 one-year instances instead of 4 on demand");
    assert!(
        !mix.changes.iter().any(|c| c.contains("`rf`")),
        "{:?}",
        mix.changes
    );
}

#[test]
fn a_reservation_and_its_renewal_are_kept_together() {
    // 8-GPU instances (on demand 80, 1-year 50); a steady 16 GPUs (2
    // instances). ra: 2 at 40 (5.00 a GPU-hour) ending 45 days into the
    // 90-day window; rb, its renewal: 2 at 40 from then on. Neither pays
    // alone: one half of the window at 40 and the other on demand is
    // 2 x 40 x 365 + 2 x 80 x 365 = 87,600, above the 1-year tier's
    // 2 x 50 x 730 = 73,000 for the whole window. Both kept: 2 x 40 x 730
    // = 58,400.
    let now = at("2026-11-20T00:00:00Z");
    let repo = g8_repo(
        now,
        2,
        "{reserved: 2}",
        &[
            g8_reservation("ra", 2, 40, "2026-11-01", "2027-01-04"),
            g8_reservation("rb", 2, 40, "2027-01-04", "2027-11-01"),
        ],
        16.0,
    );
    let m = Analysis::new(&repo, now).mix("c", "p", 0.0).unwrap();
    let kept: Vec<(&str, u32)> = m.kept.iter().map(|k| (k.name.as_str(), k.count)).collect();
    assert_eq!(kept, vec![("ra", 2), ("rb", 2)]);
    assert_eq!(m.monthly_plan(), d(5_840_000));
    assert!(m.baseline.is_none() && m.flexible.is_none(), "{m:?}");
}

#[test]
fn part_of_a_reservation_and_part_of_its_renewal_are_kept_together() {
    // As above, but each holds 6 instances where the pool needs 2. Kept
    // whole they cost 6 x 40 x 730 = 175,200, more than the 1-year tier's
    // 73,000; 2 of either alone is 87,600 (as above). 2 of each serve the
    // demand: 2 x 40 x 730 = 58,400.
    let now = at("2026-11-20T00:00:00Z");
    let repo = g8_repo(
        now,
        6,
        "{reserved: 6}",
        &[
            g8_reservation("ra", 6, 40, "2026-11-01", "2027-01-04"),
            g8_reservation("rb", 6, 40, "2027-01-04", "2027-11-01"),
        ],
        16.0,
    );
    let m = Analysis::new(&repo, now).mix("c", "p", 0.0).unwrap();
    let kept: Vec<(&str, u32)> = m.kept.iter().map(|k| (k.name.as_str(), k.count)).collect();
    assert_eq!(kept, vec![("ra", 2), ("rb", 2)]);
    assert_eq!(m.monthly_plan(), d(5_840_000));
}

#[test]
fn a_reservation_dearer_than_the_tier_is_kept_where_the_rest_would_be_on_demand() {
    // 8-GPU instances (on demand 80, 1-year 50); a steady 16 GPUs measured,
    // 8 of them an approved request that ends 45 days into the 90-day
    // window (2027-01-04): 2 instances, then 1. Replacing everything buys
    // 1 instance for a year, 50 x 730 = 36,500, and the second on demand
    // for half the window, 80 x 365 = 29,200: 65,700. rx, 1 instance at 60
    // (7.50 a GPU-hour, dearer than the 1-year tier's 6.25) ending with the
    // request, serves that half at 60 x 365 = 21,900: 58,400.
    let now = at("2026-11-20T00:00:00Z");
    let run = "apiVersion: capops.dev/v1alpha1\nkind: CapacityRequest\nmetadata: {name: run}\nspec:\n  team: vision\n  cluster: c\n  pool: p\n  resources: {nvidia.com/gpu: 8}\n  window: {start: 2026-11-01, end: 2027-01-04}\n  workloadClass: training\n";
    let repo = g8_repo_with(
        now,
        2,
        "{reserved: 2}",
        &[g8_reservation("rx", 1, 60, "2026-11-01", "2027-01-04")],
        16.0,
        &[("requests.yaml", run.to_string())],
    );
    let m = Analysis::new(&repo, now).mix("c", "p", 0.0).unwrap();
    let kept: Vec<(&str, u32)> = m.kept.iter().map(|k| (k.name.as_str(), k.count)).collect();
    assert_eq!(kept, vec![("rx", 1)]);
    assert_eq!(m.monthly_plan(), d(5_840_000));
}

#[test]
fn instances_reserved_beyond_the_nodes_are_part_of_the_bill_the_plan_saves_from() {
    // Ten g8 nodes, two of them reserved; `r1` reserves four instances at 40
    // an instance-hour (5.00 a GPU-hour), two beyond the reserved nodes. The
    // pool's GPUs blend (16 x 5.00 + 64 x 10.00) / 80 = 9.00; the two extra
    // instances bill 80 an hour beside them: (80 x 9.00 + 80) x 730 = 584,000
    // a month. The team's steady 16 GPUs need two instances: the plan keeps
    // two of `r1` (cheaper than the 1-year 50), 80 x 730 = 58,400 a month, and
    // saves 584,000 - 58,400 = 525,600 (the two extra instances it cancels
    // included).
    let now = at("2026-11-22T00:00:00Z");
    let r1 = g8_reservation("r1", 4, 40, "2026-01-01", "2028-01-01");
    let repo = g8_repo(now, 10, "{reserved: 2, onDemand: 8}", &[r1], 16.0);
    let a = Analysis::new(&repo, now);
    let r = report::build(&a);
    let row = r.pools.iter().find(|p| p.pool == "p").unwrap();
    assert_eq!(row.monthly_cost, Some(d(58_400_000)));
    let plan = plan::recommendations(&a);
    let mix = plan
        .iter()
        .find(|r| r.kind == plan::RecommendationKind::CommitmentMix)
        .unwrap();
    assert_eq!(mix.monthly_savings, Some(d(52_560_000)), "{}", mix.text);
    assert!(
        mix.text.contains("58,400 USD a month against 584,000"),
        "{}",
        mix.text
    );
    assert!(
        mix.changes.iter().any(|c| c.contains("`r1`: count 4 → 2")),
        "{:?}",
        mix.changes
    );
}

#[test]
fn a_reservation_in_another_zone_is_billed_beside_the_pool_and_never_kept() {
    // Pool `p` (four g8 nodes in us-east-2a, two reserved) and `mism`, one
    // instance at 40 an hour in us-east-2b: it cannot hold the pool's nodes.
    // The reserved nodes are priced at the catalog's 1-year 50 (6.25 a
    // GPU-hour): (16 x 6.25 + 16 x 10.00) / 32 = 8.125, and `mism` bills 40
    // an hour beside them: (32 x 8.125 + 40) x 730 = 219,000 a month. The
    // plan does not keep it (it serves none of the team's 16 GPUs) and
    // cancels it, saying why.
    let now = at("2026-11-22T00:00:00Z");
    let mism = g8_reservation("mism", 1, 40, "2026-10-01", "2027-04-01")
        .replace("zone: us-east-2a", "zone: us-east-2b");
    let repo = g8_repo(
        now,
        4,
        "{reserved: 2, onDemand: 2}, zone: us-east-2a",
        &[mism],
        16.0,
    );
    let a = Analysis::new(&repo, now);
    let price = &a.pool("c", "p").unwrap().price;
    assert_eq!(price.blended, Some(rust_decimal::Decimal::new(8125, 3)));
    assert_eq!((price.excess_instances, price.excess_hourly), (1, d(4000)));
    let r = report::build(&a);
    let row = r.pools.iter().find(|p| p.pool == "p").unwrap();
    assert_eq!(row.monthly_cost, Some(d(21_900_000)));
    let mix = a.mix("c", "p", 0.0).unwrap();
    assert!(mix.kept.is_empty(), "{:?}", mix.kept);
    let plan = plan::recommendations(&a);
    let rec = plan
        .iter()
        .find(|r| r.kind == plan::RecommendationKind::CommitmentMix)
        .unwrap();
    assert!(
        rec.changes.iter().any(|c| c.contains(
            "`mism`: count 1 → 0 (it cannot serve the pool: the pool's nodes are in zone us-east-2a, the reservation in us-east-2b)"
        )),
        "{:?}",
        rec.changes
    );
    assert_eq!(
        rec.monthly_savings,
        Some(d(21_900_000) - mix.monthly_plan()),
        "{}",
        rec.text
    );
}

#[test]
fn a_plan_that_keeps_only_locked_commitments_needs_the_other_nodes_gone() {
    // Six g8 nodes, two of them reserved by `prepaid` (prepaid and started:
    // locked), for a steady 16 GPUs, which its 2 instances hold. The plan
    // buys nothing and its saving is the 4 on-demand nodes' bill, which
    // falls only if they go: the risk says so.
    let now = at("2026-11-20T00:00:00Z");
    let prepaid = g8_reservation("prepaid", 2, 50, "2026-11-01", "2027-11-01").replace(
        "  hourlyPrice: 50\n",
        "  hourlyPrice: 50\n  upfrontFee: 1000\n",
    );
    let repo = g8_repo(now, 6, "{reserved: 2, onDemand: 4}", &[prepaid], 16.0);
    let a = Analysis::new(&repo, now);
    let recs = plan::recommendations(&a);
    let mix = recs
        .iter()
        .find(|r| r.kind == plan::RecommendationKind::CommitmentMix)
        .expect("a commitment plan: the locked 2 instances cover the demand");
    assert!(
        mix.text.starts_with("keep only the locked commitments"),
        "{}",
        mix.text
    );
    assert!(
        mix.risk
            .contains("the saving assumes the pool's 4 other nodes scale to zero or are released"),
        "{}",
        mix.risk
    );
}

#[test]
fn a_reservation_kept_in_part_names_what_it_gives_up() {
    // `big`: 10 g8 at 40 an instance-hour (5 a GPU-hour, half of on
    // demand), unlocked. Demand is 40 GPUs, and 56 for two hours a day: an
    // instance pays at the reservation's price when it is busy half the
    // hours, so the plan keeps 5 and buys the peaks on demand. The other 5
    // it gives up are a risk.
    let now = at("2026-11-20T00:00:00Z");
    let peak = |h: i64| if h.rem_euclid(24) < 2 { 56.0 } else { 40.0 };
    let mut files = g8_files(
        12,
        "{reserved: 10, onDemand: 2}",
        &[g8_reservation("big", 10, 40, "2026-11-01", "2027-11-01")],
    );
    files.push(("usage/c.csv", usage(now, 90, "p", "vision", peak, peak)));
    let repo = repo_of(&files);
    let a = Analysis::new(&repo, now);
    let recs = plan::recommendations(&a);
    let mix = recs
        .iter()
        .find(|r| r.kind == plan::RecommendationKind::CommitmentMix)
        .expect("a commitment plan");
    assert!(
        mix.changes
            .iter()
            .any(|c| c.starts_with("Reservation `big`: count 10 → 5")),
        "{:?}",
        mix.changes
    );
    assert!(
        mix.risk
            .contains("cutting `big` gives up 5 instances it holds for the pool"),
        "{}",
        mix.risk
    );
}
