//! The commitment mix on the seeds' shapes (the agency, the research lab),
//! honest uncertainty over long terms, and charts that show the peaks; every
//! number worked out by hand in the comments.

use super::tests::{CONFIG, at, cluster, repo_of, team, usage, wobble};
use super::tests_finops::{catalog, d, join, request};
use super::*;
use crate::forecast::demand::Outlook;
use rust_decimal::Decimal;

#[test]
fn the_agency_mix_puts_bursts_on_spot_and_saves_about_half() {
    // The seed's agency: 20 GPUs of steady inference, 30 more for 10 hours a day
    // (preemptible batch). One-GPU instances: on demand 6.88, 1-year 4.128 (40% off),
    // 3-year 2.752, spot 2.064 (70% off; 2.2704 with the 10% interruption allowance).
    let now = at("2026-11-22T00:00:00Z");
    let burst = |h: i64| (8..18).contains(&(h.rem_euclid(24)));
    let repo = repo_of(&[
        ("capops.yaml", CONFIG.into()),
        (
            "prices.yaml",
            catalog(
                "    - {provider: aws, region: us-east-2, instanceType: gpu1, gpusPerInstance: 1, onDemand: 6.88, spot: 2.064, reserved1y: 4.128, reserved3y: 2.752, source: test}\n",
            ),
        ),
        (
            "cluster.yaml",
            cluster(
                "    - {name: p, gpuModel: h100-80gb-sxm, instanceType: gpu1, gpusPerNode: 1, nodes: 50}\n",
            ),
        ),
        (
            "teams.yaml",
            format!("{}---\n{}", team("serving", None), team("batch", None)),
        ),
        (
            "requests.yaml",
            [
                request("serving", "serving", "p", 20, ""),
                request("batch", "batch", "p", 30, "  preemptible: true\n"),
            ]
            .concat(),
        ),
        (
            "usage/c.csv",
            join(
                usage(now, 90, "p", "serving", |_| 20.0, |_| 18.0),
                usage(
                    now,
                    90,
                    "p",
                    "batch",
                    move |h| if burst(h) { 30.0 } else { 0.0 },
                    move |h| if burst(h) { 24.0 } else { 0.0 },
                ),
            ),
        ),
    ]);
    let a = Analysis::new(&repo, now);
    let m = a.mix("c", "p", 0.0).unwrap();
    // 90 days of history support a forecast for 180 days: a 3-year term is not
    // supported, so the baseline is committed for a year.
    assert!(m.three_year_unsupported);
    let base = m.baseline.as_ref().unwrap();
    assert_eq!((base.kind, base.gpus), ("1-year reserved", 20));
    assert!(m.flexible.is_none());
    // Bursts: 30 GPUs x 10/24 = 12.5 on average, all on spot; nothing on demand.
    assert!((m.spot_gpus - 12.5).abs() < 0.05, "{m:?}");
    assert!(m.on_demand_gpus < 0.05, "{m:?}");
    // (20 x 4.128 + 12.5 x 2.2704) x 730 = 80,986.20 against 32.5 x 6.88 x 730 =
    // 163,228.00 all on demand: 50.4% saved, in the field's 45-55%.
    assert!(
        (prices::float(m.monthly_mix) - 80_986.20).abs() < 100.0,
        "{m:?}"
    );
    assert!((prices::float(m.monthly_on_demand) - 163_228.0).abs() < 100.0);
    assert!(
        (m.savings_share - 0.5039).abs() < 0.005,
        "{}",
        m.savings_share
    );
    assert!((0.45..=0.55).contains(&m.savings_share));
}

