//! Budgets: monthly spend projected from measured and forecast allocation
//! and the approved requests, priced hour by hour, with alert levels; every
//! number worked out by hand in the comments.

use super::tests::{CONFIG, at, cluster, prices, repo_of, team, usage};
use super::*;
use rust_decimal::Decimal;

/// Four p5.48xlarge nodes (6.88 a GPU-hour on demand).
const H100_POOL: &str = "    - {name: h100, gpuModel: h100-80gb-sxm, instanceType: p5.48xlarge, gpusPerNode: 8, nodes: 4}\n";

/// A request of vision's in the H100 pool.
fn request(name: &str, gpus: u32, start: &str, end: &str) -> String {
    format!(
        "apiVersion: capops.dev/v1alpha1\nkind: CapacityRequest\nmetadata: {{name: {name}}}\nspec:\n  team: vision\n  cluster: c\n  pool: h100\n  resources: {{nvidia.com/gpu: {gpus}}}\n  window: {{start: {start}, end: {end}}}\n  workloadClass: training\n---\n"
    )
}

#[test]
fn a_budget_crosses_its_alert_levels_in_the_right_months() {
    let now = at("2026-11-22T00:00:00Z");
    let pool = H100_POOL;
    let requests = [
        request("base", 16, "2026-11-01", "2027-06-01"),
        request("dec", 2, "2026-12-01", "2027-06-01"),
        request("jan", 2, "2027-01-01", "2027-06-01"),
        request("march-peak", 4, "2027-03-01", "2027-04-01"),
    ]
    .concat();
    let repo = repo_of(&[
        ("capops.yaml", CONFIG.into()),
        ("prices.yaml", prices()),
        ("cluster.yaml", cluster(pool)),
        ("team.yaml", team("vision", Some(100_000))),
        ("requests.yaml", requests),
    ]);
    let a = Analysis::new(&repo, now);
    let months = a.budget("vision");
    assert_eq!(months.len(), BUDGET_MONTHS);
    let got: Vec<(String, Option<String>)> = months
        .iter()
        .take(8)
        .map(|m| (m.label(), m.alert.map(|l| l.normalize().to_string())))
        .collect();
    let want = [
        ("2026-11", None),        // 16 GPUs x 720 h x 6.88 = 79,258: 79%
        ("2026-12", Some("0.8")), // 18 x 744 h: 92,137
        ("2027-01", Some("1")),   // 20 x 744 h: 102,374
        ("2027-02", Some("0.8")), // 20 x 672 h: 92,467 (a short month)
        ("2027-03", Some("1.2")), // 24 x 744 h: 122,849
        ("2027-04", Some("0.8")), // 20 x 720 h: 99,072
        ("2027-05", Some("1")),   // 20 x 744 h: 102,374
        ("2027-06", None),        // nothing left
    ];
    let want: Vec<(String, Option<String>)> = want
        .iter()
        .map(|(m, l)| (m.to_string(), l.map(String::from)))
        .collect();
    assert_eq!(got, want);
    assert_eq!(months[1].spend, Decimal::new(9_213_696, 2));
    assert!((months[4].share.unwrap() - 1.228_492_8).abs() < 1e-6);
}

/// Four p4d.24xlarge nodes, 2 reserved and 2 on demand, the reserved ones
/// covered by a capacity reservation from November 1 to December 16 (at
/// `hourly_price` an instance-hour, else the on-demand rate it bills at),
/// and an 8-GPU request of vision's until February: its first four months'
/// budgeted spend.
fn a100_budget(hourly_price: Option<&str>) -> Vec<Decimal> {
    let now = at("2026-11-22T00:00:00Z");
    let pool = "    - {name: a100, gpuModel: a100-40gb, instanceType: p4d.24xlarge, gpusPerNode: 8, nodes: 4,\n       purchase: {reserved: 2, onDemand: 2}}\n";
    let price = hourly_price.map_or(String::new(), |p| format!("  hourlyPrice: {p}\n"));
    let reservation = format!(
        r#"apiVersion: capops.dev/v1alpha1
kind: Reservation
metadata: {{name: ri}}
spec:
  provider: aws
  type: aws-capacity-reservation
  region: us-east-2
  zone: us-east-2a
  instanceType: p4d.24xlarge
  count: 2
  term: {{start: "2026-11-01T00:00:00Z", end: "2026-12-16T00:00:00Z"}}
{price}  covers: {{cluster: c, pool: a100}}
"#
    );
    let request = "apiVersion: capops.dev/v1alpha1\nkind: CapacityRequest\nmetadata: {name: run}\nspec:\n  team: vision\n  cluster: c\n  pool: a100\n  resources: {nvidia.com/gpu: 8}\n  window: {start: 2026-11-01, end: 2027-02-01}\n  workloadClass: training\n";
    let repo = repo_of(&[
        ("capops.yaml", CONFIG.into()),
        ("prices.yaml", prices()),
        ("cluster.yaml", cluster(pool)),
        ("team.yaml", team("vision", Some(100_000))),
        ("reservation.yaml", reservation),
        ("request.yaml", request.into()),
    ]);
    let a = Analysis::new(&repo, now);
    a.budget("vision").iter().take(4).map(|m| m.spend).collect()
}

