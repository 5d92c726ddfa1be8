//! The numbers a FinOps lead signs, on the seeds' scenarios, each worked out
//! by hand in the comments: the waste buckets and chargeback add up, the
//! approved future counts, the commitment mix reaches the field's savings,
//! and the recommendations form one plan.

use super::tests::{CONFIG, at, cluster, repo_of, team, usage, wobble};
use super::*;
use crate::forecast::demand::Basis;
use rust_decimal::Decimal;

pub(super) fn d(cents: i64) -> Decimal {
    Decimal::new(cents, 2)
}

pub(super) fn catalog(rows: &str) -> String {
    format!(
        "apiVersion: capops.dev/v1alpha1\nkind: PriceCatalog\nmetadata: {{name: test}}\nspec:\n  prices:\n{rows}"
    )
}

/// A standing (or windowed) request.
pub(super) fn request(name: &str, team: &str, pool: &str, gpus: u32, extra: &str) -> String {
    format!(
        "apiVersion: capops.dev/v1alpha1\nkind: CapacityRequest\nmetadata: {{name: {name}}}\nspec:\n  team: {team}\n  cluster: c\n  pool: {pool}\n  resources: {{nvidia.com/gpu: {gpus}}}\n  workloadClass: training\n{extra}---\n"
    )
}

/// Two usage CSVs joined (the second without its header).
pub(super) fn join(a: String, b: String) -> String {
    let rest: String = b.lines().skip(1).map(|l| format!("{l}\n")).collect();
    a + &rest
}

#[test]
fn an_agency_fleet_shows_its_stranded_spend_and_a_plan_to_stop_paying_for_it() {
    // 16 GPUs (4 x gpu4x at 16.096/h = 4.024 a GPU-hour) cost 16 x 4.024 x 730
    // = 47,000.32 a month. The agency holds 4 and keeps 3.68 busy (23% of the fleet).
    let now = at("2026-11-22T00:00:00Z");
    let repo = repo_of(&[
        ("capops.yaml", CONFIG.into()),
        (
            "prices.yaml",
            catalog(
                "    - {provider: aws, region: us-east-2, instanceType: gpu4x, gpusPerInstance: 4, onDemand: 16.096, source: test}\n",
            ),
        ),
        (
            "cluster.yaml",
            cluster(
                "    - {name: p, gpuModel: a10g, instanceType: gpu4x, gpusPerNode: 4, nodes: 4}\n",
            ),
        ),
        ("team.yaml", team("agency", None)),
        (
            "usage/c.csv",
            usage(now, 60, "p", "agency", |_| 4.0, |_| 3.68),
        ),
    ]);
    let a = Analysis::new(&repo, now);
    let w = a.pool_waste("c", "p").unwrap();
    let c = w.costs.as_ref().unwrap();
    // Over 720 hours: capacity 16 x 720 x 4.024 = 46,356.48; allocated 4 x 720 x 4.024
    // = 11,589.12; idle 0.32 x 720 x 4.024 = 927.13; used the rest, 10,661.99;
    // stranded 12 x 720 x 4.024 = 34,767.36.
    assert_eq!(c.capacity, d(4_635_648));
    assert_eq!(c.allocated, d(1_158_912));
    assert_eq!(c.idle, d(92_713));
    assert_eq!(c.used, d(1_066_199));
    assert_eq!(c.stranded, d(3_476_736));
    assert_eq!(c.unmeasured, Decimal::ZERO);
    assert_eq!(c.used + c.idle + c.stranded + c.unmeasured, c.capacity);
    // Chargeback: the only team pays its allocation and the stranded GPUs.
    let u = &a.usage()["agency"];
    assert_eq!(u.chargeback, c.capacity);
    assert_eq!(u.idle_cost, d(92_713));
    // The plan: buy the 4 GPUs of demand on demand, 4 x 4.024 x 730 = 11,750.08,
    // instead of 47,000.32: 35,250.24 a month (75%).
    let recs = plan::recommendations(&a);
    let mix = recs
        .iter()
        .find(|r| r.kind == plan::RecommendationKind::CommitmentMix)
        .expect("a plan for the fleet");
    assert_eq!(mix.monthly_savings, Some(d(3_525_024)));
    assert!(
        mix.changes.iter().any(|c| c.contains("pool `p`")),
        "{mix:?}"
    );
    // The saving rests on the pool's 4 nodes following its 4 GPUs of demand
    // (1 instance): held all month they are paid as today, and the risk says so.
    assert!(
        mix.risk
            .contains("the pool's 4 other nodes follow demand hour by hour (4.0 GPUs on average"),
        "{}",
        mix.risk
    );
    // The team keeps 92% of its allocation busy: nothing to rightsize.
    assert!(
        !recs
            .iter()
            .any(|r| r.kind == plan::RecommendationKind::RightsizeTeam)
    );
}

