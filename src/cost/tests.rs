//! Costs, budgets, utilization and reservations on small repositories and on the
//! example, with every number worked out independently of the code under test.

use super::*;
use crate::load::{Content, Input};
use rust_decimal::Decimal;

/// A repository from files (path, text), with its diagnostics.
pub(super) fn validated(files: &[(&str, String)]) -> crate::pipeline::Validated {
    let inputs = files
        .iter()
        .map(|(p, t)| Input {
            path: p.to_string(),
            content: Content::Bytes(t.as_bytes().to_vec()),
        })
        .collect();
    crate::pipeline::run(inputs)
}

/// A validated repository from files (path, text); panics on errors.
pub(super) fn repo_of(files: &[(&str, String)]) -> Repo {
    let out = validated(files);
    let errors: Vec<_> = out.diagnostics.iter().filter(|d| d.is_error()).collect();
    assert!(errors.is_empty(), "{errors:#?}");
    out.repo
}

pub(super) fn at(s: &str) -> Timestamp {
    s.parse().unwrap()
}

pub(super) const CONFIG: &str =
    "apiVersion: capops.dev/v1alpha1\nkind: Config\nmetadata: {name: t}\nspec: {}\n";

pub(super) fn prices() -> String {
    r#"apiVersion: capops.dev/v1alpha1
kind: PriceCatalog
metadata: {name: aws}
spec:
  prices:
    - {provider: aws, region: us-east-2, instanceType: p4d.24xlarge, gpusPerInstance: 8,
       onDemand: 21.96, spot: 8.80, reserved1y: 14.00, reserved3y: 9.60, capacityBlock: 14.75, source: test}
    - {provider: aws, region: us-east-2, instanceType: p5.48xlarge, gpusPerInstance: 8,
       onDemand: 55.04, source: test}
"#
    .to_string()
}

pub(super) fn cluster(pools: &str) -> String {
    format!(
        "apiVersion: capops.dev/v1alpha1\nkind: Cluster\nmetadata: {{name: c}}\nspec:\n  environment: research\n  provider: aws\n  region: us-east-2\n  nodePools:\n{pools}"
    )
}

pub(super) fn team(name: &str, budget: Option<u32>) -> String {
    let budget = budget
        .map(|b| format!("  monthlyBudget: {b}\n"))
        .unwrap_or_default();
    format!(
        "apiVersion: capops.dev/v1alpha1\nkind: Team\nmetadata: {{name: {name}}}\nspec:\n  costCenter: CC-{name}\n{budget}  clusters:\n    c: {{namespace: {name}}}\n"
    )
}

/// Hourly usage rows for `days` days ending just before `end`.
pub(super) fn usage(
    end: Timestamp,
    days: i64,
    pool: &str,
    team: &str,
    alloc: impl Fn(i64) -> f64,
    used: impl Fn(i64) -> f64,
) -> String {
    let mut s = String::from("timestamp,cluster,pool,team,allocated_gpus,used_gpus\n");
    let last = end.hour_index();
    for h in last - days * 24..last {
        let t = Timestamp::from_second(h * 3600).unwrap();
        s.push_str(&format!(
            "{t},c,{pool},{team},{:.2},{:.2}\n",
            alloc(h),
            used(h)
        ));
    }
    s
}

/// Small deterministic noise in [-1, 1].
pub(super) fn wobble(h: i64) -> f64 {
    (((h * 7919) % 201) as f64 - 100.0) / 100.0
}

