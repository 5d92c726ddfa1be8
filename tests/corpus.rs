//! The bad-input corpus: one folder per case under `tests/corpus/`.
//!
//! Each case holds a capacity repository in `repo/` and `expect.yaml`: the
//! exit code of `capops validate`, every diagnostic code it must report (as a
//! multiset) and, optionally, where some of them must point. Inputs that cannot
//! be committed (a 50 MB file, a symlink loop, a dangling link) are made at test
//! time from `generate:` entries. A case may start from a shared repository
//! under `tests/corpus/_base/` (`base: minimal`) and hold only the files it
//! adds or replaces (`remove:` deletes base files). A case may pin the message
//! people read: `stderr.txt` is what `capops validate` writes to stderr, the
//! repository's path shown as `REPO` (`CAPOPS_BLESS=1` rewrites it). Every case
//! runs through the real command line under a time limit, so a hang fails the
//! test instead of stalling it. Adding a case needs no Rust.

use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

mod common;
use common::copy_dir;

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
    /// A shared repository under `tests/corpus/_base/` the case starts from.
    #[serde(default)]
    base: Option<String>,
    /// Files of the base the case deletes.
    #[serde(default)]
    remove: Vec<String>,
    /// Text that must appear nowhere in what capops writes (a secret outside the repository).
    #[serde(default)]
    absent: Vec<String>,
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
        // What makes a folder a submodule (git will not commit a `.git` path).
        "submodule-marker" => {
            std::fs::write(&path, "gitdir: ../../.git/modules/other\n").unwrap();
        }
        // A link to a file outside the repository holding a secret.
        "symlink-outside" => {
            let outside = repo.parent().unwrap().join("outside-secret.yaml");
            std::fs::write(&outside, "token: CAPOPS-SECRET-OUTSIDE-THE-REPOSITORY\n").unwrap();
            std::os::unix::fs::symlink(&outside, &path).unwrap();
        }
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
    let out = common::run_os(
        vec![
            "validate".into(),
            "--format".into(),
            "json".into(),
            repo.into_os_string(),
        ],
        &[],
    );
    Some(Run {
        exit: out.code,
        json: out.json,
        stderr: out.stderr,
    })
}

fn check_case(case: &Path) -> Result<(), String> {
    let expect_text = std::fs::read_to_string(case.join("expect.yaml"))
        .map_err(|e| format!("expect.yaml: {e}"))?;
    let expect: Expect =
        serde_saphyr::from_str(&expect_text).map_err(|e| format!("expect.yaml: {e}"))?;
    assert!(!expect.description.is_empty());
    let tmp = tempfile::tempdir().unwrap();
    let repo = tmp.path().join("repo");
    std::fs::create_dir_all(&repo).unwrap();
    if let Some(base) = &expect.base {
        let dir = case.parent().unwrap().join("_base").join(base);
        if !dir.is_dir() {
            return Err(format!("no base repository tests/corpus/_base/{base}"));
        }
        copy_dir(&dir, &repo);
    }
    for file in &expect.remove {
        std::fs::remove_file(repo.join(file)).map_err(|e| format!("remove {file}: {e}"))?;
    }
    if case.join("repo").is_dir() {
        copy_dir(&case.join("repo"), &repo);
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
    let human = common::run_os(vec!["validate".into(), repo.clone().into_os_string()], &[]);
    for text in &expect.absent {
        let everything = format!("{}{}{}{}", run.json, run.stderr, human.stdout, human.stderr);
        if everything.contains(text.as_str()) {
            problems.push(format!("`{text}` appears in the output"));
        }
    }
    let snapshot = case.join("stderr.txt");
    if snapshot.is_file() || std::env::var_os("CAPOPS_BLESS_CORPUS").is_some() {
        let human = common::run_os(
            vec![
                "validate".into(),
                "--color".into(),
                "never".into(),
                repo.clone().into_os_string(),
            ],
            &[],
        );
        let text = human.stderr.replace(&repo.display().to_string(), "REPO");
        if std::env::var_os("CAPOPS_BLESS").is_some() {
            std::fs::write(&snapshot, &text).unwrap();
        } else if std::fs::read_to_string(&snapshot).ok().as_deref() != Some(text.as_str()) {
            problems.push(format!(
                "stderr differs from stderr.txt (CAPOPS_BLESS=1 rewrites it):\n{text}"
            ));
        }
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
        .filter(|p| p.is_dir() && !p.file_name().unwrap().to_string_lossy().starts_with('_'))
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
