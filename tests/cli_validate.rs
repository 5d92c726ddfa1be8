//! `capops validate` through the command line: exit codes, output formats,
//! GitHub annotations, and limits that need a real process (memory).

use std::path::Path;
use std::process::Command;

mod common;
use common::{example, root, run};

fn corpus(case: &str) -> String {
    root()
        .join("tests/corpus")
        .join(case)
        .join("repo")
        .display()
        .to_string()
}

#[test]
fn the_example_is_valid() {
    let out = run(&["validate", &example()], &[]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stderr.contains("is valid (20 files, 29 documents)"),
        "{}",
        out.stderr
    );
    let json = run(&["validate", "--format", "json", &example()], &[]);
    let v: serde_json::Value = serde_json::from_str(&json.stdout).unwrap();
    assert_eq!(v["valid"], true);
    assert_eq!(v["summary"]["errors"], 0);
    assert_eq!(v["summary"]["documents"], 29);
    assert_eq!(v["diagnostics"].as_array().unwrap().len(), 0);
}

#[test]
fn json_output_is_complete_and_stable() {
    let out = run(
        &[
            "validate",
            "--format",
            "json",
            &corpus("dangling-references"),
        ],
        &[],
    );
    assert_eq!(out.code, 2);
    let v: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(v["version"], 1);
    assert_eq!(v["command"], "validate");
    assert_eq!(v["valid"], false);
    assert_eq!(v["summary"]["errors"], 5);
    let team = v["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["code"] == "unknown-team")
        .unwrap();
    assert_eq!(team["severity"], "error");
    assert_eq!(team["message"], "Team `mll` does not exist");
    assert!(team["file"].as_str().unwrap().ends_with("repo/r.yaml"));
    assert_eq!(
        (team["line"].as_u64(), team["column"].as_u64()),
        (Some(6), Some(9))
    );
    assert_eq!(
        (team["endLine"].as_u64(), team["endColumn"].as_u64()),
        (Some(6), Some(12))
    );
    assert_eq!(team["help"], "did you mean `ml`?");
    // The human output says the same thing, with the snippet.
    let human = run(&["validate", &corpus("dangling-references")], &[]);
    assert!(
        human
            .stderr
            .contains("error[unknown-team]: Team `mll` does not exist"),
        "{}",
        human.stderr
    );
    assert!(human.stderr.contains("r.yaml:6:9"), "{}", human.stderr);
    assert!(
        human.stderr.contains("help: did you mean `ml`?"),
        "{}",
        human.stderr
    );
    assert!(
        human.stderr.contains("error: 5 errors, 0 warnings"),
        "{}",
        human.stderr
    );
}

#[test]
fn duplicate_names_point_at_both_definitions() {
    let out = run(
        &[
            "validate",
            "--format",
            "json",
            &corpus("same-name-two-files"),
        ],
        &[],
    );
    let v: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    let d = &v["diagnostics"][0];
    assert_eq!(d["code"], "duplicate-name");
    assert!(d["file"].as_str().unwrap().ends_with("teams/b.yaml"));
    let related = &d["related"][0];
    assert!(related["file"].as_str().unwrap().ends_with("teams/a.yaml"));
    assert_eq!(related["line"], 4);
    let human = run(&["validate", &corpus("same-name-two-files")], &[]);
    assert!(
        human.stderr.contains("note: first definition at"),
        "{}",
        human.stderr
    );
}

#[test]
fn sarif_output_follows_2_1_0() {
    let out = run(&["validate", "--format", "sarif", &corpus("counts")], &[]);
    assert_eq!(out.code, 2);
    let v: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(v["version"], "2.1.0");
    let run0 = &v["runs"][0];
    let rules = run0["tool"]["driver"]["rules"].as_array().unwrap();
    assert_eq!(rules.len(), capops::diag::Code::ALL.len());
    let results = run0["results"].as_array().unwrap();
    assert_eq!(results.len(), 4);
    for r in results {
        let index = r["ruleIndex"].as_u64().unwrap() as usize;
        assert_eq!(rules[index]["id"], r["ruleId"]);
        assert!(["error", "warning", "note"].contains(&r["level"].as_str().unwrap()));
        let region = &r["locations"][0]["physicalLocation"]["region"];
        assert!(region["startLine"].as_u64().unwrap() >= 1);
        assert!(region["startColumn"].as_u64().unwrap() >= 1);
        let uri = r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
            .as_str()
            .unwrap();
        assert!(uri.ends_with("r.yaml"), "{uri}");
    }
}

#[test]
fn github_annotations_when_running_in_actions() {
    let case = corpus("impossible-date");
    let out = run(&["validate", &case], &[("GITHUB_ACTIONS", "true")]);
    assert_eq!(out.code, 2);
    let line = out
        .stdout
        .lines()
        .find(|l| l.starts_with("::error "))
        .expect("an annotation");
    assert!(line.contains("file="), "{line}");
    assert!(line.contains("/r.yaml,line=11,col=19,"), "{line}");
    assert!(line.contains("title=capops invalid-date::"), "{line}");
    // Outside Actions, stdout stays clean.
    let out = run(&["validate", &case], &[]);
    assert!(out.stdout.is_empty());
}

#[test]
fn a_folder_without_capops_yaml_is_a_usage_error() {
    let empty = tempfile::tempdir().unwrap();
    let dir = empty.path().display().to_string();
    let out = run(&["validate", &dir], &[]);
    assert_eq!(out.code, 2);
    assert!(out.stderr.contains("error[no-config]"), "{}", out.stderr);
    let json = run(&["validate", "--format", "json", &dir], &[]);
    let v: serde_json::Value = serde_json::from_str(&json.stdout).unwrap();
    assert_eq!(v["diagnostics"][0]["code"], "no-config");
    let missing = run(&["validate", "/definitely/not/here"], &[]);
    assert_eq!(missing.code, 2);
    assert!(
        missing.stderr.contains("is not a folder"),
        "{}",
        missing.stderr
    );
}

#[test]
fn bad_arguments_are_usage_errors_and_a_missing_driver_an_outside_failure() {
    let out = run(&["validate", "--format", "yaml"], &[]);
    assert_eq!(out.code, 2);
    assert!(
        out.stderr.contains("invalid value 'yaml'"),
        "{}",
        out.stderr
    );
    let out = run(&["render", "--format", "sarif", "."], &[]);
    assert_eq!(out.code, 2);
    assert!(
        out.stderr.contains("`capops render` does not write sarif"),
        "{}",
        out.stderr
    );
    // Every command is built; one that needs a system it cannot reach says so
    // with exit 3.
    let out = run(
        &["inventory"],
        &[("CAPOPS_NVML_LIB", "/definitely/not/libnvidia-ml.so.1")],
    );
    assert_eq!(out.code, 3, "{}", out.stderr);
    assert!(out.stderr.contains("NVML not available"), "{}", out.stderr);
}

#[test]
fn a_file_without_read_permission_is_reported() {
    // Root reads everything, so this case only means something for other users.
    if Command::new("id")
        .arg("-u")
        .output()
        .map(|o| o.stdout == b"0\n")
        .unwrap_or(true)
    {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("capops.yaml"),
        "apiVersion: capops.dev/v1alpha1\nkind: Config\nmetadata: {name: x}\nspec: {}\n",
    )
    .unwrap();
    let secret = dir.path().join("secret.yaml");
    std::fs::write(&secret, "a: 1\n").unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&secret, std::fs::Permissions::from_mode(0o000)).unwrap();
    let out = run(
        &[
            "validate",
            "--format",
            "json",
            &dir.path().display().to_string(),
        ],
        &[],
    );
    assert_eq!(out.code, 2);
    assert!(out.stdout.contains("file-unreadable"), "{}", out.stdout);
}