#[test]
fn two_hundred_a100s_at_forty_percent_strand_sixty_percent_of_the_block() {
    let now = at("2026-11-22T00:00:00Z");
    let pool = "    - {name: a100, gpuModel: a100-40gb, instanceType: p4d.24xlarge, gpusPerNode: 8, nodes: 30,\n       purchase: {reserved: 25, onDemand: 5}}\n";
    // 25 x p4d.24xlarge = 200 GPUs for 182 days, started 30 days ago; demand runs at 80 (40%).
    let reservation = r#"apiVersion: capops.dev/v1alpha1
kind: Reservation
metadata: {name: block}
spec:
  provider: aws
  type: aws-capacity-block
  region: us-east-2
  instanceType: p4d.24xlarge
  count: 25
  term: {start: "2026-10-23T00:00:00Z", end: "2027-04-23T00:00:00Z"}
  hourlyPrice: 14.75
  covers: {cluster: c, pool: a100}
"#;
    let repo = repo_of(&[
        ("capops.yaml", CONFIG.into()),
        ("prices.yaml", prices()),
        ("cluster.yaml", cluster(pool)),
        ("team.yaml", team("research", None)),
        ("reservation.yaml", reservation.into()),
        (
            "usage/c.csv",
            usage(
                now,
                60,
                "a100",
                "research",
                |h| 80.0 + 2.0 * wobble(h),
                |h| 30.0 + wobble(h),
            ),
        ),
    ]);
    let a = Analysis::new(&repo, now);
    let r = a.reservation("block").expect("an analysis");
    // By hand: 25 instances x 4,368 hours x 14.75 = 1,610,700; 120 of 200 GPUs idle.
    assert_eq!(r.cost.total, Decimal::from(1_610_700));
    assert_eq!(r.cost.gpus, 200);
    let by_hand = 1_610_700.0 * 120.0 / 200.0;
    let stranded = prices::float(r.stranded_p50);
    assert!(
        (stranded - by_hand).abs() / by_hand < 0.05,
        "stranded {stranded} vs {by_hand}"
    );
    assert!(
        (r.utilization_p50 - 0.4).abs() < 0.02,
        "{}",
        r.utilization_p50
    );
    assert!((r.stranded_share - 0.6).abs() < 0.02);
    // The risk case strands at least as much.
    assert!(r.stranded_p10 >= r.stranded_p50);
    // 30 days measured, the rest forecast; the pool (240 GPUs) is never short.
    assert_eq!(r.hours_measured, 30 * 24);
    assert_eq!(r.hours_forecast, 4368 - 30 * 24);
    assert_eq!(r.shortfall_hours, 0);
    // At most 20% idle: 12 instances (96 GPUs) at 80 GPUs is 17% idle.
    assert_eq!(r.suggested_count, 12);
}

#[test]
fn demand_above_the_pool_is_a_shortfall() {
    let now = at("2026-11-22T00:00:00Z");
    let pool = "    - {name: a100, gpuModel: a100-40gb, instanceType: p4d.24xlarge, gpusPerNode: 8, nodes: 10,\n       purchase: {reserved: 10}}\n";
    let reservation = r#"apiVersion: capops.dev/v1alpha1
kind: Reservation
metadata: {name: small}
spec:
  provider: aws
  type: aws-capacity-block
  region: us-east-2
  instanceType: p4d.24xlarge
  count: 10
  term: {start: "2026-11-22T00:00:00Z", end: "2026-12-06T00:00:00Z"}
  covers: {cluster: c, pool: a100}
"#;
    // Demand above what the pool has cannot have been allocated from it, unless
    // the pool was larger then: the Config says so by lowering the check.
    let config = "apiVersion: capops.dev/v1alpha1\nkind: Config\nmetadata: {name: t}\nspec: {severities: {usage-exceeds-capacity: warning}}\n";
    let repo = repo_of(&[
        ("capops.yaml", config.into()),
        ("prices.yaml", prices()),
        ("cluster.yaml", cluster(pool)),
        ("team.yaml", team("training", None)),
        ("reservation.yaml", reservation.into()),
        // Demand swings between 70 and 90 around the pool's 80 GPUs.
        (
            "usage/c.csv",
            usage(
                now,
                30,
                "a100",
                "training",
                |h| 80.0 + 10.0 * ((h % 24) as f64 / 23.0 * 2.0 - 1.0),
                |h| 60.0 + wobble(h),
            ),
        ),
    ]);
    let a = Analysis::new(&repo, now);
    let r = a.reservation("small").unwrap();
    // No hourly price: the catalog's capacity-block price.
    assert_eq!(r.cost.price_source, "catalog capacity-block price");
    assert_eq!(
        r.cost.total,
        Decimal::from(10 * 336) * Decimal::new(1475, 2)
    );
    assert!(r.shortfall_hours > 100, "{}", r.shortfall_hours);
    assert!(r.shortfall_gpus >= 9.0, "{}", r.shortfall_gpus);
    assert!(r.utilization_p50 > 0.9);
}

