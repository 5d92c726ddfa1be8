//! `capops usage pull` against a scripted HTTP server speaking the Prometheus
//! API's documented shapes, for what a real Prometheus does not do on
//! demand: demand a bearer token (as the proxies in front of Prometheus,
//! Thanos or Mimir do), fail with 503 and recover, answer too slowly, reject
//! a query (400 `bad_data`), or answer with something that is not JSON.
//! The token must reach the server and never appear in any output.

mod common;

use common::run;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// One request as the server saw it.
#[derive(Clone, Debug)]
struct Seen {
    path: String,
    authorization: Option<String>,
    body: String,
}

/// What the server answers: `(status, body, delay)` for the n-th request.
type Script = Arc<dyn Fn(usize, &Seen) -> (u16, String, Duration) + Send + Sync>;

struct Server {
    url: String,
    seen: Arc<Mutex<Vec<Seen>>>,
}

fn serve(script: Script) -> Server {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = seen.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let log = log.clone();
            let script = script.clone();
            std::thread::spawn(move || {
                let mut reader = BufReader::new(stream.try_clone().unwrap());
                let mut line = String::new();
                if reader.read_line(&mut line).unwrap_or(0) == 0 {
                    return;
                }
                let path = line.split(' ').nth(1).unwrap_or("").to_string();
                let (mut length, mut authorization) = (0usize, None);
                loop {
                    let mut h = String::new();
                    if reader.read_line(&mut h).unwrap_or(0) == 0 || h == "\r\n" {
                        break;
                    }
                    let (k, v) = h.split_once(':').unwrap_or((&h, ""));
                    match k.to_ascii_lowercase().as_str() {
                        "content-length" => length = v.trim().parse().unwrap_or(0),
                        "authorization" => authorization = Some(v.trim().to_string()),
                        _ => {}
                    }
                }
                let mut body = vec![0; length];
                let _ = reader.read_exact(&mut body);
                let seen = Seen {
                    path,
                    authorization,
                    body: String::from_utf8_lossy(&body).into_owned(),
                };
                let n = {
                    let mut l = log.lock().unwrap();
                    l.push(seen.clone());
                    l.len() - 1
                };
                let (status, text, delay) = script(n, &seen);
                std::thread::sleep(delay);
                let _ = write!(
                    stream,
                    "HTTP/1.1 {status} X\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{text}",
                    text.len()
                );
            });
        }
    });
    Server { url, seen }
}

/// 2026-01-05T00:00:00Z in seconds; the pulls below ask for two hours from it.
const T0: i64 = 1_767_571_200;

/// Answers like Prometheus: one node of pool `p`, team `ml` holding 2 GPUs, 1.5 busy,
/// at every hour the query asks for.
fn answer(seen: &Seen) -> String {
    answer_with(seen, "2", "1.5")
}

fn form_value(body: &str, key: &str) -> i64 {
    body.split('&')
        .find_map(|kv| kv.strip_prefix(&format!("{key}=")))
        .and_then(|v| v.parse().ok())
        .unwrap_or(0)
}

