//! The pure parts of the pull, without HTTP: answers to rows (the history,
//! targets, queries and staleness are in `history_tests.rs`), and the
//! fixtures both use.

use super::matrix::Series;
use super::rows::{self, Answers, Attribution, Row};
use crate::load::{Content, Input};
use crate::model::Repo;
use std::collections::BTreeSet;

pub(super) fn repo_of(files: &[(&str, &str)]) -> Repo {
    let inputs = files
        .iter()
        .map(|(p, t)| Input {
            path: p.to_string(),
            content: Content::Bytes(t.as_bytes().to_vec()),
        })
        .collect();
    let out = crate::validate::validate(crate::load::load(inputs, None));
    let errors: Vec<_> = out.diagnostics.iter().filter(|d| d.is_error()).collect();
    assert!(errors.is_empty(), "{errors:#?}");
    out.repo
}

pub(super) const CONFIG: &str =
    "apiVersion: capops.dev/v1alpha1\nkind: Config\nmetadata: {name: t}\nspec: {}\n";

pub(super) const CLUSTER: &str = r#"apiVersion: capops.dev/v1alpha1
kind: Cluster
metadata: {name: c}
spec:
  environment: research
  provider: onprem
  nodePools:
    - name: gpu
      gpuModel: a100-80gb
      gpusPerNode: 8
      nodes: 2
      nodeLabels: {example.com/pool: gpu}
    - name: mig
      gpuModel: h100-80gb-sxm
      gpusPerNode: 8
      nodes: 1
      nodeLabels: {example.com/pool: mig}
      mig: {layout: {3g.40gb: 1, 2g.20gb: 1, 1g.10gb: 2}}
    - name: shared
      gpuModel: l4
      gpusPerNode: 1
      nodes: 1
      nodeLabels: {example.com/pool: shared}
      timeSlicing: {replicas: 4}
    - name: bare
      gpuModel: l4
      gpusPerNode: 1
      nodes: 1
"#;

pub(super) fn team(name: &str, namespace: &str) -> String {
    format!(
        "apiVersion: capops.dev/v1alpha1\nkind: Team\nmetadata: {{name: {name}}}\nspec:\n  costCenter: CC\n  clusters:\n    c: {{namespace: {namespace}}}\n"
    )
}

pub(super) fn repo() -> Repo {
    let ml = team("ml", "ml");
    let cv = team("cv", "cv-prod");
    repo_of(&[
        ("capops.yaml", CONFIG),
        ("c.yaml", CLUSTER),
        ("ml.yaml", &ml),
        ("cv.yaml", &cv),
    ])
}

/// Hours counted from this one in the tests.
pub(super) const H0: i64 = 500_000;

pub(super) fn series(labels: &[(&str, &str)], points: &[(i64, f64)]) -> Series {
    Series {
        labels: labels
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
        // The value describing hour h is evaluated at the end of h.
        points: points
            .iter()
            .map(|&(h, v)| ((H0 + h + 1) * 3600, v))
            .collect(),
    }
}

pub(super) fn node(name: &str, pool: &str, hours: &[i64]) -> Series {
    let pts: Vec<(i64, f64)> = hours.iter().map(|&h| (h, 1.0)).collect();
    series(
        &[
            ("node", name),
            ("label_example_com_pool", pool),
            ("label_other", "x"),
        ],
        &pts,
    )
}

pub(super) fn alloc(ns: &str, node: &str, resource: &str, hours: &[i64], v: f64) -> Series {
    let pts: Vec<(i64, f64)> = hours.iter().map(|&h| (h, v)).collect();
    series(
        &[("namespace", ns), ("node", node), ("resource", resource)],
        &pts,
    )
}

pub(super) fn used(ns: &str, node: &str, profile: &str, hours: &[i64], v: f64) -> Series {
    let pts: Vec<(i64, f64)> = hours.iter().map(|&h| (h, v)).collect();
    let mut labels = vec![("namespace", ns), ("node", node)];
    if !profile.is_empty() {
        labels.push(("profile", profile));
    }
    series(&labels, &pts)
}

pub(super) fn row(h: i64, pool: &str, team: &str, a: Option<f64>, u: Option<f64>) -> Row {
    Row {
        hour: H0 + h,
        pool: pool.into(),
        team: team.into(),
        allocated: a,
        used: u,
    }
}

