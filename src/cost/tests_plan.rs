//! The document changes a rightsizing recommendation applies, in the units
//! the requests ask for: time-sliced replicas and MIG instances are worth a
//! share of a GPU, so releasing GPUs cuts more of them.

use super::tests::{CONFIG, at, repo_of, team, usage};
use super::tests_finops::catalog;
use super::*;
use rust_decimal::Decimal;

fn cluster(strategy: &str, pool: &str) -> String {
    format!(
        "apiVersion: capops.dev/v1alpha1\nkind: Cluster\nmetadata: {{name: c}}\nspec:\n  environment: research\n  provider: aws\n  region: us-east-2\n  migStrategy: {strategy}\n  nodePools:\n    - {pool}\n"
    )
}

fn request(name: &str, resource: &str, count: u32) -> String {
    format!(
        "apiVersion: capops.dev/v1alpha1\nkind: CapacityRequest\nmetadata: {{name: {name}}}\nspec:\n  team: a\n  cluster: c\n  pool: p\n  resources: {{{resource}: {count}}}\n  workloadClass: training\n---\n"
    )
}

fn rightsize_changes(
    pool: &str,
    strategy: &str,
    requests: String,
    alloc: f64,
    used: f64,
) -> Vec<String> {
    let now = at("2026-11-22T00:00:00Z");
    let repo = repo_of(&[
        ("capops.yaml", CONFIG.into()),
        (
            "prices.yaml",
            catalog(
                "    - {provider: aws, region: us-east-2, instanceType: i1, gpusPerInstance: 1, onDemand: 2, source: test}\n    - {provider: aws, region: us-east-2, instanceType: p5.48xlarge, gpusPerInstance: 8, onDemand: 55.04, source: test}\n",
            ),
        ),
        ("cluster.yaml", cluster(strategy, pool)),
        ("team.yaml", team("a", None)),
        ("requests.yaml", requests),
        ("usage/c.csv", usage(now, 45, "p", "a", |_| alloc, |_| used)),
    ]);
    let a = Analysis::new(&repo, now);
    plan::recommendations(&a)
        .into_iter()
        .find(|r| r.kind == plan::RecommendationKind::RightsizeTeam)
        .map(|r| r.changes)
        .unwrap_or_default()
}

#[test]
fn a_time_sliced_pool_is_rightsized_in_replicas() {
    // 16 L4s, 4 replicas each: `ra` asks for 40 replicas, 10 GPUs. The team
    // uses 1 of its 10: at 70% it needs 2 (1 / 0.7 = 1.43, up to whole
    // GPUs), so it releases 8 GPUs, 32 replicas: 40 -> 8.
    let changes = rightsize_changes(
        "{name: p, gpuModel: l4, instanceType: i1, gpusPerNode: 1, nodes: 16, timeSlicing: {replicas: 4}}",
        "single",
        request("ra", "nvidia.com/gpu", 40),
        10.0,
        1.0,
    );
    assert_eq!(
        changes,
        vec!["CapacityRequest `ra`: nvidia.com/gpu 40 → 8".to_string()]
    );
}

