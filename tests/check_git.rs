//! `capops check --base` against real git repositories made in temporary
//! folders: added, modified, removed and moved documents, a change to the
//! policy itself, a capacity repository in a subfolder, and the git failures
//! (missing revision, not a repository, shallow clone without the base).

mod common;

use common::{Out, commit_all, commit_all_dated, copy_dir, fixture};
use git2::Repository;
use std::path::{Path, PathBuf};
use std::process::Command;

fn request(name: &str, gpus: u32) -> String {
    format!(
        "apiVersion: capops.dev/v1alpha1\nkind: CapacityRequest\nmetadata:\n  name: {name}\nspec:\n  team: ml\n  cluster: prod\n  pool: h100\n  resources:\n    nvidia.com/gpu: {gpus}\n  window: {{start: 2026-12-01, end: 2027-03-01}}\n  workloadClass: training\n  priorityClass: batch\n  justification: test\n  successMetrics: [used]\n  businessCase: plan\n"
    )
}

/// A git repository with the fixture committed at `sub` (the capacity repository root).
struct Repo {
    _tmp: tempfile::TempDir,
    git: Repository,
    root: PathBuf,
}

fn repo_at(sub: &str) -> Repo {
    let tmp = tempfile::tempdir().unwrap();
    let git = Repository::init(tmp.path()).unwrap();
    let root = tmp.path().join(sub);
    copy_dir(&fixture(), &root);
    std::fs::write(root.join("requests.yaml"), request("grow", 40)).unwrap();
    commit_all(&git, "base");
    Repo {
        _tmp: tmp,
        git,
        root,
    }
}

fn check(root: &Path, args: &[&str]) -> Out {
    let mut argv: Vec<std::ffi::OsString> = vec!["check".into()];
    argv.extend(args.iter().map(|a| a.into()));
    argv.push("--at".into());
    argv.push("2026-11-22".into());
    argv.push(root.as_os_str().into());
    common::run_os(argv, &[])
}

fn decision<'a>(out: &'a Out, name: &str) -> &'a serde_json::Value {
    out.json["decisions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["name"] == name)
        .unwrap_or_else(|| panic!("{name} not judged: {}", out.stdout))
}

fn judged(out: &Out) -> Vec<String> {
    out.json["decisions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["name"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn an_added_request_is_the_only_thing_judged() {
    let r = repo_at("");
    std::fs::write(r.root.join("more.yaml"), request("new-small", 4)).unwrap();
    let out = check(&r.root, &["--base", "HEAD", "--format", "json"]);
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    assert_eq!(judged(&out), vec!["new-small"]);
    let d = decision(&out, "new-small");
    assert_eq!(d["change"], "added");
    assert_eq!(d["decision"], "approved");
    assert_eq!(d["tier"], "auto");
    assert_eq!(out.json["base"]["rev"], "HEAD");
    assert_eq!(out.json["base"]["commit"].as_str().unwrap().len(), 40);
}

#[test]
fn modifying_40_to_60_gpus_is_judged_by_the_20_it_adds() {
    let r = repo_at("");
    std::fs::write(r.root.join("requests.yaml"), request("grow", 60)).unwrap();
    let out = check(&r.root, &["--base", "HEAD", "--format", "json"]);
    assert_eq!(out.code, 1);
    let d = decision(&out, "grow");
    assert_eq!(d["change"], "modified");
    assert_eq!(d["tier"], "team-lead");
    assert_eq!(d["facts"]["change"]["team_delta_gpus"], 20);
    assert_eq!(d["facts"]["change"]["previous"]["gpus"], 40);
    assert_eq!(d["facts"]["change"]["delta_gpus"], 20);
    let roles: Vec<&str> = d["approvals"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["role"].as_str().unwrap())
        .collect();
    assert_eq!(roles, vec!["team-lead"]);
    assert_eq!(
        out.json["changes"][0]["fields"],
        serde_json::json!(["resources"])
    );
    // --fail-on denied lets approvals through; never always passes.
    assert_eq!(
        check(&r.root, &["--base", "HEAD", "--fail-on", "denied"]).code,
        0
    );
    assert_eq!(
        check(&r.root, &["--base", "HEAD", "--fail-on", "never"]).code,
        0
    );
}

#[test]
fn a_removed_request_releases_capacity_which_its_team_lead_approves() {
    let r = repo_at("");
    std::fs::remove_file(r.root.join("requests.yaml")).unwrap();
    let out = check(&r.root, &["--base", "HEAD", "--format", "json"]);
    assert_eq!(out.code, 1, "{}", out.stdout);
    let d = decision(&out, "grow");
    assert_eq!(d["change"], "removed");
    assert_eq!(d["decision"], "needs-approval");
    assert_eq!(d["facts"]["change"]["delta_gpus"], -40);
    assert_eq!(d["approvals"][0]["role"], "team-lead");
    assert_eq!(d["approvals"][0]["users"], serde_json::json!(["ml-lead"]));
}

#[test]
fn moving_a_document_to_another_file_is_not_a_change() {
    let r = repo_at("");
    std::fs::remove_file(r.root.join("requests.yaml")).unwrap();
    std::fs::create_dir_all(r.root.join("elsewhere")).unwrap();
    // Same document, keys reordered and a comment added, in another file.
    let moved = request("grow", 40).replace(
        "  pool: h100\n  cluster: prod\n",
        "  cluster: prod\n  pool: h100\n",
    );
    std::fs::write(
        r.root.join("elsewhere/moved.yaml"),
        format!("# moved here\n{moved}"),
    )
    .unwrap();
    let out = check(&r.root, &["--base", "HEAD", "--format", "json"]);
    assert_eq!(out.code, 0, "{}", out.stdout);
    assert!(judged(&out).is_empty(), "{:?}", judged(&out));
    assert_eq!(out.json["changes"], serde_json::json!([]));
}

#[test]
fn a_change_to_the_policy_is_judged_by_the_base_policy_and_needs_the_top_tier() {
    let r = repo_at("");
    // The base has the default pack as its own policy.
    let pack = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("policies/default.yaml"),
    )
    .unwrap();
    std::fs::write(r.root.join("policy.yaml"), &pack).unwrap();
    commit_all(&r.git, "adopt the default policy");
    // The change makes every tier automatic and asks for 300 GPUs in the same breath.
    let lenient = pack
        .replace(
            "change.team_delta_gpus < 10\n",
            "true or change.team_delta_gpus < 10\n",
        )
        .replace("Tiers by the GPUs", "Everything is fine. Tiers by the GPUs");
    assert_ne!(lenient, pack);
    std::fs::write(r.root.join("policy.yaml"), lenient).unwrap();
    std::fs::write(r.root.join("big.yaml"), request("huge", 260)).unwrap();
    let out = check(&r.root, &["--base", "HEAD", "--format", "json"]);
    assert_eq!(out.code, 1, "{}{}", out.stdout, out.stderr);
    assert_eq!(
        decision(&out, "huge")["tier"],
        "vp",
        "judged by the base policy, not the lenient one"
    );
    let p = decision(&out, "default");
    assert_eq!(p["kind"], "ApprovalPolicy");
    assert_eq!(p["change"], "modified");
    assert_eq!(p["tier"], "vp");
    assert_eq!(p["findings"][0]["rule"], "policy-changes-need-top-tier");
    // Judging the working tree without a base uses the lenient policy: the base is what protects.
    let unguarded = check(&r.root, &["--format", "json"]);
    assert_eq!(decision(&unguarded, "huge")["tier"], "auto");
}

