//! What rightsizing takes off a pool's demand, hour by hour: a preemptible
//! team's release where it holds its GPUs (by day, not at night off the
//! steady demand), and a steady team's only while its requests last.

use super::tests::{CONFIG, at, cluster, repo_of, team, usage};
use super::tests_finops::{catalog, join, request};
use super::*;

fn prices() -> String {
    catalog(
        "    - {provider: aws, region: us-east-2, instanceType: gpu1, gpusPerInstance: 1, onDemand: 10, spot: 3, reserved1y: 6, source: test}\n",
    )
}

fn committed(m: &mix::Mix) -> u32 {
    m.baseline.as_ref().map_or(0, |t| t.gpus) + m.flexible.as_ref().map_or(0, |t| t.gpus)
}

#[test]
fn a_batch_that_runs_by_day_releases_by_day() {
    // Serving holds 20 all the time; batch holds 30 from 08:00 to 18:00
    // (12.5 on average) and uses 2 of them then: it needs 2 of its 12.5
    // (0.83 / 0.7, up), so it releases 10.5, all preemptible. Taken off
    // every hour, the 10.5 came off the serving team's 20 at night, and the
    // mix committed 10 instead of 20.
    let now = at("2026-11-22T00:00:00Z");
    let day = |h: i64| (8..18).contains(&h.rem_euclid(24));
    let repo = repo_of(&[
        ("capops.yaml", CONFIG.into()),
        ("prices.yaml", prices()),
        (
            "cluster.yaml",
            cluster(
                "    - {name: p, gpuModel: l4, instanceType: gpu1, gpusPerNode: 1, nodes: 50}\n",
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
                    move |h| if day(h) { 30.0 } else { 0.0 },
                    move |h| if day(h) { 2.0 } else { 0.0 },
                ),
            ),
        ),
    ]);
    let a = Analysis::new(&repo, now);
    let recs = plan::recommendations(&a);
    let rightsize = recs
        .iter()
        .find(|r| r.kind == plan::RecommendationKind::RightsizeTeam)
        .expect("batch is rightsized");
    assert!(rightsize.subject.contains("batch"), "{}", rightsize.subject);
    let release = mix::Release {
        gpus: 10.5,
        preemptible: 10.5,
        steady_until: i64::MIN,
        preemptible_until: i64::MAX,
        steps: &[],
    };
    let m1 = a.mix("c", "p", release).unwrap();
    assert_eq!(committed(&m1), 20, "{m1:?}");
    // By day batch keeps 30 x 2 / 12.5 = 4.8 of its 30, on spot: 4.8 x
    // 10 / 24 = 2 on average (whole instances: 5 by day, 2.08).
    assert!((m1.spot_gpus - 50.0 / 24.0).abs() < 0.01, "{m1:?}");
}

#[test]
fn a_steady_team_releases_only_while_its_requests_last() {
    // `a` holds 32 and uses 8 until its request ends in 150 days: at 70% it
    // needs 12, so it releases 20. `b` holds 32 for good. After `a`'s
    // request ends the pool needs `b`'s 32: taking `a`'s 20 off those hours
    // too left 12 there, and a year committed to 12 instead of 32 (150 of
    // 365 days at 44, under the 60% a 1-year price of 6 against 10 needs).
    let now = at("2026-11-22T00:00:00Z");
    let end = "2027-04-21T00:00:00Z";
    let repo = repo_of(&[
        ("capops.yaml", CONFIG.into()),
        ("prices.yaml", prices()),
        (
            "cluster.yaml",
            cluster(
                "    - {name: p, gpuModel: l4, instanceType: gpu1, gpusPerNode: 1, nodes: 64}\n",
            ),
        ),
        (
            "teams.yaml",
            format!("{}---\n{}", team("a", None), team("b", None)),
        ),
        (
            "requests.yaml",
            [
                request(
                    "a",
                    "a",
                    "p",
                    32,
                    &format!("  window: {{start: \"2026-01-01T00:00:00Z\", end: \"{end}\"}}\n"),
                ),
                request("b", "b", "p", 32, ""),
            ]
            .concat(),
        ),
        (
            "usage/c.csv",
            join(
                usage(now, 90, "p", "a", |_| 32.0, |_| 8.0),
                usage(now, 90, "p", "b", |_| 32.0, |_| 32.0),
            ),
        ),
    ]);
    let a = Analysis::new(&repo, now);
    let until = at(end).hour_index();
    let m1 = a
        .mix(
            "c",
            "p",
            mix::Release {
                gpus: 20.0,
                preemptible: 0.0,
                steady_until: until,
                preemptible_until: i64::MIN,
                steps: &[],
            },
        )
        .unwrap();
    assert_eq!(committed(&m1), 32, "{m1:?}");
    // The plan works it out the same way.
    let text = plan::recommendations(&a)
        .into_iter()
        .find(|r| r.kind == plan::RecommendationKind::CommitmentMix)
        .map(|r| r.text)
        .unwrap_or_default();
    assert!(text.contains("32 GPUs 1-year reserved"), "{text}");
}