#[test]
fn the_research_lab_mix_commits_its_floor_long_its_day_for_a_year_and_spots_research() {
    // 24/7 training (30 GPUs), inference at 52 GPUs for 16 hours a day and 13 (a
    // quarter) at night, research bursting to 90 GPUs one day in three
    // (preemptible). Mean 30 + 39 + 30 = 99 GPUs. One-GPU prices as the agency's.
    let price = prices::GpuHour {
        on_demand: d(688),
        spot: Some(Decimal::new(2064, 3)),
        reserved1y: Some(Decimal::new(4128, 3)),
        reserved3y: Some(Decimal::new(2752, 3)),
        capacity_block: Some(Decimal::new(4916, 3)),
        source: "test".into(),
    };
    let inference = |h: i64| {
        if (6..22).contains(&h.rem_euclid(24)) {
            52.0
        } else {
            13.0
        }
    };
    let research = |h: i64| if (h / 24) % 3 == 0 { 90.0 } else { 0.0 };
    let hours = 90 * 24;
    let demand = Outlook::requests_only(0, hours, move |h| 30.0 + inference(h) + research(h));
    let pre = Outlook::requests_only(0, hours, research);
    let none = crate::capacity::Timeline::default();
    let inputs = |bursts| mix::Inputs {
        demand: &demand,
        preemptible: Some(&pre),
        steady: None,
        from: 0,
        hours: hours as usize,
        gpus_per_node: 1,
        price: &price,
        spot_allowance: 0.10,
        release: mix::Release::default(),
        ending: &[],
        locked: &none,
        locked_monthly: Decimal::ZERO,
        bursts,
        three_years_supported: true,
        floor: &[],
    };
    let m = mix::recommend(&inputs(&none)).unwrap();
    // Steady demand is 82 for 2/3 of hours, 43 (30 + 13) for 1/3. Baseline: its
    // floor, 43 GPUs, for 3 years. A 1-year GPU costs 60% of on demand, so it pays
    // above the level demand exceeds 60% of hours: 82 (2/3 of hours): 39 more for a year.
    assert_eq!(
        m.baseline.as_ref().map(|t| (t.kind, t.gpus)),
        Some(("3-year reserved", 43))
    );
    assert_eq!(
        m.flexible.as_ref().map(|t| (t.kind, t.gpus)),
        Some(("1-year reserved", 39))
    );
    // Research runs on spot, except at night, when the 39 GPUs of the 1-year
    // tier are paid for and idle (steady demand is 43): 39 of its 90 GPUs
    // fit there. Spot: on a research day, 90 for 16 hours and 51 for 8, a
    // mean of 77; one day in three: 25.67 GPUs.
    assert!((m.spot_gpus - 77.0 / 3.0).abs() < 1e-9, "{m:?}");
    assert!(m.on_demand_gpus < 1e-9);
    // GPU-hours served: 43/99 long; the 1-year tier 39 by day (2/3 of hours)
    // and 39 on a research night (1/9 of hours): 30.33/99; 25.67/99 on spot.
    assert!((m.shares.long - 43.0 / 99.0).abs() < 1e-9);
    assert!((m.shares.flexible - (26.0 + 13.0 / 3.0) / 99.0).abs() < 1e-9);
    assert!((m.shares.spot - 77.0 / 3.0 / 99.0).abs() < 1e-9);
    // Capacity bought: 43 / 39 / 25.67 of 107.67 = 40% / 36% / 24%, near the
    // seed's 30/40/30 (its split counts inference's always-on night level as
    // inference; the mix commits it long, being the floor).
    let bought = 43.0 + 39.0 + 77.0 / 3.0;
    let bought: [(f64, f64); 3] = [
        (43.0 / bought, 0.30),
        (39.0 / bought, 0.40),
        (77.0 / 3.0 / bought, 0.30),
    ];
    for (got, want) in bought {
        assert!((got - want).abs() <= 0.10, "{got} vs {want}");
    }
    // (43 x 2.752 + 39 x 4.128 + 25.67 x 2.2704) x 730 = 337.6016 x 730 =
    // 246,449.17 against 99 x 6.88 x 730 = 497,217.60 on demand: 50.4% saved.
    assert_eq!(m.monthly_mix, d(24_644_917));
    assert_eq!(m.monthly_on_demand, d(49_721_760));
    assert!(
        (m.savings_share - 0.5043).abs() < 0.0005,
        "{}",
        m.savings_share
    );
    // A known, bounded burst (64 GPUs for 14 days) goes on capacity blocks (4.916),
    // not into the commitments; at night 39 of it fit in the 1-year tier's idle
    // GPUs: blocks for 64 GPUs 16 hours a day and 25 for 8, 51 a day on average,
    // 51 x 14 / 90 = 7.93 GPUs on average.
    let burst = crate::capacity::Timeline::build([(
        crate::capacity::Hours {
            start: 240,
            end: 240 + 14 * 24,
        },
        64.0,
    )]);
    let demand2 = Outlook::requests_only(0, hours, move |h| {
        30.0 + inference(h)
            + research(h)
            + if (240..240 + 14 * 24).contains(&h) {
                64.0
            } else {
                0.0
            }
    });
    let mut i2 = inputs(&burst);
    i2.demand = &demand2;
    let m2 = mix::recommend(&i2).unwrap();
    assert!((m2.block_gpus - 51.0 * 14.0 / 90.0).abs() < 1e-9, "{m2:?}");
    assert_eq!(m2.baseline, m.baseline);
    assert_eq!(m2.flexible, m.flexible);
}