#[test]
fn chargeback_shares_unallocated_cost_as_the_config_says_and_adds_up() {
    // 32 H100s on demand at 6.88: team a holds 16, team b 8; 8 are allocated to nobody.
    // Over 720 h: capacity 158,515.20; a 79,257.60; b 39,628.80; stranded 39,628.80.
    let now = at("2026-11-22T00:00:00Z");
    let run = |rule: &str| {
        let config = format!(
            "apiVersion: capops.dev/v1alpha1\nkind: Config\nmetadata: {{name: t}}\nspec:\n  costs: {{chargeback: {rule}}}\n"
        );
        let repo = repo_of(&[
            ("capops.yaml", config),
            (
                "prices.yaml",
                catalog(
                    "    - {provider: aws, region: us-east-2, instanceType: p5.48xlarge, gpusPerInstance: 8, onDemand: 55.04, source: test}\n",
                ),
            ),
            (
                "cluster.yaml",
                cluster(
                    "    - {name: h100, gpuModel: h100-80gb-sxm, instanceType: p5.48xlarge, gpusPerNode: 8, nodes: 4}\n",
                ),
            ),
            (
                "teams.yaml",
                format!("{}---\n{}", team("a", None), team("b", None)),
            ),
            (
                "usage/c.csv",
                join(
                    usage(now, 40, "h100", "a", |_| 16.0, |_| 8.0),
                    usage(now, 40, "h100", "b", |_| 8.0, |_| 4.0),
                ),
            ),
        ]);
        let a = Analysis::new(&repo, now);
        let u = a.usage();
        let w = a.pool_waste("c", "h100").unwrap().clone();
        (u["a"].chargeback, u["b"].chargeback, w)
    };
    let (a, b, w) = run("proportional");
    assert_eq!(w.costs.as_ref().unwrap().stranded, d(3_962_880));
    // Proportional: a takes 2/3 of the stranded 39,628.80 (26,419.20), b 1/3 (13,209.60).
    assert_eq!((a, b), (d(10_567_680), d(5_283_840)));
    assert_eq!(a + b + w.unassigned, w.costs.as_ref().unwrap().capacity);
    // Even: 19,814.40 each.
    let (a, b, w) = run("even");
    assert_eq!((a, b), (d(9_907_200), d(5_944_320)));
    assert_eq!(a + b + w.unassigned, d(15_851_520));
    // Not shared: the platform keeps the stranded 39,628.80.
    let (a, b, w) = run("not-shared");
    assert_eq!((a, b), (d(7_925_760), d(3_962_880)));
    assert_eq!(w.unassigned, d(3_962_880));
    assert_eq!(a + b + w.unassigned, d(15_851_520));
}