#[test]
fn a_mig_pool_is_rightsized_in_instances_and_a_request_that_keeps_nothing_ends() {
    // 6 H100 nodes split 1g.10gb x 7: `ra` asks for 224 instances, 32 GPUs;
    // the team uses 3.2: at 70% it needs 5 (4.57 up), so it releases 27
    // GPUs, 189 instances: 224 -> 35.
    let pool = "{name: p, gpuModel: h100-80gb-sxm, instanceType: p5.48xlarge, gpusPerNode: 8, nodes: 6, mig: {layout: {1g.10gb: 7}}}";
    let changes = rightsize_changes(
        pool,
        "mixed",
        request("ra", "nvidia.com/mig-1g.10gb", 224),
        32.0,
        3.2,
    );
    assert_eq!(
        changes,
        vec!["CapacityRequest `ra`: nvidia.com/mig-1g.10gb 224 → 35".to_string()]
    );
    // Two requests, 28 GPUs (196 instances) and 4 (28): the 27 GPUs come
    // from the larger first (189 of its 196), the smaller is left alone.
    let two = request("big", "nvidia.com/mig-1g.10gb", 196)
        + &request("small", "nvidia.com/mig-1g.10gb", 28);
    let changes = rightsize_changes(pool, "mixed", two, 32.0, 3.2);
    assert_eq!(
        changes,
        vec!["CapacityRequest `big`: nvidia.com/mig-1g.10gb 196 → 7".to_string()]
    );
    // A request smaller than what is released ends (a count of 0 is not a
    // request), and the rest comes from the next.
    let two = request("big", "nvidia.com/mig-1g.10gb", 112)
        + &request("mid", "nvidia.com/mig-1g.10gb", 112);
    let changes = rightsize_changes(pool, "mixed", two, 32.0, 3.2);
    assert_eq!(
        changes,
        vec![
            "CapacityRequest `big`: end it (releases 16 GPUs)".to_string(),
            "CapacityRequest `mid`: nvidia.com/mig-1g.10gb 112 → 35".to_string(),
        ]
    );
}

#[test]
fn the_requests_that_end_soonest_are_cut_first() {
    // `long` (open-ended) asks for 196 instances, `short` for 28 until
    // 2026-12-15. The team needs 5 GPUs (35 instances): cutting `long` to
    // 7 and keeping `short` would leave it 7 instances from December 15.
    // `short` ends now (4 GPUs) and `long` keeps the 35.
    let pool = "{name: p, gpuModel: h100-80gb-sxm, instanceType: p5.48xlarge, gpusPerNode: 8, nodes: 6, mig: {layout: {1g.10gb: 7}}}";
    let short = request("short", "nvidia.com/mig-1g.10gb", 28).replace(
        "  workloadClass: training\n",
        "  workloadClass: training\n  window: {start: 2026-10-01, end: 2026-12-15}\n",
    );
    let two = request("long", "nvidia.com/mig-1g.10gb", 196) + &short;
    let changes = rightsize_changes(pool, "mixed", two, 32.0, 3.2);
    assert_eq!(
        changes,
        vec![
            "CapacityRequest `short`: end it (releases 4 GPUs)".to_string(),
            "CapacityRequest `long`: nvidia.com/mig-1g.10gb 196 → 35".to_string(),
        ]
    );
}