#[test]
fn twenty_h100s_used_at_eighteen_percent_rightsize_to_six() {
    let now = at("2026-11-22T00:00:00Z");
    let pool = "    - {name: h100, gpuModel: h100-80gb-sxm, instanceType: p5.48xlarge, gpusPerNode: 8, nodes: 4}\n";
    let repo = repo_of(&[
        ("capops.yaml", CONFIG.into()),
        ("prices.yaml", prices()),
        ("cluster.yaml", cluster(pool)),
        ("team.yaml", team("vision", None)),
        // 45 days of 20 allocated, 3.6 used (18%); older days at 50% do not count.
        (
            "usage/c.csv",
            usage(
                now,
                45,
                "h100",
                "vision",
                |_| 20.0,
                move |h| {
                    if h < now.hour_index() - 30 * 24 {
                        10.0
                    } else {
                        3.6
                    }
                },
            ),
        ),
    ]);
    let a = Analysis::new(&repo, now);
    let u = &a.usage()["vision"];
    assert_eq!(u.pools[0].hours, 30 * 24);
    assert!((u.utilization.unwrap() - 0.18).abs() < 1e-9);
    assert!(u.low, "18% is below the default 40%");
    assert_eq!(
        u.rightsized_gpus, 6,
        "3.6 GPUs used at a 70% target need 5.14, so 6"
    );
    // Chargeback: 20 GPUs x 720 h x 55.04 / 8; idle: 82% of it.
    assert_eq!(u.cost, Decimal::from(20 * 720) * Decimal::new(688, 2));
    assert_eq!(
        u.idle_cost,
        Decimal::from_f64_retain(16.4 * 720.0 * 6.88)
            .unwrap()
            .round_dp(2)
    );
    assert_eq!(usage::rightsize(3.5, 0.7), 5);
}