/// A base whose policy no longer loads (a duplicate key merged in a file)
/// is not read as "no policy": the built-in default would judge in its
/// place, silently. `check` refuses to judge (exit 2) and says where.
#[test]
fn a_base_that_does_not_load_judges_nothing() {
    let r = repo_at("");
    let pack = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("policies/default.yaml"),
    )
    .unwrap();
    let broken = pack.replacen(
        "kind: ApprovalPolicy\n",
        "kind: ApprovalPolicy\nkind: ApprovalPolicy\n",
        1,
    );
    assert_ne!(broken, pack);
    std::fs::write(r.root.join("policy.yaml"), &broken).unwrap();
    commit_all(&r.git, "a policy with a duplicate key");
    // The change fixes the file and asks for one more GPU.
    std::fs::write(r.root.join("policy.yaml"), &pack).unwrap();
    std::fs::write(r.root.join("small.yaml"), request("small", 1)).unwrap();
    let out = check(&r.root, &["--base", "HEAD"]);
    assert_eq!(out.code, 2, "{}{}", out.stdout, out.stderr);
    assert!(out.stderr.contains("duplicate"), "{}", out.stderr);
    assert!(out.stderr.contains("policy.yaml"), "{}", out.stderr);
    assert!(
        out.stderr.contains("does not load") && out.stderr.contains("nothing is judged"),
        "{}",
        out.stderr
    );
    assert!(!out.stdout.contains("approved"), "{}", out.stdout);
}

#[test]
fn a_capacity_repository_in_a_subfolder_reads_its_base_from_that_subfolder() {
    let r = repo_at("capacity/gpus");
    std::fs::write(r.root.join("requests.yaml"), request("grow", 60)).unwrap();
    let out = check(&r.root, &["--base", "HEAD", "--format", "json"]);
    assert_eq!(out.code, 1);
    assert_eq!(judged(&out), vec!["grow"]);
    assert_eq!(decision(&out, "grow")["change"], "modified");
    assert!(
        decision(&out, "grow")["file"]
            .as_str()
            .unwrap()
            .ends_with("capacity/gpus/requests.yaml")
    );
}

