//! The pure parts of the pull, without HTTP: rows into the committed
//! history, targets and queries, staleness and rewrites, the documented
//! defaults.

use super::Metric;
use super::history::{self, UsageFile};

use super::plan::{self, PlanError};
use super::rows::Row;

use super::tests::*;
use crate::model::{Repo, Timestamp};

const HEADER: &str = "timestamp,cluster,pool,team,allocated_gpus,used_gpus\n";

fn ts(h: i64) -> String {
    Timestamp::from_second((H0 + h) * 3600).unwrap().to_string()
}

#[test]
fn appending_keeps_committed_bytes_and_writes_sorted_fixed_decimals() {
    let old = format!("{HEADER}{},c,gpu,ml,36,27.1", ts(0));
    let new = vec![
        row(2, "mig", "cv", Some(0.71), Some(0.2)),
        row(1, "mig", "cv", None, None),
        row(1, "gpu", "ml", Some(4.0), Some(3.456)),
    ];
    let m = history::merge(Some(&old), "c", &new, None);
    let want = format!(
        "{HEADER}{t0},c,gpu,ml,36,27.1\n{t1},c,gpu,ml,4.00,3.46\n{t1},c,mig,cv,,\n{t2},c,mig,cv,0.71,0.20\n",
        t0 = ts(0),
        t1 = ts(1),
        t2 = ts(2)
    );
    assert_eq!(m.text, want);
    assert_eq!((m.added, m.removed), (3, 0));
    let fresh = history::merge(None, "c", &new[..1], None);
    assert_eq!(
        fresh.text,
        format!("{HEADER}{},c,mig,cv,0.71,0.20\n", ts(2))
    );
}

#[test]
fn rewriting_replaces_only_the_clusters_rows_from_the_hour_on() {
    let old = format!(
        "{HEADER}{t0},c,gpu,ml,1,1\n{t0},other,p,ml,9,9\n{t1},c,gpu,ml,2,2\n{t1},other,p,ml,9,9\n{t2},c,gpu,ml,3,3\n",
        t0 = ts(0),
        t1 = ts(1),
        t2 = ts(2)
    );
    let new = vec![row(1, "gpu", "ml", Some(5.0), Some(4.0))];
    let m = history::merge(Some(&old), "c", &new, Some(H0 + 1));
    let want = format!(
        "{HEADER}{t0},c,gpu,ml,1,1\n{t0},other,p,ml,9,9\n{t1},other,p,ml,9,9\n{t1},c,gpu,ml,5.00,4.00\n",
        t0 = ts(0),
        t1 = ts(1)
    );
    assert_eq!(m.text, want);
    assert_eq!((m.added, m.removed), (1, 2));
}

#[test]
fn the_committed_history_gives_the_last_hour_and_the_series_still_running() {
    let a = format!(
        "{HEADER}{t0},c,gpu,ml,2,1\n{t1},c,gpu,ml,,\n{t0},c,mig,cv,1,1\n{t1},c,mig,cv,0,0\n{t1},c,shared,ml,1,0\n",
        t0 = ts(0),
        t1 = ts(1)
    );
    let b = format!("{HEADER}{},c,gpu,ml,1,1\n{},x,gpu,ml,1,1\n", ts(-5), ts(9));
    let files = [
        UsageFile {
            path: "usage/c.csv",
            text: &a,
        },
        UsageFile {
            path: "usage/old.csv",
            text: &b,
        },
    ];
    let all = history::committed(&files, None);
    assert_eq!(all.keys().collect::<Vec<_>>(), vec!["c", "x"]);
    let c = all["c"].clone();
    assert_eq!(c.last_hour, Some(H0 + 1));
    // gpu/ml ends in a gap, mig/cv in a zero: only shared/ml is still allocated.
    let active: Vec<(String, String)> = c.active.into_iter().collect();
    assert_eq!(active, vec![("shared".to_string(), "ml".to_string())]);
    let before = history::committed(&files, Some(H0 + 1))["c"].clone();
    assert_eq!(before.last_hour, Some(H0));
    assert_eq!(before.active.len(), 2);
    // Only the cluster's monthly files are rewritten; others in the way are conflicts.
    assert_eq!(
        history::rewrite_conflicts(&files, "c", H0 - 5),
        vec!["usage/c.csv".to_string(), "usage/old.csv".to_string()]
    );
    assert_eq!(
        history::rewrite_conflicts(&files, "c", H0 + 1),
        vec!["usage/c.csv".to_string()]
    );
    assert!(history::rewrite_conflicts(&files, "c", H0 + 2).is_empty());
}