#[test]
fn reservations_in_force_are_weighted_by_their_gpus_and_uncovered_reserved_nodes_by_the_catalog() {
    let now = at("2026-11-20T00:00:00Z");
    let res = |name: &str, count: u32, start: &str, end: &str, price: &str| {
        format!(
            "apiVersion: capops.dev/v1alpha1\nkind: Reservation\nmetadata: {{name: {name}}}\nspec:\n  provider: aws\n  type: aws-capacity-reservation\n  region: us-east-2\n  zone: us-east-2a\n  instanceType: p4d.24xlarge\n  count: {count}\n  term: {{start: \"{start}\", end: \"{end}\"}}\n  hourlyPrice: {price}\n  covers: {{cluster: c, pool: a100}}\n---\n"
        )
    };
    let price_of = |purchase: &str, reservations: String| {
        let pool = format!(
            "    - {{name: a100, gpuModel: a100-40gb, instanceType: p4d.24xlarge, gpusPerNode: 8, nodes: 4,\n       purchase: {purchase}}}\n"
        );
        let repo = repo_of(&[
            ("capops.yaml", CONFIG.into()),
            ("prices.yaml", prices()),
            ("cluster.yaml", cluster(&pool)),
            ("reservations.yaml", reservations),
        ]);
        let a = Analysis::new(&repo, now);
        a.pool("c", "a100").unwrap().price.blended.unwrap()
    };
    // A year at 8.00 an instance-hour (1.00 a GPU-hour) and a week at 24.00
    // (3.00), both billing now for two instances each: (2 x 1.00 + 2 x 3.00)
    // / 4 = 2.00 a GPU-hour, however short the week is.
    let both = [
        res(
            "year",
            2,
            "2026-10-01T00:00:00Z",
            "2027-10-01T00:00:00Z",
            "8.00",
        ),
        res(
            "week",
            2,
            "2026-11-15T00:00:00Z",
            "2026-11-22T00:00:00Z",
            "24.00",
        ),
    ]
    .concat();
    assert_eq!(price_of("{reserved: 4}", both), Decimal::new(2, 0));
    // Three reserved nodes, two of them covered at 1.00: the third costs the
    // catalog's 1-year 1.75, so reserved GPU-hours average 1.25 and the pool
    // (3 x 1.25 + 1 x 2.745 on demand) / 4 = 1.62375.
    let one = res(
        "year",
        2,
        "2026-10-01T00:00:00Z",
        "2027-10-01T00:00:00Z",
        "8.00",
    );
    assert_eq!(
        price_of("{reserved: 3, onDemand: 1}", one.clone()),
        Decimal::new(162_375, 5)
    );
    // Two instances reserved for a pool that declares one reserved node: the
    // blend is the pool's nodes, (1 x 1.00 + 3 x 2.745 on demand) / 4 =
    // 2.30875 a GPU-hour, and the second instance bills beside it, 8 GPUs x
    // 1.00 = 8.00 an hour (in the pool's cost, stranded).
    assert_eq!(
        price_of("{reserved: 1, onDemand: 3}", one.clone()),
        Decimal::new(230_875, 5)
    );
    let pool = "    - {name: a100, gpuModel: a100-40gb, instanceType: p4d.24xlarge, gpusPerNode: 8, nodes: 4,\n       purchase: {reserved: 1, onDemand: 3}}\n";
    let repo = repo_of(&[
        ("capops.yaml", CONFIG.into()),
        ("prices.yaml", prices()),
        ("cluster.yaml", cluster(pool)),
        ("reservations.yaml", one),
    ]);
    let a = Analysis::new(&repo, now);
    let p = &a.pool("c", "a100").unwrap().price;
    assert_eq!(
        (p.excess_instances, p.excess_hourly),
        (1, Decimal::new(8, 0))
    );
    // Over the 30 days before `now` (the year's reservation in force all of
    // them): 720 h x 8.00 = 5,760 more capacity cost, all of it stranded (no
    // usage: the pool's own GPUs are unmeasured).
    let w = a.pool_waste("c", "a100").unwrap();
    let c = w.costs.as_ref().unwrap();
    let own = Decimal::new(230_875, 5) * Decimal::from(32 * 720);
    assert_eq!(c.capacity, (own + Decimal::from(5760)).round_dp(2));
    assert_eq!(c.stranded, Decimal::from(5760));
    let r = crate::cost::report::build(&a);
    let row = r.pools.iter().find(|p| p.pool == "a100").unwrap();
    assert_eq!(row.reserved_beyond_nodes, 1);
    // (32 GPUs x 2.30875 + 8.00) x 730.
    assert_eq!(row.monthly_cost, Some(Decimal::new(5_977_240, 2)));
}

