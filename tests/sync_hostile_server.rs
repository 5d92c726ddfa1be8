//! `capops plan` against an API server that misbehaves: one that pages a
//! list forever (the same continue token again and again), and one whose
//! answer is larger than capops reads. Each is a cluster that could not be
//! planned (exit 3), said at once, with memory bounded; the token in the
//! kubeconfig is never shown. And a kubeconfig naming a CA or token file
//! that is a named pipe: refused (exit 2) before kube would wait on it.

mod common;

use common::{copy_dir, example, run};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::path::Path;

/// Serves every request with `answer(n)`: (content-length, body writer).
fn serve(answer: fn(&mut std::net::TcpStream)) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            std::thread::spawn(move || {
                let mut reader = BufReader::new(stream.try_clone().unwrap());
                loop {
                    let mut line = String::new();
                    if reader.read_line(&mut line).unwrap_or(0) == 0 {
                        return;
                    }
                    let mut length = 0usize;
                    loop {
                        let mut h = String::new();
                        if reader.read_line(&mut h).unwrap_or(0) == 0 || h == "\r\n" {
                            break;
                        }
                        if let Some(v) = h.to_ascii_lowercase().strip_prefix("content-length:") {
                            length = v.trim().parse().unwrap_or(0);
                        }
                    }
                    let mut body = vec![0; length];
                    let _ = reader.read_exact(&mut body);
                    answer(&mut stream);
                }
            });
        }
    });
    url
}

fn kubeconfig(dir: &Path, url: &str) -> String {
    let path = dir.join("kubeconfig");
    std::fs::write(
        &path,
        format!(
            "apiVersion: v1\nkind: Config\ncurrent-context: prod-h100-use1\nclusters:\n- {{name: c1, cluster: {{server: \"{url}\"}}}}\nusers:\n- {{name: u, user: {{token: \"kube-secret-token-9f2c\"}}}}\ncontexts:\n- {{name: prod-h100-use1, context: {{cluster: c1, user: u}}}}\n"
        ),
    )
    .unwrap();
    path.display().to_string()
}

fn plan(answer: fn(&mut std::net::TcpStream)) -> common::Out {
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path().join("repo");
    copy_dir(Path::new(&example()), &repo);
    let kc = kubeconfig(dir.path(), &serve(answer));
    run(
        &[
            "plan",
            repo.to_str().unwrap(),
            "--kubeconfig",
            &kc,
            "--cluster",
            "prod-h100",
        ],
        &[],
    )
}

#[test]
fn a_server_that_pages_forever_is_refused_at_the_repeated_page() {
    let out = plan(|s| {
        let b = r#"{"kind":"List","apiVersion":"v1","metadata":{"resourceVersion":"1","continue":"same-token"},"items":[]}"#;
        let _ = write!(
            s,
            "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{b}",
            b.len()
        );
    });
    assert_eq!(out.code, 3, "{}", out.stderr);
    let all = out.stdout.clone() + &out.stderr;
    assert!(all.contains("its continue token repeats"), "{all}");
    assert!(!all.contains("kube-secret-token-9f2c"));
}

#[test]
fn an_answer_larger_than_capops_reads_is_not_read_to_the_end() {
    // 300 MiB announced and sent: capops stops at 256 MiB.
    let out = plan(|s| {
        let total: usize = 300 << 20;
        let _ = write!(
            s,
            "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {total}\r\n\r\n{{\"items\":["
        );
        let chunk = vec![b' '; 1 << 20];
        let mut sent = 10;
        while sent + chunk.len() <= total {
            if s.write_all(&chunk).is_err() {
                return;
            }
            sent += chunk.len();
        }
    });
    assert_eq!(out.code, 3, "{}", out.stderr);
    let all = out.stdout.clone() + &out.stderr;
    assert!(all.contains("the answer is larger than 256 MiB"), "{all}");
}

