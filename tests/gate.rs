//! The gate's pull-request scenarios: one folder per case under `tests/gate/`.
//!
//! Each case is a pull request a hostile (or careless) contributor might
//! open. The test builds it as a real git repository: the base (a bundled
//! repository, `examples/acme` or a corpus base, plus the case's `before:`
//! steps: pull requests merged earlier) is committed; the case's `change:`
//! steps (edits, new files, deletions, links) are applied and committed as the
//! head; then `capops check --base <base commit>` runs through the real
//! command line, in JSON. `case.yaml` says what must come out: the exit code,
//! decisions (document, decision, tier, roles and people whose approval is
//! needed, rules that fired), diagnostic codes, and text that must appear
//! nowhere. A case with `merged: true` runs `check` without a base on the
//! head, as a merge queue or main does. Adding a case needs no Rust.

use serde::Deserialize;
use std::path::{Path, PathBuf};

mod common;
use common::{commit_all, copy_dir, root};

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Case {
    /// What the pull request tries, and which class of hole it belongs to.
    description: String,
    /// `acme` (examples/acme) or a folder of `tests/corpus/_base/`.
    base: String,
    /// The moment the check runs at.
    at: String,
    /// Pull requests merged into the base before this one.
    #[serde(default)]
    before: Vec<Step>,
    /// The pull request itself.
    change: Vec<Step>,
    /// Check the head alone (as main or a merge queue does), not against the base.
    #[serde(default)]
    merged: bool,
    /// Extra arguments to `capops check`.
    #[serde(default)]
    args: Vec<String>,
    expect: Expect,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Step {
    /// The file the step works on, relative to the repository root.
    path: String,
    /// Replace this text (which must be there) ...
    #[serde(default)]
    edit: Option<String>,
    /// ... with this.
    #[serde(default)]
    to: Option<String>,
    /// Write the file with this text (`{i}` numbered when `repeat` is given).
    #[serde(default)]
    write: Option<String>,
    /// Write `write` this many times, as YAML documents `{i}` = 1..=N.
    #[serde(default)]
    repeat: Option<usize>,
    /// Append this text to the file.
    #[serde(default)]
    append: Option<String>,
    /// Delete the file.
    #[serde(default)]
    remove: bool,
    /// Make the file a symbolic link to this target; `OUTSIDE` is a file
    /// outside the repository holding a secret.
    #[serde(default)]
    symlink: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Expect {
    exit: i32,
    /// How many decisions the check makes, when it matters.
    #[serde(default)]
    evaluated: Option<usize>,
    #[serde(default)]
    decisions: Vec<Decision>,
    /// Diagnostic codes that must be among those reported.
    #[serde(default)]
    codes: Vec<String>,
    /// Text that must appear nowhere in what capops writes.
    #[serde(default)]
    absent: Vec<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Decision {
    /// `Kind/name`.
    document: String,
    #[serde(default)]
    change: Option<String>,
    decision: String,
    #[serde(default)]
    tier: Option<String>,
    /// Roles whose approval is needed (all of them must be asked for).
    #[serde(default)]
    roles: Vec<String>,
    /// People or teams who must be among those asked.
    #[serde(default)]
    approvers: Vec<String>,
    /// People or teams who must not be among those asked.
    #[serde(default)]
    not_approvers: Vec<String>,
    /// Rules that must have fired.
    #[serde(default)]
    rules: Vec<String>,
    /// Rules that must not have fired.
    #[serde(default)]
    not_rules: Vec<String>,
    /// Request fields its tier requires that must be reported missing.
    #[serde(default)]
    missing: Vec<String>,
}

/// The secret a link outside the repository points at.
const SECRET: &str = "CAPOPS-GATE-SECRET-OUTSIDE-THE-REPOSITORY";

fn apply(repo: &Path, steps: &[Step]) -> Result<(), String> {
    for s in steps {
        let path = repo.join(&s.path);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(|e| e.to_string())?;
        }
        if let Some(from) = &s.edit {
            let text = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", s.path))?;
            if !text.contains(from.as_str()) {
                return Err(format!("{}: no `{from}` to edit", s.path));
            }
            let to = s.to.as_deref().unwrap_or("");
            std::fs::write(&path, text.replace(from.as_str(), to)).map_err(|e| e.to_string())?;
        } else if let Some(text) = &s.write {
            let body = match s.repeat {
                Some(n) => (1..=n)
                    .map(|i| text.replace("{i}", &i.to_string()))
                    .collect::<Vec<_>>()
                    .join("---\n"),
                None => text.clone(),
            };
            std::fs::write(&path, body).map_err(|e| e.to_string())?;
        } else if let Some(text) = &s.append {
            let mut old = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", s.path))?;
            old.push_str(text);
            std::fs::write(&path, old).map_err(|e| e.to_string())?;
        } else if s.remove {
            if path.is_dir() && !path.is_symlink() {
                std::fs::remove_dir_all(&path)
            } else {
                std::fs::remove_file(&path)
            }
            .map_err(|e| format!("{}: {e}", s.path))?;
        } else if let Some(target) = &s.symlink {
            let _ = std::fs::remove_file(&path);
            let target = if target == "OUTSIDE" {
                let outside = repo.parent().unwrap().join("outside-secret.yaml");
                std::fs::write(&outside, format!("token: {SECRET}\n")).unwrap();
                outside
            } else {
                PathBuf::from(target)
            };
            std::os::unix::fs::symlink(&target, &path).map_err(|e| e.to_string())?;
        } else {
            return Err(format!(
                "{}: a step needs edit, write, append, remove or symlink",
                s.path
            ));
        }
    }
    Ok(())
}

fn decision_problems(want: &Decision, decisions: &[serde_json::Value]) -> Vec<String> {
    let (kind, name) = want
        .document
        .split_once('/')
        .unwrap_or(("", &want.document));
    let Some(d) = decisions
        .iter()
        .find(|d| d["kind"] == kind && d["name"] == name)
    else {
        let seen: Vec<String> = decisions
            .iter()
            .map(|d| {
                format!(
                    "{}/{}",
                    d["kind"].as_str().unwrap_or(""),
                    d["name"].as_str().unwrap_or("")
                )
            })
            .collect();
        return vec![format!(
            "no decision on {} (decisions: {seen:?})",
            want.document
        )];
    };
    let mut problems = Vec::new();
    let field = |k: &str| d[k].as_str().unwrap_or("").to_string();
    if field("decision") != want.decision {
        problems.push(format!(
            "{}: decision {} (expected {})",
            want.document,
            field("decision"),
            want.decision
        ));
    }
    if let Some(c) = &want.change
        && field("change") != *c
    {
        problems.push(format!(
            "{}: change {} (expected {c})",
            want.document,
            field("change")
        ));
    }
    if let Some(t) = &want.tier
        && field("tier") != *t
    {
        problems.push(format!(
            "{}: tier {} (expected {t})",
            want.document,
            field("tier")
        ));
    }
    let approvals = d["approvals"].as_array().cloned().unwrap_or_default();
    let roles: Vec<&str> = approvals
        .iter()
        .filter_map(|a| a["role"].as_str())
        .collect();
    for r in &want.roles {
        if !roles.contains(&r.as_str()) {
            problems.push(format!(
                "{}: no approval by {r} asked (asked: {roles:?})",
                want.document
            ));
        }
    }
    let people: Vec<String> = approvals
        .iter()
        .flat_map(|a| {
            ["users", "teams"].into_iter().flat_map(move |k| {
                a[k].as_array()
                    .cloned()
                    .unwrap_or_default()
                    .into_iter()
                    .filter_map(|v| v.as_str().map(|s| s.trim_start_matches('@').to_string()))
            })
        })
        .collect();
    for p in &want.approvers {
        if !people.contains(p) {
            problems.push(format!(
                "{}: {p} is not asked to approve (asked: {people:?})",
                want.document
            ));
        }
    }
    for p in &want.not_approvers {
        if people.contains(p) {
            problems.push(format!(
                "{}: {p} must not be an approver (asked: {people:?})",
                want.document
            ));
        }
    }
    let fired: Vec<&str> = d["findings"]
        .as_array()
        .map(|f| f.iter().filter_map(|x| x["rule"].as_str()).collect())
        .unwrap_or_default();
    for r in &want.rules {
        if !fired.contains(&r.as_str()) {
            problems.push(format!(
                "{}: rule {r} did not fire (fired: {fired:?})",
                want.document
            ));
        }
    }
    for r in &want.not_rules {
        if fired.contains(&r.as_str()) {
            problems.push(format!("{}: rule {r} must not fire", want.document));
        }
    }
    let missing: Vec<&str> = d["missingFields"]
        .as_array()
        .map(|f| f.iter().filter_map(|x| x.as_str()).collect())
        .unwrap_or_default();
    for m in &want.missing {
        if !missing.contains(&m.as_str()) {
            problems.push(format!(
                "{}: {m} is not reported missing (missing: {missing:?})",
                want.document
            ));
        }
    }
    problems
}

fn run_case(dir: &Path) -> Result<(), String> {
    let text =
        std::fs::read_to_string(dir.join("case.yaml")).map_err(|e| format!("case.yaml: {e}"))?;
    let case: Case = serde_saphyr::from_str(&text).map_err(|e| format!("case.yaml: {e}"))?;
    assert!(!case.description.trim().is_empty());
    let tmp = tempfile::tempdir().unwrap();
    let repo = tmp.path().join("capacity");
    let base = match case.base.as_str() {
        "acme" => root().join("examples/acme"),
        other => root().join("tests/corpus/_base").join(other),
    };
    if !base.is_dir() {
        return Err(format!("no base repository {}", base.display()));
    }
    copy_dir(&base, &repo);
    let git = git2::Repository::init(&repo).map_err(|e| e.to_string())?;
    commit_all(&git, "the capacity repository");
    apply(&repo, &case.before)?;
    let base_commit = commit_all(&git, "pull requests merged before");
    apply(&repo, &case.change)?;
    commit_all(&git, "the pull request");

    let repo_arg = repo.display().to_string();
    let mut args: Vec<String> = vec!["check".into()];
    if !case.merged {
        args.extend(["--base".into(), base_commit.clone()]);
    }
    args.extend([
        "--at".into(),
        case.at.clone(),
        "--format".into(),
        "json".into(),
    ]);
    args.extend(case.args.iter().cloned());
    args.push(repo_arg.clone());
    let argv: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = common::run(&argv, &[]);

    let mut problems = Vec::new();
    if out.code != case.expect.exit {
        problems.push(format!("exit {} (expected {})", out.code, case.expect.exit));
    }
    let decisions = out.json["decisions"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    if let Some(n) = case.expect.evaluated
        && decisions.len() != n
    {
        problems.push(format!("{} decisions (expected {n})", decisions.len()));
    }
    for want in &case.expect.decisions {
        problems.extend(decision_problems(want, &decisions));
    }
    let codes = common::codes(&out.json);
    for c in &case.expect.codes {
        if !codes.contains(c) && !out.stderr.contains(&format!("[{c}]")) {
            problems.push(format!("no {c} diagnostic (codes: {codes:?})"));
        }
    }
    for a in case
        .expect
        .absent
        .iter()
        .map(String::as_str)
        .chain([SECRET])
    {
        if out.stdout.contains(a) || out.stderr.contains(a) {
            problems.push(format!("`{a}` appears in the output"));
        }
    }
    if problems.is_empty() {
        Ok(())
    } else {
        let seen: Vec<String> = decisions
            .iter()
            .map(|d| {
                let rules: Vec<&str> = d["findings"]
                    .as_array()
                    .map(|f| f.iter().filter_map(|x| x["rule"].as_str()).collect())
                    .unwrap_or_default();
                format!(
                    "{}/{} {} {} tier={} rules={rules:?} approvals={}",
                    d["kind"].as_str().unwrap_or(""),
                    d["name"].as_str().unwrap_or(""),
                    d["change"].as_str().unwrap_or(""),
                    d["decision"].as_str().unwrap_or(""),
                    d["tier"],
                    d["approvals"]
                )
            })
            .collect();
        let diags: Vec<String> = out.json["diagnostics"]
            .as_array()
            .map(|a| {
                a.iter()
                    .map(|d| {
                        format!(
                            "{}: {}",
                            d["code"].as_str().unwrap_or(""),
                            d["message"].as_str().unwrap_or("")
                        )
                    })
                    .collect()
            })
            .unwrap_or_default();
        Err(format!(
            "{}\n--- decisions\n{}\n--- diagnostics\n{}\n--- stderr\n{}",
            problems.join("\n"),
            seen.join("\n"),
            diags.join("\n"),
            out.stderr
        ))
    }
}

#[test]
fn every_pull_request_scenario_is_judged_as_expected() {
    let cases_dir = root().join("tests/gate");
    let mut cases: Vec<PathBuf> = std::fs::read_dir(&cases_dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.join("case.yaml").is_file())
        .collect();
    cases.sort();
    let only = std::env::var("CAPOPS_GATE_CASE")
        .ok()
        .filter(|s| !s.is_empty());
    assert!(
        only.is_some() || cases.len() >= 20,
        "the scenario corpus shrank: {}",
        cases.len()
    );
    let mut failures = Vec::new();
    let mut ran = 0;
    for case in &cases {
        let name = case.file_name().unwrap().to_string_lossy().into_owned();
        if only.as_deref().is_some_and(|o| o != name) {
            continue;
        }
        ran += 1;
        if let Err(e) = run_case(case) {
            failures.push(format!("== {name}\n{e}"));
        }
    }
    assert!(ran > 0, "no scenario is named {only:?}");
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}