#[test]
fn a_missing_revision_is_an_outside_failure() {
    let r = repo_at("");
    let out = check(&r.root, &["--base", "no-such-branch"]);
    assert_eq!(out.code, 3);
    assert!(
        out.stderr
            .contains("revision `no-such-branch` does not exist"),
        "{}",
        out.stderr
    );
    // A tree is there, but is no commit to judge against: said so.
    let out = check(&r.root, &["--base", "HEAD^{tree}"]);
    assert_eq!(out.code, 3);
    assert!(
        out.stderr.contains("is a tree") && out.stderr.contains("not a commit"),
        "{}",
        out.stderr
    );
    // A tag of a tree is named as one.
    let tree = r.git.head().unwrap().peel_to_tree().unwrap();
    let sig = git2::Signature::now("t", "t@example.com").unwrap();
    r.git
        .tag("treetag", tree.as_object(), &sig, "a tree", false)
        .unwrap();
    let out = check(&r.root, &["--base", "treetag"]);
    assert_eq!(out.code, 3);
    assert!(out.stderr.contains("is a tag of a tree"), "{}", out.stderr);
    // An empty revision is a mistake in the command, not a git failure.
    for empty in ["", " "] {
        let out = check(&r.root, &["--base", empty]);
        assert_eq!(out.code, 2, "{}", out.stderr);
        assert!(out.stderr.contains("`--base` is empty"), "{}", out.stderr);
    }
}

#[test]
fn a_folder_outside_git_is_an_outside_failure() {
    let tmp = tempfile::tempdir().unwrap();
    copy_dir(&fixture(), tmp.path());
    let out = check(tmp.path(), &["--base", "main"]);
    assert_eq!(out.code, 3);
    assert!(
        out.stderr.contains("is not inside a git repository"),
        "{}",
        out.stderr
    );
}

#[test]
fn a_shallow_clone_without_the_base_says_how_to_fetch_it() {
    let r = repo_at("");
    let first = r
        .git
        .head()
        .unwrap()
        .peel_to_commit()
        .unwrap()
        .id()
        .to_string();
    std::fs::write(r.root.join("more.yaml"), request("second", 2)).unwrap();
    commit_all(&r.git, "second");
    std::fs::write(r.root.join("more.yaml"), request("second", 3)).unwrap();
    commit_all(&r.git, "third");
    let clone = tempfile::tempdir().unwrap();
    let dst = clone.path().join("shallow");
    let status = Command::new("git")
        .args(["clone", "--quiet", "--depth", "1"])
        .arg(format!("file://{}", r.root.display()))
        .arg(&dst)
        .status()
        .expect("git is installed");
    assert!(status.success());
    assert!(Repository::open(&dst).unwrap().is_shallow());
    let out = check(&dst, &["--base", &first]);
    assert_eq!(out.code, 3, "{}", out.stderr);
    assert!(out.stderr.contains("shallow clone"), "{}", out.stderr);
    assert!(out.stderr.contains("fetch-depth: 0"), "{}", out.stderr);
    // The head commit itself is there, but not the 30 days of history the
    // rolling budget of automatic approvals is counted from: that is said too,
    // rather than counting from a cut history.
    let out = check(&dst, &["--base", "HEAD"]);
    assert_eq!(out.code, 3, "{}", out.stderr);
    assert!(out.stderr.contains("rolling budget"), "{}", out.stderr);
    assert!(out.stderr.contains("fetch-depth: 0"), "{}", out.stderr);
}

/// A file whose name is not UTF-8: git and the file system can name it
/// differently, so neither the working-tree reader nor the git reader reads
/// it, and both say so (`path-not-utf8`). Renaming a document onto such a
/// name is not a way to make it vanish from the base unjudged.
#[test]
fn a_file_name_that_is_not_utf8_is_refused_by_both_readers() {
    use std::os::unix::ffi::OsStrExt;
    let r = repo_at("");
    let odd = r
        .root
        .join(std::ffi::OsStr::from_bytes(b"requests-\xff.yaml"));
    std::fs::rename(r.root.join("requests.yaml"), &odd).unwrap();
    // The working tree (the head): refused, not read.
    let out = check(&r.root, &["--base", "HEAD", "--format", "json"]);
    assert_eq!(out.code, 2, "{}", out.stdout);
    assert!(
        common::codes(&out.json).contains(&"path-not-utf8".to_string()),
        "{}",
        out.stdout
    );
    // Committed (as if merged without the gate): the revision reader refuses
    // it too, rather than reading a base without the document.
    commit_all(&r.git, "renamed");
    let out = check(&r.root, &["--base", "HEAD", "--format", "json"]);
    assert_eq!(out.code, 2, "{}", out.stdout);
    let text = format!("{}{}", out.stdout, out.stderr);
    assert!(text.contains("path-not-utf8"), "{text}");
}

