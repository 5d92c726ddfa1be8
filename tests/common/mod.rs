//! Helpers shared by the integration tests: run the command line in-process
//! (in a thread, with a time limit) with a chosen environment and clock and
//! capture what it writes; copy fixture folders; make real git repositories.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::Duration;

/// What one run of the command line returned and wrote.
pub struct Out {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
    /// stdout read as JSON (null when it is not JSON).
    pub json: serde_json::Value,
}

/// The clock the tests run at unless they pass `--at`.
pub const NOW: &str = "2026-11-22T12:00:00Z";

/// How long one in-process run may take before the test fails (a hang is a bug).
pub const TIME_LIMIT: Duration = Duration::from_secs(120);

/// Runs `capops ARGS` in-process; `env` is all the environment it sees.
pub fn run(args: &[&str], env: &[(&str, &str)]) -> Out {
    let args: Vec<std::ffi::OsString> = args.iter().map(Into::into).collect();
    run_os(args, env)
}

/// [`run`] with arguments that may not be UTF-8 (paths).
pub fn run_os(args: Vec<std::ffi::OsString>, env: &[(&str, &str)]) -> Out {
    let env: Vec<(String, String)> = env
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut out = Vec::new();
        let mut err = Vec::new();
        let lookup = move |k: &str| env.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone());
        let mut io = capops::cli::Io {
            stdout: &mut out,
            stderr: &mut err,
            env: &lookup,
            stderr_is_terminal: false,
            now: NOW.parse().unwrap(),
        };
        let mut argv: Vec<std::ffi::OsString> = vec!["capops".into()];
        argv.extend(args);
        let code = capops::cli::run(argv, &mut io);
        let stdout = String::from_utf8_lossy(&out).into_owned();
        let _ = tx.send(Out {
            code,
            json: serde_json::from_str(&stdout).unwrap_or(serde_json::Value::Null),
            stdout,
            stderr: String::from_utf8_lossy(&err).into_owned(),
        });
    });
    rx.recv_timeout(TIME_LIMIT)
        .unwrap_or_else(|_| panic!("capops did not finish within {TIME_LIMIT:?}"))
}

/// The crate's root folder.
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The bundled example capacity repository.
pub fn example() -> String {
    root().join("examples/acme").display().to_string()
}

/// The policy tests' fixture repository.
pub fn fixture() -> PathBuf {
    root().join("policies/tests/fixture")
}

/// Copies a folder recursively (files and folders; links are not followed).
pub fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let target = to.join(e.file_name());
        let ty = e.file_type().unwrap();
        if ty.is_dir() {
            copy_dir(&e.path(), &target);
        } else if ty.is_file() {
            std::fs::copy(e.path(), target).unwrap();
        }
    }
}

/// Stages every file of a git working tree and commits it on HEAD; returns the commit id.
pub fn commit_all(repo: &git2::Repository, message: &str) -> String {
    commit_all_dated(repo, message, None)
}

/// [`commit_all`] with the commit dated `seconds` since the epoch (now when `None`).
pub fn commit_all_dated(repo: &git2::Repository, message: &str, seconds: Option<i64>) -> String {
    use git2::{IndexAddOption, Signature};
    let mut index = repo.index().unwrap();
    index.add_all(["*"], IndexAddOption::DEFAULT, None).unwrap();
    index.update_all(["*"], None).unwrap();
    index.write().unwrap();
    let tree = repo.find_tree(index.write_tree().unwrap()).unwrap();
    let sig = match seconds {
        Some(s) => Signature::new("test", "test@capops.invalid", &git2::Time::new(s, 0)),
        None => Signature::now("test", "test@capops.invalid"),
    }
    .unwrap();
    let parents: Vec<git2::Commit> = repo
        .head()
        .ok()
        .and_then(|h| h.peel_to_commit().ok())
        .into_iter()
        .collect();
    let parent_refs: Vec<&git2::Commit> = parents.iter().collect();
    repo.commit(Some("HEAD"), &sig, &sig, message, &tree, &parent_refs)
        .unwrap()
        .to_string()
}

/// Diagnostic codes of a JSON result, in order.
pub fn codes(json: &serde_json::Value) -> Vec<String> {
    json["diagnostics"]
        .as_array()
        .map(|a| {
            a.iter()
                .map(|d| d["code"].as_str().unwrap_or("").to_string())
                .collect()
        })
        .unwrap_or_default()
}

/// A capacity repository in a temporary folder: a default Config and one
/// Cluster document (`cluster.yaml`).
pub fn repo_with_cluster(cluster_yaml: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("capops.yaml"),
        "apiVersion: capops.dev/v1alpha1\nkind: Config\nmetadata: {name: t}\nspec: {}\n",
    )
    .unwrap();
    std::fs::write(dir.path().join("cluster.yaml"), cluster_yaml).unwrap();
    dir
}