#[test]
fn a_team_with_no_document_is_charged_nothing_and_its_cost_is_unassigned() {
    // As above, but team b's document is gone (removed or renamed): its rows
    // still count in the pool (allocated 39,628.80), in no team's chargeback.
    let now = at("2026-11-22T00:00:00Z");
    let repo = repo_of(&[
        (
            "prices.yaml",
            catalog(
                "    - {provider: aws, region: us-east-2, instanceType: p5.48xlarge, gpusPerInstance: 8, onDemand: 55.04, source: test}\n",
            ),
        ),
        (
            "cluster.yaml",
            cluster(
                "    - {name: h100, gpuModel: h100-80gb-sxm, instanceType: p5.48xlarge, gpusPerNode: 8, nodes: 4}\n",
            ),
        ),
        ("teams.yaml", team("a", None)),
        (
            "usage/c.csv",
            join(
                usage(now, 40, "h100", "a", |_| 16.0, |_| 8.0),
                usage(now, 40, "h100", "b", |_| 8.0, |_| 4.0),
            ),
        ),
    ]);
    let a = Analysis::new(&repo, now);
    let u = a.usage();
    assert!(!u.contains_key("b"), "{:?}", u.keys().collect::<Vec<_>>());
    let w = a.pool_waste("c", "h100").unwrap().clone();
    let costs = w.costs.as_ref().unwrap();
    // The pool still counts b's allocation.
    assert_eq!(costs.allocated, d(11_888_640));
    // a: its 79,257.60 and all of the stranded 39,628.80 (the default, proportional);
    // b's 39,628.80 is the platform's.
    assert_eq!(u["a"].chargeback, d(11_888_640));
    assert_eq!(w.unassigned, d(3_962_880));
    assert_eq!(u["a"].chargeback + w.unassigned, costs.capacity);
    // b used half of its 8 GPUs: 19,814.40 of its cost was idle, in the
    // pool's idle and in the report's idle total with a's 39,628.80.
    assert_eq!(w.unassigned_idle, d(1_981_440));
    let r = report::build(&a);
    assert_eq!(r.totals.idle_cost, r.totals.lookback.idle);
    assert_eq!(r.totals.idle_cost, d(3_962_880 + 1_981_440));
}

#[test]
fn a_reservation_for_an_approved_256_gpu_run_is_used_and_ending_requests_leave() {
    // 40 p4d (320 A100s); training runs 64 GPUs; a merged 256-GPU run starts in a
    // week for two weeks, and a 48-GPU request running now ends in ten days.
    let now = at("2026-11-22T00:00:00Z");
    let pool = "    - {name: a100, gpuModel: a100-40gb, instanceType: p4d.24xlarge, gpusPerNode: 8, nodes: 40}\n";
    let requests = [
        request(
            "big-run",
            "training",
            "a100",
            256,
            "  window: {start: \"2026-11-29T00:00:00Z\", end: \"2026-12-13T00:00:00Z\"}\n",
        ),
        request(
            "ending",
            "training",
            "a100",
            48,
            "  window: {start: \"2026-11-01T00:00:00Z\", end: \"2026-12-02T00:00:00Z\"}\n",
        ),
    ]
    .concat();
    let reservation = r#"apiVersion: capops.dev/v1alpha1
kind: Reservation
metadata: {name: for-the-run}
spec:
  provider: aws
  type: aws-capacity-block
  region: us-east-2
  instanceType: p4d.24xlarge
  count: 32
  term: {start: "2026-11-29T00:00:00Z", end: "2026-12-13T00:00:00Z"}
  hourlyPrice: 14.75
  covers: {cluster: c, pool: a100}
"#;
    let repo = repo_of(&[
        ("capops.yaml", CONFIG.into()),
        ("prices.yaml", super::tests::prices()),
        ("cluster.yaml", cluster(pool)),
        ("team.yaml", team("training", None)),
        ("requests.yaml", requests),
        ("reservation.yaml", reservation.into()),
        (
            "usage/c.csv",
            usage(now, 30, "a100", "training", |_| 64.0, |_| 50.0),
        ),
    ]);
    let a = Analysis::new(&repo, now);
    let o = a.outlook("c", "a100").unwrap();
    let hour = |s: &str| at(s).hour_index();
    // Before the run: the measured 64. During it: 64 + 256 = 320. After the 48-GPU
    // request ends (Dec 2) its GPUs leave: 320 - 48 = 272; after the run: 16.
    assert_eq!(o.at(hour("2026-11-25T12:00:00Z")).unwrap().p50, 64.0);
    assert_eq!(o.at(hour("2026-11-30T12:00:00Z")).unwrap().p50, 320.0);
    assert_eq!(o.at(hour("2026-12-05T12:00:00Z")).unwrap().p50, 272.0);
    assert_eq!(o.at(hour("2026-12-20T12:00:00Z")).unwrap().p50, 16.0);
    // The history alone knows nothing of them.
    assert_eq!(o.trend_at(hour("2026-11-30T12:00:00Z")).unwrap().p50, 64.0);
    // The 256 reserved GPUs are used in full (272 or more demanded): nothing stranded.
    // From the history alone, 64 of 256 would be used: 75% stranded.
    let r = a.reservation("for-the-run").unwrap();
    assert!((r.utilization_p50 - 1.0).abs() < 1e-9, "{r:?}");
    assert_eq!(r.stranded_p50, Decimal::ZERO);
    // Busy share 50/64: idle = 1.0 x (1 - 0.78125) = 21.875% of 32 x 336 x 14.75 = 158,592.
    assert_eq!(r.cost.total, Decimal::from(158_592));
    assert!((r.idle_share - 0.21875).abs() < 1e-6, "{}", r.idle_share);
    assert_eq!(r.basis, Basis::History);
}

