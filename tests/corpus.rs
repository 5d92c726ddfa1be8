//! The bad-input corpus: one folder per case under `tests/corpus/`.
//!
//! Each case holds a capacity repository in `repo/` and `expect.yaml`: the
//! exit code of `capops validate`, every diagnostic code it must report (as a
//! multiset) and, optionally, where some of them must point. Inputs that cannot
//! be committed (a 50 MB file, a symlink loop, a dangling link) are made at test
//! time from `generate:` entries. Every case runs through the real command line
//! (`--format json`) under a time limit, so a hang fails the test instead of
//! stalling it. Adding a case needs no Rust.

use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::Duration;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Expect {
    description: String,
    exit: i32,
    codes: Vec<String>,
    #[serde(default)]
    at: BTreeMap<String, Vec<String>>,
    #[serde(default)]
    generate: Vec<Generate>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Generate {
    path: String,
    kind: String,
    #[serde(default)]
    bytes: usize,
    #[serde(default)]
    depth: usize,
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}

fn generate(repo: &Path, g: &Generate) {
    let path = repo.join(&g.path);
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).unwrap();
    }
    match g.kind.as_str() {
        // A large YAML file: a valid document followed by comment lines.
        "large" => {
            let mut text = String::with_capacity(g.bytes + 100);
            text.push_str("# padding\n");
            while text.len() < g.bytes {
                text.push_str(
                    "# ................................................................\n",
                );
            }
            std::fs::write(&path, text).unwrap();
        }
        // Block mappings nested `depth` levels deep.
        "nested-block" => {
            let text: String = (0..g.depth)
                .map(|i| format!("{}k{i}:\n", " ".repeat(i)))
                .collect();
            std::fs::write(&path, text).unwrap();
        }
        "dangling-symlink" => {
            std::os::unix::fs::symlink(repo.join("does-not-exist.yaml"), &path).unwrap()
        }
        "symlink-loop" => std::os::unix::fs::symlink(path.parent().unwrap(), &path).unwrap(),
        // Unreadable for anyone but root; root reads it, so cases pair it with a dangling link.
        "no-permission" => {
            use std::os::unix::fs::PermissionsExt;
            std::fs::write(&path, "a: 1\n").unwrap();
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o000)).unwrap();
        }
        other => panic!("unknown generate kind {other}"),
    }
}

struct Run {
    exit: i32,
    json: serde_json::Value,
    stderr: String,
}

fn run_validate(repo: PathBuf) -> Option<Run> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut out = Vec::new();
        let mut err = Vec::new();
        let env = |_: &str| None;
        let mut io = capops::cli::Io {
            stdout: &mut out,
            stderr: &mut err,
            env: &env,
            stderr_is_terminal: false,
        };
        let args = vec![
            "capops".into(),
            "validate".into(),
            "--format".into(),
            "json".into(),
            repo.into_os_string(),
        ];
        let exit = capops::cli::run(args, &mut io);
        let json = serde_json::from_slice(&out).unwrap_or(serde_json::Value::Null);
        let _ = tx.send(Run {
            exit,
            json,
            stderr: String::from_utf8_lossy(&err).into_owned(),
        });
    });
    rx.recv_timeout(Duration::from_secs(120)).ok()
}

fn check_case(case: &Path) -> Result<(), String> {
    let expect_text = std::fs::read_to_string(case.join("expect.yaml"))
        .map_err(|e| format!("expect.yaml: {e}"))?;
    let expect: Expect =
        serde_saphyr::from_str(&expect_text).map_err(|e| format!("expect.yaml: {e}"))?;
    assert!(!expect.description.is_empty());
    let tmp = tempfile::tempdir().unwrap();
    let repo = tmp.path().join("repo");
    if case.join("repo").is_dir() {
        copy_dir(&case.join("repo"), &repo);
    } else {
        std::fs::create_dir_all(&repo).unwrap();
    }
    for g in &expect.generate {
        generate(&repo, g);
    }
    let run = run_validate(repo.clone()).ok_or("did not finish within 120 s")?;
    let diags = run.json["diagnostics"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let mut got: Vec<String> = diags
        .iter()
        .map(|d| d["code"].as_str().unwrap_or("?").to_string())
        .collect();
    got.sort();
    let mut want = expect.codes.clone();
    want.sort();
    let mut problems = Vec::new();
    if run.exit != expect.exit {
        problems.push(format!("exit {} (expected {})", run.exit, expect.exit));
    }
    if got != want {
        problems.push(format!("codes {got:?} (expected {want:?})"));
    }
    let prefix = format!("{}/", repo.display());
    for (code, places) in &expect.at {
        for place in places {
            let found = diags.iter().any(|d| {
                d["code"] == code.as_str()
                    && format!(
                        "{}:{}:{}",
                        d["file"].as_str().unwrap_or("").trim_start_matches(&prefix),
                        d["line"],
                        d["column"]
                    ) == *place
            });
            if !found {
                let seen: Vec<String> = diags
                    .iter()
                    .filter(|d| d["code"] == code.as_str())
                    .map(|d| {
                        format!(
                            "{}:{}:{}",
                            d["file"].as_str().unwrap_or("").trim_start_matches(&prefix),
                            d["line"],
                            d["column"]
                        )
                    })
                    .collect();
                problems.push(format!("{code} not at {place} (seen at {seen:?})"));
            }
        }
    }
    // Every diagnostic names a file and a position, except a missing repository root.
    for d in &diags {
        if d["code"] != "no-config" && (d["file"].is_null() || d["line"].is_null()) {
            problems.push(format!("{} has no location", d["code"]));
        }
        if d["help"].is_null() && d["severity"] == "error" {
            problems.push(format!("{} has no help", d["code"]));
        }
    }
    if run.json.is_null() {
        problems.push(format!("no JSON on stdout; stderr: {}", run.stderr));
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(problems.join("; "))
    }
}

#[test]
fn bad_input_corpus() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus");
    let mut cases: Vec<PathBuf> = std::fs::read_dir(&root)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .collect();
    cases.sort();
    assert!(cases.len() >= 30, "corpus has {} cases", cases.len());
    let failures: Vec<String> = cases
        .iter()
        .filter_map(|c| {
            check_case(c)
                .err()
                .map(|e| format!("{}: {e}", c.file_name().unwrap().to_string_lossy()))
        })
        .collect();
    assert!(
        failures.is_empty(),
        "{} case(s) failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