#[test]
fn requests_cost_their_pools_blended_price() {
    let now = at("2026-11-22T00:00:00Z");
    let pool = "    - {name: a100, gpuModel: a100-40gb, instanceType: p4d.24xlarge, gpusPerNode: 8, nodes: 4,\n       purchase: {reserved: 2, onDemand: 1, spot: 1}}\n";
    let request = "apiVersion: capops.dev/v1alpha1\nkind: CapacityRequest\nmetadata: {name: r}\nspec:\n  team: t\n  cluster: c\n  pool: a100\n  resources: {nvidia.com/gpu: 16}\n  window: {start: 2026-12-01, end: 2026-12-11}\n  workloadClass: training\n";
    let repo = repo_of(&[
        ("capops.yaml", CONFIG.into()),
        ("prices.yaml", prices()),
        ("cluster.yaml", cluster(pool)),
        ("team.yaml", team("t", None)),
        ("request.yaml", request.into()),
    ]);
    let a = Analysis::new(&repo, now);
    let p = &a.pool("c", "a100").unwrap().price;
    // No reservation covers the pool: reserved nodes at the 1-year price.
    assert_eq!(p.reserved.as_ref().unwrap().0, Decimal::new(175, 2)); // 14.00 / 8
    // (2 x 1.75 + 2.745 + 1.10) / 4 per GPU-hour.
    assert_eq!(p.blended.unwrap(), Decimal::new(183_625, 5));
    let c = a.request_cost(&repo.requests["r"].spec).unwrap();
    assert_eq!(c.hours, 240);
    assert_eq!(c.total, Decimal::new(705_120, 2)); // 16 x 240 x 1.83625
    assert_eq!(c.monthly, Decimal::new(2_144_740, 2)); // 16 x 730 x 1.83625
}

#[test]
fn the_commitment_mix_reserves_the_floor_and_bursts_on_demand() {
    let now = at("2026-11-22T00:00:00Z");
    let pool = "    - {name: a100, gpuModel: a100-40gb, instanceType: p4d.24xlarge, gpusPerNode: 8, nodes: 30}\n";
    let repo = repo_of(&[
        ("capops.yaml", CONFIG.into()),
        ("prices.yaml", prices()),
        ("cluster.yaml", cluster(pool)),
        ("team.yaml", team("t", None)),
        // A floor of 100 GPUs, up to 180 in working hours.
        ("usage/c.csv", usage(now, 60, "a100", "t", |h| if (8..20).contains(&(h % 24)) { 180.0 } else { 100.0 } + wobble(h), |_| 50.0)),
    ]);
    let a = Analysis::new(&repo, now);
    let m = a.mix("c", "a100", 0.0).unwrap();
    let base = m.baseline.as_ref().unwrap();
    // Sixty days of history cannot support a 3-year term: the baseline is committed for a year.
    assert!(m.three_year_unsupported);
    assert_eq!(base.kind, "1-year reserved");
    // The floor in whole instances: about 100 GPUs every hour take 13
    // instances of 8 (12.5, rounded up: on demand is bought by the instance
    // too), and no more.
    assert!((12..=13).contains(&base.nodes), "{base:?}");
    // A 1-year GPU costs 64% of on demand: worth it for GPUs busy more than 64% of
    // hours; the 180 level holds 50% of hours, so nothing above the floor is committed.
    assert!(m.flexible.is_none(), "{:?}", m.flexible);
    assert!(m.monthly_mix < m.monthly_on_demand);
    assert!(
        m.savings_share > 0.2 && m.savings_share < 0.6,
        "{}",
        m.savings_share
    );
}

#[test]
fn caches_filled_on_all_cores_read_as_filled_one_by_one() {
    // The example, with reservations, usage and budgets; every cache is
    // filled alone, in the reverse of `prepare`'s order, on one analysis
    // and by `prepare` on another: the reports are equal.
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/acme");
    let repo = crate::pipeline::validate_dir(&root).unwrap().repo;
    let now = at("2026-11-20T00:00:00Z");
    let one = Analysis::new(&repo, now);
    assert!(!one.reservations.is_empty() && !one.budgets.is_empty());
    for r in one.reservations.keys().rev() {
        one.reservation(r);
    }
    for t in one.budgets.keys().rev() {
        one.budget(t);
    }
    one.usage();
    one.waste();
    for (cluster, pool) in one.pools.keys().rev() {
        one.preemptible_outlook(cluster, pool);
        assert!(one.outlook(cluster, pool).is_some(), "{cluster}/{pool}");
    }
    let all = Analysis::new(&repo, now);
    all.prepare();
    let json = |a: &Analysis<'_>| serde_json::to_value(report::build(a)).unwrap();
    let (one, all) = (json(&one), json(&all));
    assert!(
        one["reservations"]
            .as_array()
            .is_some_and(|r| !r.is_empty())
    );
    assert_eq!(one, all);
}