#[test]
fn a_preemptible_teams_released_gpus_come_off_the_spot_part() {
    // Four 2-GPU instances: on demand 10, spot 4 (4.40 with the 10%
    // interruption allowance), a year reserved 6 an instance-hour. Team `a`
    // holds 4 GPUs of preemptible work and uses 1; team `b` holds 2 of steady
    // work and uses both. At 70% `a` needs 2 (1 / 0.7, up): it releases 2.
    let now = at("2026-11-22T00:00:00Z");
    let pre = |name: &str, team: &str, gpus: u32, extra: &str| {
        format!(
            "apiVersion: capops.dev/v1alpha1\nkind: CapacityRequest\nmetadata: {{name: {name}}}\nspec:\n  team: {team}\n  cluster: c\n  pool: p\n  resources: {{nvidia.com/gpu: {gpus}}}\n  workloadClass: training\n{extra}---\n"
        )
    };
    let repo = repo_of(&[
        ("capops.yaml", CONFIG.into()),
        (
            "prices.yaml",
            catalog(
                "    - {provider: aws, region: us-east-2, instanceType: g2x, gpusPerInstance: 2, onDemand: 10, spot: 4, reserved1y: 6, source: test}\n",
            ),
        ),
        (
            "cluster.yaml",
            "apiVersion: capops.dev/v1alpha1\nkind: Cluster\nmetadata: {name: c}\nspec:\n  environment: research\n  provider: aws\n  region: us-east-2\n  nodePools:\n    - {name: p, gpuModel: l4, instanceType: g2x, gpusPerNode: 2, nodes: 4, purchase: {spot: 2, onDemand: 2}}\n".into(),
        ),
        ("teams.yaml", format!("{}---\n{}", team("a", None), team("b", None))),
        (
            "requests.yaml",
            pre("a-serve", "a", 4, "  preemptible: true\n") + &pre("b-serve", "b", 2, ""),
        ),
        (
            "usage/c.csv",
            super::tests_finops::join(
                usage(now, 60, "p", "a", |_| 4.0, |_| 1.0),
                usage(now, 60, "p", "b", |_| 2.0, |_| 2.0),
            ),
        ),
    ]);
    let a = Analysis::new(&repo, now);
    let recs = plan::recommendations(&a);
    let mix = recs
        .iter()
        .find(|r| r.kind == plan::RecommendationKind::CommitmentMix)
        .expect("a commitment mix");
    // After rightsizing: `b`'s 2 steady GPUs on one 1-year instance (6 x 730
    // = 4,380) and `a`'s 2 preemptible GPUs on one spot instance (4.40 x 730
    // = 3,212): 7,592 a month. Taking the 2 GPUs off `b`'s steady work
    // instead left 4 GPUs of spot (6,424) and nothing for `b`.
    assert!(
        mix.text.contains("2 GPUs of preemptible work on spot"),
        "{}",
        mix.text
    );
    let m1 = a
        .mix(
            "c",
            "p",
            mix::Release {
                gpus: 2.0,
                preemptible: 2.0,
                steady_until: i64::MAX,
                preemptible_until: i64::MAX,
                steps: &[],
            },
        )
        .unwrap();
    assert_eq!(m1.monthly_plan(), Decimal::from(7_592));
    let rightsize = recs
        .iter()
        .find(|r| r.kind == plan::RecommendationKind::RightsizeTeam)
        .expect("a rightsizing");
    // Today 4 instances: 2 spot at 4 and 2 on demand at 10 = 28 x 730 = 20,440;
    // before rightsizing the plan is 4,380 + 2 x 3,212 = 10,804; after, 7,592:
    // rightsizing saves 3,212.
    assert_eq!(rightsize.monthly_savings, Some(Decimal::from(3_212)));
}

#[test]
fn a_team_holding_less_than_it_asks_for_is_cut_to_what_it_needs() {
    // `ra` asks for 20 L4s; the team holds 10 of them and uses 2: at 70%
    // it needs 3. Cutting the request by the 7 it releases (20 -> 13)
    // would leave room for the 10 it holds: nothing released. Cut to 3.
    let changes = rightsize_changes(
        "{name: p, gpuModel: l4, instanceType: i1, gpusPerNode: 1, nodes: 32}",
        "single",
        request("ra", "nvidia.com/gpu", 20),
        10.0,
        2.0,
    );
    assert_eq!(
        changes,
        vec!["CapacityRequest `ra`: nvidia.com/gpu 20 → 3".to_string()]
    );
}

#[test]
fn a_team_holding_more_than_it_asks_for_keeps_what_it_needs() {
    // `ra` asks for 16 L4s; the team holds 32 (borrowed) and uses 8: at 70%
    // it needs 12. The request comes down to 12 and the 16 it holds beyond
    // its requests are released too; no request is ended.
    let changes = rightsize_changes(
        "{name: p, gpuModel: l4, instanceType: i1, gpusPerNode: 1, nodes: 48}",
        "single",
        request("ra", "nvidia.com/gpu", 16),
        32.0,
        8.0,
    );
    assert_eq!(
        changes,
        vec![
            "CapacityRequest `ra`: nvidia.com/gpu 16 → 12".to_string(),
            "Team `a`: hold 16 fewer GPUs in c/p (no request in force asks for them)".to_string(),
        ]
    );
}

