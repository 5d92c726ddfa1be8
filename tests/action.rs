//! The action's installer (`.github/capops-install.sh`), run with bash as the
//! action runs it: a prebuilt release is used only when its SHA-256 matches,
//! a missing release falls back to a cached build of the version asked for,
//! and `action.yml` passes inputs through the environment, never into scripts.

use std::path::Path;
use std::process::Command;

mod common;

struct Resolved {
    code: i32,
    outputs: String,
    stdout: String,
}

/// bash, curl, tar and sha256sum, as on GitHub's runners (.ci/github.sh installs them in CI).
fn bash_available() -> bool {
    let ok = Command::new("bash")
        .arg("-c")
        .arg("command -v curl && command -v tar && command -v sha256sum")
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        assert!(
            std::env::var("CAPOPS_CI").is_err(),
            "bash, curl, tar and sha256sum are needed for the action tests (CAPOPS_CI is set)"
        );
        eprintln!("skipped: bash, curl, tar or sha256sum is not installed");
    }
    ok
}

/// Runs `resolve` with a release server at `server` (a file:// URL).
fn resolve(tmp: &Path, version: &str, server: &str, repo: &str) -> Resolved {
    let outputs = tmp.join("outputs");
    std::fs::write(&outputs, "").unwrap();
    let out = Command::new("bash")
        .arg(common::root().join(".github/capops-install.sh"))
        .arg("resolve")
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", tmp)
        .env("GITHUB_ACTION_PATH", common::root())
        .env("GITHUB_OUTPUT", &outputs)
        .env("GITHUB_SERVER_URL", server)
        .env("RUNNER_TEMP", tmp)
        .env("RUNNER_OS", "Linux")
        .env("RUNNER_ARCH", "X64")
        .env("INPUT_VERSION", version)
        .env("RELEASE_REPO", repo)
        .output()
        .unwrap();
    Resolved {
        code: out.status.code().unwrap_or(-1),
        outputs: std::fs::read_to_string(&outputs).unwrap(),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
    }
}

/// A release `v9.9.9` holding a `capops` script, with a checksum file.
fn release(tmp: &Path, good_checksum: bool) -> String {
    let dir = tmp.join("server/org/capops/releases/download/v9.9.9");
    std::fs::create_dir_all(&dir).unwrap();
    let stage = tmp.join("stage");
    std::fs::create_dir_all(&stage).unwrap();
    std::fs::write(stage.join("capops"), "#!/bin/sh\necho prebuilt capops\n").unwrap();
    let asset = "capops-v9.9.9-x86_64-unknown-linux-gnu.tar.gz";
    let ok = Command::new("tar")
        .arg("-czf")
        .arg(dir.join(asset))
        .arg("-C")
        .arg(&stage)
        .arg("capops")
        .status()
        .unwrap()
        .success();
    assert!(ok);
    let sum = Command::new("sha256sum")
        .arg(dir.join(asset))
        .output()
        .unwrap();
    let hex = String::from_utf8_lossy(&sum.stdout)
        .split_whitespace()
        .next()
        .unwrap()
        .to_string();
    let hex = if good_checksum { hex } else { "0".repeat(64) };
    std::fs::write(
        dir.join(format!("{asset}.sha256")),
        format!("{hex}  {asset}\n"),
    )
    .unwrap();
    format!("file://{}", tmp.join("server").display())
}

#[test]
fn a_verified_release_binary_is_used() {
    if !bash_available() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let server = release(tmp.path(), true);
    let r = resolve(tmp.path(), "v9.9.9", &server, "org/capops");
    assert_eq!(r.code, 0, "{}", r.stdout);
    assert!(r.outputs.contains("installed=true"), "{}", r.outputs);
    assert!(r.outputs.contains("version=9.9.9"));
    let bin = r
        .outputs
        .lines()
        .find_map(|l| l.strip_prefix("bin="))
        .unwrap();
    let ran = Command::new(bin).output().unwrap();
    assert_eq!(String::from_utf8_lossy(&ran.stdout), "prebuilt capops\n");
}

#[test]
fn a_checksum_that_does_not_match_stops_the_job() {
    if !bash_available() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let server = release(tmp.path(), false);
    let r = resolve(tmp.path(), "9.9.9", &server, "org/capops");
    assert_eq!(r.code, 1);
    assert!(r.stdout.contains("checksum mismatch"), "{}", r.stdout);
    assert!(!r.outputs.contains("installed=true"));
}

#[test]
fn without_a_release_the_version_is_built_once_and_cached() {
    if !bash_available() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let server = format!("file://{}", tmp.path().join("empty").display());
    // The action's own version (empty input): built from the action's source.
    let r = resolve(tmp.path(), "", &server, "org/capops");
    assert_eq!(r.code, 0, "{}", r.stdout);
    let own = env!("CARGO_PKG_VERSION");
    assert!(r.outputs.contains("installed=false"), "{}", r.outputs);
    assert!(r.outputs.contains(&format!("version={own}")));
    assert!(r.outputs.contains("from-source=true"));
    let hash = r
        .outputs
        .lines()
        .find_map(|l| l.strip_prefix("source-hash="))
        .unwrap();
    assert_eq!(hash.len(), 16, "the cache key follows the source");
    // Another version: built from its tag, cached under its own key.
    let r = resolve(tmp.path(), "0.0.1", &server, "org/capops");
    assert!(r.outputs.contains("from-source=false") && r.outputs.contains("source-hash=release"));
    assert!(r.outputs.contains("build-0.0.1"));
}

#[test]
fn a_bad_version_is_refused() {
    if !bash_available() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let r = resolve(tmp.path(), "1.0; rm -rf /", "file:///nowhere", "org/capops");
    assert_eq!(r.code, 2);
    assert!(r.stdout.contains("is not a version"));
}

#[test]
fn the_action_passes_inputs_through_the_environment() {
    let action = std::fs::read_to_string(common::root().join("action.yml")).unwrap();
    let mut in_run = false;
    for line in action.lines() {
        let t = line.trim_start();
        if t.starts_with("run:") {
            in_run = true;
        } else if t.starts_with("- ") || t.starts_with("env:") || t.starts_with("with:") {
            in_run = false;
        }
        if in_run {
            assert!(
                !line.contains("${{"),
                "an expression inside a script: {line}"
            );
        }
    }
    for output in ["exit-code", "decision-json", "comment-url"] {
        assert!(
            action.contains(&format!("  {output}:\n")),
            "output {output}"
        );
    }
    assert!(action.contains("--github"));
}
