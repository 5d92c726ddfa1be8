//! The research lab's shape through the whole analysis (usage history,
//! forecasts of each part, the approved requests): 24/7 training, diurnal
//! inference and a research team that runs 90 GPUs one day in three on
//! spot. Its swings must not make the steady demand beside it look
//! uncertain: the steady part is forecast on its own.

use super::tests::{CONFIG, at, cluster, repo_of, team, usage};
use super::tests_finops::{catalog, join, request};
use super::*;

#[test]
fn research_swinging_on_spot_leaves_the_steady_baseline_on_three_years() {
    // One-GPU instances: on demand 6.88, 1-year 4.128, 3-year 2.752, spot
    // 2.064 (2.2704 with the 10% allowance). 600 days of history support a
    // 3-year term (twice the history reaches past it).
    let now = at("2026-11-22T00:00:00Z");
    let day = |h: i64| h.div_euclid(24);
    let hour = |h: i64| h.rem_euclid(24);
    let inference = move |h: i64| {
        if (6..22).contains(&hour(h)) {
            52.0
        } else {
            13.0
        }
    };
    let research = move |h: i64| if day(h) % 3 == 0 { 90.0 } else { 0.0 };
    let usage_csv = join(
        join(
            usage(now, 600, "p", "training", |_| 30.0, |_| 28.0),
            usage(now, 600, "p", "inference", inference, move |h| {
                inference(h) * 0.8
            }),
        ),
        usage(now, 600, "p", "research", research, move |h| {
            research(h) * 0.9
        }),
    );
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
                "    - {name: p, gpuModel: h100-80gb-sxm, instanceType: gpu1, gpusPerNode: 1, nodes: 140}\n",
            ),
        ),
        (
            "teams.yaml",
            [
                team("training", None),
                team("inference", None),
                team("research", None),
            ]
            .join("---\n"),
        ),
        (
            "requests.yaml",
            [
                request("training", "training", "p", 30, ""),
                request("inference", "inference", "p", 52, ""),
                request("research", "research", "p", 90, "  preemptible: true\n"),
            ]
            .concat(),
        ),
        ("usage/c.csv", usage_csv),
    ]);
    let m = Analysis::new(&repo, now).mix("c", "p", 0.0).unwrap();
    let gpus = |t: &Option<mix::Tier>| t.as_ref().map_or(0, |t| t.gpus);
    // By hand: the steady part is training 30 + inference 13 at night and 52
    // by day: 43 GPUs all the time (3 years), 82 for 16 hours a day, two
    // thirds of the hours, above the 1-year price's 60% of on demand: 39
    // more on 1 year. The research team's swings made the pool's P10 0, and
    // so the 3-year tier (and 43,192 USD a month of its discount) went.
    assert_eq!(gpus(&m.baseline), 43, "{m:?}");
    assert_eq!(gpus(&m.flexible), 39, "{m:?}");
    assert!(m.spot_gpus > 0.0, "{m:?}");
    // The committed tiers cost 43 x 2.752 x 730 + 39 x 4.128 x 730 a month.
    let committed = 43.0 * 2.752 * 730.0 + 39.0 * 4.128 * 730.0;
    let spot = m.spot_gpus * 2.064 * 1.1 * 730.0;
    assert!(
        (prices::float(m.monthly_mix) - (committed + spot)).abs() < 0.05,
        "{} vs {}",
        m.monthly_mix,
        committed + spot
    );
}

#[test]
fn a_rightsized_mix_dearer_over_the_window_saves_today_less_that_mix() {
    // Three 8-GPU instances at 55.04 on demand, 33.024 for a year. `alpha`
    // holds 7.5 GPUs 20 hours a day and 5.5 the other 4 (standing); `beta`
    // holds 4 and uses 0.4, its 8-GPU request ending in 240 days. Before
    // rightsizing, two instances pass the year's break-even (60% of the
    // hours): 2 x 33.024 x 730 = 48,215.04 a month. Rightsized, `beta`
    // keeps 1: the second instance is needed 20/24 of the window's hours,
    // but over the year only while `beta`'s request lasts, so one instance
    // is committed and the rest is bought on demand: 24,107.52 + 20/24 x
    // 55.04 x 730 = 57,590.19, dearer over the 90 days. The mix then saves
    // today - mix1 = 3 x 55.04 x 730 - 57,590.19 = 62,947.41, and the
    // rightsizing nothing in the window.
    let now = at("2026-11-22T00:00:00Z");
    let alpha = |h: i64| if h.rem_euclid(24) < 4 { 5.5 } else { 7.5 };
    let repo = repo_of(&[
        ("capops.yaml", CONFIG.into()),
        (
            "prices.yaml",
            catalog(
                "    - {provider: aws, region: us-east-2, instanceType: gpu8, gpusPerInstance: 8, onDemand: 55.04, reserved1y: 33.024, source: test}\n",
            ),
        ),
        (
            "cluster.yaml",
            cluster(
                "    - {name: p, gpuModel: h100-80gb-sxm, instanceType: gpu8, gpusPerNode: 8, nodes: 3}\n",
            ),
        ),
        (
            "teams.yaml",
            [team("alpha", None), team("beta", None)].join("---\n"),
        ),
        (
            "requests.yaml",
            [
                request("alpha", "alpha", "p", 8, ""),
                request(
                    "beta",
                    "beta",
                    "p",
                    8,
                    "  window: {start: \"2026-08-14T00:00:00Z\", end: \"2027-07-20T00:00:00Z\"}\n",
                ),
            ]
            .concat(),
        ),
        (
            "usage/c.csv",
            join(
                usage(now, 90, "p", "alpha", alpha, move |h| alpha(h) * 0.9),
                usage(now, 90, "p", "beta", |_| 4.0, |_| 0.4),
            ),
        ),
    ]);
    let a = Analysis::new(&repo, now);
    let recs = plan::recommendations(&a);
    let mix = recs
        .iter()
        .find(|r| r.kind == plan::RecommendationKind::CommitmentMix)
        .expect("a commitment mix");
    let today = 3.0 * 55.04 * 730.0;
    let mix1 = 24_107.52 + 20.0 / 24.0 * 55.04 * 730.0;
    let saved = prices::float(mix.monthly_savings.unwrap());
    assert!(
        (saved - (today - mix1)).abs() < 0.02,
        "{saved} {}",
        mix.text
    );
    let rightsizing: f64 = recs
        .iter()
        .filter(|r| r.kind == plan::RecommendationKind::RightsizeTeam)
        .filter_map(|r| r.monthly_savings.map(prices::float))
        .sum();
    assert_eq!(rightsizing, 0.0);
}