/// Two 8-GPU on-demand nodes (on demand 8.00 an instance-hour, 1.00 a
/// GPU-hour; capacity blocks 4.00, 0.50 a GPU-hour), one team holding 2 GPUs
/// all the time, and an approved burst of `burst` GPUs from 5 days after
/// `--at` for 10 days (240 of the window's 2,160 hours).
fn burst_pool(burst: u32) -> (Repo, Timestamp) {
    let now = at("2026-11-20T00:00:00Z");
    let window = "  window: {start: \"2026-11-25T00:00:00Z\", end: \"2026-12-05T00:00:00Z\"}\n";
    let repo = repo_of(&[
        ("capops.yaml", CONFIG.into()),
        (
            "prices.yaml",
            catalog(
                "    - {provider: aws, region: us-east-2, instanceType: i8, gpusPerInstance: 8, onDemand: 8, capacityBlock: 4, source: test}\n",
            ),
        ),
        (
            "cluster.yaml",
            super::tests::cluster(
                "    - {name: p, gpuModel: h100-80gb-sxm, instanceType: i8, gpusPerNode: 8, nodes: 2, purchase: {onDemand: 2}}\n",
            ),
        ),
        ("team.yaml", team("a", None)),
        (
            "requests.yaml",
            super::tests_finops::request("burst", "a", "p", burst, window),
        ),
        ("usage/c.csv", usage(now, 60, "p", "a", |_| 2.0, |_| 1.5)),
    ]);
    (repo, now)
}

#[test]
fn a_burst_that_fits_in_the_on_demand_instance_is_bought_all_on_demand() {
    // 2 + 4 = 6 GPUs in the burst's hours, 2 otherwise: one on-demand
    // instance every hour, 8 x 1.00 x 730 = 5,840.00 a month. A capacity
    // block for the burst would add 4.00 an hour for 240 of 2,160 hours
    // (6,164.44 a month, dearer than all on demand): it is not bought.
    let (repo, now) = burst_pool(4);
    let a = Analysis::new(&repo, now);
    let m = a.mix("c", "p", 0.0).unwrap();
    assert_eq!(m.block_gpus, 0.0, "{m:?}");
    assert_eq!(m.on_demand_gpus, 8.0, "{m:?}");
    assert_eq!(m.monthly_mix, Decimal::new(584_000, 2));
    assert_eq!(m.monthly_on_demand, Decimal::new(584_000, 2));
    assert_eq!(m.savings_share, 0.0);
    // Today the pool pays for 16 GPUs on demand: 16 x 730 = 11,680.00. The
    // plan buys one instance on demand and saves 11,680 - 5,840 = 5,840.00.
    let rec = plan::recommendations(&a)
        .into_iter()
        .find(|r| r.kind == plan::RecommendationKind::CommitmentMix)
        .unwrap();
    assert_eq!(rec.monthly_savings, Some(Decimal::new(584_000, 2)));
    assert!(
        rec.text.starts_with("buy 8 GPUs on demand: "),
        "{}",
        rec.text
    );
}

#[test]
fn a_burst_past_the_room_left_buys_one_block_and_fills_the_on_demand_instance() {
    // 2 + 12 = 14 GPUs in the burst's hours: all on demand, two instances
    // (16.00 an hour); one block for 8 of the burst (4.00) and one on-demand
    // instance for the other 6 (8.00): 12.00. Outside it: one instance, 8.00.
    // Mix: (240 x 12 + 1,920 x 8) / 2,160 x 730 = 8.444 x 730 = 6,164.44;
    // all on demand: (240 x 16 + 1,920 x 8) / 2,160 x 730 = 6,488.89; 5.0% less.
    let (repo, now) = burst_pool(12);
    let a = Analysis::new(&repo, now);
    let m = a.mix("c", "p", 0.0).unwrap();
    assert!((m.block_gpus - 8.0 * 240.0 / 2160.0).abs() < 1e-9, "{m:?}");
    assert_eq!(m.on_demand_gpus, 8.0, "{m:?}");
    assert_eq!(m.monthly_mix, Decimal::new(616_444, 2));
    assert_eq!(m.monthly_on_demand, Decimal::new(648_889, 2));
    assert!((m.savings_share - 324.45 / 6488.89).abs() < 1e-6, "{m:?}");
    // Against today's 11,680.00: 11,680 - 6,164.44 = 5,515.56.
    let rec = plan::recommendations(&a)
        .into_iter()
        .find(|r| r.kind == plan::RecommendationKind::CommitmentMix)
        .unwrap();
    assert_eq!(rec.monthly_savings, Some(Decimal::new(551_556, 2)));
    // The change buys that one block for the burst's window.
    assert!(
        rec.changes.iter().any(|c| c
            .starts_with("Reservation (new): an AWS capacity block of 1 × ")
            && c.contains("for CapacityRequest `")),
        "{:?}",
        rec.changes
    );
}