#[test]
fn answers_become_hourly_rows_per_pool_and_team_with_gaps_and_mig_equivalents() {
    let repo = repo();
    let attr = Attribution::new(&repo, "c").unwrap();
    let measured = [0, 1, 2, 4];
    let answers = Answers {
        nodes: vec![
            node("n1", "gpu", &measured),
            node("n2", "mig", &measured),
            node("cpu1", "cpu", &measured),
        ],
        allocated: vec![
            alloc("ml", "n1", "nvidia_com_gpu", &measured, 4.0),
            // 2 × 1g.10gb and 1 × 3g.40gb on an H100: 2/7 + 3/7 of a GPU.
            alloc("cv-prod", "n2", "nvidia_com_mig_1g_10gb", &measured, 2.0),
            alloc("cv-prod", "n2", "nvidia_com_mig_3g_40gb", &measured, 1.0),
            alloc("batch", "n1", "nvidia_com_gpu", &measured, 1.0),
            alloc("ml", "cpu1", "nvidia_com_gpu", &[0], 2.0),
        ],
        used: vec![
            used("ml", "n1", "", &measured, 3.5),
            // A 1g instance 70% busy is 0.1 of a GPU; two of them 0.2.
            used("cv-prod", "n2", "1g.10gb", &measured, 1.4),
            used("", "n1", "", &measured, 0.0),
            used("gpu-operator", "n1", "", &measured, 0.3),
        ],
    };
    let (rows, stats) = rows::build(&attr, &answers, (H0, H0 + 7), &BTreeSet::new(), false);
    let mut want = Vec::new();
    for h in 0..5 {
        let m = h != 3;
        let v = |x: f64| m.then_some(x);
        want.push(row(h, "gpu", "ml", v(4.0), v(3.5)));
        want.push(row(h, "mig", "cv", v(0.71), v(0.2)));
    }
    assert_eq!(rows, want);
    assert_eq!(stats.hours, 5);
    assert_eq!(stats.gap_hours, 1);
    assert_eq!(stats.trailing_unmeasured_hours, 2);
    assert_eq!(stats.series, 2);
    assert_eq!(stats.pools_without_labels, vec!["bare".to_string()]);
    let unattributed: Vec<(&str, f64)> = stats
        .unattributed
        .iter()
        .map(|(k, v)| (k.as_str(), *v))
        .collect();
    assert_eq!(
        unattributed,
        vec![
            ("namespace `batch` belongs to no Team in this cluster", 4.0),
            ("node `cpu1` matches no pool's nodeLabels", 2.0),
        ]
    );
}

#[test]
fn time_sliced_replicas_and_undeclared_profiles_count_as_fractions() {
    let repo = repo();
    let attr = Attribution::new(&repo, "c").unwrap();
    let answers = Answers {
        nodes: vec![node("s1", "shared", &[0]), node("n2", "mig", &[0])],
        allocated: vec![
            alloc("ml", "s1", "nvidia_com_gpu", &[0], 2.0),
            // 7g.80gb is not in the pool's layout: counted as 7/7, reported.
            alloc("cv-prod", "n2", "nvidia_com_mig_7g_80gb", &[0], 1.0),
        ],
        used: vec![],
    };
    let (rows, stats) = rows::build(&attr, &answers, (H0, H0 + 1), &BTreeSet::new(), false);
    assert_eq!(
        rows,
        vec![
            row(0, "mig", "cv", Some(1.0), None),
            row(0, "shared", "ml", Some(0.5), None),
        ]
    );
    assert_eq!(
        stats.undeclared_resources.into_iter().collect::<Vec<_>>(),
        vec!["nvidia_com_mig_7g_80gb on mig".to_string()]
    );
}

#[test]
fn nodes_are_counted_to_the_pool_they_were_in_that_hour() {
    let repo = repo();
    let attr = Attribution::new(&repo, "c").unwrap();
    let answers = Answers {
        nodes: vec![node("n1", "gpu", &[0]), node("n1", "shared", &[1])],
        allocated: vec![alloc("ml", "n1", "nvidia_com_gpu", &[0, 1], 4.0)],
        used: vec![],
    };
    let (rows, _) = rows::build(&attr, &answers, (H0, H0 + 2), &BTreeSet::new(), false);
    assert_eq!(
        rows,
        vec![
            row(0, "gpu", "ml", Some(4.0), None),
            row(0, "shared", "ml", Some(0.0), None),
            row(1, "gpu", "ml", Some(0.0), None),
            row(1, "shared", "ml", Some(1.0), None),
        ]
    );
}

#[test]
fn used_above_allocated_is_lowered_and_counted() {
    let repo = repo();
    let attr = Attribution::new(&repo, "c").unwrap();
    let answers = Answers {
        nodes: vec![node("n1", "gpu", &[0])],
        allocated: vec![alloc("ml", "n1", "nvidia_com_gpu", &[0], 1.0)],
        used: vec![used("ml", "n1", "", &[0], 1.25)],
    };
    let (rows, stats) = rows::build(&attr, &answers, (H0, H0 + 1), &BTreeSet::new(), false);
    assert_eq!(rows, vec![row(0, "gpu", "ml", Some(1.0), Some(1.0))]);
    assert_eq!(stats.clamped, 1);
}