#[test]
fn hours_already_past_do_not_dilute_what_is_still_to_be_paid_for() {
    // 25 x p4d.24xlarge (200 GPUs), dated back 50 days over weeks where
    // demand filled them, ending in 6 days. Demand stopped two days ago.
    let now = at("2026-11-22T00:00:00Z");
    let pool = "    - {name: a100, gpuModel: a100-40gb, instanceType: p4d.24xlarge, gpusPerNode: 8, nodes: 25,\n       purchase: {reserved: 25}}\n";
    let reservation = r#"apiVersion: capops.dev/v1alpha1
kind: Reservation
metadata: {name: block}
spec:
  provider: aws
  type: aws-capacity-block
  region: us-east-2
  instanceType: p4d.24xlarge
  count: 25
  term: {start: "2026-10-03T00:00:00Z", end: "2026-11-28T00:00:00Z"}
  hourlyPrice: 14.75
  covers: {cluster: c, pool: a100}
"#;
    let last = now.hour_index();
    let busy = move |h: i64| if h < last - 48 { 200.0 } else { 0.0 };
    let repo = repo_of(&[
        ("capops.yaml", CONFIG.into()),
        ("prices.yaml", prices()),
        ("cluster.yaml", cluster(pool)),
        ("team.yaml", team("research", None)),
        ("reservation.yaml", reservation.into()),
        (
            "usage/c.csv",
            usage(now, 60, "a100", "research", busy, busy),
        ),
    ]);
    let a = Analysis::new(&repo, now);
    let r = a.reservation("block").expect("an analysis");
    // By hand: 56 days of term; 48 measured full, 2 measured empty, 6 ahead
    // forecast from a series that has just dropped to 0. Over the whole term
    // at most (2 + 6) / 56 = 14% is stranded; from now on nearly all of it.
    assert!(r.stranded_share < 0.15, "{}", r.stranded_share);
    assert!(r.stranded_share_ahead > 0.9, "{}", r.stranded_share_ahead);
    // The size suggested keeps within the threshold ahead too: nothing
    // ahead uses an instance, so none.
    assert_eq!(r.suggested_count, 0);
}

#[test]
fn hours_before_the_history_count_at_the_measured_utilization() {
    // 48 A100s, demand flat at 40 for the 60 days measured. `old` (32 GPUs)
    // began 60 days before the history and ends in 60 days; `new` (16 GPUs)
    // starts now and shares the forecast hours with it.
    let now = at("2026-11-22T00:00:00Z");
    let pool = "    - {name: a100, gpuModel: a100-40gb, instanceType: p4d.24xlarge, gpusPerNode: 8, nodes: 6,\n       purchase: {reserved: 6}}\n";
    let reservation = |name: &str, count: u32, start: &str, end: &str| {
        format!(
            "apiVersion: capops.dev/v1alpha1\nkind: Reservation\nmetadata: {{name: {name}}}\nspec:\n  provider: aws\n  type: aws-capacity-reservation\n  region: us-east-2\n  zone: us-east-2a\n  instanceType: p4d.24xlarge\n  count: {count}\n  term: {{start: \"{start}\", end: \"{end}\"}}\n  hourlyPrice: 14\n  covers: {{cluster: c, pool: a100}}\n"
        )
    };
    let repo = repo_of(&[
        ("capops.yaml", CONFIG.into()),
        ("prices.yaml", prices()),
        ("cluster.yaml", cluster(pool)),
        ("team.yaml", team("research", None)),
        (
            "old.yaml",
            reservation("old", 4, "2026-07-25T00:00:00Z", "2027-01-21T00:00:00Z"),
        ),
        (
            "new.yaml",
            reservation("new", 2, "2026-11-22T00:00:00Z", "2027-01-21T00:00:00Z"),
        ),
        (
            "usage/c.csv",
            usage(now, 60, "a100", "research", |_| 40.0, |_| 40.0),
        ),
    ]);
    let a = Analysis::new(&repo, now);
    let r = a.reservation("old").expect("an analysis");
    assert_eq!(r.hours_unknown, 60 * 24);
    assert_eq!(r.hours_measured, 60 * 24);
    // By hand: 60 days before the history and 60 measured, demand 40 >= 32:
    // all used. 60 days ahead, 40 GPUs split 32:16 between the two: 26.67 of
    // 32 (5/6). (60 + 60 + 60 x 5/6) / 180 = 0.944. The days before the
    // history are not at the forecast's 5/6: `new` did not exist then.
    assert!(
        (r.utilization_p50 - 0.9444).abs() < 0.01,
        "{}",
        r.utilization_p50
    );
}