#[test]
fn a_budget_prices_each_hour_at_the_price_in_force_then() {
    // While the reservation (8.00 an instance-hour: 1.00 a GPU-hour) is in
    // force the blended GPU-hour is (2 x 1.00 + 2 x 21.96 / 8) / 4 = 1.8725;
    // after it ends on December 16 the reserved nodes fall back to the
    // catalog's 1-year price (14.00 / 8 = 1.75): (2 x 1.75 + 2 x 2.745) / 4 =
    // 2.2475.
    // November: 8 x 720 x 1.8725 = 10,785.60.
    // December: 8 x (360 x 1.8725 + 384 x 2.2475) = 12,297.12.
    // January: 8 x 744 x 2.2475 = 13,377.12. February: nothing.
    assert_eq!(
        a100_budget(Some("8.00")),
        [
            Decimal::new(1_078_560, 2),
            Decimal::new(1_229_712, 2),
            Decimal::new(1_337_712, 2),
            Decimal::ZERO
        ]
    );
}

#[test]
fn a_capacity_reservation_ending_makes_no_projected_hour_cheaper_than_today() {
    // The reservation at the on-demand rate it bills at (21.96 an
    // instance-hour: 2.745 a GPU-hour): 2.745 a GPU-hour while it runs. When
    // it ends on December 16 its nodes would fall back to the catalog's
    // 1-year price (2.2475 blended), which nobody bought: projected hours
    // stay at the price at `--at`, as a request's do.
    // November: 8 x 720 x 2.745 = 15,811.20; December and January: 8 x 744 x
    // 2.745 = 16,338.24 each (were 14,809.92 and 13,377.12 at the fallback).
    assert_eq!(
        a100_budget(None),
        [
            Decimal::new(1_581_120, 2),
            Decimal::new(1_633_824, 2),
            Decimal::new(1_633_824, 2),
            Decimal::ZERO
        ]
    );
}

#[test]
fn a_request_ending_takes_its_gpus_away_but_no_hour_costs_less_than_nothing() {
    let now = at("2026-11-16T00:00:00Z");
    let pool = H100_POOL;
    // The team is measured at 2 GPUs, while a request of 3 runs until
    // December 20: from then on the forecast is max(0, 2 - 3) = 0 an hour.
    let request = "apiVersion: capops.dev/v1alpha1\nkind: CapacityRequest\nmetadata: {name: a}\nspec:\n  team: vision\n  cluster: c\n  pool: h100\n  resources: {nvidia.com/gpu: 3}\n  window: {start: 2026-11-01, end: 2026-12-20}\n  workloadClass: training\n";
    let repo = repo_of(&[
        ("capops.yaml", CONFIG.into()),
        ("prices.yaml", prices()),
        ("cluster.yaml", cluster(pool)),
        ("team.yaml", team("vision", Some(100_000))),
        ("request.yaml", request.into()),
        (
            "usage/c.csv",
            usage(now, 40, "h100", "vision", |_| 2.0, |_| 1.0),
        ),
    ]);
    let a = Analysis::new(&repo, now);
    let m = a.budget("vision");
    // December: 19 days x 24 h x 2 GPUs x 6.88 = 6,274.56 (the last 12 days
    // cost nothing; they do not take 864 GPU-hours off the first 19).
    assert_eq!(m[1].spend, Decimal::new(627_456, 2));
    assert_eq!(m[2].spend, Decimal::ZERO);
}

/// One 8-GPU node while two teams (vision, with a budget, and text) hold 6
/// GPUs each (3 used) for the 40 days before `now`.
fn two_teams_of_six_on_one_node(now: Timestamp) -> Repo {
    two_teams_of_six_on_one_node_with(now, |_| true)
}