/// The rolling budget of automatic approvals reads commit dates as never
/// going backwards along main: a commit back-dated past the 30 days, merged
/// after a 9-GPU request, does not hide that request from the budget.
#[test]
fn a_back_dated_commit_does_not_reset_the_rolling_budget() {
    // 2026-11-22T00:00:00Z, the moment `check` runs at.
    let at: i64 = 1_795_305_600;
    let day = 86_400;
    let tmp = tempfile::tempdir().unwrap();
    let git = Repository::init(tmp.path()).unwrap();
    let root = tmp.path().to_path_buf();
    copy_dir(&fixture(), &root);
    std::fs::write(root.join("requests.yaml"), request("grow", 40)).unwrap();
    commit_all_dated(&git, "the capacity repository", Some(at - 90 * day));
    std::fs::write(root.join("first.yaml"), request("first", 9)).unwrap();
    let honest = commit_all_dated(&git, "9 GPUs, automatically", Some(at - 10 * day));
    std::fs::write(root.join("NOTES.md"), "nothing to see\n").unwrap();
    let backdated = commit_all_dated(&git, "back-dated", Some(at - 40 * day));
    std::fs::write(root.join("second.yaml"), request("second", 9)).unwrap();
    for base in [&honest, &backdated] {
        let out = check(&root, &["--base", base, "--format", "json"]);
        assert_eq!(out.code, 1, "base {base}: {}", out.stdout);
        let d = decision(&out, "second");
        assert_eq!(d["tier"], "team-lead", "base {base}: {d}");
    }
    // Without the earlier request the same 9 GPUs are automatic: the budget
    // is what decides.
    std::fs::remove_file(root.join("first.yaml")).unwrap();
    std::fs::remove_file(root.join("second.yaml")).unwrap();
    commit_all_dated(&git, "first withdrawn", Some(at - 5 * day));
    std::fs::write(root.join("second.yaml"), request("second", 9)).unwrap();
    let out = check(&root, &["--base", "HEAD", "--format", "json"]);
    assert_eq!(out.code, 0, "{}", out.stdout);
    assert_eq!(decision(&out, "second")["decision"], "approved");
}

/// A repository younger than the budget's 30 days whose first commit holds
/// only a README: the budget counts from the commit that adopted the
/// capacity repository (its Config), not from nothing, so the fleet it was
/// adopted with is not growth of the 30 days.
#[test]
fn a_young_repository_counts_its_budget_from_the_commit_that_adopted_it() {
    let at: i64 = 1_795_305_600;
    let day = 86_400;
    let tmp = tempfile::tempdir().unwrap();
    let git = Repository::init(tmp.path()).unwrap();
    let root = tmp.path().to_path_buf();
    std::fs::write(root.join("README.md"), "GPU capacity\n").unwrap();
    commit_all_dated(&git, "readme", Some(at - 12 * day));
    copy_dir(&fixture(), &root);
    std::fs::write(root.join("requests.yaml"), request("grow", 40)).unwrap();
    commit_all_dated(&git, "the capacity already held", Some(at - 10 * day));
    std::fs::write(root.join("second.yaml"), request("second", 9)).unwrap();
    let out = check(&root, &["--base", "HEAD", "--format", "json"]);
    assert_eq!(out.code, 0, "{}", out.stdout);
    let d = decision(&out, "second");
    assert_eq!(d["decision"], "approved", "{d}");
    // Growth after the adoption still counts: 9 more a day later, then 9.
    commit_all_dated(&git, "9 GPUs", Some(at - 5 * day));
    std::fs::write(root.join("third.yaml"), request("third", 9)).unwrap();
    let out = check(&root, &["--base", "HEAD", "--format", "json"]);
    assert_eq!(out.code, 1, "{}", out.stdout);
    assert_eq!(decision(&out, "third")["tier"], "team-lead");
}

/// A committed `rendered/` folder: output re-rendered with the change is
/// what the documents render, and is not judged; the same file edited by
/// hand is judged (the top tier and the platform owner).
#[test]
fn committed_output_is_judged_only_when_it_differs_from_what_renders() {
    let r = repo_at("");
    render(&r.root);
    commit_all(&r.git, "rendered");
    // The change, re-rendered: nothing beyond the request is judged.
    std::fs::write(r.root.join("requests.yaml"), request("grow", 44)).unwrap();
    render(&r.root);
    let out = check(&r.root, &["--base", "HEAD", "--format", "json"]);
    assert_eq!(judged(&out), vec!["grow"], "{}", out.stdout);
    // A rendered quota raised by hand is judged.
    let quota = walk(&r.root.join("rendered"))
        .into_iter()
        .find(|p| p.to_string_lossy().contains("resourcequota-"))
        .expect("a rendered ResourceQuota");
    let text = std::fs::read_to_string(&quota).unwrap();
    let edited = text.replace(
        "requests.nvidia.com/gpu: \"",
        "requests.nvidia.com/gpu: \"9",
    );
    assert_ne!(text, edited);
    std::fs::write(&quota, edited).unwrap();
    let out = check(&r.root, &["--base", "HEAD", "--format", "json"]);
    let t = decision(&out, "templates");
    assert_eq!(t["decision"], "needs-approval");
    assert_eq!(t["tier"], "vp");
    let edited = t["facts"]["change"]["output_edited"].as_array().unwrap();
    assert_eq!(edited.len(), 1, "{edited:?}");
}