#[test]
fn a_reservation_that_cannot_serve_the_pool_takes_none_of_its_demand() {
    // 48 A100s, demand flat at 40. `fit` reserves 4 p4d.24xlarge (32 GPUs)
    // of the pool's own instances; `other` 2 p5.48xlarge, which are not the
    // pool's nodes. `fit` serves 32 of the 40 every hour, as if `other`
    // were not there: fully used.
    let now = at("2026-11-22T00:00:00Z");
    let pool = "    - {name: a100, gpuModel: a100-40gb, instanceType: p4d.24xlarge, gpusPerNode: 8, nodes: 6,\n       purchase: {reserved: 6}}\n";
    let reservation = |name: &str, instance: &str, count: u32| {
        format!(
            "apiVersion: capops.dev/v1alpha1\nkind: Reservation\nmetadata: {{name: {name}}}\nspec:\n  provider: aws\n  type: aws-capacity-reservation\n  region: us-east-2\n  zone: us-east-2a\n  instanceType: {instance}\n  count: {count}\n  term: {{start: \"2026-11-22T00:00:00Z\", end: \"2026-12-22T00:00:00Z\"}}\n  hourlyPrice: 14\n  covers: {{cluster: c, pool: a100}}\n"
        )
    };
    let repo = repo_of(&[
        ("capops.yaml", CONFIG.into()),
        ("prices.yaml", prices()),
        ("cluster.yaml", cluster(pool)),
        ("team.yaml", team("research", None)),
        ("fit.yaml", reservation("fit", "p4d.24xlarge", 4)),
        ("other.yaml", reservation("other", "p5.48xlarge", 2)),
        (
            "usage/c.csv",
            usage(now, 60, "a100", "research", |_| 40.0, |_| 40.0),
        ),
    ]);
    let a = Analysis::new(&repo, now);
    let fit = a.reservation("fit").expect("an analysis");
    assert!(fit.utilization_p50 > 0.99, "{}", fit.utilization_p50);
    let other = a.reservation("other").expect("an analysis");
    assert!(other.utilization_p50 < 1e-9, "{}", other.utilization_p50);
}

#[test]
fn shares_of_millions_are_right_to_the_cent() {
    // A reservation of 2,803,200 busy 5/12 of its term strands 7/12 of it:
    // 1,635,200.00 exactly (a share kept to eight places made it .99).
    let share = prices::decimal(1.0 - 5.0 / 12.0);
    assert_eq!(
        (Decimal::from(2_803_200) * share).round_dp(2),
        Decimal::from(1_635_200)
    );
    // A billion at a third: 333,333,333.33.
    assert_eq!(
        (Decimal::from(1_000_000_000) * prices::decimal(1.0 / 3.0)).round_dp(2),
        Decimal::new(33_333_333_333, 2)
    );
}