#[test]
fn three_years_are_not_committed_past_what_the_outlook_shows_ending() {
    // 600 days of history support three years. `a` holds 32 GPUs under a
    // request that ends in 500 days, past the year the outlook is worked
    // out for. On demand 10, a year reserved 7, three years 5 (half of on
    // demand): three years need the GPUs half the term, and 500 of 1,095
    // days is 46%. A year is full: 32 for a year, none for three.
    let now = at("2026-11-22T00:00:00Z");
    let end = "2028-04-05T00:00:00Z";
    let repo = repo_of(&[
        ("capops.yaml", CONFIG.into()),
        (
            "prices.yaml",
            catalog(
                "    - {provider: aws, region: us-east-2, instanceType: gpu1, gpusPerInstance: 1, onDemand: 10, reserved1y: 7, reserved3y: 5, source: test}\n",
            ),
        ),
        (
            "cluster.yaml",
            cluster(
                "    - {name: p, gpuModel: l4, instanceType: gpu1, gpusPerNode: 1, nodes: 32}\n",
            ),
        ),
        ("teams.yaml", team("a", None)),
        (
            "requests.yaml",
            request(
                "a",
                "a",
                "p",
                32,
                &format!("  window: {{start: \"2025-01-01T00:00:00Z\", end: \"{end}\"}}\n"),
            ),
        ),
        ("usage/c.csv", usage(now, 600, "p", "a", |_| 32.0, |_| 30.0)),
    ]);
    let m = Analysis::new(&repo, now).mix("c", "p", 0.0).unwrap();
    assert!(!m.three_year_unsupported, "{m:?}");
    let tiers: Vec<_> = [&m.baseline, &m.flexible]
        .into_iter()
        .flatten()
        .map(|t| (t.kind, t.gpus))
        .collect();
    assert_eq!(tiers, vec![("1-year reserved", 32)], "{m:?}");
}

#[test]
fn a_team_releases_no_more_than_it_still_holds() {
    // `b` holds 20 and uses 15 throughout. `a` held 10 and used 1 until 12
    // days ago, then left the pool (no rows since, as budgets read it): over
    // its measured hours it held 10 and used 1, so on its own it would
    // "release" 10 − 2 = 8. It holds nothing now: it releases nothing, and
    // the plan commits `b`'s 20, not 12.
    let now = at("2026-11-22T00:00:00Z");
    let left = at("2026-11-10T00:00:00Z");
    let repo = repo_of(&[
        ("capops.yaml", CONFIG.into()),
        ("prices.yaml", prices()),
        (
            "cluster.yaml",
            cluster(
                "    - {name: p, gpuModel: l4, instanceType: gpu1, gpusPerNode: 1, nodes: 32}\n",
            ),
        ),
        (
            "teams.yaml",
            format!("{}---\n{}", team("a", None), team("b", None)),
        ),
        (
            "usage/c.csv",
            join(
                usage(left, 78, "p", "a", |_| 10.0, |_| 1.0),
                usage(now, 90, "p", "b", |_| 20.0, |_| 15.0),
            ),
        ),
    ]);
    let a = Analysis::new(&repo, now);
    let recs = plan::recommendations(&a);
    assert!(
        recs.iter()
            .all(|r| r.kind != plan::RecommendationKind::RightsizeTeam),
        "{recs:#?}"
    );
    let text = recs
        .iter()
        .find(|r| r.kind == plan::RecommendationKind::CommitmentMix)
        .map(|r| r.text.clone())
        .unwrap_or_default();
    assert!(text.contains("20 GPUs 1-year reserved"), "{text}");
    assert!(!text.contains("rightsizing releases"), "{text}");
}

#[test]
fn a_quiet_last_day_is_not_a_release() {
    // `a` holds 10 and uses 1 every day but the last, when it holds 0 (a
    // holiday, its rows still there): it still holds 10 for rightsizing's
    // purpose (the most it held on a day of its last week), so it releases
    // 10 − 2 = 8, as it would without the quiet day.
    let now = at("2026-11-22T00:00:00Z");
    let last_day = now.hour_index() - 24;
    let repo = repo_of(&[
        ("capops.yaml", CONFIG.into()),
        ("prices.yaml", prices()),
        (
            "cluster.yaml",
            cluster(
                "    - {name: p, gpuModel: l4, instanceType: gpu1, gpusPerNode: 1, nodes: 32}\n",
            ),
        ),
        (
            "teams.yaml",
            format!("{}---\n{}", team("a", None), team("b", None)),
        ),
        (
            "usage/c.csv",
            join(
                usage(
                    now,
                    90,
                    "p",
                    "a",
                    move |h| if h >= last_day { 0.0 } else { 10.0 },
                    move |h| if h >= last_day { 0.0 } else { 1.0 },
                ),
                usage(now, 90, "p", "b", |_| 20.0, |_| 15.0),
            ),
        ),
    ]);
    let a = Analysis::new(&repo, now);
    let recs = plan::recommendations(&a);
    let team = recs
        .iter()
        .find(|r| r.kind == plan::RecommendationKind::RightsizeTeam)
        .unwrap_or_else(|| panic!("a is rightsized: {recs:#?}"));
    assert_eq!(team.subject, "a");
    assert!(team.text.contains("→ 2 GPUs"), "{}", team.text);
}