/// As [`two_teams_of_six_on_one_node`], with only the rows of the second
/// team (`text`) that `keep` keeps.
fn two_teams_of_six_on_one_node_with(now: Timestamp, keep: impl Fn(&str) -> bool) -> Repo {
    let pool = "    - {name: h100, gpuModel: h100-80gb-sxm, instanceType: p5.48xlarge, gpusPerNode: 8, nodes: 1}\n";
    let text: String = usage(now, 40, "h100", "text", |_| 6.0, |_| 3.0)
        .lines()
        .filter(|l| keep(l))
        .map(|l| format!("{l}\n"))
        .collect();
    repo_of(&[
        ("capops.yaml", CONFIG.into()),
        ("prices.yaml", prices()),
        ("cluster.yaml", cluster(pool)),
        (
            "teams.yaml",
            format!(
                "{}---\n{}",
                team("vision", Some(100_000)),
                team("text", None)
            ),
        ),
        (
            "usage/c.csv",
            super::tests_finops::join(usage(now, 40, "h100", "vision", |_| 6.0, |_| 3.0), text),
        ),
    ])
}

#[test]
fn measured_hours_over_capacity_cost_a_budget_what_chargeback_charges() {
    let now = at("2026-11-16T00:00:00Z");
    // One 8-GPU node, while two teams report 6 GPUs each: chargeback scales
    // each to 8 x 6 / 12 = 4, and the budget's measured hours agree.
    let repo = two_teams_of_six_on_one_node(now);
    let a = Analysis::new(&repo, now);
    let m = a.budget("vision");
    // November 1-15: 360 h x 4 GPUs x 6.88 = 9,907.20.
    assert_eq!(m[0].measured, Decimal::new(990_720, 2));
}

#[test]
fn usage_history_sets_the_projection_and_requests_move_it() {
    let now = at("2026-11-16T00:00:00Z");
    let pool = H100_POOL;
    // 10 GPUs allocated throughout, 8 of them by a request that ends on December 1;
    // a new request adds 4 from January 1.
    let repo = repo_of(&[
        ("capops.yaml", CONFIG.into()),
        ("prices.yaml", prices()),
        ("cluster.yaml", cluster(pool)),
        ("team.yaml", team("vision", Some(100_000))),
        (
            "requests.yaml",
            [
                request("running", 8, "2026-09-01", "2026-12-01"),
                request("new", 4, "2027-01-01", "2027-02-01"),
            ]
            .concat(),
        ),
        (
            "usage/c.csv",
            usage(now, 40, "h100", "vision", |_| 10.0, |_| 5.0),
        ),
    ]);
    let a = Analysis::new(&repo, now);
    let m = a.budget("vision");
    let gpu_hours = |i: usize| prices::float(m[i].spend) / 6.88;
    // November: 10 GPUs all month (15 days measured, 15 forecast at the same level).
    assert!(
        (gpu_hours(0) - 10.0 * 720.0).abs() < 1.0,
        "{}",
        gpu_hours(0)
    );
    assert!((prices::float(m[0].measured) / 6.88 - 10.0 * 360.0).abs() < 1.0);
    // December: the running request has ended: 2 GPUs.
    assert!((gpu_hours(1) - 2.0 * 744.0).abs() < 1.0, "{}", gpu_hours(1));
    // January: 2 + 4.
    assert!((gpu_hours(2) - 6.0 * 744.0).abs() < 1.0, "{}", gpu_hours(2));
}

#[test]
fn an_ended_request_takes_away_no_more_than_the_team_held() {
    let now = at("2026-11-20T00:00:00Z");
    let pool = H100_POOL;
    // The team asked for 16 GPUs until December but was measured at 4; from
    // December a new request of 8 starts. The ended request takes away what
    // the team held (4), not 16: 4 - 4 + 8 = 8 GPUs from December 1.
    let repo = repo_of(&[
        ("capops.yaml", CONFIG.into()),
        ("prices.yaml", prices()),
        ("cluster.yaml", cluster(pool)),
        ("team.yaml", team("vision", Some(40_000))),
        (
            "requests.yaml",
            [
                request("qa", 16, "2026-09-01", "2026-12-01"),
                request("qb", 8, "2026-12-01", "2027-03-01"),
            ]
            .concat(),
        ),
        (
            "usage/c.csv",
            usage(now, 80, "h100", "vision", |_| 4.0, |_| 4.0),
        ),
    ]);
    let a = Analysis::new(&repo, now);
    let m = a.budget("vision");
    // December: 8 x 744 x 6.88 = 40,949.76 (102% of 40,000: the 100% alert);
    // February: 8 x 672 x 6.88 = 36,986.88; March: nothing.
    assert_eq!(m[1].spend, Decimal::new(4_094_976, 2));
    assert_eq!(m[1].alert, Some(Decimal::ONE));
    assert_eq!(m[3].spend, Decimal::new(3_698_688, 2));
    assert_eq!(m[4].spend, Decimal::ZERO);
}

