//! The backtest's CSV reading, value expressions and rolling windows.

use super::*;

#[test]
fn value_expressions_combine_columns() {
    let e = Expr::parse("running_gpus + pending_gpus * 2 - (1)").unwrap();
    let cell = |c: &str| match c {
        "running_gpus" => Some(10.0),
        "pending_gpus" => Some(3.0),
        _ => None,
    };
    assert_eq!(e.eval(&cell), Some(15.0));
    let gap = |c: &str| if c == "running_gpus" { Some(1.0) } else { None };
    assert_eq!(e.eval(&gap), None);
    assert!(Expr::parse("a +").is_err());
    assert!(Expr::parse("a ; drop").is_err());
    assert!(Expr::parse("(a").is_err());
    // Deep nesting and long chains are refused before they recurse.
    let deep = format!("{}a{}", "(".repeat(15_000), ")".repeat(15_000));
    assert!(Expr::parse(&deep).unwrap_err().contains("at most 512"));
    assert!(Expr::parse(&"-".repeat(60_000)).is_err());
    let long = vec!["a"; 300].join(" + ");
    assert!(Expr::parse(&long).unwrap_err().contains("599 parts"));
    let fine = vec!["a"; 200].join(" + ");
    // Two rows twenty years apart in each of 300 series: 52 million hours.
    let mut text = String::from("timestamp,series,v\n");
    for i in 0..300 {
        text.push_str(&format!(
            "2000-01-01T00:00:00Z,s{i},1\n2019-12-31T23:00:00Z,s{i},2\n"
        ));
    }
    let e = read_csv(
        &text,
        "timestamp",
        Some("series"),
        &Expr::parse("v").unwrap(),
    )
    .unwrap_err();
    assert!(e.contains("more than 5000000 hours together"), "{e}");
    assert!(Expr::parse(&fine).is_ok());
}

#[test]
fn csv_series_are_put_on_an_hourly_grid_with_gaps() {
    let text = "timestamp,series,a,b\n2020-05-01T00:00:00Z,x,1,1\n2020-05-01T01:00:00Z,x,,1\n2020-05-01T03:00:00Z,x,2,2\n2020-05-01T00:00:00Z,y,5,0\n";
    let s = read_csv(
        text,
        "timestamp",
        Some("series"),
        &Expr::parse("a + b").unwrap(),
    )
    .unwrap();
    assert_eq!(s.len(), 2);
    assert_eq!(s[0].name, "x");
    assert_eq!(s[0].values, vec![Some(2.0), None, None, Some(4.0)]);
    assert!(
        read_csv(
            text,
            "timestamp",
            Some("series"),
            &Expr::parse("c").unwrap()
        )
        .unwrap_err()
        .contains("no column `c`")
    );
}

/// A mistyped year, or a value that overflows, is refused by row, not
/// read as millions of empty hours or as infinity.
#[test]
fn mistyped_years_and_overflowing_values_are_refused() {
    let text = "timestamp,a\n2020-05-01T00:00:00Z,1\n0001-05-01T01:00:00Z,2\n";
    let e = read_csv(text, "timestamp", None, &Expr::parse("a").unwrap()).unwrap_err();
    assert!(
        e.contains("mistyped date") && e.contains("0001-05-01"),
        "{e}"
    );
    let text = "timestamp,a\n2020-05-01T00:00:00Z,1e308\n";
    let e = read_csv(text, "timestamp", None, &Expr::parse("a * 10").unwrap()).unwrap_err();
    assert!(
        e.contains("row 2") && e.contains("not a number within"),
        "{e}"
    );
    // Finite, but past what the metrics can sum.
    let text = "timestamp,a\n2020-05-01T00:00:00Z,1\n2020-05-01T01:00:00Z,1e308\n";
    let e = read_csv(text, "timestamp", None, &Expr::parse("a").unwrap()).unwrap_err();
    assert!(
        e.contains("row 3") && e.contains("not a number within"),
        "{e}"
    );
}

#[test]
fn one_hour_of_a_series_has_one_value() {
    let expr = Expr::parse("a").unwrap();
    // The same row twice is one.
    let text = "timestamp,series,a\n2020-05-01T00:00:00Z,x,1\n2020-05-01T00:00:00Z,x,1\n2020-05-01T01:00:00Z,x,2\n";
    let s = read_csv(text, "timestamp", Some("series"), &expr).unwrap();
    assert_eq!(s[0].values, vec![Some(1.0), Some(2.0)]);
    // Another value for an hour (or a half hour later) is refused, naming both rows.
    for second in ["2020-05-01T00:00:00Z,x,7", "2020-05-01T00:30:00Z,x,7"] {
        let text = format!("timestamp,series,a\n2020-05-01T00:00:00Z,x,1\n{second}\n");
        let e = read_csv(&text, "timestamp", Some("series"), &expr).unwrap_err();
        assert!(
            e.starts_with("row 3: series `x`")
                && e.contains("at row 2")
                && e.contains("1 there, 7 here"),
            "{e}"
        );
    }
    // Another series may have the same hour.
    let text = "timestamp,series,a\n2020-05-01T00:00:00Z,x,1\n2020-05-01T00:00:00Z,y,7\n";
    assert_eq!(
        read_csv(text, "timestamp", Some("series"), &expr)
            .unwrap()
            .len(),
        2
    );
}

#[test]
fn metrics_follow_the_conventions() {
    // Training: a 24 h season that changes by 2 each day: seasonal-naive MAE 2.
    let train: Vec<Option<f64>> = (0..48)
        .map(|i| Some(if i < 24 { 10.0 } else { 12.0 }))
        .collect();
    let actual = vec![Some(14.0), Some(10.0), None];
    let f = Forecast {
        p10: vec![11.0, 11.0, 0.0],
        p50: vec![12.0, 12.0, 0.0],
        p90: vec![15.0, 13.0, 0.0],
        method: "test".into(),
        fallback: None,
        validation_mae: None,
    };
    let m = metrics(&train, &actual, &f);
    assert!((m.mase - 1.0).abs() < 1e-12, "{m:?}"); // MAE 2 over scale 2
    assert!((m.smape - (2.0 / 26.0 + 2.0 / 22.0) / 2.0).abs() < 1e-12);
    assert!((m.coverage - 0.5).abs() < 1e-12);
    // Pinball at 0.5 is half the absolute error.
    assert!((m.pinball50 - 0.5).abs() < 1e-12);
}

#[test]
fn a_column_the_header_names_twice_is_refused() {
    let text = "timestamp,v,v\n2026-01-01T00:00:00Z,1,1000\n";
    let e = read_csv(text, "timestamp", None, &Expr::parse("v").unwrap()).unwrap_err();
    assert!(
        e.contains("names column `v` twice (columns 2 and 3)"),
        "{e}"
    );
    // Nor the default `series` column (absent, it means one series).
    let text = "timestamp,series,v,series\n2026-01-01T00:00:00Z,a,1,b\n";
    let e = read_csv(
        text,
        "timestamp",
        Some("series"),
        &Expr::parse("v").unwrap(),
    )
    .unwrap_err();
    assert!(e.contains("names column `series` twice"), "{e}");
    // A duplicated column nobody reads is no matter.
    let text = "timestamp,v,x,x\n2026-01-01T00:00:00Z,1,2,3\n";
    assert!(read_csv(text, "timestamp", None, &Expr::parse("v").unwrap()).is_ok());
}