#[test]
fn a_file_the_kubeconfig_names_that_is_a_pipe_is_refused_before_kube_reads_it() {
    // A CA or token file that is a named pipe would hold the read forever.
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("ca.pem");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(made.success());
    for (cluster, user) in [
        (
            format!(
                "{{name: c1, cluster: {{server: \"https://127.0.0.1:1\", certificate-authority: \"{}\"}}}}",
                fifo.display()
            ),
            "{token: \"kube-secret-token-9f2c\"}".to_string(),
        ),
        (
            "{name: c1, cluster: {server: \"https://127.0.0.1:1\"}}".to_string(),
            format!("{{tokenFile: \"{}\"}}", fifo.display()),
        ),
    ] {
        let out = plan_with(dir.path(), &cluster, "c1", &user);
        let all = out.stdout.clone() + &out.stderr;
        assert_eq!(out.code, 2, "{all}");
        assert!(all.contains("is not a regular file"), "{all}");
        assert!(!all.contains("kube-secret-token-9f2c"), "{all}");
    }
}

#[test]
fn a_server_that_answers_null_is_not_read_as_an_empty_cluster() {
    // `null` with HTTP 200 to every call: not a list with nothing in it.
    let out = plan(|s| {
        let _ = write!(
            s,
            "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 4\r\n\r\nnull"
        );
    });
    let all = out.stdout.clone() + &out.stderr;
    assert_eq!(out.code, 3, "{all}");
    assert!(all.contains("not a Kubernetes object"), "{all}");
}

#[test]
fn a_server_that_echoes_the_token_in_any_field_of_its_answer_never_shows_it() {
    // A proxy in front of the server echoes the request's header into the
    // Status's reason and a cause's field, beside its message.
    let out = plan(|s| {
        let b = r#"{"kind":"Status","apiVersion":"v1","status":"Failure","message":"Bearer kube-secret-token-9f2c","reason":"echo Authorization=Bearer kube-secret-token-9f2c","code":418,"details":{"causes":[{"reason":"kube-secret-token-9f2c","field":"Bearer kube-secret-token-9f2c","message":"kube-secret-token-9f2c"}]}}"#;
        let _ = write!(
            s,
            "HTTP/1.1 418 I'm a teapot\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{b}",
            b.len()
        );
    });
    let all = out.stdout.clone() + &out.stderr;
    assert_eq!(out.code, 3, "{all}");
    assert!(all.contains("418"), "{all}");
    assert!(!all.contains("kube-secret-token-9f2c"), "{all}");
}

static TOO_MANY: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

#[test]
fn a_server_that_says_slow_down_is_tried_three_times_a_call_and_said_so() {
    // 429 to everything: capops' three tries a call, not kube's fifteen
    // more under each (minutes), and the server's own words, not a timeout.
    let out = plan(|s| {
        TOO_MANY.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        let b = r#"{"kind":"Status","apiVersion":"v1","status":"Failure","message":"slow down","reason":"TooManyRequests","code":429}"#;
        let _ = write!(
            s,
            "HTTP/1.1 429 Too Many Requests\r\nretry-after: 1\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{b}",
            b.len()
        );
    });
    let all = out.stdout.clone() + &out.stderr;
    assert_eq!(out.code, 3, "{all}");
    assert!(all.contains("slow down (429 TooManyRequests)"), "{all}");
    let calls = TOO_MANY.load(std::sync::atomic::Ordering::SeqCst);
    assert!(
        calls.is_multiple_of(3) && calls <= 3 * 16,
        "{calls} requests"
    );
}

#[test]
fn a_server_that_asks_to_wait_is_waited_for() {
    // 429 with `Retry-After: 2`: capops waits the 2 seconds asked between
    // its tries (not its own half a second), so a call's three tries take
    // at least 4 seconds before it reports the server's words.
    let started = std::time::Instant::now();
    let out = plan(|s| {
        let b = r#"{"kind":"Status","apiVersion":"v1","status":"Failure","message":"too many requests, please try again later","reason":"TooManyRequests","code":429}"#;
        let _ = write!(
            s,
            "HTTP/1.1 429 Too Many Requests\r\nretry-after: 2\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{b}",
            b.len()
        );
    });
    let all = out.stdout.clone() + &out.stderr;
    assert_eq!(out.code, 3, "{all}");
    assert!(all.contains("429 TooManyRequests"), "{all}");
    assert!(
        started.elapsed() >= std::time::Duration::from_secs(4),
        "{:?}",
        started.elapsed()
    );
}