#[test]
fn a_value_that_is_not_a_number_leaves_its_cell_unknown_not_zero() {
    // ml's allocation on n1 is NaN in hour 1: ml's gpu cell is empty there
    // (not 1.0, the sum without it, nor 0), cv's cell and the used column
    // stay known, and the point is counted.
    let repo = repo();
    let attr = Attribution::new(&repo, "c").unwrap();
    let mut ml = alloc("ml", "n1", "nvidia_com_gpu", &[0, 1], 2.0);
    ml.points[1].1 = f64::NAN;
    let answers = Answers {
        nodes: vec![node("n1", "gpu", &[0, 1]), node("n2", "gpu", &[0, 1])],
        allocated: vec![
            ml,
            alloc("ml", "n2", "nvidia_com_gpu", &[0, 1], 1.0),
            alloc("cv-prod", "n2", "nvidia_com_gpu", &[0, 1], 3.0),
            alloc("unknown-ns", "n2", "nvidia_com_gpu", &[1], f64::NAN),
        ],
        used: vec![used("ml", "n1", "", &[0, 1], f64::NAN)],
    };
    let (rows, stats) = rows::build(&attr, &answers, (H0, H0 + 2), &BTreeSet::new(), false);
    assert_eq!(
        rows,
        vec![
            row(0, "gpu", "cv", Some(3.0), Some(0.0)),
            row(0, "gpu", "ml", Some(3.0), None),
            row(1, "gpu", "cv", Some(3.0), Some(0.0)),
            row(1, "gpu", "ml", None, None),
        ]
    );
    assert_eq!(stats.unknown_values, 4);
    assert!(stats.unattributed.is_empty(), "{:?}", stats.unattributed);
}

#[test]
fn history_decides_whether_leading_silence_is_a_gap_and_endings_get_zeros() {
    let repo = repo();
    let attr = Attribution::new(&repo, "c").unwrap();
    let answers = Answers {
        nodes: vec![node("n1", "gpu", &[2, 3])],
        allocated: vec![alloc("ml", "n1", "nvidia_com_gpu", &[2, 3], 1.0)],
        used: vec![used("", "n1", "", &[2, 3], 0.0)],
    };
    let none = BTreeSet::new();
    let (fresh, _) = rows::build(&attr, &answers, (H0, H0 + 4), &none, false);
    assert_eq!(fresh.first().map(|r| r.hour), Some(H0 + 2));
    // cv was allocated in its last committed row: it gets zeros now.
    let cont: BTreeSet<(String, String)> = [("mig".to_string(), "cv".to_string())].into();
    let (after, stats) = rows::build(&attr, &answers, (H0, H0 + 4), &cont, true);
    assert_eq!(after.len(), 8);
    assert_eq!(stats.gap_hours, 2);
    assert_eq!(after[0], row(0, "gpu", "ml", None, None));
    assert_eq!(after[5], row(2, "mig", "cv", Some(0.0), Some(0.0)));
    assert_eq!(after[6], row(3, "gpu", "ml", Some(1.0), Some(0.0)));
}

#[test]
fn nothing_measured_writes_nothing() {
    let repo = repo();
    let attr = Attribution::new(&repo, "c").unwrap();
    let (rows, stats) = rows::build(
        &attr,
        &Answers::default(),
        (H0, H0 + 5),
        &BTreeSet::new(),
        true,
    );
    assert!(rows.is_empty());
    assert_eq!(stats.trailing_unmeasured_hours, 5);
}

#[test]
fn a_matrix_with_a_series_twice_and_rows_no_pool_can_hold_are_refused() {
    let twice = br#"{"status":"success","data":{"resultType":"matrix","result":[
        {"metric":{"namespace":"ml"},"values":[[3600,"8"]]},
        {"metric":{"namespace":"ml"},"values":[[3600,"8"]]}]}}"#;
    let e = super::matrix::parse(twice).err().unwrap();
    assert!(
        e.contains("holds the series {\"namespace\": \"ml\"} twice"),
        "{e}"
    );
    let row = |allocated: f64| Row {
        hour: 1,
        pool: "p".into(),
        team: "ml".into(),
        allocated: Some(allocated),
        used: None,
    };
    let cap = |_: &str| Some(48.0);
    assert_eq!(rows::impossible(&[row(48.0)], cap), None);
    for (bad, says) in [
        (48.5, "more than the pool's 48"),
        (-1.0, "not a count"),
        (f64::NAN, "not a count"),
        (1e300, "more than the pool's 48"),
    ] {
        let e = rows::impossible(&[row(bad)], cap).unwrap();
        assert!(e.contains(says), "{bad}: {e}");
        assert!(
            e.contains("team `ml` in pool `p` at 1970-01-01T01:00:00Z"),
            "{e}"
        );
    }
}
