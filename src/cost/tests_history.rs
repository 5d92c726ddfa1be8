//! Long usage history: forecasts that read only the Config's
//! `usage.hourlyDays`, and the long-range facts (the history's length, the
//! report's months) that read every day either way.

use super::tests::{CONFIG, at, cluster, repo_of, team, usage, validated};
use super::*;

const POOL: &str = "    - {name: a100, gpuModel: a100-40gb, instanceType: p4d.24xlarge, gpusPerNode: 8, nodes: 30}\n";

/// 400 days ending at 2026-11-22: 200 GPUs allocated (100 busy) for 300
/// days, then 40 (20 busy) for the last 100; a one-year reservation.
fn files(config: &str) -> Vec<(&'static str, String)> {
    let now = at("2026-11-22T00:00:00Z");
    let shift = now.hour_index() - 100 * 24;
    let level = move |h: i64| if h < shift { 200.0 } else { 40.0 };
    let reservation = r#"apiVersion: capops.dev/v1alpha1
kind: Reservation
metadata: {name: one-year}
spec:
  provider: aws
  type: aws-capacity-reservation
  zone: us-east-2a
  region: us-east-2
  instanceType: p4d.24xlarge
  count: 5
  term: {start: "2026-11-22T00:00:00Z", end: "2027-11-22T00:00:00Z"}
  hourlyPrice: 9.60
  covers: {cluster: c, pool: a100}
"#;
    vec![
        ("capops.yaml", config.to_string()),
        ("prices.yaml", super::tests::prices()),
        ("cluster.yaml", cluster(POOL)),
        ("team.yaml", team("steady", None)),
        ("reservation.yaml", reservation.to_string()),
        (
            "usage/c.csv",
            usage(now, 400, "a100", "steady", level, move |h| level(h) / 2.0),
        ),
    ]
}

const WINDOWED: &str = "apiVersion: capops.dev/v1alpha1\nkind: Config\nmetadata: {name: t}\nspec:\n  usage: {hourlyDays: 60}\n";

#[test]
fn forecasts_read_the_window_and_long_range_facts_read_every_day() {
    let now = at("2026-11-22T00:00:00Z");
    let all = repo_of(&files(CONFIG));
    let windowed = repo_of(&files(WINDOWED));
    let (a, w) = (Analysis::new(&all, now), Analysis::new(&windowed, now));

    // Both outlooks keep all 400 days as measured; the windowed one's
    // forecast is fitted on the last 60 days up to the end of the last
    // measured day (the last hour is 23:00 on 2026-11-21).
    let (oa, ow) = (
        a.outlook("c", "a100").unwrap(),
        w.outlook("c", "a100").unwrap(),
    );
    let first = now.hour_index() - 400 * 24;
    assert_eq!((oa.history.start, ow.history.start), (first, first));
    assert_eq!(oa.forecast_start, ow.forecast_start);
    let horizon = ow.forecast.p50.len();
    let values: Vec<Option<f64>> = oa.history.values().collect();
    let window = &values[340 * 24..];
    assert_eq!(window.len(), 60 * 24);
    assert_eq!(ow.forecast, crate::forecast::hourly(window, horizon));
    assert_eq!(oa.forecast, crate::forecast::hourly(&values, horizon));
    assert_ne!(
        oa.forecast, ow.forecast,
        "the 300 days at 200 GPUs move the long forecast"
    );
    // Hours before the window still read as measured (a reservation's past
    // hours, charts, the lookback).
    let old = ow.at(first + 10 * 24).unwrap();
    assert!(old.measured && old.p50 == 200.0, "{old:?}");
    assert_eq!(oa.at(first + 10 * 24), ow.at(first + 10 * 24));
    // The history's length is all of it either way, so a term is judged on
    // the same support (400 days support 800 ahead).
    assert_eq!(
        (oa.history_hours(), ow.history_hours()),
        (400 * 24, 400 * 24)
    );
    let (ra, rw) = (
        a.reservation("one-year").unwrap(),
        w.reservation("one-year").unwrap(),
    );
    assert_eq!(ra.history_hours, rw.history_hours);
    assert_eq!(rw.supported_until, now.hour_index() + 800 * 24);
    assert!(ra.term_supported && rw.term_supported);
    // A team's outlook reads the same window.
    let s = &w.team_series["steady"][0];
    let team = w.team_outlook(s).unwrap();
    assert_eq!(team.history.hours(), 400 * 24);
    assert_eq!(
        team.forecast,
        crate::forecast::hourly(window, team.forecast.p50.len())
    );

    // The months are the same whatever the window: daily roll-ups of
    // every hour. 2025-11 is all at 200 (100 busy), 2026-10 at 40.
    let (ha, hw) = (history::build(&a), history::build(&w));
    assert_eq!(
        ha.iter().map(|h| &h.months).collect::<Vec<_>>(),
        hw.iter().map(|h| &h.months).collect::<Vec<_>>()
    );
    let h = &hw[0];
    assert_eq!((h.cluster.as_str(), h.pool.as_str()), ("c", "a100"));
    assert_eq!(
        (h.first_day.as_str(), h.last_day.as_str()),
        ("2025-10-18", "2026-11-21")
    );
    assert_eq!(h.days, 400);
    assert_eq!((ha[0].hourly_days, h.hourly_days), (None, Some(60)));
    let month = |m: &str| h.months.iter().find(|x| x.month == m).unwrap();
    let nov = month("2025-11");
    assert_eq!((nov.days, nov.allocated_mean), (30, 200.0));
    assert_eq!((nov.used_mean, nov.utilization), (Some(100.0), Some(0.5)));
    let oct = month("2026-10");
    assert_eq!((oct.allocated_mean, oct.busiest_day), (40.0, 40.0));
    // August 2026 shifts on the 14th: 13 days at 200, 18 at 40.
    let aug = month("2026-08");
    assert_eq!(
        aug.allocated_mean,
        ((13.0 * 200.0 + 18.0 * 40.0) / 31.0 * 1000.0_f64).round() / 1000.0
    );
    assert_eq!(aug.busiest_day, 200.0);
    // Days from `at` on are not history yet.
    let earlier = Analysis::new(&windowed, at("2026-11-01T12:00:00Z"));
    assert_eq!(history::build(&earlier)[0].last_day, "2026-11-01");
}

