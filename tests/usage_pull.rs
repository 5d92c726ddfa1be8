//! `capops usage pull` against a real Prometheus (Debian's package, 2.42 here)
//! holding 56 hours of kube-state-metrics and dcgm-exporter history that the
//! test writes as OpenMetrics and backfills with promtool.
//!
//! The history: two clusters in one Prometheus told apart by a `cluster`
//! label (a third, unknown one must not leak in); pods of several teams on
//! whole GPUs and on MIG instances; a pod that runs half an hour; pending and
//! finished pods (not allocated); a namespace no team owns; idle GPUs
//! (`pod` unset) in both label conventions (`namespace`/`pod` and
//! `exported_namespace`/`exported_pod`); a node that reports only the coarse
//! `DCGM_FI_DEV_GPU_UTIL`; four hours where everything was down and three
//! where only dcgm-exporter was. Samples are every 5 minutes at 15 s past, so
//! no sample sits on a window edge and 2.42 and 3.x give the same hours.
//!
//! The expected CSV is written out below from the scenario's facts, hour by
//! hour; the pulled files must equal it byte for byte.

mod common;
#[path = "support/prometheus.rs"]
mod prometheus;

use common::run;
use prometheus::{OpenMetrics, Prometheus};
use serde_json::Value;
use std::fmt::Write as _;
use std::path::Path;

/// The first hour of the history: 2026-01-31T00:00:00Z, in hours since the epoch.
/// Hours 0-23 are in January, the rest in February: two monthly files.
fn h0() -> i64 {
    "2026-01-31T00:00:00Z"
        .parse::<capops::model::Timestamp>()
        .unwrap()
        .hour_index()
}

const HOURS: i64 = 56;
/// Everything is down in these hours (cluster alpha).
const GAP: std::ops::RangeInclusive<i64> = 20..=23;
/// Only dcgm-exporter is down in these hours (cluster beta).
const DCGM_GAP: std::ops::RangeInclusive<i64> = 30..=32;

/// Samples of hour `h` (relative), the `k`-th of every 5 minutes in `ks`.
fn samples(h: i64, ks: std::ops::Range<i64>, v: f64) -> impl Iterator<Item = (i64, f64)> {
    let start = (h0() + h) * 3600;
    ks.map(move |k| (start + k * 300 + 15, v))
}

fn hours(which: impl Fn(i64) -> bool + 'static, v: f64) -> impl Iterator<Item = (i64, f64)> {
    (0..HOURS)
        .filter(move |h| which(*h))
        .flat_map(move |h| samples(h, 0..12, v))
}

fn up(h: i64) -> bool {
    !GAP.contains(&h)
}

