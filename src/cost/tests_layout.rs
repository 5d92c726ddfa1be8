//! The commitment mix of a MIG pool whose layout leaves slices unused: the
//! demand is floored at the whole GPUs its requests' units take.

use super::tests_finops::d;
use super::*;
use crate::forecast::demand::Outlook;
use rust_decimal::Decimal;

#[test]
fn a_mig_layout_that_leaves_slices_unused_floors_the_demand_at_the_gpus_its_units_take() {
    // 18 units of a profile two to a GPU (2/7 of each GPU's compute) are
    // 18/7 = 2.6 GPU-equivalents of use, but take 9 whole GPUs: two 8-GPU
    // nodes. The usage says 2.6; the mix buys what the units need.
    let price = prices::GpuHour {
        on_demand: d(10),
        spot: None,
        reserved1y: None,
        reserved3y: None,
        capacity_block: None,
        source: "test".into(),
    };
    let hours = 90 * 24;
    let demand = Outlook::requests_only(0, hours, |_| 18.0 / 7.0);
    let none = crate::capacity::Timeline::default();
    let units = crate::capacity::Timeline::build([(
        crate::capacity::Hours {
            start: 0,
            end: hours,
        },
        18.0,
    )]);
    let floor = [(units, 2.0)];
    assert_eq!(mix::layout_floor(&floor, 5), 9.0);
    assert_eq!(
        mix::layout_floor(&floor, hours),
        0.0,
        "after the request ends"
    );
    let inputs = |floor| mix::Inputs {
        demand: &demand,
        preemptible: None,
        steady: None,
        from: 0,
        hours: hours as usize,
        gpus_per_node: 8,
        price: &price,
        spot_allowance: 0.0,
        release: mix::Release::default(),
        ending: &[],
        locked: &none,
        locked_monthly: Decimal::ZERO,
        bursts: &none,
        three_years_supported: false,
        floor,
    };
    let without = mix::recommend(&inputs(&[])).unwrap();
    let with = mix::recommend(&inputs(&floor)).unwrap();
    // All on demand either way, in whole 8-GPU instances: one, then two.
    assert_eq!(without.on_demand_gpus, 8.0, "{without:?}");
    assert_eq!(with.on_demand_gpus, 16.0, "{with:?}");
    assert!((with.mean_demand - 9.0).abs() < 1e-9, "{with:?}");
}

#[test]
fn rightsizing_a_mig_team_lowers_the_floor_to_the_slices_it_keeps() {
    // Four p5.48xlarge (32 H100s at 55.04 an instance-hour on demand), each
    // GPU cut 3g.40gb + 2g.20gb + 2 × 1g.10gb. `t` asks for 56 × 1g.10gb
    // (28 GPUs' worth of slots) and 16 × 2g.20gb, holds 12.57 GPU-equivalents
    // and uses 2: at 70% it needs 3, so its requests come down to 21 ×
    // 1g.10gb (the 2g.20gb first, largest). Those 21 take 11 GPUs: two
    // instances, 2 × 55.04 × 730 = 80,358.40 a month against 160,716.80
    // today. Floored at the uncut requests' 28 GPUs, the plan kept all four
    // and rightsizing saved nothing.
    let now = crate::cost::tests::at("2026-11-22T00:00:00Z");
    let repo = crate::cost::tests::repo_of(&[
        ("capops.yaml", crate::cost::tests::CONFIG.into()),
        ("prices.yaml", crate::cost::tests::prices()),
        (
            "cluster.yaml",
            crate::cost::tests::cluster(
                "    - {name: m, gpuModel: h100-80gb-sxm, instanceType: p5.48xlarge, gpusPerNode: 8, nodes: 4, mig: {layout: {3g.40gb: 1, 2g.20gb: 1, 1g.10gb: 2}}}\n",
            ),
        ),
        ("team.yaml", crate::cost::tests::team("t", None)),
        (
            "requests.yaml",
            "apiVersion: capops.dev/v1alpha1\nkind: CapacityRequest\nmetadata: {name: slices}\nspec:\n  team: t\n  cluster: c\n  pool: m\n  resources: {nvidia.com/mig-1g.10gb: 56, nvidia.com/mig-2g.20gb: 16}\n  workloadClass: inference\n".into(),
        ),
        (
            "usage/c.csv",
            crate::cost::tests::usage(now, 90, "m", "t", |_| 12.57, |_| 2.0),
        ),
    ]);
    let a = Analysis::new(&repo, now);
    let recs = plan::recommendations(&a);
    let team = recs
        .iter()
        .find(|r| r.kind == plan::RecommendationKind::RightsizeTeam)
        .unwrap_or_else(|| panic!("{recs:#?}"));
    assert_eq!(
        team.changes,
        [
            "CapacityRequest `slices`: nvidia.com/mig-2g.20gb 16 → 0",
            "CapacityRequest `slices`: nvidia.com/mig-1g.10gb 56 → 21",
        ]
    );
    assert_eq!(team.monthly_savings, Some(Decimal::new(8_035_840, 2)));
    let plan = recs
        .iter()
        .find(|r| r.kind == plan::RecommendationKind::CommitmentMix)
        .unwrap_or_else(|| panic!("{recs:#?}"));
    assert!(plan.text.contains("buy 16 GPUs on demand"), "{}", plan.text);
}
