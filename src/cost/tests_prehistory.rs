//! Reservations whose terms reach back before the usage history: the hours
//! before the first measurement count at the measured hours' demand, in
//! the utilization and in the count suggested alike, and a term wholly
//! before the history is judged on the first week measured.

use super::reservation::suggest;
use super::tests::{CONFIG, at, cluster, prices, repo_of, team, usage, wobble};
use super::*;

#[test]
fn a_term_wholly_before_the_history_is_judged_on_the_first_week_measured() {
    let now = at("2026-11-22T00:00:00Z");
    let pool = "    - {name: a100, gpuModel: a100-40gb, instanceType: p4d.24xlarge, gpusPerNode: 8, nodes: 10,\n       purchase: {reserved: 10}}\n";
    // 10 x p4d (80 GPUs) from 2026-06-01 to 2026-09-01; usage from
    // 2026-09-23 on, at 40 GPUs (half of it).
    let reservation = r#"apiVersion: capops.dev/v1alpha1
kind: Reservation
metadata: {name: earlier}
spec:
  provider: aws
  type: aws-capacity-reservation
  region: us-east-2
  zone: us-east-2a
  instanceType: p4d.24xlarge
  count: 10
  term: {start: 2026-06-01, end: 2026-09-01}
  hourlyPrice: 14.00
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
                |h| 40.0 + wobble(h),
                |h| 30.0 + wobble(h),
            ),
        ),
    ]);
    let a = Analysis::new(&repo, now);
    let r = a.reservation("earlier").expect("an analysis");
    assert_eq!(r.hours_measured, 0);
    // Half used, not 0% (all of it stranded).
    assert!(
        (r.utilization_p50 - 0.5).abs() < 0.02,
        "{}",
        r.utilization_p50
    );
    assert!(
        (r.stranded_share - 0.5).abs() < 0.02,
        "{}",
        r.stranded_share
    );
    // 6 instances (48 GPUs) at 40 leave 17% idle; 7 would leave 29%.
    assert_eq!(r.suggested_count, 6);
}

#[test]
fn hours_before_the_history_weigh_in_the_count_suggested_as_in_the_utilization() {
    // Ten measured hours at 40 GPUs, ten forecast at 80; instances of 8 GPUs,
    // at most 20% idle. Over the known hours alone, 8 instances (64 GPUs)
    // leave 18.75% idle. With 100 hours before the history counted at the
    // measured hours' 40, 8 leave 34% idle, 7 leave 26%, 6 leave 15%.
    let left: Vec<f64> = [[40.0; 10], [80.0; 10]].concat();
    assert_eq!(suggest(&left, 10, 0, 8.0, 10, 0.2), 8);
    assert_eq!(suggest(&left, 10, 100, 8.0, 10, 0.2), 6);
    // No measured hours: the known hours' demand stands for them.
    assert_eq!(suggest(&[40.0; 20], 0, 100, 8.0, 10, 0.2), 6);
}

#[test]
fn hours_before_the_history_are_shared_only_with_the_reservations_in_force_then() {
    // `old`: 2 p4d (16 GPUs) from 2026-01-01; `new`: 2 more from
    // 2026-10-01, both to 2027-01-01. Usage from 2026-09-23 (60 days to
    // `now`), 16 GPUs throughout. While both run, 16 are shared among 32:
    // each half used. Before `new` began, `old` served all 16: its hours
    // before the history (January to September 23) are full, not half.
    let now = at("2026-11-22T00:00:00Z");
    let pool = "    - {name: a100, gpuModel: a100-40gb, instanceType: p4d.24xlarge, gpusPerNode: 8, nodes: 4,\n       purchase: {reserved: 4}}\n";
    let reservation = |name: &str, start: &str| {
        format!(
            "apiVersion: capops.dev/v1alpha1\nkind: Reservation\nmetadata: {{name: {name}}}\nspec:\n  provider: aws\n  type: aws-capacity-reservation\n  region: us-east-2\n  zone: us-east-2a\n  instanceType: p4d.24xlarge\n  count: 2\n  term: {{start: {start}, end: 2027-01-01}}\n  hourlyPrice: 14.00\n  covers: {{cluster: c, pool: a100}}\n---\n"
        )
    };
    let repo = repo_of(&[
        ("capops.yaml", CONFIG.into()),
        ("prices.yaml", prices()),
        ("cluster.yaml", cluster(pool)),
        ("team.yaml", team("research", None)),
        (
            "reservations.yaml",
            reservation("old", "2026-01-01") + &reservation("new", "2026-10-01"),
        ),
        (
            "usage/c.csv",
            usage(now, 60, "a100", "research", |_| 16.0, |_| 12.0),
        ),
    ]);
    let a = Analysis::new(&repo, now);
    let r = a.reservation("old").expect("an analysis");
    // Term: 8,760 hours. Before the history (2026-01-01 to 09-23): 6,360
    // hours, full. Measured 09-23 to 10-01: 192 hours, full (alone). From
    // 10-01 on: 2,208 hours, half. Used: (6,360 + 192 + 1,104) / 8,760.
    let want = (6360.0 + 192.0 + 1104.0) / 8760.0;
    assert!(
        (r.utilization_p50 - want).abs() < 0.005,
        "{} vs {want}",
        r.utilization_p50
    );
}