/// The alias bomb, the 10,000-deep nesting and a 50 MB file, run as real
/// processes under a 1 GiB address-space limit: bounded memory, no crash.
#[test]
fn hostile_inputs_stay_within_a_memory_limit() {
    let bin = env!("CARGO_BIN_EXE_capops");
    let tmp = tempfile::tempdir().unwrap();
    let huge = tmp.path().join("huge");
    std::fs::create_dir_all(&huge).unwrap();
    std::fs::copy(
        root().join("tests/corpus/huge-file/repo/capops.yaml"),
        huge.join("capops.yaml"),
    )
    .unwrap();
    let line = "# ................................................................\n";
    std::fs::write(
        huge.join("huge.yaml"),
        line.repeat(52_428_800 / line.len() + 1),
    )
    .unwrap();
    for (repo, code) in [
        (corpus("alias-bomb"), "yaml-alias-limit"),
        (corpus("deep-nesting-flow"), "yaml-too-deep"),
        (huge.display().to_string(), "file-too-large"),
    ] {
        let script = format!("ulimit -v 1048576; exec '{bin}' validate --format json '{repo}'");
        let out = Command::new("sh").arg("-c").arg(&script).output().unwrap();
        assert_eq!(
            out.status.code(),
            Some(2),
            "{repo}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(stdout.contains(code), "{repo}: {stdout}");
    }
    assert!(Path::new(bin).exists());
}

#[test]
fn a_folder_that_cannot_be_listed_is_reported_not_skipped() {
    use std::os::unix::fs::PermissionsExt;
    let root = Command::new("id")
        .arg("-u")
        .output()
        .map(|o| o.stdout == b"0\n")
        .unwrap_or(true);
    // Root lists everything: the check runs as `nobody` through setpriv.
    let setpriv = root
        && Command::new("setpriv")
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success());
    if root && !setpriv {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::write(
        dir.path().join("capops.yaml"),
        "apiVersion: capops.dev/v1alpha1\nkind: Config\nmetadata: {name: x}\nspec: {}\n",
    )
    .unwrap();
    let locked = dir.path().join("locked");
    std::fs::create_dir(&locked).unwrap();
    std::fs::write(
        locked.join("bad.yaml"),
        "apiVersion: capops.dev/v1alpha1\nkind: Bogus\n",
    )
    .unwrap();
    std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o311)).unwrap();
    let bin = env!("CARGO_BIN_EXE_capops");
    let repo = dir.path().display().to_string();
    let mut cmd = if setpriv {
        let mut c = Command::new("setpriv");
        c.args(["--reuid=65534", "--regid=65534", "--clear-groups", bin]);
        c
    } else {
        Command::new(bin)
    };
    let out = cmd.args(["validate", &repo]).output().unwrap();
    std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o755)).unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    if setpriv && stderr.contains("Permission denied") && !stderr.contains("locked") {
        // The binary itself is out of `nobody`'s reach here.
        return;
    }
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("file-unreadable"), "{stderr}");
    assert!(stderr.contains("cannot read this folder"), "{stderr}");
}