fn answer_with(seen: &Seen, allocated: &str, used: &str) -> String {
    let series = if seen.body.contains("kube_node_labels") {
        r#"{"node":"n1","label_example_com_pool":"p"}"#
    } else if seen.body.contains("kube_pod_container_resource_requests") {
        r#"{"namespace":"ml","node":"n1","resource":"nvidia_com_gpu"}"#
    } else {
        r#"{"namespace":"ml","node":"n1"}"#
    };
    let v = if seen.body.contains("DCGM") {
        used
    } else {
        allocated
    };
    let (start, end) = (
        form_value(&seen.body, "start"),
        form_value(&seen.body, "end"),
    );
    let points: Vec<String> = (start..=end)
        .step_by(3600)
        .map(|t| format!(r#"[{t},"{v}"]"#))
        .collect();
    format!(
        r#"{{"status":"success","data":{{"resultType":"matrix","result":[{{"metric":{series},"values":[{}]}}]}}}}"#,
        points.join(",")
    )
}

fn repo(extra: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("capops.yaml"),
        format!(
            "apiVersion: capops.dev/v1alpha1\nkind: Config\nmetadata: {{name: t}}\nspec:\n  usage:\n    prometheus:\n      tokenEnv: PROM_TOKEN\n{extra}"
        ),
    )
    .unwrap();
    std::fs::write(
        dir.path().join("c.yaml"),
        "apiVersion: capops.dev/v1alpha1\nkind: Cluster\nmetadata: {name: c}\nspec:\n  environment: research\n  provider: onprem\n  nodePools:\n    - {name: p, gpuModel: l4, gpusPerNode: 1, nodes: 4, nodeLabels: {example.com/pool: p}}\n",
    )
    .unwrap();
    std::fs::write(
        dir.path().join("ml.yaml"),
        "apiVersion: capops.dev/v1alpha1\nkind: Team\nmetadata: {name: ml}\nspec:\n  costCenter: CC\n  clusters:\n    c: {namespace: ml, quota: {nvidia.com/gpu: 4}}\n",
    )
    .unwrap();
    dir
}

fn pull(dir: &tempfile::TempDir, url: &str, env: &[(&str, &str)], json: bool) -> common::Out {
    let path = dir.path().display().to_string();
    let mut args = vec![
        "usage",
        "pull",
        &path,
        "--prometheus",
        url,
        "--from",
        "2026-01-05T00:00:00Z",
        "--to",
        "2026-01-05T02:00:00Z",
    ];
    if json {
        args.extend(["--format", "json"]);
    }
    run(&args, env)
}

const TOKEN: &str = "tok-5e3b-not-for-logs";

#[test]
fn the_bearer_token_reaches_the_server_and_no_output() {
    let server = serve(Arc::new(|_, seen: &Seen| {
        if seen.authorization.as_deref() == Some(&format!("Bearer {TOKEN}")) {
            (200, answer(seen), Duration::ZERO)
        } else {
            let e =
                r#"{"status":"error","errorType":"unauthorized","error":"missing or bad token"}"#;
            (401, e.to_string(), Duration::ZERO)
        }
    }));
    let dir = repo("");
    let out = pull(&dir, &server.url, &[("PROM_TOKEN", TOKEN)], false);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let csv = std::fs::read_to_string(dir.path().join("usage/c.2026-01.csv")).unwrap();
    assert_eq!(
        csv,
        "timestamp,cluster,pool,team,allocated_gpus,used_gpus\n\
         2026-01-05T00:00:00Z,c,p,ml,2.00,1.50\n\
         2026-01-05T01:00:00Z,c,p,ml,2.00,1.50\n"
    );
    let seen = server.seen.lock().unwrap().clone();
    assert_eq!(seen.len(), 3);
    for s in &seen {
        assert_eq!(s.path, "/api/v1/query_range");
        // Evaluation times are the ends of the two hours; the cluster is selected by label.
        assert!(
            s.body
                .ends_with(&format!("&start={}&end={}&step=3600", T0 + 3600, T0 + 7200)),
            "{}",
            s.body
        );
        assert!(s.body.contains("cluster%3D%22c%22"), "{}", s.body);
    }
    for text in [&out.stdout, &out.stderr, &csv] {
        assert!(!text.contains(TOKEN));
    }

    // A wrong token: refused, said so, and the token is still nowhere.
    let other = repo("");
    let out = pull(
        &other,
        &server.url,
        &[("PROM_TOKEN", "wrong-token-1234")],
        false,
    );
    assert_eq!(out.code, 3);
    assert!(out.stderr.contains("answered HTTP 401"), "{}", out.stderr);
    assert!(out.stderr.contains("tokenEnv"), "{}", out.stderr);
    assert!(!out.stderr.contains("wrong-token-1234") && !out.stdout.contains("wrong-token-1234"));
    assert!(!other.path().join("usage").exists());
}

#[test]
fn a_usage_file_or_folder_that_is_a_link_is_refused_and_what_it_names_untouched() {
    let server = serve(Arc::new(|_, seen: &Seen| {
        (200, answer(seen), Duration::ZERO)
    }));
    let outside = tempfile::tempdir().unwrap();
    let victim = outside.path().join("kubeconfig");
    std::fs::write(&victim, "apiVersion: v1\nkind: Config\n").unwrap();
    // The month's file is a link to a file outside; then the folder is.
    let file = repo("");
    std::fs::create_dir(file.path().join("usage")).unwrap();
    std::os::unix::fs::symlink(&victim, file.path().join("usage/c.2026-01.csv")).unwrap();
    let folder = repo("");
    std::os::unix::fs::symlink(outside.path(), folder.path().join("usage")).unwrap();
    for (dir, link) in [(&file, "usage/c.2026-01.csv"), (&folder, "usage")] {
        let out = pull(dir, &server.url, &[("PROM_TOKEN", TOKEN)], false);
        assert_eq!(out.code, 2, "{}", out.stderr);
        assert!(
            out.stderr.contains(&format!("{link} is a link")),
            "{}",
            out.stderr
        );
    }
    assert_eq!(
        std::fs::read_to_string(&victim).unwrap(),
        "apiVersion: v1\nkind: Config\n"
    );
    assert_eq!(std::fs::read_dir(outside.path()).unwrap().count(), 1);
}

#[test]
fn a_ca_file_that_is_a_pipe_is_refused_before_it_is_read() {
    let dir = repo("      caFile: ca.pem\n");
    let made = std::process::Command::new("mkfifo")
        .arg(dir.path().join("ca.pem"))
        .status()
        .unwrap();
    assert!(made.success());
    let out = pull(&dir, "http://127.0.0.1:1", &[], false);
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(
        out.stderr.contains("is not a regular file"),
        "{}",
        out.stderr
    );
}

#[test]
fn a_server_that_quotes_the_token_back_never_gets_it_shown() {
    // In an error, in a warning, and at the start of an answer that is not
    // JSON: the token the server saw is replaced wherever it is quoted.
    let echo = |seen: &Seen| {
        seen.authorization
            .as_deref()
            .unwrap_or("")
            .trim_start_matches("Bearer ")
            .to_string()
    };
    for mode in ["error", "warning", "html", "unauthorized"] {
        let server = serve(Arc::new(move |_, seen: &Seen| {
            let tok = echo(seen);
            match mode {
                "error" => (
                    500,
                    format!(
                        r#"{{"status":"error","errorType":"internal","error":"bad token {tok}"}}"#
                    ),
                    Duration::ZERO,
                ),
                "warning" => (
                    200,
                    answer(seen).replacen(
                        r#""status":"success","#,
                        &format!(r#""status":"success","warnings":["token {tok} expires soon"],"#),
                        1,
                    ),
                    Duration::ZERO,
                ),
                "html" => (
                    200,
                    format!("<html>session for {tok}</html>"),
                    Duration::ZERO,
                ),
                _ => (401, format!("unauthorized: {tok}"), Duration::ZERO),
            }
        }));
        for json in [false, true] {
            let dir = repo("");
            let out = pull(&dir, &server.url, &[("PROM_TOKEN", TOKEN)], json);
            assert!(
                !out.stdout.contains(TOKEN) && !out.stderr.contains(TOKEN),
                "{mode}: {}{}",
                out.stdout,
                out.stderr
            );
            if mode == "warning" {
                assert!(
                    (out.stdout.clone() + &out.stderr).contains("<redacted> expires soon"),
                    "{mode}: {}{}",
                    out.stdout,
                    out.stderr
                );
            } else {
                assert_eq!(out.code, 3, "{mode}: {}", out.stderr);
            }
        }
    }
}

#[test]
fn unavailable_answers_are_retried_a_bounded_number_of_times() {
    let server = serve(Arc::new(|n, seen: &Seen| {
        if n < 2 {
            (503, "overloaded".into(), Duration::ZERO)
        } else {
            (200, answer(seen), Duration::ZERO)
        }
    }));
    let dir = repo("");
    let out = pull(&dir, &server.url, &[], true);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let v: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(v["traffic"]["queries"], 3);
    assert_eq!(v["traffic"]["retries"], 2);
    assert_eq!(server.seen.lock().unwrap().len(), 5);

    let down = serve(Arc::new(|_, _: &Seen| (503, "down".into(), Duration::ZERO)));
    let out = pull(&repo(""), &down.url, &[], false);
    assert_eq!(out.code, 3);
    assert!(out.stderr.contains("answered HTTP 503"), "{}", out.stderr);
    // Each query is tried three times at most.
    assert!(down.seen.lock().unwrap().len() <= 9);
}

#[test]
fn a_slow_server_times_out() {
    let server = serve(Arc::new(|_, seen: &Seen| {
        (200, answer(seen), Duration::from_secs(3))
    }));
    let out = pull(&repo("      timeoutSeconds: 1\n"), &server.url, &[], false);
    assert_eq!(out.code, 3);
    assert!(
        out.stderr.contains(&format!(
            "error[prometheus-timeout]: Prometheus at {} did not answer within 1 s (3 attempts)",
            server.url
        )),
        "{}",
        out.stderr
    );
}

#[test]
fn a_rejected_query_is_invalid_input_and_garbage_is_an_outside_failure() {
    let server = serve(Arc::new(|_, _: &Seen| {
        let e = r#"{"status":"error","errorType":"bad_data","error":"1:5: parse error: unexpected \"}\""}"#;
        (400, e.to_string(), Duration::ZERO)
    }));
    let out = pull(&repo(""), &server.url, &[], false);
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(out.stderr.contains("rejected query `"), "{}", out.stderr);
    assert!(out.stderr.contains("parse error"), "{}", out.stderr);
    assert!(
        out.stderr.contains("usage.prometheus.queries"),
        "{}",
        out.stderr
    );

    let html = serve(Arc::new(|_, _: &Seen| {
        (200, "<html>login</html>".into(), Duration::ZERO)
    }));
    let out = pull(&repo(""), &html.url, &[], false);
    assert_eq!(out.code, 3);
    assert!(out.stderr.contains("capops cannot read"), "{}", out.stderr);
    assert!(out.stderr.contains("<html>login"), "{}", out.stderr);
    // Each failure has its stable code: on stderr, and as JSON on stdout
    // with --format json.
    assert!(
        out.stderr.starts_with("error[prometheus-bad-answer]: "),
        "{}",
        out.stderr
    );
    let out = pull(&repo(""), &server.url, &[], true);
    assert_eq!(out.code, 2);
    let v: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(v["command"], "usage pull");
    assert_eq!(v["error"]["code"], "prometheus-bad-query");
    assert_eq!(v["error"]["exit"], 2);
    assert!(
        v["error"]["help"]
            .as_str()
            .unwrap()
            .contains("usage.prometheus.queries")
    );
}

#[test]
fn bad_arguments_and_settings_are_exit_2_before_any_request() {
    let dir = repo("");
    let path = dir.path().display().to_string();
    let cases: [&[&str]; 5] = [
        &["usage", "pull", &path, "--prometheus", "ftp://x"],
        &["usage", "pull", &path, "--prometheus", "http://user:pw@x"],
        &[
            "usage",
            "pull",
            &path,
            "--prometheus",
            "http://x",
            "--since",
            "ten days",
        ],
        &[
            "usage",
            "pull",
            &path,
            "--prometheus",
            "http://x",
            "--cluster",
            "cc",
        ],
        &[
            "usage",
            "pull",
            &path,
            "--prometheus",
            "http://x",
            "--to",
            "2026-01-01",
            "--rewrite-from",
            "2026-02-01",
        ],
    ];
    for args in cases {
        let out = run(args, &[]);
        assert_eq!(out.code, 2, "{args:?}: {}", out.stderr);
        assert!(!out.stderr.contains("pw@"), "{}", out.stderr);
    }
    let out = run(&["usage", "pull", &path], &[]);
    assert_eq!(out.code, 2);
    assert!(
        out.stderr
            .contains("cluster `c` has no Prometheus to read from"),
        "{}",
        out.stderr
    );
    let out = run(
        &[
            "usage",
            "pull",
            &path,
            "--since",
            "2d",
            "--from",
            "2026-01-01",
        ],
        &[],
    );
    assert_eq!(out.code, 2);
    let missing_ca = repo("      caFile: nope.pem\n");
    let out = run(
        &[
            "usage",
            "pull",
            &missing_ca.path().display().to_string(),
            "--prometheus",
            "http://x",
        ],
        &[],
    );
    assert_eq!(out.code, 2);
    assert!(
        out.stderr.contains("cannot read the CA file"),
        "{}",
        out.stderr
    );
}

fn commit_all(repo: &git2::Repository) {
    let mut index = repo.index().unwrap();
    index
        .add_all(["*"], git2::IndexAddOption::DEFAULT, None)
        .unwrap();
    index.write().unwrap();
    let tree = repo.find_tree(index.write_tree().unwrap()).unwrap();
    let sig = git2::Signature::now("test", "test@capops.invalid").unwrap();
    let parent = repo.head().ok().and_then(|h| h.peel_to_commit().ok());
    let parents: Vec<&git2::Commit> = parent.iter().collect();
    repo.commit(Some("HEAD"), &sig, &sig, "pull", &tree, &parents)
        .unwrap();
}

/// The `usage-history-rewritten` warnings of `check --base HEAD`, and the
/// decision on the usage history (the gate judges a rewrite; an append is
/// approved automatically).
/// `check --base HEAD` as `author` opened the change (`None`: unknown).
fn rewrite_warnings_by(path: &str, author: Option<&str>) -> (Vec<String>, String) {
    let mut args = vec![
        "check",
        path,
        "--base",
        "HEAD",
        "--at",
        "2026-01-05T04:00:00Z",
        "--format",
        "json",
    ];
    if let Some(a) = author {
        args.extend(["--author", a]);
    }
    let out = run(&args, &[]);
    let v: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    let decision = v["decisions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["kind"] == "UsageHistory")
        .map(|d| d["decision"].as_str().unwrap().to_string())
        .unwrap_or_default();
    let expected = i32::from(decision == "needs-approval");
    assert_eq!(out.code, expected, "{}\n{}", out.stderr, out.stdout);
    let warnings = v["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| d["code"] == "usage-history-rewritten")
        .map(|d| d["message"].as_str().unwrap().to_string())
        .collect();
    (warnings, decision)
}

/// The same, opened by the repository's usage puller.
fn rewrite_warnings(path: &str) -> (Vec<String>, String) {
    rewrite_warnings_by(path, Some("usage-bot"))
}

#[test]
fn the_gate_sees_a_rewrite_of_committed_hours_and_not_an_append() {
    let values = Arc::new(Mutex::new(("2", "1.5")));
    let current = values.clone();
    let server = serve(Arc::new(move |_, seen: &Seen| {
        let (a, u) = *current.lock().unwrap();
        (200, answer_with(seen, a, u), Duration::ZERO)
    }));
    let dir = repo("    pullers: [usage-bot]\n");
    let path = dir.path().display().to_string();
    let git = git2::Repository::init(dir.path()).unwrap();
    let pull_to = |to: &str, extra: &[&str]| {
        let mut args = vec![
            "usage",
            "pull",
            &path,
            "--prometheus",
            &server.url,
            "--to",
            to,
        ];
        args.extend(extra);
        let out = run(&args, &[]);
        assert_eq!(out.code, 0, "{}", out.stderr);
    };
    pull_to("2026-01-05T02:00:00Z", &["--from", "2026-01-05T00:00:00Z"]);
    commit_all(&git);
    pull_to("2026-01-05T04:00:00Z", &[]);
    assert_eq!(
        std::fs::read_to_string(dir.path().join("usage/c.2026-01.csv"))
            .unwrap()
            .lines()
            .count(),
        5
    );
    assert_eq!(rewrite_warnings(&path), (vec![], "approved".to_string()));
    // The same hours from anyone but the usage puller are judged.
    assert_eq!(
        rewrite_warnings_by(&path, Some("alice")),
        (vec![], "needs-approval".to_string())
    );
    assert_eq!(
        rewrite_warnings_by(&path, None),
        (vec![], "needs-approval".to_string())
    );
    commit_all(&git);
    // The collector's numbers were wrong: pull again from hour 1 with the fixed ones.
    *values.lock().unwrap() = ("3", "2.5");
    pull_to(
        "2026-01-05T04:00:00Z",
        &["--rewrite-from", "2026-01-05T01:00:00Z"],
    );
    assert_eq!(
        rewrite_warnings(&path),
        (
            vec!["usage/c.2026-01.csv changes 3 committed rows of HEAD, from 2026-01-05T01:00:00Z on: a rewrite of usage history".to_string()],
            "needs-approval".to_string()
        )
    );
    // A file renamed holds the same rows, wherever they are: no rewrite.
    commit_all(&git);
    std::fs::rename(
        dir.path().join("usage/c.2026-01.csv"),
        dir.path().join("usage/c-renamed.csv"),
    )
    .unwrap();
    assert_eq!(rewrite_warnings(&path).0, Vec::<String>::new());
}

#[test]
fn a_dry_run_writes_nothing_and_a_rewrite_with_nothing_measured_keeps_the_history() {
    let empty = r#"{"status":"success","data":{"resultType":"matrix","result":[]}}"#;
    let measured = Arc::new(Mutex::new(true));
    let now = measured.clone();
    let server = serve(Arc::new(move |_, seen: &Seen| {
        let body = if *now.lock().unwrap() {
            answer(seen)
        } else {
            empty.to_string()
        };
        (200, body, Duration::ZERO)
    }));
    let dir = repo("");
    let path = dir.path().display().to_string();
    let args = |extra: &[&'static str]| {
        let mut a: Vec<String> = [
            "usage",
            "pull",
            &path,
            "--prometheus",
            &server.url,
            "--to",
            "2026-01-05T03:00:00Z",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        a.extend(extra.iter().map(|s| s.to_string()));
        a
    };
    let go = |a: Vec<String>| {
        let refs: Vec<&str> = a.iter().map(String::as_str).collect();
        run(&refs, &[])
    };
    let dry = go(args(&[
        "--from",
        "2026-01-05T00:00:00Z",
        "--dry-run",
        "--format",
        "json",
    ]));
    assert_eq!(dry.code, 0, "{}", dry.stderr);
    let v: serde_json::Value = serde_json::from_str(&dry.stdout).unwrap();
    assert_eq!(
        (v["dryRun"].as_bool(), v["clusters"][0]["added"].as_u64()),
        (Some(true), Some(3))
    );
    assert!(!dir.path().join("usage").exists());

    assert_eq!(go(args(&["--from", "2026-01-05T00:00:00Z"])).code, 0);
    let file = dir.path().join("usage/c.2026-01.csv");
    let pulled = std::fs::read_to_string(&file).unwrap();
    assert_eq!(pulled.lines().count(), 4);
    *measured.lock().unwrap() = false;
    let out = go(args(&["--rewrite-from", "2026-01-05T00:00:00Z"]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stderr
            .contains("c: nothing measured from 2026-01-05T00:00:00Z"),
        "{}",
        out.stderr
    );
    assert_eq!(std::fs::read_to_string(&file).unwrap(), pulled);
}