#[test]
fn a_cancellable_reservation_starting_after_the_plans_days_is_still_resized() {
    // Four p5.48xlarge (80 on demand, 56 for a year); a team steady at 4
    // GPUs. A capacity reservation of 2 instances at 56 from March 2027 to
    // March 2028 (8,784 h: 2028 is a leap year) costs 983,808 and would
    // serve 4 of its 16 GPUs: 75% stranded. The plan's 90 days end before it
    // starts, so the plan leaves it alone; it must still be resized, to 0,
    // saving 983,808 x 730 / 8,784 = 81,760 a month.
    let now = at("2026-11-01T00:00:00Z");
    let pool = "{name: p, gpuModel: h100-80gb-sxm, instanceType: p5.48xlarge, gpusPerNode: 8, nodes: 4, purchase: {reserved: 2, onDemand: 2}, zone: us-east-2a}";
    let reservation = "apiVersion: capops.dev/v1alpha1\nkind: Reservation\nmetadata: {name: cb}\nspec:\n  provider: aws\n  type: aws-capacity-reservation\n  region: us-east-2\n  zone: us-east-2a\n  instanceType: p5.48xlarge\n  count: 2\n  term: {start: \"2027-03-01T00:00:00Z\", end: \"2028-03-01T00:00:00Z\"}\n  hourlyPrice: 56\n  covers: {cluster: c, pool: p}\n";
    let repo = repo_of(&[
        ("capops.yaml", CONFIG.into()),
        (
            "prices.yaml",
            catalog(
                "    - {provider: aws, region: us-east-2, instanceType: p5.48xlarge, gpusPerInstance: 8, onDemand: 80, reserved1y: 56, source: test}\n",
            ),
        ),
        ("cluster.yaml", cluster("single", pool)),
        ("team.yaml", team("a", None)),
        ("reservations.yaml", reservation.into()),
        ("usage/c.csv", usage(now, 200, "p", "a", |_| 4.0, |_| 3.0)),
    ]);
    let a = Analysis::new(&repo, now);
    let recs = plan::recommendations(&a);
    let resize = recs
        .iter()
        .find(|r| r.kind == plan::RecommendationKind::ResizeReservation && r.subject == "cb")
        .unwrap_or_else(|| panic!("no resize of cb: {recs:#?}"));
    assert_eq!(resize.changes, ["Reservation `cb`: count 2 → 0"]);
    assert_eq!(resize.monthly_savings, Some(Decimal::new(8_176_000, 2)));
    // The plan still buys for the pool's next 90 days, and does not also
    // replace `cb` (its saving is the resize's, counted once).
    let plan = recs
        .iter()
        .find(|r| r.kind == plan::RecommendationKind::CommitmentMix)
        .expect("a commitment plan");
    assert!(
        plan.changes.iter().all(|c| !c.contains("`cb`")),
        "{:?}",
        plan.changes
    );
}