#[test]
fn a_reader_that_went_away_does_not_turn_a_failure_into_success() {
    // Both ends of the output closed before capops writes a byte: every
    // write fails with a broken pipe, and the exit is still the result's.
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("capops.yaml"),
        "apiVersion: capops.dev/v1alpha1\nkind: Config\nmetadata: {name: x}\nspec: {}\n",
    )
    .unwrap();
    std::fs::write(dir.path().join("x.yaml"), "kind: Bogus\n").unwrap();
    let bin = env!("CARGO_BIN_EXE_capops");
    let closed = || {
        let (reader, writer) = std::io::pipe().unwrap();
        drop(reader);
        writer
    };
    let repo = dir.path().display().to_string();
    let code = |args: &[&str]| {
        Command::new(bin)
            .args(args)
            .stdout(closed())
            .stderr(closed())
            .status()
            .unwrap()
            .code()
    };
    assert_eq!(code(&["validate", &repo]), Some(2));
    assert_eq!(
        code(&["render", &repo, "--out", &format!("{repo}-out")]),
        Some(2)
    );
    // The example has denials: the gate's exit survives a closed stdout.
    let acme = example();
    assert_eq!(code(&["check", &acme, "--at", "2026-11-22"]), Some(1));
    assert_eq!(
        code(&["check", &acme, "--at", "2026-11-22", "--format", "json"]),
        Some(1)
    );
    // A report, whose result is what it prints, stops quietly.
    assert_eq!(code(&["report", &acme, "--at", "2026-11-22"]), Some(0));
}

#[test]
fn a_repository_reached_through_a_link_is_read_as_itself() {
    let dir = tempfile::tempdir().unwrap();
    let link = dir.path().join("current");
    std::os::unix::fs::symlink(root().join("examples/acme"), &link).unwrap();
    let direct = run(&["validate", &example()], &[]);
    let linked = run(&["validate", &link.display().to_string()], &[]);
    assert_eq!(linked.code, 0, "{}", linked.stderr);
    assert!(
        !linked.stderr.contains("symbolic link"),
        "{}",
        linked.stderr
    );
    let count = |s: &str| s.split(" is valid ").nth(1).map(str::to_string);
    assert_eq!(
        count(&linked.stdout),
        count(&direct.stdout),
        "{}",
        linked.stdout
    );
}