#[test]
fn rightsizing_comes_first_and_commitments_are_sized_on_what_is_left() {
    // The team at 18%: 20 H100s held, 3.6 used: at 70% it needs 6, so it releases 14.
    // p5.48xlarge: on demand 6.88 a GPU, 1-year 4.472 (65% of it).
    let now = at("2026-11-22T00:00:00Z");
    let repo = repo_of(&[
        ("capops.yaml", CONFIG.into()),
        (
            "prices.yaml",
            catalog(
                "    - {provider: aws, region: us-east-2, instanceType: p5.48xlarge, gpusPerInstance: 8, onDemand: 55.04, reserved1y: 35.776, source: test}\n",
            ),
        ),
        (
            "cluster.yaml",
            cluster(
                "    - {name: h100, gpuModel: h100-80gb-sxm, instanceType: p5.48xlarge, gpusPerNode: 8, nodes: 4}\n",
            ),
        ),
        ("team.yaml", team("vision", None)),
        (
            "requests.yaml",
            request("vision-serving", "vision", "h100", 20, ""),
        ),
        (
            "usage/c.csv",
            usage(now, 45, "h100", "vision", |_| 20.0, |_| 3.6),
        ),
    ]);
    let a = Analysis::new(&repo, now);
    let recs = plan::recommendations(&a);
    let rightsize = recs
        .iter()
        .find(|r| r.kind == plan::RecommendationKind::RightsizeTeam)
        .unwrap();
    let mix = recs
        .iter()
        .find(|r| r.kind == plan::RecommendationKind::CommitmentMix)
        .unwrap();
    // Instances are whole: 20 GPUs need 3 p5 instances every hour, so the mix
    // commits 3 for a year: 24 x 4.472 x 730 = 78,349.44. The rightsized 6
    // need one instance every hour, cheaper reserved than on demand:
    // 8 x 4.472 x 730 = 26,116.48. Rightsizing saves the difference,
    // 52,232.96; the plan the rest of today's 32 x 6.88 x 730 = 160,716.80:
    // 82,367.36.
    assert_eq!(rightsize.monthly_savings, Some(d(5_223_296)));
    assert_eq!(mix.monthly_savings, Some(d(8_236_736)));
    // Together exactly today minus the plan's cost: nothing counted twice.
    let m1 = a.mix("c", "h100", 14.0).unwrap();
    assert_eq!(m1.monthly_plan(), d(2_611_648));
    assert_eq!(
        rightsize.monthly_savings.unwrap() + mix.monthly_savings.unwrap(),
        d(16_071_680) - m1.monthly_plan()
    );
    // The commitments are sized on the rightsized 6 GPUs: one instance, not 3.
    assert_eq!(m1.baseline.as_ref().map(|t| t.nodes), Some(1));
    assert!(m1.flexible.is_none());
    assert!(
        mix.changes
            .iter()
            .any(|c| c.starts_with("Reservation (new): 1 × p5.48xlarge")),
        "{mix:?}"
    );
    assert!(mix.text.contains("releases 14 GPUs"), "{}", mix.text);
    // The document change that applies the rightsizing, and its risk.
    assert_eq!(
        rightsize.changes,
        vec!["CapacityRequest `vision-serving`: nvidia.com/gpu 20 → 6".to_string()]
    );
    assert!(
        rightsize.risk.contains("3.6 GPUs, within 6"),
        "{}",
        rightsize.risk
    );
}