#[test]
fn spot_and_capacity_blocks_are_bought_in_whole_instances() {
    // 8-GPU instances: on demand 8.00 a GPU-hour, spot 2.00 (no interruption
    // allowance), capacity blocks 5.00, no committed prices. 3 GPUs of
    // preemptible demand all the time, and a known burst of 12 GPUs for the
    // first 240 of 720 hours.
    let price = prices::GpuHour {
        on_demand: d(800),
        spot: Some(d(200)),
        reserved1y: None,
        reserved3y: None,
        capacity_block: Some(d(500)),
        source: "test".into(),
    };
    let hours = 720;
    let demand = Outlook::requests_only(0, hours, |h| 3.0 + if h < 240 { 12.0 } else { 0.0 });
    let pre = Outlook::requests_only(0, hours, |_| 3.0);
    let burst =
        crate::capacity::Timeline::build([(crate::capacity::Hours { start: 0, end: 240 }, 12.0)]);
    let none = crate::capacity::Timeline::default();
    let m = mix::recommend(&mix::Inputs {
        demand: &demand,
        preemptible: Some(&pre),
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
        bursts: &burst,
        three_years_supported: true,
        floor: &[],
    })
    .unwrap();
    // Spot: 3 GPUs need one instance, 8 GPUs every hour. Blocks: 12 GPUs need
    // two instances, 16 GPUs for 240 of 720 hours: 5.33 on average.
    assert!((m.spot_gpus - 8.0).abs() < 1e-9, "{m:?}");
    assert!((m.block_gpus - 16.0 / 3.0).abs() < 1e-9, "{m:?}");
    assert!(m.on_demand_gpus < 1e-9, "{m:?}");
    // (8 x 2.00 + 16/3 x 5.00) x 730 = 31,146.67 a month, against all on
    // demand in whole instances: (16 x 240 + 8 x 480) / 720 x 8.00 x 730 =
    // 62,293.33.
    assert!(
        (prices::float(m.monthly_mix) - 31_146.67).abs() < 0.02,
        "{}",
        m.monthly_mix
    );
    assert!(
        (prices::float(m.monthly_on_demand) - 62_293.33).abs() < 0.02,
        "{}",
        m.monthly_on_demand
    );
    // What the hours serve is still counted in GPUs: 3 of 7 on spot.
    assert!((m.shares.spot - 3.0 / 7.0).abs() < 1e-9, "{:?}", m.shares);
}

