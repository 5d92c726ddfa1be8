//! `capops forecast backtest` through the command line: the forecasts CSV,
//! the metrics table, and bad input.

use std::path::PathBuf;

mod common;
use common::Out;

fn run(args: &[&str]) -> Out {
    common::run(args, &[])
}

fn temp(name: &str) -> PathBuf {
    let dir =
        std::env::temp_dir().join(format!("capops-forecast-cli-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Two series over 20 days: a daily cycle split over two columns, and a flat
/// series with a day of missing samples and an empty pending cell.
fn csv() -> String {
    let mut s = String::from("timestamp,series,running,pending\n");
    for h in 0..20 * 24 {
        let ts = format!("2026-01-{:02}T{:02}:00:00Z", 1 + h / 24, h % 24);
        let noise = ((h * 7919) % 13) as f64 / 10.0;
        let cycle =
            30.0 + 10.0 * (2.0 * std::f64::consts::PI * (h % 24) as f64 / 24.0).sin() + noise;
        s.push_str(&format!("{ts},a/cycle,{:.1},2\n", cycle - 2.0));
        if (5 * 24..6 * 24).contains(&h) {
            continue;
        }
        let pending = if h == 300 { String::new() } else { "0".into() };
        s.push_str(&format!("{ts},b/flat,{},{pending}\n", 12 + h % 2));
    }
    s
}

#[test]
fn backtest_writes_forecasts_and_prints_metrics() {
    let dir = temp("ok");
    let data = dir.join("demand.csv");
    std::fs::write(&data, csv()).unwrap();
    let out_csv = dir.join("forecasts.csv");
    let o = run(&[
        "forecast",
        "backtest",
        "--csv",
        data.to_str().unwrap(),
        "--value",
        "running + pending",
        "--horizon",
        "24",
        "--windows",
        "3",
        "--out",
        out_csv.to_str().unwrap(),
    ]);
    assert_eq!(o.code, 0, "{}{}", o.stdout, o.stderr);
    assert!(
        o.stdout.contains("2 series; 3 windows of 24 h, step 24 h"),
        "{}",
        o.stdout
    );
    // The cycle is recovered: with noise alone left, the error is about 0.75 of
    // seasonal naive's (the mean distance of a noise sample from its mean, over
    // that between two samples); a flat forecast would be near 10.
    let cycle_line = o.stdout.lines().find(|l| l.starts_with("a/cycle")).unwrap();
    let mase: f64 = cycle_line
        .split_whitespace()
        .nth(1)
        .unwrap()
        .parse()
        .unwrap();
    assert!(mase.is_finite() && mase < 0.85, "{cycle_line}");
    let text = std::fs::read_to_string(&out_csv).unwrap();
    let mut lines = text.lines();
    assert_eq!(lines.next(), Some("series,cutoff,timestamp,p10,p50,p90"));
    let rows: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
    assert_eq!(rows.len(), 2 * 3 * 24);
    // The last window of each series starts right after its cutoff and ends at the last sample.
    let last_a: Vec<&Vec<&str>> = rows.iter().filter(|r| r[0] == "a/cycle").collect();
    assert_eq!(last_a[last_a.len() - 24][1], "2026-01-19T23:00:00Z");
    assert_eq!(last_a[last_a.len() - 24][2], "2026-01-20T00:00:00Z");
    assert_eq!(last_a.last().unwrap()[2], "2026-01-20T23:00:00Z");
    for r in &rows {
        let (lo, mid, hi): (f64, f64, f64) = (
            r[3].parse().unwrap(),
            r[4].parse().unwrap(),
            r[5].parse().unwrap(),
        );
        assert!(0.0 <= lo && lo <= mid && mid <= hi, "{r:?}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn backtest_rejects_bad_input_with_a_reason() {
    // Exit code 2: the input is invalid.
    let dir = temp("bad");
    let data = dir.join("demand.csv");
    std::fs::write(&data, csv()).unwrap();
    let path = data.to_str().unwrap();
    let o = run(&[
        "forecast",
        "backtest",
        "--csv",
        path,
        "--value",
        "running + nope",
    ]);
    assert_eq!(o.code, 2, "{}", o.stderr);
    assert!(o.stderr.contains("nope"), "{}", o.stderr);
    let o = run(&[
        "forecast",
        "backtest",
        "--csv",
        path,
        "--value",
        "running +",
    ]);
    assert_eq!(o.code, 2, "{}", o.stderr);
    // A division by zero in every row: no value to score, not NaN scores.
    let o = run(&[
        "forecast",
        "backtest",
        "--csv",
        path,
        "--value",
        "running / 0",
    ]);
    assert_eq!(o.code, 2, "{}", o.stderr);
    assert!(
        o.stderr.contains("`running / 0` gives no value in any row"),
        "{}",
        o.stderr
    );
    // More windows than the history holds.
    let o = run(&[
        "forecast",
        "backtest",
        "--csv",
        path,
        "--value",
        "running",
        "--windows",
        "30",
    ]);
    assert_eq!(o.code, 2, "{}", o.stderr);
    assert!(o.stderr.contains("fewer than"), "{}", o.stderr);
    // Cutoffs 0 h apart would score one window seven times; a step so large
    // that the hours needed overflow is still "fewer than", not a panic.
    for (flag, value) in [("--step", "0"), ("--horizon", "0"), ("--windows", "0")] {
        let o = run(&[
            "forecast", "backtest", "--csv", path, "--value", "running", flag, value,
        ]);
        assert_eq!(o.code, 2, "{flag} {value}: {}", o.stderr);
        assert!(o.stderr.contains("must be at least 1"), "{}", o.stderr);
    }
    let o = run(&[
        "forecast",
        "backtest",
        "--csv",
        path,
        "--value",
        "running",
        "--step",
        "4611686018427387904",
    ]);
    assert_eq!(o.code, 2, "{}", o.stderr);
    assert!(o.stderr.contains("fewer than needed"), "{}", o.stderr);
    // A run with errors leaves an existing --out file (an earlier
    // backtest's forecasts, the only kind it replaces) as it was.
    let kept = dir.join("kept.csv");
    let precious = "series,cutoff,timestamp,p10,p50,p90\nprecious\n";
    std::fs::write(&kept, precious).unwrap();
    let o = run(&[
        "forecast",
        "backtest",
        "--csv",
        path,
        "--value",
        "running",
        "--windows",
        "30",
        "--out",
        kept.to_str().unwrap(),
    ]);
    assert_eq!(o.code, 2, "{}", o.stderr);
    assert!(o.stderr.contains("not written"), "{}", o.stderr);
    assert_eq!(std::fs::read_to_string(&kept).unwrap(), precious);
    let o = run(&[
        "forecast",
        "backtest",
        "--csv",
        dir.join("missing.csv").to_str().unwrap(),
        "--value",
        "running",
    ]);
    assert_eq!(o.code, 2, "{}", o.stderr);
    std::fs::write(&data, [0xffu8, 0xfe, 0, 1]).unwrap();
    let o = run(&["forecast", "backtest", "--csv", path, "--value", "running"]);
    assert_eq!(o.code, 2, "{}", o.stderr);
    assert!(o.stderr.contains("not UTF-8"), "{}", o.stderr);
    let _ = std::fs::remove_dir_all(&dir);
}