#[test]
fn an_hour_another_team_did_not_report_is_scaled_with_its_filled_level_too() {
    let now = at("2026-11-16T00:00:00Z");
    // Two 8-GPU nodes; vision and text report 12 GPUs each, speech 4, except
    // that speech reported nothing from November 5 to 9 (120 hours).
    let pool = "    - {name: h100, gpuModel: h100-80gb-sxm, instanceType: p5.48xlarge, gpusPerNode: 8, nodes: 2}\n";
    let gap = (
        at("2026-11-05T00:00:00Z").hour_index(),
        at("2026-11-10T00:00:00Z").hour_index(),
    );
    let speech: String = usage(now, 40, "h100", "speech", |_| 4.0, |_| 2.0)
        .lines()
        .map(|l| {
            let hour = l
                .split(',')
                .next()
                .and_then(|t| t.parse::<Timestamp>().ok())
                .map(|t| t.hour_index());
            match hour {
                Some(h) if (gap.0..gap.1).contains(&h) => {
                    format!("{},c,h100,speech,,\n", l.split(',').next().unwrap())
                }
                _ => format!("{l}\n"),
            }
        })
        .collect();
    let repo = repo_of(&[
        ("capops.yaml", CONFIG.into()),
        ("prices.yaml", prices()),
        ("cluster.yaml", cluster(pool)),
        (
            "teams.yaml",
            [
                team("vision", Some(100_000)),
                team("text", None),
                team("speech", None),
            ]
            .join("---\n"),
        ),
        (
            "usage/a.csv",
            usage(now, 40, "h100", "vision", |_| 12.0, |_| 6.0),
        ),
        (
            "usage/b.csv",
            usage(now, 40, "h100", "text", |_| 12.0, |_| 6.0),
        ),
        ("usage/d.csv", speech),
    ]);
    let a = Analysis::new(&repo, now);
    let m = a.budget("vision");
    // 360 hours at 12 x 16 / 28: while speech is silent its budget counts it
    // at the level its series is filled with (4), so the pool is as over
    // capacity as before and vision is scaled as before (chargeback, which
    // bills only what was measured, scales by 24 then): 2,468.57 GPU-hours x
    // 6.88 = 16,983.77, and the three budgets never add up to more than the
    // pool's 16 GPUs.
    assert_eq!(m[0].measured, Decimal::new(1_698_377, 2));
}

#[test]
fn teams_whose_use_is_missing_still_count_in_the_scaling_over_capacity() {
    let now = at("2026-11-16T00:00:00Z");
    // Two 8-GPU nodes; vision reports 16 GPUs allocated but never its use,
    // text 16 allocated and used: 32 GPUs allocated in a 16-GPU pool, so
    // each team's measured hours are scaled by 16 / 32, and their budgets
    // add up to what the pool costs.
    let pool = "    - {name: h100, gpuModel: h100-80gb-sxm, instanceType: p5.48xlarge, gpusPerNode: 8, nodes: 2}\n";
    let vision: String = usage(now, 40, "h100", "vision", |_| 16.0, |_| 0.0)
        .lines()
        .map(|l| match l.strip_suffix(",0.00") {
            Some(row) => format!("{row},\n"),
            None => format!("{l}\n"),
        })
        .collect();
    let repo = repo_of(&[
        ("capops.yaml", CONFIG.into()),
        ("prices.yaml", prices()),
        ("cluster.yaml", cluster(pool)),
        (
            "teams.yaml",
            [team("vision", Some(100_000)), team("text", Some(100_000))].join("---\n"),
        ),
        ("usage/a.csv", vision),
        (
            "usage/b.csv",
            usage(now, 40, "h100", "text", |_| 16.0, |_| 16.0),
        ),
    ]);
    let a = Analysis::new(&repo, now);
    // November 1-15: 360 h x 8 GPUs x 6.88 = 19,814.40 each, 39,628.80 in
    // all: the pool's 16 GPUs for 360 hours.
    assert_eq!(a.budget("vision")[0].measured, Decimal::new(1_981_440, 2));
    assert_eq!(a.budget("text")[0].measured, Decimal::new(1_981_440, 2));
}

