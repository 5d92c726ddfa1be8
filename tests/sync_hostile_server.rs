//! `capops plan` against an API server that misbehaves: one that pages a
//! list forever (the same continue token again and again), and one whose
//! answer is larger than capops reads. Each is a cluster that could not be
//! planned (exit 3), said at once, with memory bounded; the token in the
//! kubeconfig is never shown.

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