#[test]
fn a_three_year_term_on_ninety_days_of_history_is_flagged_and_its_bands_widen() {
    let now = at("2026-11-22T00:00:00Z");
    let pool = "    - {name: a100, gpuModel: a100-40gb, instanceType: p4d.24xlarge, gpusPerNode: 8, nodes: 30}\n";
    let reservation = r#"apiVersion: capops.dev/v1alpha1
kind: Reservation
metadata: {name: three-years}
spec:
  provider: aws
  type: gcp-commitment
  region: us-east-2
  instanceType: p4d.24xlarge
  count: 10
  term: {start: "2026-11-22T00:00:00Z", end: "2029-11-21T00:00:00Z"}
  hourlyPrice: 9.60
  covers: {cluster: c, pool: a100}
"#
    .replace(
        "type: gcp-commitment",
        "type: aws-capacity-reservation\n  zone: us-east-2a",
    );
    let repo = repo_of(&[
        ("capops.yaml", CONFIG.into()),
        ("prices.yaml", super::tests::prices()),
        ("cluster.yaml", cluster(pool)),
        ("team.yaml", team("steady", None)),
        ("reservation.yaml", reservation),
        (
            "usage/c.csv",
            usage(
                now,
                90,
                "a100",
                "steady",
                |h| 80.0 + 4.0 * wobble(h),
                |_| 60.0,
            ),
        ),
    ]);
    let a = Analysis::new(&repo, now);
    let r = a.reservation("three-years").unwrap();
    // 90 days of history support 180 days after the last hour measured.
    assert_eq!(r.history_hours, 90 * 24);
    assert_eq!(r.supported_until, now.hour_index() + 180 * 24);
    assert!(!r.term_supported);
    // At P50 the 80 GPUs look used in full; the P10 case is what three years risk.
    assert!(r.utilization_p50 > 0.97, "{r:?}");
    assert!(r.utilization_p10 < r.utilization_p50 - 0.02, "{r:?}");
    // The bands keep widening: two years out they are wider than in a month.
    let o = a.outlook("c", "a100").unwrap();
    let width = |days: i64| {
        let q = o.at(o.forecast_start + days * 24 + 12).unwrap();
        q.p90 - q.p10
    };
    assert!(
        width(730) > 2.0 * width(30),
        "{} vs {}",
        width(730),
        width(30)
    );
}

#[test]
fn charts_show_the_hours_at_capacity_that_daily_means_hide() {
    // A 10-GPU pool at 6 GPUs, full for two hours a day: the daily mean (6.33)
    // stays well under the pool, the hourly peak reaches it. (Usage above the
    // pool's size is refused: usage-exceeds-capacity.)
    let now = at("2026-11-22T00:00:00Z");
    let pool = "    - {name: small, gpuModel: a100-40gb, gpusPerNode: 2, nodes: 5}\n";
    let repo = repo_of(&[
        ("capops.yaml", CONFIG.into()),
        ("prices.yaml", super::tests::prices()),
        ("cluster.yaml", cluster(pool)),
        ("team.yaml", team("t", None)),
        (
            "usage/c.csv",
            usage(
                now,
                30,
                "small",
                "t",
                |h| if h.rem_euclid(24) >= 22 { 10.0 } else { 6.0 },
                |_| 4.0,
            ),
        ),
    ]);
    let a = Analysis::new(&repo, now);
    let c = chart::pool_chart(
        &a,
        "c",
        "small",
        now.hour_index() - 7 * 24,
        now.hour_index() + 7 * 24,
    )
    .unwrap();
    assert_eq!(c.days.len(), 14);
    // Calendar days, the day of --at is day 0.
    assert_eq!(c.days[7].date, "2026-11-22");
    assert_eq!(c.days[7].offset, 0);
    for day in &c.days {
        assert!(day.p50 < 8.0, "{day:?}");
        assert!(day.peak >= 10.0 - 1e-9, "{day:?}");
    }
    assert!(
        c.days
            .iter()
            .filter(|d| d.measured)
            .all(|d| (d.p50 - 6.33).abs() < 0.05)
    );
}

