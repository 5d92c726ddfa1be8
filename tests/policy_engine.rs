//! The policy engine under hostile or broken policies: misspelled facts,
//! syntax errors, conditions that are not booleans, runaway expressions.
//! Each is a precise diagnostic with the right exit code, never a hang and
//! never a silent approval.

use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::Duration;

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let target = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &target);
        } else {
            std::fs::copy(e.path(), target).unwrap();
        }
    }
}

const REQUEST: &str = "apiVersion: capops.dev/v1alpha1\nkind: CapacityRequest\nmetadata:\n  name: r\nspec:\n  team: ml\n  cluster: prod\n  pool: h100\n  resources: {nvidia.com/gpu: 4}\n  window: {start: 2026-12-01, end: 2027-01-01}\n  workloadClass: training\n  priorityClass: batch\n  justification: x\n  successMetrics: [y]\n";

fn policy(rule_when: &str) -> String {
    format!(
        "apiVersion: capops.dev/v1alpha1\nkind: ApprovalPolicy\nmetadata:\n  name: p\nspec:\n  tiers:\n    - name: auto\n      when: \"true\"\n  rules:\n    - name: the-rule\n      effect: deny\n      when: '{rule_when}'\n      message: fired\n"
    )
}

struct Out {
    code: i32,
    json: serde_json::Value,
    stderr: String,
}

fn run(args: Vec<String>) -> Out {
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
        let mut argv: Vec<std::ffi::OsString> = vec!["capops".into()];
        argv.extend(args.into_iter().map(Into::into));
        let code = capops::cli::run(argv, &mut io);
        let _ = tx.send(Out {
            code,
            json: serde_json::from_slice(&out).unwrap_or(serde_json::Value::Null),
            stderr: String::from_utf8_lossy(&err).into_owned(),
        });
    });
    rx.recv_timeout(Duration::from_secs(60))
        .expect("finished within 60 s")
}

fn repo_with(policy_text: &str) -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("repo");
    copy_dir(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("policies/tests/fixture"),
        &root,
    );
    std::fs::write(root.join("policy.yaml"), policy_text).unwrap();
    std::fs::write(root.join("request.yaml"), REQUEST).unwrap();
    (tmp, root)
}

fn codes(out: &Out) -> Vec<String> {
    out.json["diagnostics"]
        .as_array()
        .map(|a| {
            a.iter()
                .map(|d| d["code"].as_str().unwrap().to_string())
                .collect()
        })
        .unwrap_or_default()
}

fn check(root: &Path) -> Out {
    run(vec![
        "check".into(),
        "--format".into(),
        "json".into(),
        "--at".into(),
        "2026-11-22".into(),
        root.display().to_string(),
    ])
}

fn validate(root: &Path) -> Out {
    run(vec![
        "validate".into(),
        "--format".into(),
        "json".into(),
        root.display().to_string(),
    ])
}

#[test]
fn a_misspelled_fact_is_reported_at_the_rule_when_the_policy_loads() {
    let (_t, root) = repo_with(&policy("request.gpu > 2"));
    let out = validate(&root);
    assert_eq!(out.code, 2);
    let d = &out.json["diagnostics"][0];
    assert_eq!(d["code"], "policy-unknown-fact");
    assert!(d["file"].as_str().unwrap().ends_with("policy.yaml"));
    assert_eq!(d["line"], 12, "the rule's `when` line");
    assert!(d["message"].as_str().unwrap().contains("`request.gpu`"));
    assert_eq!(
        d["help"].as_str().unwrap().split(';').next().unwrap(),
        "did you mean `request.gpus`?"
    );
    // check refuses to judge with it: exit 2, the diagnostic on stderr.
    let out = run(vec![
        "check".into(),
        "--at".into(),
        "2026-11-22".into(),
        root.display().to_string(),
    ]);
    assert_eq!(out.code, 2);
    assert!(
        out.stderr.contains("error[policy-unknown-fact]"),
        "{}",
        out.stderr
    );
}

#[test]
fn facts_of_another_subject_are_unknown_too() {
    let text = policy("reservation.count > 2");
    let (_t, root) = repo_with(&text);
    assert_eq!(codes(&validate(&root)), vec!["policy-unknown-fact"]);
}

#[test]
fn a_syntax_error_is_reported() {
    let (_t, root) = repo_with(&policy("request.gpus >"));
    let out = validate(&root);
    assert_eq!(codes(&out), vec!["policy-syntax"]);
    assert_eq!(out.code, 2);
}

#[test]
fn a_condition_that_is_not_a_boolean_is_an_error_not_a_truthy_value() {
    let (_t, root) = repo_with(&policy("request.team"));
    let out = check(&root);
    assert_eq!(out.code, 2);
    assert!(
        codes(&out).contains(&"policy-eval-error".to_string()),
        "{:?}",
        codes(&out)
    );
    let d = &out.json["decisions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["name"] == "r")
        .unwrap();
    assert_ne!(d["decision"], "approved", "an error never approves");
}

#[test]
fn reading_a_missing_map_entry_is_an_error_not_false() {
    let (_t, root) = repo_with(&policy("request.resources[\"nvidia.com/mig-1g.10gb\"] > 0"));
    let out = check(&root);
    assert_eq!(out.code, 2, "{:?}", out.json);
    assert!(
        codes(&out).contains(&"policy-eval-error".to_string()),
        "{:?}",
        codes(&out)
    );
}

#[test]
fn a_runaway_message_runs_out_of_fuel_quickly() {
    let start = std::time::Instant::now();
    let text = policy("true").replace(
        "message: fired",
        "message: \"{% for i in range(100000) %}{% for j in range(100000) %}x{% endfor %}{% endfor %}\"",
    );
    let (_t, root) = repo_with(&text);
    let out = check(&root);
    assert!(start.elapsed() < Duration::from_secs(30));
    assert_eq!(out.code, 2);
    let d = out.json["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["code"] == "policy-eval-error")
        .expect("an eval error");
    assert!(
        d["message"].as_str().unwrap().contains("fuel"),
        "{}",
        d["message"]
    );
}

#[test]
fn deeply_nested_conditions_are_refused() {
    let deep = format!("{}true{}", "(".repeat(5000), ")".repeat(5000));
    let (_t, root) = repo_with(&policy(&deep));
    let out = validate(&root);
    assert_eq!(out.code, 2);
    assert_eq!(codes(&out), vec!["policy-syntax"]);
}

#[test]
fn escalating_to_an_unknown_tier_is_reported() {
    let text = policy("true").replace("effect: deny", "effect: escalate\n      tier: emperor");
    let (_t, root) = repo_with(&text);
    assert_eq!(codes(&validate(&root)), vec!["policy-unknown-tier"]);
}

#[test]
fn overlong_conditions_are_refused() {
    let long = format!("{} true", "not ".repeat(2000));
    let (_t, root) = repo_with(&policy(&long));
    let out = validate(&root);
    assert_eq!(codes(&out), vec!["policy-syntax"]);
    assert!(
        out.json["diagnostics"][0]["message"]
            .as_str()
            .unwrap()
            .contains("4096")
    );
}