#[test]
fn rows_go_to_one_file_per_cluster_and_month() {
    // 2026-01-31T23:00Z and 2026-02-01T00:00Z fall in two months.
    let jan = "2026-01-31T23:00:00Z"
        .parse::<Timestamp>()
        .unwrap()
        .hour_index();
    assert_eq!(
        history::file_for("prod-h100", jan),
        "usage/prod-h100.2026-01.csv"
    );
    assert_eq!(
        history::file_for("prod-h100", jan + 1),
        "usage/prod-h100.2026-02.csv"
    );
    let r = |h| Row {
        hour: h,
        pool: "p".into(),
        team: "t".into(),
        allocated: Some(1.0),
        used: None,
    };
    let rows = vec![r(jan), r(jan + 1), r(jan + 2)];
    let t = history::targets(&[], "c", &rows, None);
    let sizes: Vec<(&str, usize)> = t.iter().map(|(f, v)| (f.as_str(), v.len())).collect();
    assert_eq!(
        sizes,
        vec![("usage/c.2026-01.csv", 1), ("usage/c.2026-02.csv", 2)]
    );
    // A rewrite from January also visits the cluster's later months, even with no new rows there,
    // but not other clusters' files or earlier months.
    let text = HEADER.to_string();
    let files: Vec<UsageFile<'_>> = [
        "usage/c.2025-12.csv",
        "usage/c.2026-03.csv",
        "usage/cc.2026-03.csv",
        "usage/c.2026-3.csv",
    ]
    .iter()
    .map(|p| UsageFile {
        path: p,
        text: &text,
    })
    .collect();
    let t = history::targets(&files, "c", &rows[..1], Some(jan));
    let names: Vec<&str> = t.keys().map(String::as_str).collect();
    assert_eq!(names, vec!["usage/c.2026-01.csv", "usage/c.2026-03.csv"]);
}

const SHARED: &str = "apiVersion: capops.dev/v1alpha1\nkind: Config\nmetadata: {name: t}\nspec:\n  usage:\n    prometheus: {url: 'http://prom:9090/', clusterLabel: k8s_cluster}\n";

fn cluster_with(name: &str, prometheus: &str) -> String {
    format!(
        "apiVersion: capops.dev/v1alpha1\nkind: Cluster\nmetadata: {{name: {name}}}\nspec:\n  environment: research\n  provider: onprem\n{prometheus}  nodePools:\n    - {{name: p, gpuModel: l4, gpusPerNode: 1, nodes: 1}}\n"
    )
}

