//! The policy engine under hostile or broken policies: misspelled facts,
//! syntax errors, conditions that are not booleans, runaway expressions.
//! Each is a precise diagnostic with the right exit code, never a hang and
//! never a silent approval.

mod common;

use common::{Out, copy_dir};
use std::path::{Path, PathBuf};

const REQUEST: &str = "apiVersion: capops.dev/v1alpha1\nkind: CapacityRequest\nmetadata:\n  name: r\nspec:\n  team: ml\n  cluster: prod\n  pool: h100\n  resources: {nvidia.com/gpu: 4}\n  window: {start: 2026-12-01, end: 2027-01-01}\n  workloadClass: training\n  priorityClass: batch\n  justification: x\n  successMetrics: [y]\n";

fn policy(rule_when: &str) -> String {
    format!(
        "apiVersion: capops.dev/v1alpha1\nkind: ApprovalPolicy\nmetadata:\n  name: p\nspec:\n  tiers:\n    - name: auto\n      when: \"true\"\n  rules:\n    - name: the-rule\n      effect: deny\n      when: '{rule_when}'\n      message: fired\n"
    )
}

fn run(args: Vec<String>) -> Out {
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    common::run(&args, &[])
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
    common::codes(&out.json)
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
fn comparing_a_number_with_text_is_refused_when_the_policy_loads() {
    // minijinja orders 4 < "x" as true: the rule would deny every request,
    // and a tier written this way would approve every one, silently.
    let (_t, root) = repo_with(&policy("request.gpus < \"x\""));
    let out = validate(&root);
    assert_eq!(out.code, 2);
    assert_eq!(codes(&out), vec!["policy-type-error"]);
    let d = &out.json["diagnostics"][0];
    assert_eq!(d["line"], 12, "the rule's `when` line");
    assert!(
        d["message"]
            .as_str()
            .unwrap()
            .contains("compares a number with text"),
        "{}",
        d["message"]
    );
    assert_eq!(check(&root).code, 2);
    // Repeating text is refused before it can build 100 MB strings.
    let (_t, root) = repo_with(&policy("((request.team * 100000000) | length) > 0"));
    assert_eq!(codes(&validate(&root)), vec!["policy-type-error"]);
}

#[test]
fn a_request_no_tier_matches_is_never_approved() {
    // The only tier approves under 2 GPUs with nobody asked; the request
    // asks for 4. It lands in the top tier, which asks for no approval, but
    // nothing judged it: it needs approval, and check exits 2.
    let text = policy("false").replace(
        "when: \"true\"\n  rules:",
        "when: request.gpus < 2\n  rules:",
    );
    let (_t, root) = repo_with(&text);
    let out = check(&root);
    assert_eq!(out.code, 2, "{:?}", out.json);
    assert!(codes(&out).contains(&"policy-no-tier-matched".to_string()));
    let d = out.json["decisions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["name"] == "r")
        .unwrap();
    assert_eq!(d["decision"], "needs-approval");
    assert!(out.json["summary"]["needsApproval"].as_u64().unwrap() >= 1);
}

#[test]
fn a_condition_that_is_not_a_boolean_is_an_error_not_a_truthy_value() {
    // Known to give text when the policy loads: refused there.
    let (_t, root) = repo_with(&policy("request.team"));
    let out = validate(&root);
    assert_eq!(codes(&out), vec!["policy-type-error"]);
    // Known only when it runs (a map's entry): an error at evaluation.
    let (_t, root) = repo_with(&policy("request.resources[\"nvidia.com/gpu\"]"));
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
    // The runner fails the test if the command does not finish (common::TIME_LIMIT).
    let text = policy("true").replace(
        "message: fired",
        "message: \"{% for i in range(1000) %}{% for j in range(1000) %}x{% endfor %}{% endfor %}\"",
    );
    let (_t, root) = repo_with(&text);
    let out = check(&root);
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

#[test]
fn a_message_or_condition_that_can_build_gigabytes_is_refused_when_the_policy_loads() {
    // Fuel counts steps: eight `set`s of ten copies would build 10^9 bytes
    // in about eighty of them. The message is refused when the policy loads.
    let mut message = String::from("{% set a = request.team %}");
    for (prev, next) in ["a", "b", "c", "d", "e", "f", "g", "h"]
        .windows(2)
        .map(|w| (w[0], w[1]))
    {
        message.push_str(&format!("{{% set {next} = {} %}}", [prev; 10].join(" ~ ")));
    }
    message.push_str("{{ h | length }}");
    let text =
        policy("request.gpus > 1000").replace("message: fired", &format!("message: \"{message}\""));
    let (_t, root) = repo_with(&text);
    let out = validate(&root);
    assert_eq!(out.code, 2);
    assert_eq!(codes(&out), vec!["policy-syntax"]);
    let m = out.json["diagnostics"][0]["message"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(m.contains("the message of `the-rule`"), "{m}");
    assert!(
        m.contains("times as long as the longest value it reads"),
        "{m}"
    );
    // A padding width of a billion in a condition.
    let (_t, root) = repo_with(&policy("(\"%999999999s\" | format(request.team)) != \"\""));
    let out = validate(&root);
    assert_eq!(codes(&out), vec!["policy-syntax"]);
    assert_eq!(check(&root).code, 2);
}

#[test]
fn a_policy_that_runs_past_its_time_stops_the_binary_with_policy_timeout() {
    // Each step is bounded, but a loop of 9,000 steps over a 2 MB
    // justification is 18 GB of work: the watchdog stops it after its
    // limit (here 1 s), naming the message and the request.
    let when = "request.gpus > 0";
    let message = "{% for i in range(9000) %}{% if (request.justification | upper | length) < 0 %}x{% endif %}{% endfor %}fired";
    let policy_text = policy(when).replace(
        "      message: fired\n",
        &format!("      message: '{message}'\n"),
    );
    let (_tmp, root) = repo_with(&policy_text);
    let request = REQUEST.replace(
        "justification: x",
        &format!("justification: {}", "y".repeat(2_000_000)),
    );
    std::fs::write(root.join("request.yaml"), request).unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_capops"))
        .args(["check", "--at", "2026-11-22", "--format", "json"])
        .arg(&root)
        .env("CAPOPS_POLICY_SECONDS", "1")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains(
            "error[policy-timeout]: the message of rule `the-rule` for CapacityRequest `r` ran for more than 1 s"
        ),
        "{stderr}"
    );
    // No decision was given.
    assert!(
        out.stdout.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
}

#[test]
fn a_time_limit_that_is_not_a_number_of_seconds_is_refused() {
    let (_tmp, root) = repo_with(&policy("request.gpus > 0"));
    for bad in ["ten", "0", "90000"] {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_capops"))
            .args(["check", "--at", "2026-11-22"])
            .arg(&root)
            .env("CAPOPS_POLICY_SECONDS", bad)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{bad}: {stderr}");
        assert!(
            stderr.contains(&format!("CAPOPS_POLICY_SECONDS is `{bad}`")),
            "{stderr}"
        );
        assert!(out.stdout.is_empty(), "no decision for {bad}");
    }
    // Where no policy runs, the variable is nobody's business.
    for args in [
        vec!["--version".to_string()],
        vec!["validate".into(), root.display().to_string()],
    ] {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_capops"))
            .args(&args)
            .env("CAPOPS_POLICY_SECONDS", "ten")
            .output()
            .unwrap();
        assert_eq!(
            out.status.code(),
            Some(0),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

#[test]
fn two_rules_of_one_name_are_refused_at_the_second() {
    let text = policy("request.gpus > 2")
        + "    - name: the-rule\n      effect: warn\n      when: 'request.gpus > 4'\n      message: again\n";
    let (_t, root) = repo_with(&text);
    let out = validate(&root);
    assert_eq!(out.code, 2);
    assert_eq!(codes(&out), vec!["duplicate-name"]);
    let d = &out.json["diagnostics"][0];
    assert_eq!(d["line"], 14, "the second rule's name: {d}");
}

#[test]
fn a_misspelled_filter_is_named_as_such() {
    let (_t, root) = repo_with(&policy("(request.team | lenght) > 2"));
    let out = validate(&root);
    assert_eq!(codes(&out), vec!["policy-syntax"]);
    let message = out.json["diagnostics"][0]["message"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        message.contains("the filter `lenght`, which capops does not have (did you mean `length`?"),
        "{message}"
    );
}