#[test]
fn the_window_is_at_least_35_days() {
    let config = WINDOWED.replace("hourlyDays: 60", "hourlyDays: 20");
    let mut f = files(&config);
    f.truncate(1);
    let out = validated(&f);
    let errors: Vec<String> = out
        .diagnostics
        .iter()
        .filter(|d| d.is_error())
        .map(|d| d.message.clone())
        .collect();
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert!(errors[0].contains("35"), "{errors:?}");
}

/// A pool's November: team `a` 8 allocated (4 busy) and `b` 8 (8 busy)
/// every hour from 2026-10-23 to 2026-11-21, each row as `edit` leaves it
/// (`None`: left out).
fn two_teams(edit: impl Fn(&str) -> Option<String>) -> history::MonthRow {
    let now = at("2026-11-22T00:00:00Z");
    let csv = super::tests_finops::join(
        usage(now, 30, "a100", "a", |_| 8.0, |_| 4.0),
        usage(now, 30, "a100", "b", |_| 8.0, |_| 8.0),
    );
    let csv: String = csv
        .lines()
        .filter_map(edit)
        .map(|l| format!("{l}\n"))
        .collect();
    let repo = repo_of(&[
        ("capops.yaml", CONFIG.to_string()),
        ("prices.yaml", super::tests::prices()),
        ("cluster.yaml", cluster(POOL)),
        (
            "team.yaml",
            format!("{}---\n{}", team("a", None), team("b", None)),
        ),
        ("usage/c.csv", csv),
    ]);
    let a = Analysis::new(&repo, now);
    let h = history::build(&a);
    h[0].months
        .iter()
        .find(|m| m.month == "2026-11")
        .unwrap()
        .clone()
}

#[test]
fn a_day_one_team_was_not_measured_is_left_out_not_a_drop() {
    // Every hour: 16 allocated, 12 busy (75%) over 21 November days.
    let all = two_teams(|l| Some(l.to_string()));
    assert_eq!((all.days, all.allocated_mean), (21, 16.0));
    assert_eq!(all.used_mean, Some(12.0));
    // `b` has no row on 2026-11-10: the pool's day would read 8 allocated;
    // it is a gap, so the month is 20 days of 16 (not (20 x 16 + 8) / 21).
    let gap =
        two_teams(|l| (!(l.starts_with("2026-11-10") && l.contains(",b,"))).then(|| l.to_string()));
    assert_eq!((gap.days, gap.allocated_mean), (20, 16.0));
    assert_eq!(gap.used_mean, Some(12.0));
    assert_eq!(gap.utilization, Some(0.75));
}

#[test]
fn utilization_weighs_team_hours_not_days() {
    // `b` idles one hour (used 0 at 04:00 on 2026-11-14) and has no rows
    // from 05:00 to the end of that day (the day is still measured: five
    // hours). Team-hours measured in November: a 504, b 485. Busy:
    // a 504 x 4 + b 484 x 8 = 5,888 of 504 x 8 + 485 x 8 = 7,912 allocated:
    // 0.744; weighing the five-hour day as a whole one gave 0.745.
    let nov = two_teams(|l| {
        let b14 = l.contains(",b,") && l.starts_with("2026-11-14T");
        match l.get(11..13).and_then(|h| h.parse::<u32>().ok()) {
            Some(h) if b14 && h >= 5 => None,
            Some(4) if b14 => Some(format!("{},0", l.rsplit_once(',').unwrap().0)),
            _ => Some(l.to_string()),
        }
    });
    assert_eq!(nov.utilization, Some(0.744), "{nov:?}");
}

#[test]
fn a_past_moment_forecasts_from_the_history_it_had_then() {
    // Sixty days of usage ending 2026-11-22; as of 2026-10-23 (thirty days
    // in) the outlook has thirty days of history, starts forecasting there,
    // and says so: what was measured after `--at` is not read.
    use super::tests::{CONFIG, at, cluster, prices, repo_of, team, usage};
    let end = at("2026-11-22T00:00:00Z");
    let pool = "    - {name: a100, gpuModel: a100-40gb, instanceType: p4d.24xlarge, gpusPerNode: 8, nodes: 30}\n";
    let repo = repo_of(&[
        ("capops.yaml", CONFIG.into()),
        ("prices.yaml", prices()),
        ("cluster.yaml", cluster(pool)),
        ("team.yaml", team("t", None)),
        (
            "usage/c.csv",
            usage(end, 60, "a100", "t", |_| 100.0, |_| 50.0),
        ),
    ]);
    let then = at("2026-10-23T00:00:00Z");
    let past = super::Analysis::new(&repo, then);
    let o = past.outlook("c", "a100").unwrap();
    assert_eq!(o.forecast_start, then.hour_index());
    assert_eq!(o.history_hours(), 30 * 24);
    let now = super::Analysis::new(&repo, end);
    assert_eq!(now.outlook("c", "a100").unwrap().history_hours(), 60 * 24);
}