#[test]
fn projected_hours_over_capacity_are_scaled_like_measured_ones() {
    let now = at("2026-11-16T00:00:00Z");
    // One 8-GPU node, while two teams hold 6 GPUs each and are forecast to
    // go on doing so: 12 GPUs projected in an 8-GPU pool, so each team's
    // projected hours are charged at 8 / 12, 4 GPUs, as its measured hours
    // are, and the two budgets add up to what the pool holds.
    let repo = two_teams_of_six_on_one_node(now);
    let a = Analysis::new(&repo, now);
    let (vision, text) = (a.budget("vision"), a.budget("text"));
    // November: 720 h x 4 GPUs x 6.88 = 19,814.40, half of it measured.
    assert_eq!(vision[0].spend, Decimal::new(1_981_440, 2));
    assert_eq!(vision[0].measured, Decimal::new(990_720, 2));
    // December: 744 h x 4 GPUs x 6.88 = 20,474.88 each; 40,949.76 in all,
    // the pool's 8 GPUs for the month.
    assert_eq!(vision[1].spend, Decimal::new(2_047_488, 2));
    assert_eq!(vision[1].spend + text[1].spend, Decimal::new(4_094_976, 2));
}

#[test]
fn a_team_whose_rows_stop_before_the_pools_is_projected_by_its_requests_alone() {
    let now = at("2026-11-16T00:00:00Z");
    // vision holds 4 GPUs up to `now`; text held 6 until October 26 and
    // reports nothing since, while vision was measured: text left the pool,
    // as the pool's demand (3 weeks of 4) already says. Its budget is its
    // request of 2 GPUs from January 1 alone, and vision is charged its 4
    // GPUs whole (no share of a phantom 6 to scale it down by).
    let text_request = "apiVersion: capops.dev/v1alpha1\nkind: CapacityRequest\nmetadata: {name: text-jan}\nspec:\n  team: text\n  cluster: c\n  pool: h100\n  resources: {nvidia.com/gpu: 2}\n  window: {start: 2027-01-01, end: 2027-02-01}\n  workloadClass: training\n";
    let pool = "    - {name: h100, gpuModel: h100-80gb-sxm, instanceType: p5.48xlarge, gpusPerNode: 8, nodes: 1}\n";
    let repo = repo_of(&[
        ("capops.yaml", CONFIG.into()),
        ("prices.yaml", prices()),
        ("cluster.yaml", cluster(pool)),
        (
            "teams.yaml",
            format!(
                "{}---\n{}",
                team("vision", Some(100_000)),
                team("text", Some(100_000))
            ),
        ),
        ("requests.yaml", text_request.into()),
        (
            "usage/c.csv",
            super::tests_finops::join(
                usage(now, 40, "h100", "vision", |_| 4.0, |_| 2.0),
                usage(
                    at("2026-10-26T00:00:00Z"),
                    19,
                    "h100",
                    "text",
                    |_| 6.0,
                    |_| 3.0,
                ),
            ),
        ),
    ]);
    let a = Analysis::new(&repo, now);
    let text = a.budget("text");
    let spend: Vec<Decimal> = text.iter().take(4).map(|m| m.spend).collect();
    // January: 2 GPUs x 744 h x 6.88 = 10,237.44; nothing before or after.
    assert_eq!(
        spend,
        [
            Decimal::ZERO,
            Decimal::ZERO,
            Decimal::new(1_023_744, 2),
            Decimal::ZERO
        ]
    );
    // December for vision: 4 x 744 h x 6.88 = 20,474.88, unscaled (4 + 6
    // would be more than the node's 8 and scale it to 3.2).
    let vision = a.budget("vision");
    assert_eq!(vision[1].spend, Decimal::new(2_047_488, 2));
}