/// The same refusal, told apart: a merge commit made against an older tip
/// of the base branch (GitHub's merge ref before it is rebuilt), and a
/// shallow clone whose history may only lack what joins head and base.
#[test]
fn a_base_missing_from_a_stale_merge_or_a_shallow_clone_is_named_as_such() {
    let r = repo_at("");
    let cut = r.git.head().unwrap().peel_to_commit().unwrap();
    std::fs::write(r.root.join("merged.yaml"), request("merged", 60)).unwrap();
    let base = commit_all(&r.git, "merged since");
    r.git
        .reset(cut.as_object(), git2::ResetType::Hard, None)
        .unwrap();
    std::fs::write(r.root.join("mine.yaml"), request("mine", 60)).unwrap();
    let mine = commit_all(&r.git, "mine");
    // The merge of the branch with the base as it was at the cut.
    let sig = git2::Signature::now("t", "t@capops.invalid").unwrap();
    let old_tip = r.git.find_commit(cut.id()).unwrap();
    let branch = r
        .git
        .find_commit(git2::Oid::from_str(&mine).unwrap())
        .unwrap();
    let tree = branch.tree().unwrap();
    r.git
        .commit(
            Some("HEAD"),
            &sig,
            &sig,
            "merge",
            &tree,
            &[&branch, &old_tip],
        )
        .unwrap();
    let out = check(&r.root, &["--base", &base, "--format", "json"]);
    assert_eq!(out.code, 2, "{}", out.stdout);
    assert!(out.stdout.is_empty(), "nothing judged: {}", out.stdout);
    assert!(
        out.stderr
            .contains("is not in the history of the checked-out merge commit: the merge was made against an older tip"),
        "{}",
        out.stderr
    );
    // A merge of two branches both cut before the base (neither parent an
    // older tip of it): the branch was cut before it, not a stale merge.
    let feature = {
        let tree = branch.tree().unwrap();
        r.git
            .commit(None, &sig, &sig, "feature", &tree, &[&old_tip])
            .unwrap()
    };
    let feature = r.git.find_commit(feature).unwrap();
    let head = r.git.head().unwrap().peel_to_commit().unwrap();
    r.git
        .commit(
            Some("HEAD"),
            &sig,
            &sig,
            "merge feature",
            &branch.tree().unwrap(),
            &[&head, &feature],
        )
        .unwrap();
    // HEAD's first parent is the stale merge, whose parent is an older tip:
    // not a parent of HEAD itself.
    let out = check(&r.root, &["--base", &base, "--format", "json"]);
    assert_eq!(out.code, 2, "{}", out.stdout);
    assert!(
        out.stderr.contains("the branch was cut before it"),
        "{}",
        out.stderr
    );
    // A shallow clone (git marks one with `.git/shallow`, the commits whose
    // parents were not fetched): the history cannot say.
    std::fs::write(r.root.join(".git/shallow"), format!("{}\n", cut.id())).unwrap();
    let out = check(&r.root, &["--base", &base, "--format", "json"]);
    assert_eq!(out.code, 2, "{}", out.stdout);
    assert!(out.stdout.is_empty(), "nothing judged: {}", out.stdout);
    assert!(out.stderr.contains("shallow clone"), "{}", out.stderr);
    assert!(out.stderr.contains("fetch-depth: 0"), "{}", out.stderr);
    assert!(
        !out.stderr.contains("branch was cut before"),
        "{}",
        out.stderr
    );
    // A linked worktree of the shallow clone: git keeps `shallow` in the
    // common folder.
    let wt_dir = tempfile::tempdir().unwrap();
    let wt_path = wt_dir.path().join("wt");
    r.git.worktree("wt", &wt_path, None).unwrap();
    let out = check(&wt_path, &["--base", &base, "--format", "json"]);
    assert_eq!(out.code, 2, "{}", out.stdout);
    assert!(out.stderr.contains("shallow clone"), "{}", out.stderr);
}

/// A branch cut before the base: compared with the base's tree, the
/// requests merged since would read as released by the change (offsetting
/// its own growth), though a merge keeps them. Nothing is judged until the
/// branch is brought up to date.
#[test]
fn a_head_cut_before_its_base_is_not_judged() {
    let r = repo_at("");
    let cut = r.git.head().unwrap().peel_to_commit().unwrap();
    // Merged on the base branch since the cut: another 60 GPUs.
    std::fs::write(r.root.join("merged.yaml"), request("merged", 60)).unwrap();
    let base = commit_all(&r.git, "merged since");
    // The branch, from the cut, adds its own 60.
    r.git
        .reset(cut.as_object(), git2::ResetType::Hard, None)
        .unwrap();
    std::fs::write(r.root.join("mine.yaml"), request("mine", 60)).unwrap();
    commit_all(&r.git, "mine");
    let out = check(&r.root, &["--base", &base, "--format", "json"]);
    assert_eq!(out.code, 2, "{}", out.stdout);
    assert!(out.stdout.is_empty(), "nothing judged: {}", out.stdout);
    assert!(
        out.stderr
            .contains("is not in the history of the checked-out commit"),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr.contains(&format!("git merge {base}")),
        "{}",
        out.stderr
    );
    // Merged with the base: judged, and the merged request is not a release.
    let sig = git2::Signature::now("t", "t@capops.invalid").unwrap();
    let ours = r.git.head().unwrap().peel_to_commit().unwrap();
    let theirs = r
        .git
        .find_commit(git2::Oid::from_str(&base).unwrap())
        .unwrap();
    let mut index = r.git.merge_commits(&ours, &theirs, None).unwrap();
    let tree = r
        .git
        .find_tree(index.write_tree_to(&r.git).unwrap())
        .unwrap();
    r.git
        .commit(Some("HEAD"), &sig, &sig, "merge", &tree, &[&ours, &theirs])
        .unwrap();
    r.git
        .checkout_head(Some(git2::build::CheckoutBuilder::new().force()))
        .unwrap();
    let out = check(&r.root, &["--base", &base, "--format", "json"]);
    assert_eq!(judged(&out), vec!["mine"], "{}", out.stdout);
}