#[test]
fn targets_use_the_shared_prometheus_with_a_cluster_matcher_or_a_clusters_own() {
    let a = cluster_with("a", "");
    let b = cluster_with("b", "  prometheus: {url: 'https://b.example/prom'}\n");
    let c = cluster_with(
        "c",
        "  prometheus: {url: 'https://c.example', clusterLabelValue: 'c-eu'}\n",
    );
    let repo = repo_of(&[
        ("capops.yaml", SHARED),
        ("a.yaml", &a),
        ("b.yaml", &b),
        ("c.yaml", &c),
    ]);
    let settings = repo.config_spec().usage.prometheus.clone();
    let t = plan::targets(&repo, &settings, None, None).unwrap();
    let got: Vec<(&str, &str, &str)> = t
        .iter()
        .map(|t| (t.cluster.as_str(), t.url.as_str(), t.matcher.as_str()))
        .collect();
    assert_eq!(
        got,
        vec![
            ("a", "http://prom:9090", r#"k8s_cluster="a""#),
            ("b", "https://b.example/prom", ""),
            ("c", "https://c.example", r#"k8s_cluster="c-eu""#),
        ]
    );
    let over = plan::targets(&repo, &settings, Some("http://other:1"), Some("a")).unwrap();
    assert_eq!(over.len(), 1);
    assert_eq!(over[0].url, "http://other:1");
    let e = plan::targets(&repo, &settings, None, Some("bb")).unwrap_err();
    assert!(matches!(e, PlanError::UnknownCluster { .. }));
    assert_eq!(e.help(), "did you mean `b`?");

    let bare = repo_of(&[("capops.yaml", CONFIG), ("a.yaml", &a)]);
    let e = plan::targets(&bare, &Default::default(), None, None).unwrap_err();
    assert_eq!(
        e,
        PlanError::NoUrl {
            cluster: "a".into()
        }
    );
}

#[test]
fn queries_grow_with_measurements_and_chunks_and_need_the_placeholder_when_shared() {
    let settings = crate::model::usage_settings::PrometheusSettings {
        chunk_hours: 100,
        ..Default::default()
    };
    let target = plan::Target {
        cluster: "a".into(),
        url: "http://p".into(),
        matcher: r#"cluster="a""#.into(),
    };
    let q = plan::queries(&target, (0, 250), &settings).unwrap();
    assert_eq!(q.len(), 9);
    assert_eq!(
        q.iter()
            .filter(|q| q.metric == Metric::Used)
            .map(|q| q.hours)
            .collect::<Vec<_>>(),
        vec![(0, 100), (100, 200), (200, 250)]
    );
    assert!(
        q[0].promql
            .contains(r#"resource=~"nvidia_com_gpu|nvidia_com_mig_.+", cluster="a"}"#)
    );
    assert!(!q.iter().any(|q| q.promql.contains("$cluster")));
    let mut custom = settings.clone();
    custom.queries.nodes = "kube_node_labels".into();
    let e = plan::queries(&target, (0, 10), &custom).unwrap_err();
    assert_eq!(e.code(), "query-without-cluster");
    let own = plan::Target {
        matcher: String::new(),
        ..target
    };
    assert_eq!(plan::queries(&own, (0, 10), &custom).unwrap().len(), 3);
}

fn usage_repo(config: &str, rows: &str) -> (Repo, crate::model::Timestamp) {
    let csv = format!("{HEADER}{rows}");
    let ml = team("ml", "ml");
    let repo = repo_of(&[
        ("capops.yaml", config),
        ("c.yaml", CLUSTER),
        ("ml.yaml", &ml),
        ("usage/c.csv", &csv),
    ]);
    let end = Timestamp::from_second((H0 + 2) * 3600).unwrap();
    (repo, end)
}

#[test]
fn usage_older_than_the_threshold_is_stale() {
    let rows = format!("{},c,gpu,ml,1,1\n{},c,gpu,ml,,\n", ts(0), ts(1));
    let (repo, _) = usage_repo(CONFIG, &rows);
    // The last measured hour is hour 0, which ends at H0 + 1.
    let at = |h: i64| Timestamp::from_second((H0 + 1 + h) * 3600).unwrap();
    assert!(super::stale::check(&repo, at(48)).is_empty());
    let d = super::stale::check(&repo, at(49));
    assert_eq!(d.len(), 1);
    assert_eq!(d[0].code, crate::diag::Code::UsageStale);
    assert_eq!(d[0].severity, crate::diag::Severity::Warning);
    assert!(d[0].message.contains("cluster `c`"), "{}", d[0].message);
    assert!(d[0].message.contains("49 hours"), "{}", d[0].message);

    let strict = "apiVersion: capops.dev/v1alpha1\nkind: Config\nmetadata: {name: t}\nspec:\n  usage: {staleAfterHours: 2}\n  severities: {usage-stale: error}\n";
    let (repo, _) = usage_repo(strict, &rows);
    assert!(super::stale::check(&repo, at(2)).is_empty());
    assert_eq!(
        super::stale::check(&repo, at(3))[0].severity,
        crate::diag::Severity::Error
    );
    let quiet = "apiVersion: capops.dev/v1alpha1\nkind: Config\nmetadata: {name: t}\nspec:\n  severities: {usage-stale: allow}\n";
    let (repo, _) = usage_repo(quiet, &rows);
    assert!(super::stale::check(&repo, at(500)).is_empty());
}

#[test]
fn default_queries_keep_the_labels_the_rows_read() {
    let q = crate::model::usage_settings::Queries::default();
    assert!(
        q.allocated
            .starts_with("sum_over_time((sum by (namespace, node, resource)")
    );
    assert!(q.used.contains("sum by (namespace, node, profile)"));
    for text in [&q.allocated, &q.used, &q.nodes] {
        assert!(text.contains("$cluster"), "{text}");
    }
    // Both label conventions: exported_* wins when present.
    assert!(
        q.used
            .contains(r#""namespace", "$1", "exported_namespace", "(.+)""#)
    );
}

#[test]
fn changing_or_removing_committed_rows_is_a_rewrite_appending_is_not() {
    use crate::diag::{SourceKind, SourceMap};
    let base = format!(
        "{HEADER}{},c,gpu,ml,36,27.1\n{},c,gpu,ml,2,1\n",
        ts(0),
        ts(1)
    );
    let rev = || SourceKind::Revision("origin/main".into());
    let repo = repo();
    let diags = |head: Option<&str>| {
        let mut sources = SourceMap::new();
        if let Some(h) = head {
            sources.add("usage/c.csv", h.to_string());
        }
        sources.add_from("usage/c.csv", base.clone(), rev());
        sources.add_from("c.yaml", "x".to_string(), rev());
        super::rewrite::check(&repo, &sources)
    };
    // Appended, and reformatted without changing a number: no rewrite.
    let appended = format!(
        "{HEADER}{},c,gpu,ml,36.00,27.10\n{},c,gpu,ml,2,1\n{},c,gpu,ml,3,1\n",
        ts(0),
        ts(1),
        ts(2)
    );
    assert!(diags(Some(&appended)).is_empty());
    let edited = format!(
        "{HEADER}{},c,gpu,ml,36,27.1\n{},c,gpu,ml,9,1\n",
        ts(0),
        ts(1)
    );
    let d = diags(Some(&edited));
    assert_eq!(d.len(), 1);
    assert_eq!(d[0].code, crate::diag::Code::UsageHistoryRewritten);
    assert_eq!(
        d[0].message,
        format!(
            "usage/c.csv changes 1 committed row of origin/main, from {} on: a rewrite of usage history",
            ts(1)
        )
    );
    // The span points at the changed row in the working tree's file.
    let row = edited.find(&format!("{},c,gpu,ml,9", ts(1))).unwrap() as u32;
    assert_eq!(d[0].span().unwrap().start, row);
    let d = diags(Some(&format!("{HEADER}{},c,gpu,ml,2,1\n", ts(1))));
    assert!(
        d[0].message.contains("removes 1 committed row"),
        "{}",
        d[0].message
    );
    let d = diags(None);
    assert!(
        d[0].message.contains("removes 2 committed rows"),
        "{}",
        d[0].message
    );
}

#[test]
fn docs_show_the_default_queries_as_they_are() {
    use crate::model::usage_settings::{DEFAULT_ALLOCATED, DEFAULT_NODES, DEFAULT_USED};
    let squash = |s: &str| s.split_whitespace().collect::<Vec<_>>().join(" ");
    let doc = squash(include_str!("../../docs/usage.md"));
    for q in [DEFAULT_ALLOCATED, DEFAULT_USED, DEFAULT_NODES] {
        assert!(
            doc.contains(&squash(q)),
            "docs/usage.md lacks the default query\n{q}"
        );
    }
}

#[test]
fn quoted_cells_read_as_the_loader_reads_them() {
    // The same row quoted, spaced, and with a comma inside a quoted cell.
    let text = format!(
        "{HEADER}\"{t}\",\"c\",\"gpu\",\"ml\",\"36\",\"25.35\"\n {t} , c , gpu , ml , 36 , 25.35 \r\n{t},c,\"gpu\",\"a,b\",1,\n",
        t = ts(0)
    );
    let (_, recs) = history::records(&text);
    let got: Vec<_> = recs
        .iter()
        .map(|r| (r.hour, r.cluster, r.pool, r.team, r.allocated, r.used))
        .collect();
    let h = Some(H0);
    assert_eq!(
        got,
        vec![
            (h, "c", "gpu", "ml", Some(36.0), Some(25.35)),
            (h, "c", "gpu", "ml", Some(36.0), Some(25.35)),
            (h, "c", "gpu", "a,b", Some(1.0), None),
        ]
    );
}