#[test]
fn nothing_is_recommended_for_a_bought_prepaid_block_and_one_not_yet_sold_is_resized_in_the_plan() {
    // 25 p4d (200 A100s) for a pool whose demand runs at 80: 60% stranded either way.
    let now = at("2026-11-22T00:00:00Z");
    let block = |name: &str, start: &str, end: &str| {
        format!(
            "apiVersion: capops.dev/v1alpha1\nkind: Reservation\nmetadata: {{name: {name}}}\nspec:\n  provider: aws\n  type: aws-capacity-block\n  region: us-east-2\n  instanceType: p4d.24xlarge\n  count: 25\n  term: {{start: \"{start}\", end: \"{end}\"}}\n  hourlyPrice: 14.75\n  covers: {{cluster: c, pool: a100}}\n"
        )
    };
    let pool = "    - {name: a100, gpuModel: a100-40gb, instanceType: p4d.24xlarge, gpusPerNode: 8, nodes: 30}\n";
    for (name, start, end, locked) in [
        (
            "running",
            "2026-10-23T00:00:00Z",
            "2027-04-23T00:00:00Z",
            true,
        ),
        // Bought: AWS sells capacity blocks eight weeks ahead and takes the
        // whole price then, so one starting in under eight weeks is paid.
        (
            "bought",
            "2027-01-01T00:00:00Z",
            "2027-01-29T00:00:00Z",
            true,
        ),
        // Further out than AWS sells: not bought yet, so still a choice.
        (
            "next",
            "2027-02-01T00:00:00Z",
            "2027-03-01T00:00:00Z",
            false,
        ),
    ] {
        let repo = repo_of(&[
            ("capops.yaml", CONFIG.into()),
            (
                "prices.yaml",
                catalog(
                    "    - {provider: aws, region: us-east-2, instanceType: p4d.24xlarge, gpusPerInstance: 8, onDemand: 21.96, source: test}\n",
                ),
            ),
            ("cluster.yaml", cluster(pool)),
            ("team.yaml", team("research", None)),
            ("reservation.yaml", block(name, start, end)),
            (
                "usage/c.csv",
                usage(
                    now,
                    60,
                    "a100",
                    "research",
                    |h| 80.0 + 2.0 * wobble(h),
                    |_| 60.0,
                ),
            ),
        ]);
        let a = Analysis::new(&repo, now);
        let r = a.reservation(name).unwrap();
        assert_eq!(r.locked, locked);
        assert!(r.stranded_share > 0.5, "{r:?}");
        let recs = plan::recommendations(&a);
        let mentions: Vec<&String> = recs
            .iter()
            .flat_map(|x| &x.changes)
            .filter(|c| c.contains(&format!("Reservation `{name}`")))
            .collect();
        if locked {
            assert!(mentions.is_empty(), "prepaid and bought: {mentions:?}");
            assert!(!recs.iter().any(|x| x.subject == name));
        } else {
            // Not bought yet: cut within the pool's plan to the 10 instances
            // (80 GPUs) its demand fills at the block's 14.75 an instance-hour,
            // below on demand's 21.96 (the plan re-buys the rest), not resized
            // as a saving of its own on top.
            assert_eq!(
                mentions,
                vec![
                    "Reservation `next`: count 25 → 10 (keep 10, no dearer than what the plan would buy; the plan re-buys the rest of the demand)"
                ]
            );
            assert!(
                !recs
                    .iter()
                    .any(|x| x.kind == plan::RecommendationKind::ResizeReservation)
            );
        }
    }
}