#[test]
fn chart_days_are_calendar_days_whatever_the_hour_of_at() {
    // `--at` defaults to now: at 16:00, the day of --at is still labelled by its own
    // date (not the previous one), and every point covers one calendar day.
    let now = at("2026-11-22T16:00:00Z");
    let pool = "    - {name: small, gpuModel: a100-40gb, gpusPerNode: 2, nodes: 5}\n";
    let repo = repo_of(&[
        ("capops.yaml", CONFIG.into()),
        ("prices.yaml", super::tests::prices()),
        ("cluster.yaml", cluster(pool)),
        ("team.yaml", team("t", None)),
        // Demand is the day of the month: each calendar day has its own level.
        (
            "usage/c.csv",
            usage(
                now,
                20,
                "small",
                "t",
                |h| ((h.div_euclid(24) % 5) + 1) as f64,
                |_| 1.0,
            ),
        ),
    ]);
    let a = Analysis::new(&repo, now);
    let c = chart::pool_chart(
        &a,
        "c",
        "small",
        now.hour_index() - 3 * 24,
        now.hour_index() + 24,
    )
    .unwrap();
    let dates: Vec<(&str, i64)> = c.days.iter().map(|d| (d.date.as_str(), d.offset)).collect();
    assert_eq!(
        dates,
        vec![
            ("2026-11-19", -3),
            ("2026-11-20", -2),
            ("2026-11-21", -1),
            ("2026-11-22", 0),
            ("2026-11-23", 1)
        ]
    );
    assert_eq!(c.at, "2026-11-22");
    // A measured calendar day has one level: the mean is exactly it (not a blend of two days).
    for d in c.days.iter().filter(|d| d.measured) {
        assert_eq!(d.p50.fract(), 0.0, "{d:?}");
    }
    // The day of --at is part measured, part forecast.
    assert!(!c.days[3].measured);
}

#[test]
fn preemptible_demand_that_runs_all_the_time_is_committed_when_that_is_cheaper_than_spot() {
    // 8-GPU instances: on demand 2.00 a GPU-hour, spot 1.00 (1.50 with a 50%
    // interruption allowance), 1-year 1.20. 12 GPUs of preemptible demand and
    // 8 steady, every hour. On spot: one 1-year instance for the steady 8
    // (8 x 1.20) and two spot instances for the 12 (16 x 1.50): 33.60 an
    // hour, 24,528 a month. Bought like steady demand: three 1-year instances
    // (20 GPUs need 3 whole instances every hour; 2.5 > break-even): 24 x
    // 1.20 = 28.80 an hour, 21,024 a month. The cheaper is recommended.
    let price = prices::GpuHour {
        on_demand: d(200),
        spot: Some(d(100)),
        reserved1y: Some(d(120)),
        reserved3y: None,
        capacity_block: None,
        source: "test".into(),
    };
    let hours = 720;
    let demand = Outlook::requests_only(0, hours, |_| 20.0);
    let pre = Outlook::requests_only(0, hours, |_| 12.0);
    let none = crate::capacity::Timeline::default();
    let inputs = |allowance: f64| mix::Inputs {
        demand: &demand,
        preemptible: Some(&pre),
        steady: None,
        from: 0,
        hours: hours as usize,
        gpus_per_node: 8,
        price: &price,
        spot_allowance: allowance,
        release: mix::Release::default(),
        ending: &[],
        locked: &none,
        locked_monthly: Decimal::ZERO,
        bursts: &none,
        three_years_supported: true,
        floor: &[],
    };
    let m = mix::recommend(&inputs(0.5)).unwrap();
    assert_eq!(m.monthly_mix, d(2_102_400), "{m:?}");
    assert_eq!(m.baseline.as_ref().map(|t| t.nodes), Some(3), "{m:?}");
    assert!(m.spot_gpus < 1e-9, "{m:?}");
    // With no allowance spot costs 1.00: 9.60 + 16.00 = 25.60 an hour,
    // 18,688 a month, cheaper than 21,024: the 12 go on spot.
    let m = mix::recommend(&inputs(0.0)).unwrap();
    assert_eq!(m.monthly_mix, d(1_868_800), "{m:?}");
    assert!((m.spot_gpus - 16.0).abs() < 1e-9, "{m:?}");
}