/// Adds a gitlink (mode 160000: a submodule's commit) at `path` to the
/// index, as `git submodule add` leaves it, with an empty folder for it.
fn add_gitlink(git: &Repository, path: &str) {
    std::fs::create_dir_all(git.workdir().unwrap().join(path)).unwrap();
    let mut index = git.index().unwrap();
    index
        .add(&git2::IndexEntry {
            ctime: git2::IndexTime::new(0, 0),
            mtime: git2::IndexTime::new(0, 0),
            dev: 0,
            ino: 0,
            mode: 0o160000,
            uid: 0,
            gid: 0,
            file_size: 0,
            id: git2::Oid::from_str("1234567890123456789012345678901234567890").unwrap(),
            flags: 0,
            flags_extended: 0,
            path: path.as_bytes().to_vec(),
        })
        .unwrap();
    index.write().unwrap();
}

/// Each of git's records on its own: a gitlink committed and then dropped
/// from the index (found walking `HEAD`), a `.gitmodules` entry with no
/// gitlink anywhere (its path with a trailing slash), and a submodule where
/// the whole output folder goes.
#[test]
fn a_submodule_in_the_output_is_found_in_each_of_gits_records_alone() {
    let judged_as_edit = |r: &Repo, what: &str, name: &str| {
        let out = check(&r.root, &["--base", "HEAD", "--format", "json"]);
        let t = decision(&out, "templates");
        assert_eq!(t["tier"], "vp", "{what}: {t}");
        let edited = t["facts"]["change"]["output_edited"].to_string();
        assert!(edited.contains(name), "{what}: {edited}");
    };
    // Committed, then `git rm --cached`: only HEAD has it.
    let r = repo_at("");
    render(&r.root);
    add_gitlink(&r.git, "rendered/vendored");
    let sig = git2::Signature::now("t", "t@capops.invalid").unwrap();
    let tree = r
        .git
        .find_tree(r.git.index().unwrap().write_tree().unwrap())
        .unwrap();
    let parent = r.git.head().unwrap().peel_to_commit().unwrap();
    r.git
        .commit(
            Some("HEAD"),
            &sig,
            &sig,
            "rendered, with a submodule",
            &tree,
            &[&parent],
        )
        .unwrap();
    let mut index = r.git.index().unwrap();
    index
        .remove_path(std::path::Path::new("rendered/vendored"))
        .unwrap();
    index.write().unwrap();
    assert!(
        r.git.index().unwrap().iter().all(|e| e.mode != 0o160000),
        "the index holds no gitlink"
    );
    judged_as_edit(&r, "HEAD only", "vendored");
    // Only `.gitmodules` names it (a clone that has not fetched it).
    let r = repo_at("");
    render(&r.root);
    commit_all(&r.git, "rendered");
    std::fs::write(
        r.root.join(".gitmodules"),
        "[submodule \"y\"]\n\tpath = rendered/pulled/\n\turl = https://example.invalid/y\n",
    )
    .unwrap();
    judged_as_edit(&r, ".gitmodules only", "pulled");
    // The output folder itself a submodule.
    let r = repo_at("");
    render(&r.root);
    commit_all(&r.git, "rendered");
    std::fs::write(
        r.root.join(".gitmodules"),
        "[submodule \"z\"]\n\tpath = rendered\n\turl = https://example.invalid/z\n",
    )
    .unwrap();
    judged_as_edit(&r, "the folder itself (.gitmodules)", "rendered/.");
}