#[test]
fn a_reservation_starting_after_the_plans_days_is_reviewed_with_the_plan_not_resized_beside_it() {
    // As above, but the team is steady at 12 GPUs: on its own `cb` would
    // keep one instance (8 of its 16 GPUs used), but the plan buys
    // commitments for those 12 GPUs now, for a year, so from March 2027 the
    // one instance and the plan would reserve the same demand twice. It is
    // named for review with the plan, with no saving counted.
    let now = at("2026-11-01T00:00:00Z");
    let pool = "{name: p, gpuModel: h100-80gb-sxm, instanceType: p5.48xlarge, gpusPerNode: 8, nodes: 4, purchase: {reserved: 2, onDemand: 2}, zone: us-east-2a}";
    let reservation = "apiVersion: capops.dev/v1alpha1\nkind: Reservation\nmetadata: {name: cb}\nspec:\n  provider: aws\n  type: aws-capacity-reservation\n  region: us-east-2\n  zone: us-east-2a\n  instanceType: p5.48xlarge\n  count: 2\n  term: {start: \"2027-03-01T00:00:00Z\", end: \"2028-03-01T00:00:00Z\"}\n  hourlyPrice: 56\n  covers: {cluster: c, pool: p}\n";
    let repo = repo_of(&[
        ("capops.yaml", CONFIG.into()),
        (
            "prices.yaml",
            catalog(
                "    - {provider: aws, region: us-east-2, instanceType: p5.48xlarge, gpusPerInstance: 8, onDemand: 80, reserved1y: 56, source: test}\n",
            ),
        ),
        ("cluster.yaml", cluster("single", pool)),
        ("team.yaml", team("a", None)),
        ("reservations.yaml", reservation.into()),
        ("usage/c.csv", usage(now, 200, "p", "a", |_| 12.0, |_| 11.0)),
    ]);
    let a = Analysis::new(&repo, now);
    let recs = plan::recommendations(&a);
    assert!(
        recs.iter()
            .any(|r| r.kind == plan::RecommendationKind::CommitmentMix),
        "a commitment plan: {recs:#?}"
    );
    let cb = recs
        .iter()
        .find(|r| r.kind == plan::RecommendationKind::ResizeReservation && r.subject == "cb")
        .unwrap_or_else(|| panic!("cb is named: {recs:#?}"));
    assert_eq!(cb.monthly_savings, None);
    assert_eq!(
        cb.changes,
        ["Reservation `cb`: review its count (2) with the commitment plan"]
    );
    assert!(
        cb.text.contains("on its own it would be sized at 1 of 2"),
        "{}",
        cb.text
    );
}

#[test]
fn a_locked_block_starting_at_half_past_costs_its_billed_hours_a_month() {
    // A capacity block of 2 p5.48xlarge at 40 from 11:30 on November 22 for
    // 14 days: 336 billed hours, 26,880 in all, though it touches 337 clock
    // hours. Inside the plan's 90 days (2,160 h) it costs 26,880 x 730 /
    // 2,160 = 9,084.44 an average month, not 337/336 of that (9,111.48).
    let now = at("2026-11-01T00:00:00Z");
    let pool = "{name: p, gpuModel: h100-80gb-sxm, instanceType: p5.48xlarge, gpusPerNode: 8, nodes: 4, purchase: {reserved: 2, onDemand: 2}, zone: us-east-2a}";
    let block = "apiVersion: capops.dev/v1alpha1\nkind: Reservation\nmetadata: {name: cb}\nspec:\n  provider: aws\n  type: aws-capacity-block\n  region: us-east-2\n  zone: us-east-2a\n  instanceType: p5.48xlarge\n  count: 2\n  term: {start: \"2026-11-22T11:30:00Z\", end: \"2026-12-06T11:30:00Z\"}\n  hourlyPrice: 40\n  covers: {cluster: c, pool: p}\n";
    let repo = repo_of(&[
        ("capops.yaml", CONFIG.into()),
        (
            "prices.yaml",
            catalog(
                "    - {provider: aws, region: us-east-2, instanceType: p5.48xlarge, gpusPerInstance: 8, onDemand: 80, capacityBlock: 40, reserved1y: 56, source: test}\n",
            ),
        ),
        ("cluster.yaml", cluster("single", pool)),
        ("team.yaml", team("a", None)),
        ("reservations.yaml", block.into()),
        ("usage/c.csv", usage(now, 200, "p", "a", |_| 4.0, |_| 3.0)),
    ]);
    let a = Analysis::new(&repo, now);
    let mix = a.mix("c", "p", 0.0).expect("a mix");
    assert_eq!(mix.monthly_locked, Decimal::new(908_444, 2));
}