#[test]
fn beside_rightsizing_the_plan_buys_what_the_rightsizing_saving_rests_on() {
    // Ten 1-GPU instances reserved at 5.50 (today 10 x 5.50 x 730 = 40,150 a
    // month), cheaper than the catalog's 1-year 6.00, so the plan keeps as
    // many of them as the demand needs. vision holds 7.5 and uses 1
    // (rightsized to 2 at 70%: 5.5 released); text holds 1 and uses it.
    // Before rightsizing the demand of 8.5 keeps 9 of r1: 9 x 5.50 x 730 =
    // 36,135; after it, 3: 12,045. Rightsizing saves 36,135 - 12,045 =
    // 24,090 only if the pool then keeps those 3 instead of its 10, so the
    // commitment plan is recommended (saving the other 40,150 - 36,135 =
    // 4,015) and no separate resize (which would count the same GPUs
    // twice): 28,105 = today - 12,045.
    let now = at("2026-11-20T00:00:00Z");
    let reservation = "apiVersion: capops.dev/v1alpha1\nkind: Reservation\nmetadata: {name: r1}\nspec:\n  provider: aws\n  type: aws-capacity-reservation\n  region: us-east-2\n  zone: us-east-2a\n  instanceType: g1\n  count: 10\n  term: {start: \"2026-10-01T00:00:00Z\", end: \"2027-06-01T00:00:00Z\"}\n  hourlyPrice: 5.5\n  covers: {cluster: c, pool: p}\n";
    let repo = repo_of(&[
        (
            "capops.yaml",
            "apiVersion: capops.dev/v1alpha1\nkind: Config\nmetadata: {name: t}\nspec:\n  thresholds: {strandedSpendShare: 0.05}\n".into(),
        ),
        (
            "prices.yaml",
            catalog(
                "    - {provider: aws, region: us-east-2, instanceType: g1, gpusPerInstance: 1, onDemand: 10, spot: 4, reserved1y: 6, reserved3y: 4, source: test}\n",
            ),
        ),
        (
            "cluster.yaml",
            cluster(
                "    - {name: p, gpuModel: h100-80gb-sxm, instanceType: g1, gpusPerNode: 1, nodes: 10, purchase: {reserved: 10}}\n",
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
                usage(now, 50, "p", "vision", |_| 7.5, |_| 1.0),
                usage(now, 50, "p", "text", |_| 1.0, |_| 1.0),
            ),
        ),
    ]);
    let a = Analysis::new(&repo, now);
    let recs = plan::recommendations(&a);
    let saving = |kind| {
        recs.iter()
            .filter(|r| r.kind == kind)
            .map(|r| r.monthly_savings.unwrap())
            .sum::<Decimal>()
    };
    assert_eq!(
        saving(plan::RecommendationKind::RightsizeTeam),
        d(2_409_000)
    );
    assert_eq!(saving(plan::RecommendationKind::CommitmentMix), d(401_500));
    assert_eq!(
        saving(plan::RecommendationKind::ResizeReservation),
        Decimal::ZERO
    );
    let mix = recs
        .iter()
        .find(|r| r.kind == plan::RecommendationKind::CommitmentMix)
        .unwrap();
    assert!(
        mix.changes
            .iter()
            .any(|c| c == "Reservation `r1`: count 10 → 3 (keep 3, no dearer than what the plan would buy; the plan re-buys the rest of the demand)"),
        "{:?}",
        mix.changes
    );
}