/// kube-state-metrics' requests and phase for one pod (one container per resource).
/// `at` is `cluster/namespace/pod`.
fn pod(
    om: &mut OpenMetrics,
    at: &str,
    node: &str,
    requests: &[(&str, f64)],
    phase: &str,
    when: impl Fn(i64) -> bool + Copy + 'static,
) {
    let mut parts = at.split('/');
    let (cluster, ns, pod) = (
        parts.next().unwrap(),
        parts.next().unwrap(),
        parts.next().unwrap(),
    );
    for (i, (resource, n)) in requests.iter().enumerate() {
        let node_label = if node.is_empty() {
            String::new()
        } else {
            format!(",node=\"{node}\"")
        };
        om.series(
            "kube_pod_container_resource_requests",
            &format!(
                r#"cluster="{cluster}",namespace="{ns}",pod="{pod}",container="c{i}",resource="{resource}",unit="integer"{node_label}"#
            ),
            hours(when, *n),
        );
    }
    for p in ["Pending", "Running", "Succeeded"] {
        let v = if p == phase { 1.0 } else { 0.0 };
        om.series(
            "kube_pod_status_phase",
            &format!(r#"cluster="{cluster}",namespace="{ns}",pod="{pod}",phase="{p}""#),
            hours(when, v),
        );
    }
}

fn node(
    om: &mut OpenMetrics,
    cluster: &str,
    name: &str,
    pool: &str,
    when: impl Fn(i64) -> bool + 'static,
) {
    om.series(
        "kube_node_labels",
        &format!(
            r#"cluster="{cluster}",node="{name}",label_example_com_pool="{pool}",label_kubernetes_io_hostname="{name}""#
        ),
        hours(when, 1.0),
    );
}

/// One GPU's activity series. `extra` holds the pod labels (either convention) or nothing.
fn gpu(
    om: &mut OpenMetrics,
    metric: &str,
    cluster: &str,
    host: &str,
    gpu: u32,
    extra: &str,
    points: impl IntoIterator<Item = (i64, f64)>,
) {
    om.series(
        metric,
        &format!(
            r#"cluster="{cluster}",Hostname="{host}",gpu="{gpu}",UUID="GPU-{host}-{gpu}",modelName="NVIDIA GPU"{extra}"#
        ),
        points,
    );
}

const ACTIVE: &str = "DCGM_FI_PROF_GR_ENGINE_ACTIVE";
const UTIL: &str = "DCGM_FI_DEV_GPU_UTIL";

fn history() -> OpenMetrics {
    let mut om = OpenMetrics::default();
    // --- cluster alpha: a100 pool (a1, a2), h100-mig pool (m1), a CPU node.
    for (n, p) in [
        ("a1", "a100"),
        ("a2", "a100"),
        ("m1", "h100-mig"),
        ("c1", "cpu"),
    ] {
        node(&mut om, "alpha", n, p, up);
    }
    pod(
        &mut om,
        "alpha/ml/train-0",
        "a1",
        &[("nvidia_com_gpu", 4.0)],
        "Running",
        up,
    );
    pod(
        &mut om,
        "alpha/ml/train-1",
        "a2",
        &[("nvidia_com_gpu", 2.0)],
        "Running",
        |h| h <= 10,
    );
    pod(
        &mut om,
        "alpha/batch/job-0",
        "a1",
        &[("nvidia_com_gpu", 1.0)],
        "Running",
        up,
    );
    pod(
        &mut om,
        "alpha/research/queued",
        "",
        &[("nvidia_com_gpu", 8.0)],
        "Pending",
        up,
    );
    pod(
        &mut om,
        "alpha/research/done-0",
        "a1",
        &[("nvidia_com_gpu", 1.0)],
        "Succeeded",
        up,
    );
    pod(
        &mut om,
        "alpha/cv/cv-0",
        "m1",
        &[
            ("nvidia_com_mig_1g_10gb", 2.0),
            ("nvidia_com_mig_3g_40gb", 1.0),
        ],
        "Running",
        up,
    );
    // A notebook that ran the first half of hour 5: six samples of twelve.
    for (i, (m, v)) in [
        ("kube_pod_container_resource_requests", 1.0),
        ("kube_pod_status_phase", 1.0),
    ]
    .iter()
    .enumerate()
    {
        let labels = if i == 0 {
            r#"cluster="alpha",namespace="research",pod="nb-0",container="c0",resource="nvidia_com_gpu",unit="integer",node="a2""#
        } else {
            r#"cluster="alpha",namespace="research",pod="nb-0",phase="Running""#
        };
        om.series(m, labels, samples(5, 0..6, *v));
    }
    // dcgm-exporter on a1 (native labels): both metrics; the engine-active one wins.
    for g in 0..8u32 {
        let (extra, active, util) = match g {
            0..=3 => (
                r#",namespace="ml",pod="train-0",container="c0""#,
                0.75,
                90.0,
            ),
            4 => (
                r#",namespace="batch",pod="job-0",container="c0""#,
                0.5,
                60.0,
            ),
            _ => ("", 0.0, 0.0),
        };
        gpu(&mut om, ACTIVE, "alpha", "a1", g, extra, hours(up, active));
        gpu(&mut om, UTIL, "alpha", "a1", g, extra, hours(up, util));
    }
    // a2 reports only GPU utilization (percent): train-1 on GPUs 0-1 until hour 10,
    // the notebook on GPU 2 for half of hour 5, idle otherwise.
    for g in 0..8u32 {
        match g {
            0 | 1 => {
                gpu(
                    &mut om,
                    UTIL,
                    "alpha",
                    "a2",
                    g,
                    r#",namespace="ml",pod="train-1""#,
                    hours(|h| h <= 10, 50.0),
                );
                gpu(
                    &mut om,
                    UTIL,
                    "alpha",
                    "a2",
                    g,
                    "",
                    hours(|h| h > 10 && up(h), 0.0),
                );
            }
            2 => {
                gpu(
                    &mut om,
                    UTIL,
                    "alpha",
                    "a2",
                    g,
                    r#",namespace="research",pod="nb-0""#,
                    samples(5, 0..6, 40.0),
                );
                let idle = hours(|h| h != 5 && up(h), 0.0).chain(samples(5, 6..12, 0.0));
                let mut idle: Vec<_> = idle.collect();
                idle.sort_by_key(|p| p.0);
                gpu(&mut om, UTIL, "alpha", "a2", g, "", idle);
            }
            _ => gpu(&mut om, UTIL, "alpha", "a2", g, "", hours(up, 0.0)),
        }
    }
    // m1's MIG instances: two 1g.10gb at 70%, one 3g.40gb at 35% (cv), an idle 2g.20gb.
    for (i, (profile, extra, v)) in [
        ("1g.10gb", r#",namespace="cv",pod="cv-0""#, 0.7),
        ("1g.10gb", r#",namespace="cv",pod="cv-0""#, 0.7),
        ("3g.40gb", r#",namespace="cv",pod="cv-0""#, 0.35),
        ("2g.20gb", "", 0.0),
    ]
    .iter()
    .enumerate()
    {
        let labels = format!(r#",GPU_I_PROFILE="{profile}",GPU_I_ID="{i}"{extra}"#);
        gpu(&mut om, ACTIVE, "alpha", "m1", 0, &labels, hours(up, *v));
    }
    // --- cluster beta: dcgm-exporter scraped with honor_labels: false.
    node(&mut om, "beta", "b1", "l4", |_| true);
    pod(
        &mut om,
        "beta/ml-beta/serve-0",
        "b1",
        &[("nvidia_com_gpu", 1.0)],
        "Running",
        |_| true,
    );
    let dcgm_up = |h: i64| !DCGM_GAP.contains(&h);
    let exporter = r#",namespace="gpu-operator",pod="dcgm-exporter-b1""#;
    gpu(
        &mut om,
        ACTIVE,
        "beta",
        "b1",
        0,
        &format!(r#"{exporter},exported_namespace="ml-beta",exported_pod="serve-0""#),
        hours(dcgm_up, 0.6),
    );
    gpu(
        &mut om,
        ACTIVE,
        "beta",
        "b1",
        1,
        exporter,
        hours(dcgm_up, 0.0),
    );
    // --- cluster gamma is not in the repository: nothing of it may leak in.
    node(&mut om, "gamma", "a1", "a100", |_| true);
    pod(
        &mut om,
        "gamma/ml/big",
        "a1",
        &[("nvidia_com_gpu", 8.0)],
        "Running",
        |_| true,
    );
    gpu(
        &mut om,
        ACTIVE,
        "gamma",
        "a1",
        0,
        r#",namespace="ml",pod="big""#,
        hours(|_| true, 1.0),
    );
    om
}

/// The capacity repository; beta's Cluster names its own Prometheus URL.
fn repo(dir: &Path, beta_url: &str, config_extra: &str) {
    let w = |p: &str, t: &str| prometheus::write(&dir.join(p), t);
    w(
        "capops.yaml",
        &format!(
            "apiVersion: capops.dev/v1alpha1\nkind: Config\nmetadata: {{name: t}}\nspec:\n  usage:\n    prometheus:\n      chunkHours: 5\n{config_extra}"
        ),
    );
    w(
        "clusters/alpha.yaml",
        r#"apiVersion: capops.dev/v1alpha1
kind: Cluster
metadata: {name: alpha}
spec:
  environment: research
  provider: onprem
  nodePools:
    - {name: a100, gpuModel: a100-80gb, gpusPerNode: 8, nodes: 2, nodeLabels: {example.com/pool: a100}}
    - name: h100-mig
      gpuModel: h100-80gb-sxm
      gpusPerNode: 1
      nodes: 1
      nodeLabels: {example.com/pool: h100-mig}
      mig: {layout: {3g.40gb: 1, 2g.20gb: 1, 1g.10gb: 2}}
"#,
    );
    w(
        "clusters/beta.yaml",
        &format!(
            "apiVersion: capops.dev/v1alpha1\nkind: Cluster\nmetadata: {{name: beta}}\nspec:\n  environment: production\n  provider: onprem\n  prometheus: {{url: '{beta_url}', clusterLabelValue: beta}}\n  nodePools:\n    - {{name: l4, gpuModel: l4, gpusPerNode: 2, nodes: 1, nodeLabels: {{example.com/pool: l4}}}}\n"
        ),
    );
    for (team, clusters) in [
        (
            "ml",
            "alpha: {namespace: ml}\n    beta: {namespace: ml-beta}",
        ),
        ("cv", "alpha: {namespace: cv}"),
        ("research", "alpha: {namespace: research}"),
    ] {
        w(
            &format!("teams/{team}.yaml"),
            &format!(
                "apiVersion: capops.dev/v1alpha1\nkind: Team\nmetadata: {{name: {team}}}\nspec:\n  costCenter: CC\n  clusters:\n    {clusters}\n"
            ),
        );
    }
}

fn stamp(h: i64) -> String {
    capops::model::Timestamp::from_second((h0() + h) * 3600)
        .unwrap()
        .to_string()
}

fn cell(v: Option<f64>) -> String {
    v.map(|v| format!("{v:.2}")).unwrap_or_default()
}

/// Expected rows of alpha for hours `[from, to)`, from the scenario's facts.
fn alpha_rows(from: i64, to: i64, research: bool) -> String {
    let mut s = String::new();
    for h in from..to {
        let m = up(h);
        let v = |x: f64| m.then_some(x);
        // train-0: 4 GPUs at 75%; train-1: 2 GPUs at 50% until hour 10.
        let (ml_a, ml_u) = if h <= 10 { (6.0, 4.0) } else { (4.0, 3.0) };
        let _ = writeln!(
            s,
            "{},alpha,a100,ml,{},{}",
            stamp(h),
            cell(v(ml_a)),
            cell(v(ml_u))
        );
        if research {
            // The notebook: 1 GPU for half an hour, 40% busy.
            let (a, u) = if h == 5 { (0.5, 0.2) } else { (0.0, 0.0) };
            let _ = writeln!(
                s,
                "{},alpha,a100,research,{},{}",
                stamp(h),
                cell(v(a)),
                cell(v(u))
            );
        }
        // 2 × 1g (1/7 each) + 1 × 3g (3/7) = 5/7; used 2 × 0.7/7 + 0.35 × 3/7 = 0.35.
        let _ = writeln!(
            s,
            "{},alpha,h100-mig,cv,{},{}",
            stamp(h),
            cell(v(5.0 / 7.0)),
            cell(v(0.35))
        );
    }
    s
}

fn beta_rows(from: i64, to: i64) -> String {
    let mut s = String::new();
    for h in from..to {
        let u = (!DCGM_GAP.contains(&h)).then_some(0.6);
        let _ = writeln!(s, "{},beta,l4,ml,1.00,{}", stamp(h), cell(u));
    }
    s
}

const HEADER: &str = "timestamp,cluster,pool,team,allocated_gpus,used_gpus\n";

fn read(p: &Path) -> String {
    std::fs::read_to_string(p).unwrap()
}

#[test]
fn pulls_equal_the_expected_history_and_later_pulls_append_only_new_hours() {
    if !prometheus::available() {
        return;
    }
    let prom = Prometheus::start(&history(), None);
    let dir = tempfile::tempdir().unwrap();
    repo(dir.path(), &prom.url, "");
    let path = dir.path().display().to_string();
    let alpha_jan = dir.path().join("usage/alpha.2026-01.csv");
    let alpha = dir.path().join("usage/alpha.2026-02.csv");
    let beta_jan = dir.path().join("usage/beta.2026-01.csv");
    let beta = dir.path().join("usage/beta.2026-02.csv");

    // First pull: 48 hours, in chunks of 5 hours.
    let first = run(
        &[
            "usage",
            "pull",
            &path,
            "--prometheus",
            &prom.url,
            "--from",
            &stamp(0),
            "--to",
            &stamp(48),
            "--format",
            "json",
        ],
        &[],
    );
    assert_eq!(first.code, 0, "{}", first.stderr);
    assert_eq!(
        read(&alpha_jan),
        format!("{HEADER}{}", alpha_rows(0, 24, true))
    );
    assert_eq!(
        read(&alpha),
        format!("{HEADER}{}", alpha_rows(24, 48, true))
    );
    assert_eq!(read(&beta_jan), format!("{HEADER}{}", beta_rows(0, 24)));
    assert_eq!(read(&beta), format!("{HEADER}{}", beta_rows(24, 48)));
    let summary: Value = serde_json::from_str(&first.stdout).unwrap();
    // 2 clusters × 3 measurements × 10 chunks, whatever the number of teams.
    assert_eq!(summary["traffic"]["queries"], 60);
    let a = &summary["clusters"][0];
    assert_eq!(a["cluster"], "alpha");
    assert_eq!(
        (a["added"].as_u64(), a["gapHours"].as_u64()),
        (Some(144), Some(4))
    );
    assert_eq!(
        a["unattributed"],
        serde_json::json!({"namespace `batch` belongs to no Team in this cluster": 44.0})
    );
    assert_eq!(summary["clusters"][1]["url"], prom.url.as_str());

    // The history is valid, and fresh at the end of the pull.
    let check = run(&["validate", &path], &[]);
    assert_eq!(check.code, 0, "{}", check.stderr);

    // Second pull: only hours after the last committed one; committed bytes untouched.
    let before = read(&alpha);
    let second = run(
        &[
            "usage",
            "pull",
            &path,
            "--prometheus",
            &prom.url,
            "--to",
            &stamp(HOURS),
        ],
        &[],
    );
    assert_eq!(second.code, 0, "{}", second.stderr);
    // research had nothing in these hours and nothing allocated at its last row: no rows.
    assert_eq!(
        read(&alpha),
        format!("{before}{}", alpha_rows(48, HOURS, false))
    );
    assert_eq!(read(&beta), format!("{HEADER}{}", beta_rows(24, HOURS)));
    assert_eq!(
        read(&alpha_jan),
        format!("{HEADER}{}", alpha_rows(0, 24, true))
    );
    assert!(
        second.stderr.contains(&format!(
            "alpha: added 16 rows to usage/alpha.2026-02.csv (2 series, 8 hours {} .. {}, 0 gap hours)",
            stamp(48),
            stamp(55)
        )),
        "{}",
        second.stderr
    );

    // Third pull: nothing new, no query sent, nothing written.
    let pulled = read(&alpha);
    let third = run(
        &[
            "usage",
            "pull",
            &path,
            "--prometheus",
            &prom.url,
            "--to",
            &stamp(HOURS),
            "--format",
            "json",
        ],
        &[],
    );
    assert_eq!(third.code, 0, "{}", third.stderr);
    let summary: Value = serde_json::from_str(&third.stdout).unwrap();
    assert_eq!(summary["traffic"]["queries"], 0);
    assert_eq!(read(&alpha), pulled);

    // A committed hour edited by hand stays until --rewrite-from replaces it.
    let bad_line = format!("{},alpha,a100,ml,4.00,3.00\n", stamp(50));
    let tampered = pulled.replace(
        &bad_line,
        &format!("{},alpha,a100,ml,9.00,9.00\n", stamp(50)),
    );
    assert_ne!(tampered, pulled);
    std::fs::write(&alpha, &tampered).unwrap();
    let again = run(
        &[
            "usage",
            "pull",
            &path,
            "--prometheus",
            &prom.url,
            "--to",
            &stamp(HOURS),
        ],
        &[],
    );
    assert_eq!(again.code, 0);
    assert_eq!(read(&alpha), tampered);
    let rewrite = run(
        &[
            "usage",
            "pull",
            &path,
            "--prometheus",
            &prom.url,
            "--to",
            &stamp(HOURS),
            "--rewrite-from",
            &stamp(50),
            "--cluster",
            "alpha",
        ],
        &[],
    );
    assert_eq!(rewrite.code, 0, "{}", rewrite.stderr);
    assert_eq!(read(&alpha), pulled);
    assert!(
        rewrite.stderr.contains("replaced 12 committed rows"),
        "{}",
        rewrite.stderr
    );
}

#[test]
fn a_stopped_server_is_exit_3_with_the_url_and_without_the_token() {
    if !prometheus::available() {
        return;
    }
    let mut prom = Prometheus::start(&OpenMetrics::default(), None);
    prom.stop();
    let dir = tempfile::tempdir().unwrap();
    repo(dir.path(), &prom.url, "");
    let path = dir.path().display().to_string();
    let token = "capops-test-token-7f3a9c";
    let out = run(
        &[
            "usage",
            "pull",
            &path,
            "--prometheus",
            &prom.url,
            "--since",
            "3d",
            "--to",
            &stamp(48),
        ],
        &[("CAPOPS_PROMETHEUS_TOKEN", token)],
    );
    assert_eq!(out.code, 3, "{}", out.stderr);
    assert!(
        out.stderr.starts_with(&format!(
            "error[prometheus-unreachable]: Prometheus at {} did not answer: ",
            prom.url
        )),
        "{}",
        out.stderr
    );
    assert!(out.stderr.contains("Connection refused"), "{}", out.stderr);
    assert!(!out.stderr.contains(token) && !out.stdout.contains(token));
    assert!(!dir.path().join("usage").exists(), "nothing is written");
}

#[test]
fn a_range_with_no_hour_in_it_is_a_usage_error() {
    // Refused before any server is asked: no Prometheus needed.
    let dir = tempfile::tempdir().unwrap();
    repo(dir.path(), "http://127.0.0.1:1", "");
    let path = dir.path().display().to_string();
    for (from, to) in [(stamp(48), stamp(0)), (stamp(24), stamp(24))] {
        let out = run(
            &[
                "usage",
                "pull",
                &path,
                "--prometheus",
                "http://127.0.0.1:1",
                "--from",
                &from,
                "--to",
                &to,
            ],
            &[],
        );
        assert_eq!(out.code, 2, "{}", out.stderr);
        assert!(out.stderr.contains("is not before --to"), "{}", out.stderr);
        assert!(!dir.path().join("usage").exists(), "nothing is written");
    }
}

/// A CA and a server certificate for 127.0.0.1 (X.509 v3, as rustls requires).
fn certificates(dir: &Path) -> Option<()> {
    let sh = |args: &[&str]| {
        std::process::Command::new("openssl")
            .args(args)
            .current_dir(dir)
            .output()
            .map(|o| o.status.success())
    };
    match sh(&["version"]) {
        Ok(true) => {}
        _ => {
            assert!(
                std::env::var_os("CAPOPS_CI").is_none(),
                "openssl is needed for the TLS test (CAPOPS_CI is set)"
            );
            eprintln!("skipping: openssl not found");
            return None;
        }
    }
    std::fs::write(
        dir.join("ext.cnf"),
        "basicConstraints=CA:FALSE\nsubjectAltName=IP:127.0.0.1\nkeyUsage=digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth\n",
    )
    .unwrap();
    for args in [
        &[
            "req",
            "-x509",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-keyout",
            "ca.key",
            "-out",
            "ca.pem",
            "-days",
            "2",
            "-subj",
            "/CN=capops test CA",
            "-addext",
            "basicConstraints=critical,CA:TRUE",
            "-addext",
            "keyUsage=critical,keyCertSign,cRLSign",
        ][..],
        &[
            "req",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-keyout",
            "server.key",
            "-out",
            "server.csr",
            "-subj",
            "/CN=127.0.0.1",
        ][..],
        &[
            "x509",
            "-req",
            "-in",
            "server.csr",
            "-CA",
            "ca.pem",
            "-CAkey",
            "ca.key",
            "-CAcreateserial",
            "-out",
            "server.pem",
            "-days",
            "2",
            "-extfile",
            "ext.cnf",
        ][..],
    ] {
        assert_eq!(sh(args).ok(), Some(true), "openssl {args:?}");
    }
    Some(())
}

#[test]
fn https_with_a_custom_ca_and_one_url_per_cluster() {
    if !prometheus::available() {
        return;
    }
    let certs = tempfile::tempdir().unwrap();
    if certificates(certs.path()).is_none() {
        return;
    }
    let web = format!(
        "tls_server_config:\n  cert_file: {}\n  key_file: {}\n",
        certs.path().join("server.pem").display(),
        certs.path().join("server.key").display()
    );
    let prom = Prometheus::start(&history(), Some(&web));
    assert!(prom.url.starts_with("https://"));
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(certs.path().join("ca.pem"), dir.path().join("prom-ca.pem")).unwrap();
    // Both clusters name the Prometheus in the Config; beta its own (the same server).
    repo(
        dir.path(),
        &prom.url,
        &format!("      url: '{}'\n      caFile: prom-ca.pem\n", prom.url),
    );
    let path = dir.path().display().to_string();
    let out = run(
        &[
            "usage",
            "pull",
            &path,
            "--from",
            &stamp(0),
            "--to",
            &stamp(12),
        ],
        &[],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(
        read(&dir.path().join("usage/alpha.2026-01.csv")),
        format!("{HEADER}{}", alpha_rows(0, 12, true))
    );
    assert_eq!(
        read(&dir.path().join("usage/beta.2026-01.csv")),
        format!("{HEADER}{}", beta_rows(0, 12))
    );

    // Without the CA the server's certificate is not trusted: an outside failure.
    let other = tempfile::tempdir().unwrap();
    repo(
        other.path(),
        &prom.url,
        &format!("      url: '{}'\n", prom.url),
    );
    let other_path = other.path().display().to_string();
    let out = run(
        &[
            "usage",
            "pull",
            &other_path,
            "--from",
            &stamp(0),
            "--to",
            &stamp(12),
        ],
        &[],
    );
    assert_eq!(out.code, 3, "{}", out.stderr);
    assert!(out.stderr.contains("certificate"), "{}", out.stderr);
}