/// A submodule in the output folder is another repository's files, which
/// a consumer that clones submodules (Argo CD does by default) applies:
/// never what render writes. It is found from git's own records (the index
/// and `HEAD`), whatever `.gitmodules` says or where it lies, and for a
/// capacity repository in a subfolder of the git repository too.
#[test]
fn a_submodule_in_the_output_is_judged_however_gitmodules_spells_it() {
    for sub in ["", "capacity"] {
        let r = repo_at(sub);
        render(&r.root);
        commit_all(&r.git, "rendered");
        let prefix = if sub.is_empty() {
            String::new()
        } else {
            format!("{sub}/")
        };
        // A gitlink in the index, as `git submodule add` leaves it, with
        // no `.gitmodules` at all: an empty folder in a clone that does not
        // fetch submodules.
        let path = format!("{prefix}rendered/extra");
        add_gitlink(&r.git, &path);
        let out = check(&r.root, &["--base", "HEAD", "--format", "json"]);
        let t = decision(&out, "templates");
        assert_eq!(t["decision"], "needs-approval", "{sub}: {t}");
        assert_eq!(t["tier"], "vp", "{sub}: {t}");
        assert!(
            t["facts"]["change"]["output_edited"]
                .to_string()
                .contains("extra"),
            "{sub}: {t}"
        );
        // Committed, and named in a `.gitmodules` with its key spelled
        // `Path` at the top of the git repository: still the output edited.
        let top = r.git.workdir().unwrap().to_path_buf();
        std::fs::write(
            top.join(".gitmodules"),
            format!("[submodule \"x\"]\n\tPath = {path}\n\turl = https://example.invalid/x\n"),
        )
        .unwrap();
        let out = check(&r.root, &["--base", "HEAD", "--format", "json"]);
        assert_eq!(decision(&out, "templates")["tier"], "vp", "{sub}");
    }
}