#[test]
fn a_context_that_cannot_be_used_gets_the_fix_for_its_own_fault() {
    let dir = tempfile::tempdir().unwrap();
    for (cluster_entry, context_cluster, help) in [
        (
            "{name: c1, cluster: {server: \"https://127.0.0.1:1\"}}",
            "nope",
            "make the context's `cluster` name a cluster entry of the kubeconfig",
        ),
        (
            "{name: c1, cluster: {server: \"https://127.0.0.1:1\", proxy-url: \"http://127.0.0.1:9\"}}",
            "c1",
            "capops does not connect through a kubeconfig's `proxy-url`",
        ),
    ] {
        let out = plan_with(
            dir.path(),
            cluster_entry,
            context_cluster,
            "{token: \"kube-secret-token-9f2c\"}",
        );
        let all = out.stdout.clone() + &out.stderr;
        assert!(all.contains("error[kube-context-missing]"), "{all}");
        assert!(all.contains(help), "{all}");
        assert!(!all.contains("kube-secret-token-9f2c"), "{all}");
    }
}

/// `capops plan` of the example's prod-h100 with a kubeconfig of one
/// context, `prod-h100-use1`: the cluster entry and user as given.
fn plan_with(dir: &Path, cluster: &str, context_cluster: &str, user: &str) -> common::Out {
    let repo = dir.join("repo");
    if !repo.exists() {
        copy_dir(Path::new(&example()), &repo);
    }
    let kc = dir.join("kubeconfig");
    std::fs::write(
        &kc,
        format!(
            "apiVersion: v1\nkind: Config\ncurrent-context: prod-h100-use1\nclusters:\n- {cluster}\nusers:\n- {{name: u, user: {user}}}\ncontexts:\n- {{name: prod-h100-use1, context: {{cluster: {context_cluster}, user: u}}}}\n"
        ),
    )
    .unwrap();
    run(
        &[
            "plan",
            repo.to_str().unwrap(),
            "--kubeconfig",
            kc.to_str().unwrap(),
            "--cluster",
            "prod-h100",
        ],
        &[],
    )
}

#[test]
fn a_token_read_from_a_token_file_is_never_shown_either() {
    // The user's token is in a `tokenFile`, not the kubeconfig; the server
    // quotes it bare (no `Bearer` before it) in its message.
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path().join("repo");
    copy_dir(Path::new(&example()), &repo);
    let token_file = dir.path().join("token");
    std::fs::write(&token_file, "file-secret-token-7c1d\n").unwrap();
    let url = serve(|s| {
        let b = r#"{"kind":"Status","apiVersion":"v1","status":"Failure","message":"token file-secret-token-7c1d is not valid for this cluster","reason":"Forbidden","code":403}"#;
        let _ = write!(
            s,
            "HTTP/1.1 403 Forbidden\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{b}",
            b.len()
        );
    });
    let kc = dir.path().join("kubeconfig");
    std::fs::write(
        &kc,
        format!(
            "apiVersion: v1\nkind: Config\ncurrent-context: prod-h100-use1\nclusters:\n- {{name: c1, cluster: {{server: \"{url}\"}}}}\nusers:\n- {{name: u, user: {{tokenFile: \"{}\"}}}}\ncontexts:\n- {{name: prod-h100-use1, context: {{cluster: c1, user: u}}}}\n",
            token_file.display()
        ),
    )
    .unwrap();
    let out = run(
        &[
            "plan",
            repo.to_str().unwrap(),
            "--kubeconfig",
            kc.to_str().unwrap(),
            "--cluster",
            "prod-h100",
        ],
        &[],
    );
    let all = out.stdout.clone() + &out.stderr;
    assert_eq!(out.code, 3, "{all}");
    assert!(all.contains("is not valid for this cluster"), "{all}");
    assert!(!all.contains("file-secret-token-7c1d"), "{all}");
}