/// A pool `p` of 128 one-GPU nodes, teams `a` and `b`, the requests and
/// the usage.
fn two_teams(requests: &[String], usage_csv: String) -> Repo {
    repo_of(&[
        ("capops.yaml", CONFIG.into()),
        ("prices.yaml", prices()),
        (
            "cluster.yaml",
            cluster(
                "    - {name: p, gpuModel: l4, instanceType: gpu1, gpusPerNode: 1, nodes: 128}\n",
            ),
        ),
        (
            "teams.yaml",
            format!("{}---\n{}", team("a", None), team("b", None)),
        ),
        ("requests.yaml", requests.concat()),
        ("usage/c.csv", usage_csv),
    ])
}

#[test]
fn a_request_that_ends_on_its_own_releases_nothing_after_its_end() {
    // `a` holds 64 under `short` (32, ends in 30 days) and `long` (32, for
    // good) and uses 8: at 70% it needs 12 and releases 52. Rightsizing
    // ends `short` (32) and cuts `long` to 12 (20). `b` holds and uses 32.
    // Before `short` ends the pool needs 96 - 52 = 44; after it, `a` holds
    // 32 without the plan and 12 with it: 64 - 20 = 44. Taking all 52 off
    // after `short`'s end left 12 there and committed 12, not 44.
    let now = at("2026-11-22T00:00:00Z");
    let window = "  window: {start: \"2026-01-01T00:00:00Z\", end: \"2026-12-22T00:00:00Z\"}\n";
    let repo = two_teams(
        &[
            request("short", "a", "p", 32, window),
            request("long", "a", "p", 32, ""),
            request("b", "b", "p", 32, ""),
        ],
        join(
            usage(now, 90, "p", "a", |_| 64.0, |_| 8.0),
            usage(now, 90, "p", "b", |_| 32.0, |_| 32.0),
        ),
    );
    let a = Analysis::new(&repo, now);
    let recs = plan::recommendations(&a);
    let rightsize = recs
        .iter()
        .find(|r| r.kind == plan::RecommendationKind::RightsizeTeam)
        .expect("a is rightsized");
    assert!(
        rightsize
            .changes
            .iter()
            .any(|c| c.contains("`short`: end it")),
        "{:?}",
        rightsize.changes
    );
    let text = recs
        .iter()
        .find(|r| r.kind == plan::RecommendationKind::CommitmentMix)
        .map(|r| r.text.clone())
        .unwrap_or_default();
    assert!(text.contains("44 GPUs 1-year reserved"), "{text}");
}

#[test]
fn a_preemptible_run_that_ends_early_releases_its_share_of_each_hour() {
    // `b` holds and uses 20 for good. `a` holds 30 under a preemptible run
    // that ends in 30 days and uses 2: at 70% it needs 3 and releases 27,
    // 27 of its 30 each hour it runs. Spread over the window's mean
    // preemptible demand (10: 30 for a third of it) the share came to 1,
    // and the plan left nothing of the run; it keeps 3 GPUs on spot for
    // 720 of 2,160 hours, 1 on average.
    let now = at("2026-11-22T00:00:00Z");
    let window = "  preemptible: true\n  window: {start: \"2026-01-01T00:00:00Z\", end: \"2026-12-22T00:00:00Z\"}\n";
    let repo = two_teams(
        &[
            request("run", "a", "p", 30, window),
            request("b", "b", "p", 20, ""),
        ],
        join(
            usage(now, 90, "p", "a", |_| 30.0, |_| 2.0),
            usage(now, 90, "p", "b", |_| 20.0, |_| 20.0),
        ),
    );
    let a = Analysis::new(&repo, now);
    let recs = plan::recommendations(&a);
    let text = recs
        .iter()
        .find(|r| r.kind == plan::RecommendationKind::CommitmentMix)
        .map(|r| r.text.clone())
        .unwrap_or_default();
    assert!(
        text.contains("1 GPUs of preemptible work on spot"),
        "{text}"
    );
}