#[test]
fn a_team_without_rows_over_a_weekend_has_not_left_the_pool() {
    // `now` is a Monday. vision holds 4 GPUs every hour; text holds 2 on
    // weekdays and writes no rows at weekends, so its last row is Friday
    // night, two days before the pool's. It has not left: December is
    // projected from its forecast (about 2 GPUs on weekdays), not 0.
    let now = at("2026-11-16T00:00:00Z");
    let pool = "    - {name: h100, gpuModel: h100-80gb-sxm, instanceType: p5.48xlarge, gpusPerNode: 8, nodes: 1}\n";
    let weekdays: String = usage(now, 40, "h100", "text", |_| 2.0, |_| 1.0)
        .lines()
        .filter(|l| {
            // 2026-11-16 is a Monday: days since then, modulo 7, of 5 or 6
            // are Saturday and Sunday.
            l.starts_with("timestamp")
                || l[..20]
                    .parse::<Timestamp>()
                    .map(|t| {
                        (t.hour_index().div_euclid(24) - now.hour_index().div_euclid(24))
                            .rem_euclid(7)
                            < 5
                    })
                    .unwrap_or(false)
        })
        .map(|l| format!("{l}\n"))
        .collect();
    let repo = repo_of(&[
        ("capops.yaml", CONFIG.into()),
        ("prices.yaml", prices()),
        ("cluster.yaml", cluster(pool)),
        (
            "teams.yaml",
            format!(
                "{}---\n{}",
                team("vision", Some(100_000)),
                team("text", Some(100_000))
            ),
        ),
        (
            "usage/c.csv",
            super::tests_finops::join(usage(now, 40, "h100", "vision", |_| 4.0, |_| 2.0), weekdays),
        ),
    ]);
    let a = Analysis::new(&repo, now);
    let december = a.budget("text")[1].spend;
    // Between 5/7 and all of 2 GPUs x 744 h x 6.88 (7,321.12 to 10,237.44).
    assert!(
        december > Decimal::new(700_000, 2) && december <= Decimal::new(1_023_744, 2),
        "{december}"
    );
}

#[test]
fn a_budget_of_nothing_is_over_every_level_once_anything_is_spent() {
    // 16 GPUs from 2026-11-01 to 2026-12-01 against a budget of 0: November
    // is spent (over every level, its share no number), December is not.
    let now = at("2026-11-22T00:00:00Z");
    let repo = repo_of(&[
        ("capops.yaml", CONFIG.into()),
        ("prices.yaml", prices()),
        ("cluster.yaml", cluster(H100_POOL)),
        ("team.yaml", team("vision", Some(0))),
        (
            "requests.yaml",
            request("base", 16, "2026-11-01", "2026-12-01"),
        ),
    ]);
    let a = Analysis::new(&repo, now);
    let months = a.budget("vision");
    assert!(months[0].spend > Decimal::ZERO);
    assert_eq!(months[0].alert, Some(Decimal::new(12, 1)));
    assert_eq!(months[0].share, None);
    assert_eq!(months[1].spend, Decimal::ZERO);
    assert_eq!(months[1].alert, None);
    assert_eq!(months[1].share, Some(0.0));
}

#[test]
fn an_hour_one_team_did_not_report_is_scaled_with_its_filled_level() {
    let now = at("2026-11-16T00:00:00Z");
    // As above, but the second team has no rows on November 5 and 6: its
    // series is filled at 6 between its samples, so the pool is still over
    // capacity then and the first team is still scaled to 4 (not billed 6
    // of 8 GPUs while the other is filled at 6 too).
    let repo = two_teams_of_six_on_one_node_with(now, |l| {
        !l.starts_with("2026-11-05") && !l.starts_with("2026-11-06")
    });
    let a = Analysis::new(&repo, now);
    let m = a.budget("vision");
    // November 1-15: 360 h x 4 GPUs x 6.88 = 9,907.20 (not 312 h x 4 + 48 h x 6).
    assert_eq!(m[0].measured, Decimal::new(990_720, 2));
}

#[test]
fn a_flat_projection_peaks_in_its_first_month_at_the_peak() {
    // 20 GPUs all along: every 31-day month costs the same, the most; the
    // recommendation names the first of them (December), not the last.
    let now = at("2026-11-22T00:00:00Z");
    let repo = repo_of(&[
        ("capops.yaml", CONFIG.into()),
        ("prices.yaml", prices()),
        ("cluster.yaml", cluster(H100_POOL)),
        ("team.yaml", team("vision", Some(100_000))),
        (
            "requests.yaml",
            request("base", 20, "2026-11-01", "2028-06-01"),
        ),
    ]);
    let a = Analysis::new(&repo, now);
    let text = plan::recommendations(&a)
        .into_iter()
        .find(|r| r.kind == plan::RecommendationKind::Budget)
        .map(|r| r.text)
        .unwrap();
    assert!(text.contains("% of the budget in 2026-12 ("), "{text}");
}