/// The render manifest tells `capops render` what it may prune: a manifest
/// that does not read, leaves out a file of the folder, or is deleted while
/// files remain is a hand edit of the output (judged); one rewritten by a
/// render is not.
#[test]
fn a_render_manifest_edited_by_hand_is_judged() {
    let r = repo_at("");
    render(&r.root);
    commit_all(&r.git, "rendered");
    let manifest = r.root.join("rendered/.capops-manifest.json");
    let original = std::fs::read_to_string(&manifest).unwrap();
    let files: Vec<String> = serde_json::from_str::<serde_json::Value>(&original).unwrap()["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f.as_str().unwrap().to_string())
        .collect();
    assert!(files.len() >= 2, "{files:?}");
    let one_left_out =
        serde_json::json!({"version": 1, "writtenBy": "capops render", "files": &files[1..]})
            .to_string();
    let judged_as_edit = |text: Option<&str>| {
        match text {
            Some(t) => std::fs::write(&manifest, t).unwrap(),
            None => std::fs::remove_file(&manifest).unwrap(),
        }
        let out = check(&r.root, &["--base", "HEAD", "--format", "json"]);
        std::fs::write(&manifest, &original).unwrap();
        let names = judged(&out);
        if !names.contains(&"templates".to_string()) {
            return false;
        }
        let t = decision(&out, "templates");
        assert_eq!(t["tier"], "vp", "{t}");
        let edited = t["facts"]["change"]["output_edited"].to_string();
        assert!(edited.contains(".capops-manifest.json"), "{edited}");
        true
    };
    assert!(judged_as_edit(Some("{")));
    assert!(judged_as_edit(Some(&one_left_out)));
    assert!(judged_as_edit(None));
    // The same files in another order and layout still list them all.
    let reordered =
        serde_json::json!({"files": files.iter().rev().collect::<Vec<_>>(), "version": 1})
            .to_string();
    assert!(!judged_as_edit(Some(&reordered)));
    // A re-render after a change rewrites it: not judged.
    std::fs::write(r.root.join("requests.yaml"), request("grow", 44)).unwrap();
    render(&r.root);
    let out = check(&r.root, &["--base", "HEAD", "--format", "json"]);
    assert_eq!(judged(&out), vec!["grow"], "{}", out.stdout);
}

/// `capops render` of the repository at the checks' moment; it must succeed.
fn render(root: &Path) {
    let out = common::run_os(
        vec![
            "render".into(),
            root.as_os_str().into(),
            "--at".into(),
            "2026-11-22".into(),
        ],
        &[],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out.sort();
    out
}

/// Adds `ignore: [drafts/]` to the fixture's Config.
fn ignore_drafts(root: &Path) {
    let config = root.join("capops.yaml");
    let text = std::fs::read_to_string(&config).unwrap();
    std::fs::write(&config, format!("{text}  ignore: [drafts/]\n")).unwrap();
}

#[test]
fn an_ignored_draft_is_not_what_the_rolling_budget_counts_from() {
    // 30 days before the base, drafts/ (ignored) held a copy of `first`:
    // it was not part of the repository then, so `first`, merged 10 days
    // ago, is recent growth, and 9 more GPUs need the team lead.
    let at: i64 = 1_795_305_600;
    let day = 86_400;
    let tmp = tempfile::tempdir().unwrap();
    let git = Repository::init(tmp.path()).unwrap();
    let root = tmp.path().to_path_buf();
    copy_dir(&fixture(), &root);
    ignore_drafts(&root);
    std::fs::write(root.join("requests.yaml"), request("grow", 40)).unwrap();
    std::fs::create_dir(root.join("drafts")).unwrap();
    std::fs::write(root.join("drafts/first.yaml"), request("first", 9)).unwrap();
    commit_all_dated(
        &git,
        "the capacity repository, a draft",
        Some(at - 90 * day),
    );
    std::fs::write(root.join("first.yaml"), request("first", 9)).unwrap();
    let base = commit_all_dated(&git, "9 GPUs, automatically", Some(at - 10 * day));
    std::fs::write(root.join("second.yaml"), request("second", 9)).unwrap();
    let out = check(&root, &["--base", &base, "--format", "json"]);
    assert_eq!(out.code, 1, "{}", out.stdout);
    assert_eq!(
        decision(&out, "second")["tier"],
        "team-lead",
        "{}",
        out.stdout
    );
}

#[test]
fn documents_a_change_stops_ignoring_are_judged_as_added() {
    // The base ignores drafts/, which holds a 60-GPU request (merged with
    // no decision, as ignored files are). The pull request stops ignoring
    // it: the request comes into force, so it is judged as added.
    let repo = repo_at("");
    ignore_drafts(&repo.root);
    std::fs::create_dir(repo.root.join("drafts")).unwrap();
    std::fs::write(repo.root.join("drafts/big.yaml"), request("big", 60)).unwrap();
    let base = commit_all(&repo.git, "a draft, ignored");
    let config = repo.root.join("capops.yaml");
    let text = std::fs::read_to_string(&config).unwrap();
    std::fs::write(&config, text.replace("  ignore: [drafts/]\n", "")).unwrap();
    let out = check(&repo.root, &["--base", &base, "--format", "json"]);
    assert_eq!(out.code, 1, "{}", out.stdout);
    let d = decision(&out, "big");
    assert_eq!(d["change"], "added", "{d}");
    assert_eq!(d["tier"], "director", "{d}");
    // The other way round: a file the working tree ignores but the base
    // reads is still the base's (removing it from force is a release).
    let repo = repo_at("");
    std::fs::create_dir(repo.root.join("drafts")).unwrap();
    std::fs::write(repo.root.join("drafts/big.yaml"), request("big", 60)).unwrap();
    let base = commit_all(&repo.git, "a request in drafts/, read");
    ignore_drafts(&repo.root);
    let out = check(&repo.root, &["--base", &base, "--format", "json"]);
    assert_eq!(out.code, 1, "{}", out.stdout);
    let d = decision(&out, "big");
    assert_eq!(d["change"], "removed", "{d}");
}

#[test]
fn a_comment_on_a_change_with_thousands_of_effects_fits_githubs_limit() {
    // 1,500 teams added, each with a namespace and a quota on prod: the
    // effect section alone once took 99,123 characters.
    let r = repo_at("");
    let teams: String = (0..1_500)
        .map(|i| format!("---\napiVersion: capops.dev/v1alpha1\nkind: Team\nmetadata:\n  name: t{i}\nspec:\n  costCenter: CC-9\n  leads: [l{i}]\n  clusters:\n    prod:\n      namespace: t{i}\n      quota:\n        nvidia.com/gpu: 1\n"))
        .collect();
    std::fs::write(r.root.join("more-teams.yaml"), teams).unwrap();
    commit_all(&r.git, "teams");
    let out = check(&r.root, &["--base", "HEAD~1", "--format", "markdown"]);
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert!(
        out.stdout.chars().count() <= 65_536,
        "{} characters",
        out.stdout.chars().count()
    );
    assert!(
        out.stdout.contains("Effect on clusters and clouds"),
        "{}",
        &out.stdout[..2000]
    );
    assert!(
        out.stdout.contains("more lines: `capops plan`"),
        "{}",
        &out.stdout[..2000]
    );
}

#[test]
fn a_flag_of_the_pull_request_loop_without_github_is_refused() {
    // Beside --base, `--json-out FILE` was accepted and never written
    // (clap refuses it alone).
    let r = repo_at("");
    let file = r.root.join("result.json");
    let f = file.to_str().unwrap();
    for args in [
        &["--base", "HEAD", "--json-out", f][..],
        &["--base", "HEAD", "--pr", "3"],
        &["--base", "HEAD", "--base-branch", "main"],
        &["--json-out", f],
    ] {
        let out = check(&r.root, args);
        assert_eq!(out.code, 2, "{args:?}: {}{}", out.stdout, out.stderr);
        assert!(out.stderr.contains("--github"), "{args:?}: {}", out.stderr);
    }
    assert!(!file.exists());
}

#[test]
fn the_pull_request_loops_flags_refuse_values_github_never_has() {
    let r = repo_at("");
    for (flag, value) in [
        ("--pr", "0"),
        ("--token-env", ""),
        ("--token-env", "A B"),
        ("--comment-author", "a b<"),
        ("--base-branch", ""),
        ("--base-branch", "a..b"),
    ] {
        let arg = format!("{flag}={value}");
        let out = check(&r.root, &["--github", &arg]);
        assert_eq!(out.code, 2, "{arg}: {}{}", out.stdout, out.stderr);
        assert!(out.stderr.contains(flag), "{arg}: {}", out.stderr);
    }
}