#[test]
fn capacity_blocks_stop_at_the_256_instances_aws_sells_an_account() {
    // A known burst of 2,400 GPUs (300 8-GPU instances) for the first 240 of
    // 720 hours; blocks at 5.00 a GPU-hour, on demand 8.00, nothing else.
    // Blocks: 256 instances, 2,048 GPUs, a third of the time: 682.67 on
    // average; the other 44 instances (352 GPUs) on demand: 117.33.
    // (682.67 x 5.00 + 117.33 x 8.00) x 730 = 4,352 x 730 = 3,176,960.
    let price = prices::GpuHour {
        on_demand: d(800),
        spot: None,
        reserved1y: None,
        reserved3y: None,
        capacity_block: Some(d(500)),
        source: "test".into(),
    };
    let hours = 720;
    let demand = Outlook::requests_only(0, hours, |h| if h < 240 { 2400.0 } else { 0.0 });
    let burst =
        crate::capacity::Timeline::build([(crate::capacity::Hours { start: 0, end: 240 }, 2400.0)]);
    let none = crate::capacity::Timeline::default();
    let m = mix::recommend(&mix::Inputs {
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
        bursts: &burst,
        three_years_supported: true,
        floor: &[],
    })
    .unwrap();
    assert!((m.block_gpus - 2048.0 / 3.0).abs() < 1e-6, "{m:?}");
    assert!((m.on_demand_gpus - 352.0 / 3.0).abs() < 1e-6, "{m:?}");
    assert!(
        (prices::float(m.monthly_mix) - 3_176_960.0).abs() < 0.02,
        "{}",
        m.monthly_mix
    );
}

#[test]
fn no_term_is_committed_to_demand_the_approved_timeline_ends() {
    // 20 one-GPU instances held for 800 days by a request that ends in 125
    // days: on demand 10, a year reserved 6, three years 4. The 90-day
    // window is full, but a commitment is paid for its term: over the year
    // the demand is there 125 / 365 = 34% of the hours, under the 60% (and
    // over three years 11%, under 40%) a committed GPU needs to pay.
    let now = at("2026-11-27T00:00:00Z");
    let repo_with = |window: &str| {
        repo_of(&[
            ("capops.yaml", CONFIG.into()),
            (
                "prices.yaml",
                catalog(
                    "    - {provider: aws, region: us-east-2, instanceType: gpu1, gpusPerInstance: 1, onDemand: 10, reserved1y: 6, reserved3y: 4, source: test}\n",
                ),
            ),
            (
                "cluster.yaml",
                cluster(
                    "    - {name: p, gpuModel: h100-80gb-sxm, instanceType: gpu1, gpusPerNode: 1, nodes: 20}\n",
                ),
            ),
            ("teams.yaml", team("steady", None)),
            (
                "requests.yaml",
                request("steady", "steady", "p", 20, window),
            ),
            (
                "usage/c.csv",
                usage(now, 800, "p", "steady", |_| 20.0, |_| 14.0),
            ),
        ])
    };
    let ending =
        repo_with("  window: {start: \"2024-09-01T00:00:00Z\", end: \"2027-04-01T00:00:00Z\"}\n");
    let m = Analysis::new(&ending, now).mix("c", "p", 0.0).unwrap();
    assert!(m.baseline.is_none(), "{m:?}");
    assert!(m.flexible.is_none(), "{m:?}");
    // The same pool with the request running on: 20 committed.
    let standing = repo_with("");
    let m = Analysis::new(&standing, now).mix("c", "p", 0.0).unwrap();
    let committed = |t: &Option<mix::Tier>| t.as_ref().map_or(0, |t| t.gpus);
    assert_eq!(committed(&m.baseline) + committed(&m.flexible), 20, "{m:?}");
    // The same request renewed from the day it ends, for two years, by a
    // request that starts past the 90 days: the outlook reaches the end of
    // every approved request, so the term is weighed on the demand the
    // renewal holds, and 20 are committed again.
    let renewed = repo_with(
        "  window: {start: \"2024-09-01T00:00:00Z\", end: \"2027-04-01T00:00:00Z\"}\n---\n\
         apiVersion: capops.dev/v1alpha1\nkind: CapacityRequest\nmetadata: {name: renewal}\n\
         spec:\n  team: steady\n  cluster: c\n  pool: p\n  resources: {nvidia.com/gpu: 20}\n\
         \x20 workloadClass: training\n\
         \x20 window: {start: \"2027-04-01T00:00:00Z\", end: \"2029-04-01T00:00:00Z\"}\n",
    );
    let m = Analysis::new(&renewed, now).mix("c", "p", 0.0).unwrap();
    assert_eq!(committed(&m.baseline) + committed(&m.flexible), 20, "{m:?}");
}
