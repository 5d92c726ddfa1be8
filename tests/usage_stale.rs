//! `check` and `report` say when the usage history is stale, on the bundled
//! example (its usage ends at 2026-11-22T00:00:00Z; the threshold is 48 hours).

mod common;

use common::{example, run};

fn stale_codes(stderr: &str) -> usize {
    stderr.matches("usage-stale").count()
}

#[test]
fn fresh_usage_says_nothing_and_old_usage_is_a_warning_per_cluster() {
    let ex = example();
    let fresh = run(&["report", &ex, "--at", "2026-11-24T00:00:00Z"], &[]);
    assert_eq!(fresh.code, 0, "{}", fresh.stderr);
    assert_eq!(stale_codes(&fresh.stderr), 0, "{}", fresh.stderr);

    let old = run(&["report", &ex, "--at", "2026-11-24T01:00:00Z"], &[]);
    assert_eq!(old.code, 0, "{}", old.stderr);
    // One per cluster with usage: infer-l4, prod-h100, train-a100.
    assert_eq!(stale_codes(&old.stderr), 3, "{}", old.stderr);

    let check = run(
        &["check", &ex, "--at", "2026-12-01", "--format", "json"],
        &[],
    );
    assert_eq!(check.code, 1, "{}", check.stderr);
    let v: serde_json::Value = serde_json::from_str(&check.stdout).unwrap();
    let stale: Vec<&serde_json::Value> = v["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| d["code"] == "usage-stale")
        .collect();
    assert_eq!(stale.len(), 3);
    assert_eq!(stale[0]["severity"], "warning");
    assert!(
        stale.iter().any(|d| d["message"]
            .as_str()
            .unwrap()
            .starts_with("usage of cluster `prod-h100` ends at 2026-11-22T00:00:00Z, 9 days before 2026-12-01T00:00:00Z")),
        "{stale:?}"
    );
}

#[test]
fn stale_usage_raised_to_an_error_stops_check_and_report() {
    let dir = tempfile::tempdir().unwrap();
    let copy = dir.path().join("acme");
    copy_dir(std::path::Path::new(&example()), &copy);
    let config = copy.join("capops.yaml");
    let text = std::fs::read_to_string(&config).unwrap();
    std::fs::write(
        &config,
        format!(
            "{}  severities: {{usage-stale: error}}\n",
            text.replace("  usage:\n", "  usage:\n    staleAfterHours: 24\n")
        ),
    )
    .unwrap();
    let path = copy.display().to_string();
    let ok = run(
        &[
            "check",
            &path,
            "--at",
            "2026-11-22T12:00:00Z",
            "--fail-on",
            "never",
        ],
        &[],
    );
    assert_eq!(ok.code, 0, "{}", ok.stderr);
    let check = run(
        &[
            "check",
            &path,
            "--at",
            "2026-11-23T01:00:00Z",
            "--fail-on",
            "never",
        ],
        &[],
    );
    assert_eq!(check.code, 2, "{}", check.stderr);
    let report = run(&["report", &path, "--at", "2026-11-23T01:00:00Z"], &[]);
    assert_eq!(report.code, 2);
    assert!(
        report.stderr.contains("error: the usage history is stale"),
        "{}",
        report.stderr
    );
    assert!(report.stdout.is_empty());
}

fn copy_dir(from: &std::path::Path, to: &std::path::Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let target = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &target);
        } else {
            std::fs::copy(e.path(), target).unwrap();
        }
    }
}