#[test]
fn a_reservation_whose_term_is_over_is_never_resized() {
    // A capacity reservation of 6 p5.48xlarge (48 GPUs) that ended a month
    // before `--at`, over a pool of 32 GPUs its team fills: a third of it
    // was stranded. The pool has no commitment plan (no committed price in
    // the catalog, nothing to rightsize). Nothing is billed any more, so it
    // is not resized and no saving is counted.
    let now = at("2026-11-01T00:00:00Z");
    let pool = "{name: p, gpuModel: h100-80gb-sxm, instanceType: p5.48xlarge, gpusPerNode: 8, nodes: 4, zone: us-east-2a}";
    let reservation = "apiVersion: capops.dev/v1alpha1\nkind: Reservation\nmetadata: {name: old}\nspec:\n  provider: aws\n  type: aws-capacity-reservation\n  region: us-east-2\n  zone: us-east-2a\n  instanceType: p5.48xlarge\n  count: 6\n  term: {start: \"2025-10-01T00:00:00Z\", end: \"2026-10-01T00:00:00Z\"}\n  hourlyPrice: 56\n  covers: {cluster: c, pool: p}\n";
    let repo = repo_of(&[
        ("capops.yaml", CONFIG.into()),
        (
            "prices.yaml",
            catalog(
                "    - {provider: aws, region: us-east-2, instanceType: p5.48xlarge, gpusPerInstance: 8, onDemand: 80, source: test}\n",
            ),
        ),
        ("cluster.yaml", cluster("single", pool)),
        ("team.yaml", team("a", None)),
        ("reservations.yaml", reservation.into()),
        (
            "usage/c.csv",
            usage(now, 1000, "p", "a", |_| 32.0, |_| 31.0),
        ),
    ]);
    let a = Analysis::new(&repo, now);
    let recs = plan::recommendations(&a);
    assert!(
        recs.iter().all(|r| r.subject != "old"),
        "an ended reservation is left alone: {recs:#?}"
    );
}

#[test]
fn a_later_reservation_beside_a_plan_that_buys_no_commitments_is_resized_on_its_own() {
    // As in the review case, but the catalog sells no commitment: the plan
    // (rightsizing team a, allocated 20 and using 6) buys only on demand,
    // so nothing it buys serves the demand `cb` was sized on and `cb` is
    // resized with its own saving, not left for review.
    let now = at("2026-11-01T00:00:00Z");
    let pool = "{name: p, gpuModel: h100-80gb-sxm, instanceType: p5.48xlarge, gpusPerNode: 8, nodes: 4, zone: us-east-2a}";
    let reservation = "apiVersion: capops.dev/v1alpha1\nkind: Reservation\nmetadata: {name: cb}\nspec:\n  provider: aws\n  type: aws-capacity-reservation\n  region: us-east-2\n  zone: us-east-2a\n  instanceType: p5.48xlarge\n  count: 4\n  term: {start: \"2027-03-01T00:00:00Z\", end: \"2028-03-01T00:00:00Z\"}\n  hourlyPrice: 56\n  covers: {cluster: c, pool: p}\n";
    let repo = repo_of(&[
        ("capops.yaml", CONFIG.into()),
        (
            "prices.yaml",
            catalog(
                "    - {provider: aws, region: us-east-2, instanceType: p5.48xlarge, gpusPerInstance: 8, onDemand: 80, source: test}\n",
            ),
        ),
        ("cluster.yaml", cluster("single", pool)),
        ("team.yaml", team("a", None)),
        ("reservations.yaml", reservation.into()),
        ("usage/c.csv", usage(now, 200, "p", "a", |_| 20.0, |_| 6.0)),
    ]);
    let a = Analysis::new(&repo, now);
    let recs = plan::recommendations(&a);
    let cb = recs
        .iter()
        .find(|r| r.kind == plan::RecommendationKind::ResizeReservation && r.subject == "cb")
        .unwrap_or_else(|| panic!("cb is resized: {recs:#?}"));
    assert!(
        cb.monthly_savings.is_some_and(|s| s > Decimal::ZERO),
        "{cb:#?}"
    );
    assert!(!cb.changes[0].contains("review"), "{cb:#?}");
}