#[test]
fn a_cheap_reservation_half_stranded_is_cut_to_the_count_demand_needs() {
    // Four 8-GPU instances reserved at 20.00 an instance-hour (2.50 a GPU-hour,
    // cheaper than the catalog's 1-year 6.25): today 32 x 2.50 x 730 = 58,400.
    let now = at("2026-11-20T00:00:00Z");
    let repo_with = |used: f64| {
        let reservation = "apiVersion: capops.dev/v1alpha1\nkind: Reservation\nmetadata: {name: ra}\nspec:\n  provider: aws\n  type: aws-capacity-reservation\n  region: us-east-2\n  zone: us-east-2a\n  instanceType: g8\n  count: 4\n  term: {start: \"2026-10-01T00:00:00Z\", end: \"2027-04-01T00:00:00Z\"}\n  hourlyPrice: 20\n  covers: {cluster: c, pool: p}\n";
        repo_of(&[
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
                    "    - {name: p, gpuModel: h100-80gb-sxm, instanceType: g8, gpusPerNode: 8, nodes: 4, purchase: {reserved: 4}}\n",
                ),
            ),
            ("team.yaml", team("vision", None)),
            ("reservation.yaml", reservation.into()),
            (
                "usage/c.csv",
                usage(now, 80, "p", "vision", |_| 16.0, move |_| used),
            ),
        ])
    };
    let savings = |repo: &Repo| {
        let a = Analysis::new(repo, now);
        let recs = plan::recommendations(&a);
        let of = |kind| {
            recs.iter()
                .filter(|r| r.kind == kind)
                .filter_map(|r| r.monthly_savings)
                .sum::<Decimal>()
        };
        (
            of(plan::RecommendationKind::RightsizeTeam),
            of(plan::RecommendationKind::ResizeReservation),
            of(plan::RecommendationKind::CommitmentMix),
        )
    };
    // 16 GPUs held and used: nothing to rightsize; the reservation is half
    // stranded. Buying 16 GPUs at the catalog's 1-year (73,000) would cost
    // more than today, but keeping 2 of ra's 4 instances serves them for
    // 2 x 20 x 730 = 29,200: the commitment plan cuts ra to 2 and saves
    // 58,400 - 29,200 = 29,200 (no resize beside it).
    assert_eq!(
        savings(&repo_with(16.0)),
        (Decimal::ZERO, Decimal::ZERO, d(2_920_000))
    );
    let repo = repo_with(16.0);
    let m = Analysis::new(&repo, now).mix("c", "p", 0.0).unwrap();
    assert_eq!(
        m.kept,
        vec![crate::cost::mix::Kept {
            name: "ra".into(),
            count: 2
        }]
    );
    // Used 4: rightsized to 6 (at 70%), which one of ra's instances serves
    // (8 GPUs, 14,600). Before rightsizing the plan keeps 2 (29,200), after
    // it 1: rightsizing saves 29,200 - 14,600 = 14,600 and the plan the
    // other 58,400 - 29,200 = 29,200; together today - 14,600.
    assert_eq!(
        savings(&repo_with(4.0)),
        (d(1_460_000), Decimal::ZERO, d(2_920_000))
    );
    let repo = repo_with(4.0);
    let recs = plan::recommendations(&Analysis::new(&repo, now));
    let changes: Vec<&String> = recs.iter().flat_map(|r| &r.changes).collect();
    assert!(
        changes.iter().any(|c| c.as_str()
            == "Reservation `ra`: count 4 → 1 (keep 1, no dearer than what the plan would buy; the plan re-buys the rest of the demand)"),
        "{changes:?}"
    );
    assert!(
        changes.iter().any(|c| c.as_str()
            == "Cluster `c` pool `p`: purchase {reserved: 1, onDemand: 3}; beyond the reserved nodes, on demand as demand needs"),
        "{changes:?}"
    );
}
