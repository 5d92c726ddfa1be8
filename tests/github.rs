//! `capops check --github` against the stateful fake GitHub (tests/fake_github):
//! a pull request's whole life, each approval rule, pagination, rate limits,
//! the comment's ownership, and the token kept out of every output. The
//! capacity repositories are real git repositories made by each test; the
//! pull request's head is the commit checked out.

mod common;
mod fake_github;

use fake_github::{FakeGithub, FaultKind};
use git2::{IndexAddOption, Repository, Signature};
use serde_json::Value;
use std::path::{Path, PathBuf};

/// Recognisable tokens: they must never appear in any output.
const TOKEN: &str = "ghp_CAPOPSTEST_user_token_5f1e9a77c0d3";
const APP_TOKEN: &str = "ghs_CAPOPSTEST_app_token_8b2c4d6e0f1a";
const MARKER: &str = "<!-- capops:check -->";
const PR: u64 = 7;

fn commit_all(repo: &Repository, message: &str) -> String {
    let mut index = repo.index().unwrap();
    index.add_all(["*"], IndexAddOption::DEFAULT, None).unwrap();
    index.update_all(["*"], None).unwrap();
    index.write().unwrap();
    let tree = repo.find_tree(index.write_tree().unwrap()).unwrap();
    let sig = Signature::now("test", "test@capops.invalid").unwrap();
    let parent = repo.head().ok().and_then(|h| h.peel_to_commit().ok());
    let parents: Vec<&git2::Commit> = parent.iter().collect();
    repo.commit(Some("HEAD"), &sig, &sig, message, &tree, &parents)
        .unwrap()
        .to_string()
}

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

fn request(name: &str, gpus: u32, justification: &str) -> String {
    format!(
        "apiVersion: capops.dev/v1alpha1\nkind: CapacityRequest\nmetadata:\n  name: {name}\nspec:\n  team: ml\n  cluster: prod\n  pool: h100\n  resources:\n    nvidia.com/gpu: {gpus}\n  window: {{start: 2026-12-01, end: 2027-03-01}}\n  workloadClass: training\n  priorityClass: batch\n  justification: {justification}\n  successMetrics: [used]\n  businessCase: plan\n"
    )
}

/// A capacity repository with a base commit (`grow` at 40 GPUs) and a head
/// commit (`grow` at `gpus`), the head checked out.
struct Checkout {
    _tmp: tempfile::TempDir,
    git: Repository,
    root: PathBuf,
    base: String,
    head: String,
    files: PathBuf,
}

impl Checkout {
    fn new(gpus: u32) -> Checkout {
        Checkout::with(gpus, |_| {})
    }

    /// `setup` may add files to the base.
    fn with(gpus: u32, setup: impl FnOnce(&Path)) -> Checkout {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("repo");
        let files = tmp.path().join("files");
        std::fs::create_dir_all(&files).unwrap();
        let git = Repository::init(&root).unwrap();
        copy_dir(&common::root().join("policies/tests/fixture"), &root);
        std::fs::write(root.join("requests.yaml"), request("grow", 40, "test")).unwrap();
        setup(&root);
        let base = commit_all(&git, "base");
        std::fs::write(root.join("requests.yaml"), request("grow", gpus, "test")).unwrap();
        let head = commit_all(&git, "head");
        Checkout {
            _tmp: tmp,
            git,
            root,
            base,
            head,
            files,
        }
    }

    /// A new commit on the pull request's branch (a changed justification).
    fn push(&mut self, gpus: u32, justification: &str) -> String {
        std::fs::write(
            self.root.join("requests.yaml"),
            request("grow", gpus, justification),
        )
        .unwrap();
        self.head = commit_all(&self.git, "push");
        self.head.clone()
    }
}

/// The fake with its accounts, teams and pull request #7 by alice.
fn fake(co: &Checkout) -> FakeGithub {
    let f = FakeGithub::start("org", "capacity");
    f.with(|w| {
        w.add_account(TOKEN, "capops-bot", false, true);
        w.add_account(APP_TOKEN, "github-actions[bot]", true, true);
        for who in ["bob", "carol", "alice"] {
            w.add_member("org/directors", who, "active");
        }
        w.add_member("org/directors", "pat", "pending");
        w.add_member("org/capacity-review", "dave", "active");
        w.add_member("org/capacity-review", "erin", "pending");
        w.open_pull(PR, "alice", &co.base, &co.head);
    });
    f
}

struct Run {
    code: i32,
    json: Value,
    stdout: String,
    stderr: String,
}

/// `capops check --github` as a `pull_request` workflow would run it.
fn gate(co: &Checkout, f: &FakeGithub, token: &str, args: &[&str], env: &[(&str, &str)]) -> Run {
    let event = co.files.join("event.json");
    std::fs::write(
        &event,
        format!(r#"{{"action":"synchronize","number":{PR},"pull_request":{{"number":{PR}}}}}"#),
    )
    .unwrap();
    let event = event.display().to_string();
    let root = co.root.display().to_string();
    // The first value of a name wins: the test's own come first.
    let mut all_env: Vec<(&str, &str)> = env.to_vec();
    all_env.extend_from_slice(&[
        ("GITHUB_EVENT_NAME", "pull_request"),
        ("GITHUB_EVENT_PATH", &event),
        ("GITHUB_REPOSITORY", "org/capacity"),
        ("GITHUB_API_URL", &f.url),
        ("GITHUB_TOKEN", token),
    ]);
    let mut argv = vec!["check", "--github", "--at", "2026-11-22"];
    if !args.contains(&"--format") {
        argv.extend_from_slice(&["--format", "json"]);
    }
    argv.extend_from_slice(args);
    argv.push(&root);
    let out = common::run(&argv, &all_env);
    Run {
        code: out.code,
        json: serde_json::from_str(&out.stdout).unwrap_or(Value::Null),
        stdout: out.stdout,
        stderr: out.stderr,
    }
}

/// The roles of decision `grow`: role -> (approved by, missing).
fn roles(run: &Run) -> Vec<(String, Vec<String>, u64)> {
    let d = run.json["github"]["decisions"]
        .as_array()
        .unwrap_or_else(|| panic!("no github block: {}\n{}", run.stdout, run.stderr))
        .iter()
        .find(|d| d["name"] == "grow")
        .expect("grow judged");
    d["roles"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["role"].as_str().unwrap().to_string(),
                r["approvedBy"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|a| a["login"].as_str().unwrap().to_string())
                    .collect(),
                r["missing"].as_u64().unwrap(),
            )
        })
        .collect()
}

fn role(run: &Run, name: &str) -> (Vec<String>, u64) {
    let r = roles(run).into_iter().find(|r| r.0 == name).unwrap();
    (r.1, r.2)
}

#[test]
fn a_pull_request_from_opening_to_green() {
    let mut co = Checkout::new(100); // 40 -> 100 GPUs: the change adds 60, director + capacity review
    let f = fake(&co);
    let h1 = co.head.clone();

    // Opened: nobody approved yet. One comment, a failing status.
    let run = gate(&co, &f, TOKEN, &[], &[]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert_eq!(role(&run, "director"), (vec![], 1));
    assert_eq!(role(&run, "capacity-review"), (vec![], 1));
    let comments = f.with(|w| w.comments_on(PR));
    assert_eq!(comments.len(), 1);
    assert_eq!(comments[0].login, "capops-bot");
    assert!(comments[0].body.starts_with(MARKER));
    assert!(comments[0].body.contains("**Approvals**"));
    assert!(comments[0].body.contains("| GPUs requested |"));
    let status = f.with(|w| w.status_of(&h1)).expect("a capops status");
    assert_eq!(status.state, "failure");
    assert!(
        status.description.contains("awaiting approval"),
        "{}",
        status.description
    );
    assert_eq!(
        status.target_url.as_deref(),
        Some(run.json["github"]["comment"]["url"].as_str().unwrap())
    );
    // The PAT cannot write check runs: the status was the fallback.
    assert_eq!(
        f.with(|w| w.requests("POST /repos/org/capacity/check-runs")),
        1
    );

    // The same run again: the comment is not duplicated, nor edited (unchanged).
    let run = gate(&co, &f, TOKEN, &[], &[]);
    assert_eq!(run.code, 1);
    assert_eq!(run.json["github"]["comment"]["action"], "unchanged");
    assert_eq!(f.with(|w| w.comments_on(PR).len()), 1);
    assert_eq!(
        f.with(|w| w.requests("PATCH /repos/org/capacity/issues/comments")),
        0
    );

    // bob (director) approves the head; dave approved an old commit: ignored.
    f.with(|w| {
        w.review(PR, "dave", "APPROVED", &co.base);
        w.review(PR, "bob", "APPROVED", &h1);
    });
    let run = gate(&co, &f, TOKEN, &[], &[]);
    assert_eq!(run.code, 1);
    assert_eq!(role(&run, "director"), (vec!["bob".to_string()], 0));
    assert_eq!(role(&run, "capacity-review"), (vec![], 1));
    assert_eq!(run.json["github"]["comment"]["action"], "updated");
    let comments = f.with(|w| w.comments_on(PR));
    assert_eq!(comments.len(), 1, "edited in place, never duplicated");
    assert!(
        comments[0].body.contains("bob on `"),
        "{}",
        comments[0].body
    );
    let stale = &run.json["github"]["notCounted"];
    assert_eq!(stale[0]["login"], "dave");
    assert_eq!(stale[0]["why"]["reason"], "stale-commit");

    // A new push: bob's approval is now on an old commit.
    let h2 = co.push(100, "updated justification");
    f.with(|w| w.push(PR, &h2));
    let run = gate(&co, &f, TOKEN, &[], &[]);
    assert_eq!(run.code, 1);
    assert_eq!(role(&run, "director"), (vec![], 1));
    assert_eq!(f.with(|w| w.status_of(&h2)).unwrap().state, "failure");

    // Both approve the new head: green.
    f.with(|w| {
        w.review(PR, "bob", "APPROVED", &h2);
        w.review(PR, "dave", "APPROVED", &h2);
    });
    let run = gate(&co, &f, TOKEN, &[], &[]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(run.json["github"]["success"], true);
    let status = f.with(|w| w.status_of(&h2)).unwrap();
    assert_eq!(status.state, "success");
    let comments = f.with(|w| w.comments_on(PR));
    assert_eq!(comments.len(), 1);
    assert!(
        comments[0]
            .body
            .contains("✅ approved: every approval present"),
        "{}",
        comments[0].body
    );
    // The earlier head keeps its red status: GitHub requires checks on the latest commit.
    assert_eq!(f.with(|w| w.status_of(&h1)).unwrap().state, "failure");
}

#[test]
fn a_comment_after_an_approval_does_not_revoke_it() {
    let co = Checkout::new(100);
    let f = fake(&co);
    f.with(|w| {
        w.review(PR, "bob", "APPROVED", &co.head);
        w.review(PR, "dave", "APPROVED", &co.head);
        w.review(PR, "bob", "COMMENTED", &co.head);
    });
    let run = gate(&co, &f, TOKEN, &[], &[]);
    assert_eq!(run.code, 0, "{}", run.stderr);
}

#[test]
fn a_dismissal_revokes_the_approval() {
    let co = Checkout::new(100);
    let f = fake(&co);
    let bob = f.with(|w| {
        w.review(PR, "dave", "APPROVED", &co.head);
        w.review(PR, "bob", "APPROVED", &co.head)
    });
    assert_eq!(gate(&co, &f, TOKEN, &[], &[]).code, 0);
    f.with(|w| w.dismiss(PR, bob));
    let run = gate(&co, &f, TOKEN, &[], &[]);
    assert_eq!(run.code, 1);
    assert_eq!(role(&run, "director"), (vec![], 1));
    assert_eq!(f.with(|w| w.status_of(&co.head)).unwrap().state, "failure");
}

#[test]
fn the_authors_own_approval_is_ignored() {
    let co = Checkout::new(100);
    let f = fake(&co);
    f.with(|w| {
        w.review(PR, "alice", "APPROVED", &co.head); // an active director, but the author
        w.review(PR, "dave", "APPROVED", &co.head);
    });
    let run = gate(&co, &f, TOKEN, &[], &[]);
    assert_eq!(run.code, 1);
    assert_eq!(role(&run, "director"), (vec![], 1));
    assert_eq!(
        run.json["github"]["notCounted"][0]["why"]["reason"],
        "author"
    );
}

#[test]
fn a_pending_team_member_is_ignored() {
    let co = Checkout::new(100);
    let f = fake(&co);
    f.with(|w| {
        w.review(PR, "bob", "APPROVED", &co.head);
        w.review(PR, "erin", "APPROVED", &co.head); // invited to capacity-review, not accepted
    });
    let run = gate(&co, &f, TOKEN, &[], &[]);
    assert_eq!(run.code, 1);
    assert_eq!(role(&run, "capacity-review"), (vec![], 1));
    let body = &f.with(|w| w.comments_on(PR))[0].body;
    assert!(
        body.contains("pending (not yet accepted) member of org/capacity-review"),
        "{body}"
    );
}

#[test]
fn the_same_person_cannot_fill_two_director_slots() {
    // The base's own policy asks two directors for anything.
    let co = Checkout::with(60, |root| {
        std::fs::write(
            root.join("policy.yaml"),
            "apiVersion: capops.dev/v1alpha1\nkind: ApprovalPolicy\nmetadata:\n  name: two-directors\nspec:\n  tiers:\n    - name: board\n      when: \"true\"\n      approvals:\n        - role: director\n          count: 2\n",
        )
        .unwrap();
    });
    let f = fake(&co);
    f.with(|w| {
        w.review(PR, "bob", "APPROVED", &co.head);
        w.review(PR, "bob", "APPROVED", &co.head);
    });
    let run = gate(&co, &f, TOKEN, &[], &[]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert_eq!(role(&run, "director"), (vec!["bob".to_string()], 1));
    f.with(|w| w.review(PR, "carol", "APPROVED", &co.head));
    let run = gate(&co, &f, TOKEN, &[], &[]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(
        role(&run, "director"),
        (vec!["bob".to_string(), "carol".to_string()], 0)
    );
}

#[test]
fn reviews_on_two_pages_are_all_read() {
    let co = Checkout::new(100);
    let f = fake(&co);
    f.with(|w| {
        for i in 0..120 {
            w.review(PR, &format!("watcher{i}"), "COMMENTED", &co.head);
        }
        w.review(PR, "bob", "APPROVED", &co.head);
        w.review(PR, "dave", "APPROVED", &co.head);
    });
    let run = gate(&co, &f, TOKEN, &[], &[]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let pages = f.with(|w| w.requests("GET /repos/org/capacity/pulls/7/reviews"));
    assert_eq!(pages, 2, "122 reviews at 100 a page");
    assert!(f.with(|w| w.requests("reviews?page=2&per_page=100")) == 1);
}

#[test]
fn a_rate_limit_is_waited_out_then_the_run_succeeds() {
    let co = Checkout::new(100);
    let f = fake(&co);
    f.with(|w| {
        w.review(PR, "bob", "APPROVED", &co.head);
        w.review(PR, "dave", "APPROVED", &co.head);
        w.fail(
            None,
            "/pulls/7/reviews",
            1,
            FaultKind::PrimaryRateLimit { reset_in: 1 },
        );
        w.fail(None, "/statuses/", 1, FaultKind::RetryAfter { secs: 1 });
        w.fail(None, "/pulls/7", 1, FaultKind::Status(502));
    });
    let run = gate(&co, &f, TOKEN, &[], &[]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(
        f.with(|w| w.requests("GET /repos/org/capacity/pulls/7/reviews")),
        2
    );
    assert_eq!(
        f.with(|w| w.requests("POST /repos/org/capacity/statuses/")),
        2
    );
    assert_eq!(f.with(|w| w.status_of(&co.head)).unwrap().state, "success");
}

#[test]
fn a_rate_limit_beyond_the_bound_fails_at_once_with_exit_3() {
    let co = Checkout::new(100);
    let f = fake(&co);
    f.with(|w| {
        w.fail(
            None,
            "/pulls/7",
            1,
            FaultKind::PrimaryRateLimit { reset_in: 3600 },
        )
    });
    let started = std::time::Instant::now();
    let run = gate(&co, &f, TOKEN, &[], &[]);
    assert_eq!(run.code, 3);
    assert!(
        run.stderr.contains("error[github-rate-limited]"),
        "{}",
        run.stderr
    );
    assert!(started.elapsed() < std::time::Duration::from_secs(20));
    // No comment; a failing verdict on the commit checked out, so no earlier green stands.
    assert!(f.with(|w| w.comments.is_empty()));
    assert_eq!(f.with(|w| w.status_of(&co.head)).unwrap().state, "failure");
}

#[test]
fn runs_that_change_nothing_do_not_spend_the_commits_status_budget() {
    // GitHub keeps 1,000 statuses of a context per commit. Runs that change
    // nothing (comments, edited titles) must not spend them on identical
    // greens, or the run after a dismissal could not turn the head red.
    let co = Checkout::new(100);
    let f = fake(&co);
    let bob = f.with(|w| {
        w.review(PR, "dave", "APPROVED", &co.head);
        w.review(PR, "bob", "APPROVED", &co.head)
    });
    for _ in 0..3 {
        assert_eq!(gate(&co, &f, TOKEN, &[], &[]).code, 0);
    }
    let count = |f: &FakeGithub| f.with(|w| w.statuses.iter().filter(|s| s.sha == co.head).count());
    assert_eq!(count(&f), 1, "identical verdicts are written once");
    // The same verdict set by someone else does not count as capops' own:
    // branch protection pinned to capops' account would not read it.
    let ours = f.with(|w| w.status_of(&co.head)).unwrap();
    f.with(|w| {
        let mut theirs = ours.clone();
        theirs.creator = "mallory".into();
        w.statuses.push(theirs);
    });
    assert_eq!(gate(&co, &f, TOKEN, &[], &[]).code, 0);
    assert_eq!(count(&f), 3);
    assert_eq!(
        f.with(|w| w.status_of(&co.head)).unwrap().creator,
        ours.creator
    );
    f.with(|w| {
        w.statuses.retain(|s| s.sha != co.head);
        w.statuses.push(ours.clone());
    });
    // The budget nearly spent (by someone else's writes): the change still lands.
    f.with(|w| {
        let s = w.status_of(&co.head).unwrap();
        for _ in 0..fake_github::MAX_STATUSES - 2 {
            w.statuses.push(s.clone());
        }
    });
    assert_eq!(gate(&co, &f, TOKEN, &[], &[]).code, 0);
    assert_eq!(count(&f), fake_github::MAX_STATUSES - 1);
    f.with(|w| w.dismiss(PR, bob));
    assert_eq!(gate(&co, &f, TOKEN, &[], &[]).code, 1);
    assert_eq!(f.with(|w| w.status_of(&co.head)).unwrap().state, "failure");
}

#[test]
fn a_change_a_bot_opened_or_pushed_counts_no_approval() {
    // bob has a workflow open his own 100-GPU request as github-actions[bot],
    // then approves it with dave. Who set the bot going is not known.
    let co = Checkout::new(100);
    let f = fake(&co);
    f.with(|w| {
        w.pulls.clear();
        w.activity.clear();
        w.open_pull(PR, "github-actions[bot]", &co.base, &co.head);
        w.review(PR, "bob", "APPROVED", &co.head);
        w.review(PR, "dave", "APPROVED", &co.head);
    });
    let run = gate(&co, &f, TOKEN, &[], &[]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert_eq!(role(&run, "director"), (vec![], 1));
    let set_aside = run.json["github"]["notCounted"].as_array().unwrap();
    assert!(
        set_aside
            .iter()
            .any(|n| n["login"] == "bob" && n["why"]["reason"] == "bot-authored"),
        "{set_aside:?}"
    );

    // Opened by alice, with a commit a bot pushed: the same.
    let f = fake(&co);
    f.with(|w| {
        let p = w.pulls.get_mut(&PR).unwrap();
        p.commits
            .push(("alice".into(), "capacity-forms[bot]".into()));
        w.review(PR, "bob", "APPROVED", &co.head);
        w.review(PR, "dave", "APPROVED", &co.head);
    });
    let run = gate(&co, &f, TOKEN, &[], &[]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert_eq!(role(&run, "director"), (vec![], 1));
}

#[test]
fn a_run_that_cannot_read_its_pull_request_leaves_no_green_behind() {
    // bob's approval is dismissed, and the run that should turn the head
    // red cannot read the pull request: the head must not stay green.
    let co = Checkout::new(100);
    let f = fake(&co);
    let bob = f.with(|w| {
        w.review(PR, "dave", "APPROVED", &co.head);
        w.review(PR, "bob", "APPROVED", &co.head)
    });
    assert_eq!(gate(&co, &f, TOKEN, &[], &[]).code, 0);
    assert_eq!(f.with(|w| w.status_of(&co.head)).unwrap().state, "success");
    f.with(|w| {
        w.dismiss(PR, bob);
        w.fail(None, "/pulls/7", 10, FaultKind::Status(502));
    });
    let run = gate(&co, &f, TOKEN, &[], &[]);
    assert_eq!(run.code, 3, "{}", run.stderr);
    let status = f.with(|w| w.status_of(&co.head)).unwrap();
    assert_eq!(status.state, "failure");
    assert!(
        status.description.contains("github-http-error"),
        "{}",
        status.description
    );
}

#[test]
fn a_run_for_a_commit_the_pull_request_has_left_turns_that_commit_red() {
    // h1 is green; bob dismisses his approval, and before that run starts
    // alice pushes h2. The dismissal's run checks out h1 and is refused
    // (the head is h2), but it sets h1 red: pushed back, h1 must not read
    // green with the approval gone.
    let co = Checkout::new(100);
    let f = fake(&co);
    let h1 = co.head.clone();
    let bob = f.with(|w| {
        w.review(PR, "dave", "APPROVED", &h1);
        w.review(PR, "bob", "APPROVED", &h1)
    });
    assert_eq!(gate(&co, &f, TOKEN, &[], &[]).code, 0);
    assert_eq!(f.with(|w| w.status_of(&h1)).unwrap().state, "success");
    let mut co = co;
    f.with(|w| w.dismiss(PR, bob));
    let h2 = co.push(100, "moved on");
    f.with(|w| w.push(PR, &h2));
    co.git
        .set_head_detached(git2::Oid::from_str(&h1).unwrap())
        .unwrap();
    let run = gate(&co, &f, TOKEN, &[], &[]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(
        run.stderr.contains("github-head-mismatch"),
        "{}",
        run.stderr
    );
    f.with(|w| w.push(PR, &h1));
    assert_eq!(f.with(|w| w.status_of(&h1)).unwrap().state, "failure");
}

#[test]
fn server_errors_that_persist_fail_with_exit_3() {
    let co = Checkout::new(100);
    let f = fake(&co);
    f.with(|w| w.fail(None, "/pulls/7", 10, FaultKind::Status(503)));
    let run = gate(&co, &f, TOKEN, &[], &[]);
    assert_eq!(run.code, 3);
    assert!(run.stderr.contains("GitHub answered 503"), "{}", run.stderr);
    assert!(run.stderr.contains("after 4 attempts"), "{}", run.stderr);
}

#[test]
fn a_marker_comment_by_someone_else_is_left_alone() {
    let co = Checkout::new(100);
    let f = fake(&co);
    let foreign = format!("{MARKER}\nI copied capops' marker");
    let theirs = f.with(|w| w.comment_as(PR, "mallory", &foreign));
    gate(&co, &f, TOKEN, &[], &[]);
    f.with(|w| w.review(PR, "bob", "APPROVED", &co.head));
    gate(&co, &f, TOKEN, &[], &[]);
    let comments = f.with(|w| w.comments_on(PR));
    assert_eq!(comments.len(), 2);
    let mallory = comments.iter().find(|c| c.id == theirs).unwrap();
    assert_eq!(mallory.body, foreign);
    assert_eq!(mallory.updated_at, mallory.created_at);
    assert!(
        comments
            .iter()
            .any(|c| c.login == "capops-bot" && c.body.contains("bob on"))
    );
    assert_eq!(
        f.with(|w| w.requests(&format!("/issues/comments/{theirs}"))),
        0
    );
}

#[test]
fn comment_modes_never_and_always() {
    let co = Checkout::new(100);
    let f = fake(&co);
    let run = gate(&co, &f, TOKEN, &["--comment", "never"], &[]);
    assert_eq!(run.code, 1);
    assert!(f.with(|w| w.comments.is_empty()));
    assert_eq!(f.with(|w| w.requests("/comments")), 0);
    gate(&co, &f, TOKEN, &["--comment", "always"], &[]);
    gate(&co, &f, TOKEN, &["--comment", "always"], &[]);
    assert_eq!(f.with(|w| w.comments_on(PR).len()), 1);
    assert_eq!(
        f.with(|w| w.requests("PATCH /repos/org/capacity/issues/comments")),
        1
    );
}

#[test]
fn an_oversized_comment_refused_with_422_is_replaced_by_the_compact_one() {
    let co = Checkout::new(100);
    let f = fake(&co);
    f.with(|w| w.comment_limit = 1_000);
    let run = gate(&co, &f, TOKEN, &[], &[]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    let comments = f.with(|w| w.comments_on(PR));
    assert_eq!(comments.len(), 1);
    assert!(comments[0].body.starts_with(MARKER));
    assert!(
        comments[0].body.contains("GitHub refused the full comment"),
        "{}",
        comments[0].body
    );
    assert!(comments[0].body.contains("**Approvals**"));
}

#[test]
fn the_actions_token_posts_a_check_run_with_annotations() {
    let co = Checkout::new(100);
    let f = fake(&co);
    let run = gate(&co, &f, APP_TOKEN, &[], &[("GITHUB_ACTIONS", "true")]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    let runs = f.with(|w| w.check_runs.clone());
    assert_eq!(runs.len(), 1);
    assert_eq!(runs[0].name, "capops");
    assert_eq!(runs[0].sha, co.head);
    assert_eq!(runs[0].conclusion, "failure");
    assert!(runs[0].summary.contains("**Approvals**"));
    let ann = &runs[0].annotations[0];
    assert_eq!(ann["annotation_level"], "warning");
    assert!(
        ann["path"].as_str().unwrap().ends_with("requests.yaml"),
        "{ann}"
    );
    assert!(f.with(|w| w.statuses.is_empty()));
    // /user is refused to installation tokens: the comment is the Actions bot's.
    let comments = f.with(|w| w.comments_on(PR));
    assert_eq!(comments[0].login, "github-actions[bot]");
    gate(
        &co,
        &f,
        APP_TOKEN,
        &["--comment", "always"],
        &[("GITHUB_ACTIONS", "true")],
    );
    assert_eq!(
        f.with(|w| w.comments_on(PR).len()),
        1,
        "found again by its author"
    );
    // A second run makes a new check run: the newest one is the one that counts.
    assert_eq!(f.with(|w| w.check_runs.len()), 2);
}

#[test]
fn a_checkout_that_is_not_the_head_is_refused() {
    let mut co = Checkout::new(100);
    let f = fake(&co);
    let checked_out = co.head.clone();
    let pushed = co.push(100, "moved on");
    // The API knows a newer head than the one checked out.
    f.with(|w| w.push(PR, &pushed));
    co.git
        .set_head_detached(git2::Oid::from_str(&checked_out).unwrap())
        .unwrap();
    let run = gate(&co, &f, TOKEN, &[], &[]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(
        run.stderr.contains("error[github-head-mismatch]"),
        "{}",
        run.stderr
    );
    // No comment; the commit checked out is set red, the new head left alone.
    assert!(f.with(|w| w.comments.is_empty()));
    assert_eq!(
        f.with(|w| w.status_of(&checked_out)).unwrap().state,
        "failure"
    );
    assert!(f.with(|w| w.status_of(&pushed)).is_none());
}

#[test]
fn team_leads_come_from_the_base_not_from_the_pull_request() {
    // The head grows `grow` to 20 GPUs (team-lead tier) and makes mallory a lead of ml.
    let mut co = Checkout::new(20);
    let teams = std::fs::read_to_string(co.root.join("teams.yaml")).unwrap();
    std::fs::write(
        co.root.join("teams.yaml"),
        teams.replace("leads: [ml-lead]", "leads: [mallory]"),
    )
    .unwrap();
    co.head = commit_all(&co.git, "make mallory a lead");
    let f = fake(&co);
    f.with(|w| w.push(PR, &co.head));
    f.with(|w| w.review(PR, "mallory", "APPROVED", &co.head));
    let run = gate(&co, &f, TOKEN, &[], &[]);
    assert_ne!(run.code, 0, "{}", run.stdout);
    assert_eq!(role(&run, "team-lead").0, Vec::<String>::new());
    f.with(|w| w.review(PR, "ml-lead", "APPROVED", &co.head));
    let run = gate(&co, &f, TOKEN, &[], &[]);
    assert_eq!(role(&run, "team-lead"), (vec!["ml-lead".to_string()], 0));
}

#[test]
fn the_token_never_appears_in_any_output() {
    let co = Checkout::new(100);
    let f = fake(&co);
    let out_file = co.files.join("github-output");
    let summary = co.files.join("summary.md");
    let json_out = co.files.join("decision.json");
    let (o, s, j) = (
        out_file.display().to_string(),
        summary.display().to_string(),
        json_out.display().to_string(),
    );
    let env = [
        ("GITHUB_ACTIONS", "true"),
        ("GITHUB_OUTPUT", o.as_str()),
        ("GITHUB_STEP_SUMMARY", s.as_str()),
        ("GITHUB_SERVER_URL", "https://github.com"),
        ("GITHUB_RUN_ID", "99"),
    ];
    let mut seen = Vec::new();
    for args in [
        vec!["--json-out", j.as_str()],
        vec!["--format", "human"],
        vec!["--format", "markdown"],
    ] {
        let run = gate(&co, &f, TOKEN, &args, &env);
        seen.push(run.stdout);
        seen.push(run.stderr);
    }
    // Failures too: a rejected token, and a rate limit.
    let run = gate(&co, &f, "ghp_CAPOPSTEST_wrong_token_000", &[], &[]);
    assert_eq!(run.code, 3);
    assert!(run.stderr.contains("error[github-unauthorized]"));
    assert!(!run.stderr.contains("ghp_CAPOPSTEST_wrong_token_000"));
    // A token pasted with its line break: refused as no token (a usage
    // error, exit 2), not a panic, not shown.
    let run = gate(&co, &f, "ghp_CAPOPSTEST_newline\n_000", &[], &[]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(
        run.stderr.contains("error[github-no-token]") && run.stderr.contains("line breaks"),
        "{}",
        run.stderr
    );
    assert!(!run.stderr.contains("CAPOPSTEST_newline"), "{}", run.stderr);
    f.with(|w| {
        w.fail(
            None,
            "/pulls/7",
            1,
            FaultKind::PrimaryRateLimit { reset_in: 3600 },
        )
    });
    let run = gate(&co, &f, TOKEN, &[], &[]);
    seen.push(run.stdout);
    seen.push(run.stderr);
    // Servers that quote the credentials back: in a refusal that stops the
    // run (its verdict's summary quotes the error), in a server error, and
    // in the pushers' read, whose reason reaches the comment.
    f.with(|w| w.review(PR, "ml-lead", "APPROVED", &co.head));
    for (path, status) in [
        ("/pulls/7/reviews", 403),
        ("/pulls/7", 502),
        ("/activity", 403),
        ("/pulls/7", 200),
    ] {
        let fault = if status == 200 {
            FaultKind::EchoCredentialsAsOk
        } else {
            FaultKind::EchoCredentials(status)
        };
        f.with(|w| w.fail(None, path, 8, fault));
        let run = gate(&co, &f, TOKEN, &[], &[]);
        let comment = f.with(|w| {
            w.comments
                .last()
                .map(|c| c.body.clone())
                .unwrap_or_default()
        });
        assert!(
            [&run.stderr, &run.stdout, &comment]
                .iter()
                .any(|t| t.contains("<redacted>")),
            "{path}: {}",
            run.stderr
        );
        seen.push(run.stdout);
        seen.push(run.stderr);
        f.with(|w| w.faults.clear());
    }
    for file in [&out_file, &summary, &json_out] {
        seen.push(std::fs::read_to_string(file).unwrap());
    }
    f.with(|w| {
        seen.extend(w.comments.iter().map(|c| c.body.clone()));
        seen.extend(w.statuses.iter().map(|s| format!("{s:?}")));
        seen.extend(w.bodies.iter().cloned());
    });
    for text in &seen {
        assert!(!text.contains(TOKEN), "the token leaked into: {text}");
        assert!(
            !text.contains("CAPOPSTEST_user_token"),
            "part of the token leaked into: {text}"
        );
    }
    let outputs = std::fs::read_to_string(&out_file).unwrap();
    assert!(
        outputs.contains("comment-url=http://127.0.0.1:"),
        "{outputs}"
    );
    assert!(outputs.contains(&format!("decision-json={j}")), "{outputs}");
    let decision: Value =
        serde_json::from_str(&std::fs::read_to_string(&json_out).unwrap()).unwrap();
    assert_eq!(decision["github"]["pullRequest"], PR);
    assert!(
        std::fs::read_to_string(&summary)
            .unwrap()
            .contains("GPU capacity check")
    );
}

#[test]
fn enterprise_servers_are_reached_under_their_api_path() {
    let co = Checkout::new(100);
    let f = fake(&co);
    f.with(|w| {
        for i in 0..105 {
            w.review(PR, &format!("watcher{i}"), "COMMENTED", &co.head);
        }
        w.review(PR, "bob", "APPROVED", &co.head);
        w.review(PR, "dave", "APPROVED", &co.head);
    });
    let api = format!("{}/api/v3", f.url);
    let run = gate(&co, &f, TOKEN, &[], &[("GITHUB_API_URL", api.as_str())]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    // Every call, and the next page's Link, kept the /api/v3 prefix.
    f.with(|w| {
        assert!(w.log.iter().all(|l| l.contains(" /api/v3/")), "{:?}", w.log);
        assert_eq!(
            w.requests("GET /api/v3/repos/org/capacity/pulls/7/reviews"),
            2
        );
    });
}

#[test]
fn push_and_schedule_events_check_the_repository_without_the_api() {
    let co = Checkout::new(100);
    let f = fake(&co);
    let root = co.root.display().to_string();
    let json = co.files.join("decision.json").display().to_string();
    let outputs = co.files.join("outputs").display().to_string();
    for event in ["push", "schedule"] {
        let out = common::run(
            &[
                "check",
                "--github",
                "--at",
                "2026-11-22",
                "--json-out",
                &json,
                &root,
            ],
            &[
                ("GITHUB_EVENT_NAME", event),
                ("GITHUB_API_URL", &f.url),
                ("GITHUB_OUTPUT", &outputs),
            ],
        );
        // Needs approval as it stands, but nothing is denied: a plain check passes.
        assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
        assert!(out.stderr.contains("checking the repository as it stands"));
        assert!(
            out.stdout.contains("capops check: every request"),
            "{}",
            out.stdout
        );
        let written: Value =
            serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
        assert_eq!(written["summary"]["exitCode"], 0);
        assert!(
            written["decisions"]
                .as_array()
                .unwrap()
                .iter()
                .any(|d| d["name"] == "grow")
        );
    }
    assert!(
        std::fs::read_to_string(&outputs)
            .unwrap()
            .contains(&format!("decision-json={json}"))
    );
    assert!(f.with(|w| w.log.is_empty()), "no GitHub call on push");
}

/// A `merge_group` event payload for the queue's commit `head`, whose
/// parent commit (what it lands on) is `base`.
fn merge_group_event(co: &Checkout, head: &str, base: &str) -> PathBuf {
    let event = co.files.join("merge_group.json");
    std::fs::write(
        &event,
        format!(
            r#"{{"action":"checks_requested","merge_group":{{"head_sha":"{head}","head_ref":"refs/heads/gh-readonly-queue/main/pr-7-{base}","base_sha":"{base}","base_ref":"refs/heads/main"}}}}"#
        ),
    )
    .unwrap();
    event
}

#[test]
fn a_merge_group_is_judged_against_its_base_and_gets_a_status() {
    let co = Checkout::new(100);
    let f = fake(&co);
    let event = merge_group_event(&co, &co.head, &co.base);
    let root = co.root.display().to_string();
    let event = event.display().to_string();
    let out = common::run(
        &["check", "--github", "--at", "2026-11-22", &root],
        &[
            ("GITHUB_EVENT_NAME", "merge_group"),
            ("GITHUB_EVENT_PATH", &event),
            ("GITHUB_REPOSITORY", "org/capacity"),
            ("GITHUB_API_URL", &f.url),
            ("GITHUB_TOKEN", TOKEN),
        ],
    );
    // The entry is pull request #7's change (40 -> 100 GPUs) on what it
    // lands on: a director and a capacity review, on the pull request's head.
    assert_eq!(out.code, 1, "{}{}", out.stdout, out.stderr);
    assert_eq!(f.with(|w| w.status_of(&co.head)).unwrap().state, "failure");
    f.with(|w| {
        w.review(PR, "bob", "APPROVED", &co.head);
        w.review(PR, "dave", "APPROVED", &co.head);
    });
    let out = common::run(
        &["check", "--github", "--at", "2026-11-22", &root],
        &[
            ("GITHUB_EVENT_NAME", "merge_group"),
            ("GITHUB_EVENT_PATH", &event),
            ("GITHUB_REPOSITORY", "org/capacity"),
            ("GITHUB_API_URL", &f.url),
            ("GITHUB_TOKEN", TOKEN),
        ],
    );
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    assert_eq!(f.with(|w| w.status_of(&co.head)).unwrap().state, "success");
    // The pull request keeps the comment of its own check.
    assert!(f.with(|w| w.comments_on(PR)).is_empty());

    // A queue branch that names no pull request: no approvals can be read,
    // so what needs one fails, approved or not.
    let text = std::fs::read_to_string(&event)
        .unwrap()
        .replace("gh-readonly-queue/main/pr-7-", "elsewhere/");
    std::fs::write(&event, text).unwrap();
    let out = common::run(
        &["check", "--github", "--at", "2026-11-22", &root],
        &[
            ("GITHUB_EVENT_NAME", "merge_group"),
            ("GITHUB_EVENT_PATH", &event),
            ("GITHUB_REPOSITORY", "org/capacity"),
            ("GITHUB_API_URL", &f.url),
            ("GITHUB_TOKEN", TOKEN),
        ],
    );
    assert_eq!(out.code, 1, "{}{}", out.stdout, out.stderr);
    let status = f.with(|w| w.status_of(&co.head)).unwrap();
    assert_eq!(status.state, "failure", "{}", status.description);
}

#[test]
fn queued_pull_requests_that_pass_alone_are_judged_together() {
    // Two pull requests of 9 GPUs each: automatic alone. Queued together,
    // the second lands on the first (the queue's merge commits c1, c2), and
    // there the team's 18 GPUs within 30 days need its lead.
    let co = Checkout::new(40);
    std::fs::write(co.root.join("b.yaml"), request("b", 9, "test")).unwrap();
    let own = commit_all(&co.git, "pull request #7 alone");
    let start = co
        .git
        .find_object(git2::Oid::from_str(&co.head).unwrap(), None)
        .unwrap();
    co.git.reset(&start, git2::ResetType::Hard, None).unwrap();
    std::fs::remove_file(co.root.join("b.yaml")).ok();
    std::fs::write(co.root.join("a.yaml"), request("a", 9, "test")).unwrap();
    let c1 = commit_all(&co.git, "queue: pull request #6");
    std::fs::write(co.root.join("b.yaml"), request("b", 9, "test")).unwrap();
    let c2 = commit_all(&co.git, "queue: pull request #7");
    let f = fake(&co);
    f.with(|w| w.open_pull(PR, "alice", &co.head, &own));
    let event = merge_group_event(&co, &c2, &c1);
    let root = co.root.display().to_string();
    let event = event.display().to_string();
    let env = [
        ("GITHUB_EVENT_NAME", "merge_group"),
        ("GITHUB_EVENT_PATH", event.as_str()),
        ("GITHUB_REPOSITORY", "org/capacity"),
        ("GITHUB_API_URL", f.url.as_str()),
        ("GITHUB_TOKEN", TOKEN),
    ];
    let run = || {
        common::run(
            &[
                "check",
                "--github",
                "--at",
                "2026-11-22",
                "--format",
                "json",
                &root,
            ],
            &env,
        )
    };
    let out = run();
    assert_eq!(out.code, 1, "{}{}", out.stdout, out.stderr);
    assert!(
        out.stderr.contains("what it lands on") && out.stderr.contains(&c1[..7]),
        "{}",
        out.stderr
    );
    let json: Value = serde_json::from_str(&out.stdout).unwrap();
    let b = json["github"]["decisions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["name"] == "b")
        .cloned()
        .unwrap_or_else(|| panic!("b judged: {}", out.stdout));
    let roles: Vec<&str> = b["roles"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["role"].as_str().unwrap())
        .collect();
    assert_eq!(roles, ["team-lead"], "{b}");
    assert!(
        json["github"]["decisions"]
            .as_array()
            .unwrap()
            .iter()
            .all(|d| d["name"] != "a"),
        "only the entry's own change is judged: {}",
        out.stdout
    );
    assert_eq!(f.with(|w| w.status_of(&c2)).unwrap().state, "failure");

    // The team's lead approves pull request #7 on its own head: it passes.
    f.with(|w| w.review(PR, "ml-lead", "APPROVED", &own));
    let out = run();
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    assert_eq!(f.with(|w| w.status_of(&c2)).unwrap().state, "success");
}

/// Commits what the working tree holds, authored at `time` (seconds).
fn commit_at(repo: &Repository, message: &str, time: i64) -> String {
    let mut index = repo.index().unwrap();
    index.add_all(["*"], IndexAddOption::DEFAULT, None).unwrap();
    index.update_all(["*"], None).unwrap();
    index.write().unwrap();
    let tree = repo.find_tree(index.write_tree().unwrap()).unwrap();
    let author = Signature::new("alice", "alice@example.com", &git2::Time::new(time, 0)).unwrap();
    let committer = Signature::now("github", "noreply@github.com").unwrap();
    let parent = repo.head().ok().and_then(|h| h.peel_to_commit().ok());
    let parents: Vec<&git2::Commit> = parent.iter().collect();
    repo.commit(Some("HEAD"), &author, &committer, message, &tree, &parents)
        .unwrap()
        .to_string()
}

#[test]
fn a_queue_that_rebases_or_squashes_is_judged_on_the_whole_entry() {
    // Pull request #7 has two commits: b (9 GPUs), then a note. Queued
    // behind #6 (a, 9 GPUs), the team's 18 GPUs need its lead. With the
    // rebase method the queue replays both commits; the entry's last commit
    // only adds the note, so judged against its parent it would pass. The
    // merge group's parent commit (`base_sha`, #6's entry) is what it lands
    // on, whatever the method.
    const T1: i64 = 1_795_000_000;
    const T2: i64 = 1_795_000_600;
    let co = Checkout::new(40);
    let reset = |to: &str| {
        let o = co
            .git
            .find_object(git2::Oid::from_str(to).unwrap(), None)
            .unwrap();
        co.git.reset(&o, git2::ResetType::Hard, None).unwrap();
    };
    let write = |name: &str, text: &str| std::fs::write(co.root.join(name), text).unwrap();
    write("b.yaml", &request("b", 9, "test"));
    commit_at(&co.git, "Add b", T1);
    write("NOTES.md", "why b\n");
    let own = commit_at(&co.git, "Explain b", T2);
    reset(&co.head);
    write("a.yaml", &request("a", 9, "test"));
    let c1 = commit_all(&co.git, "queue: pull request #6");
    write("b.yaml", &request("b", 9, "test"));
    commit_at(&co.git, "Add b", T1);
    write("NOTES.md", "why b\n");
    let rebased = commit_at(&co.git, "Explain b", T2);
    let f = fake(&co);
    f.with(|w| {
        w.open_pull(PR, "alice", &co.head, &own);
        w.pulls.get_mut(&PR).unwrap().commits = vec![("alice".into(), "alice".into()); 2];
    });
    let root = co.root.display().to_string();
    let queue = |head: &str, base: &str| {
        let event = merge_group_event(&co, head, base);
        let event = event.display().to_string();
        common::run(
            &[
                "check",
                "--github",
                "--at",
                "2026-11-22",
                "--format",
                "json",
                &root,
            ],
            &[
                ("GITHUB_EVENT_NAME", "merge_group"),
                ("GITHUB_EVENT_PATH", &event),
                ("GITHUB_REPOSITORY", "org/capacity"),
                ("GITHUB_API_URL", &f.url),
                ("GITHUB_TOKEN", TOKEN),
            ],
        )
    };
    let out = queue(&rebased, &c1);
    assert_eq!(out.code, 1, "{}{}", out.stdout, out.stderr);
    assert!(out.stderr.contains(&c1[..7]), "lands on #6: {}", out.stderr);
    assert_eq!(f.with(|w| w.status_of(&rebased)).unwrap().state, "failure");

    // Squashed into one commit of the queue's own: judged against its parent, #6.
    reset(&c1);
    write("b.yaml", &request("b", 9, "test"));
    write("NOTES.md", "why b\n");
    let squashed = commit_at(&co.git, "Capacity for b (#7)", T2 + 3_600);
    let out = queue(&squashed, &c1);
    assert_eq!(out.code, 1, "{}{}", out.stdout, out.stderr);
    assert!(out.stderr.contains(&c1[..7]), "lands on #6: {}", out.stderr);

    // A parent commit that is not in the entry's history: refused, never
    // judged against something it does not land on.
    let out = queue(&squashed, &own);
    assert_eq!(out.code, 1, "{}{}", out.stdout, out.stderr);
    assert!(
        out.stderr.contains("error[github-queue-entry-unknown]"),
        "{}",
        out.stderr
    );
    assert_eq!(f.with(|w| w.status_of(&squashed)).unwrap().state, "failure");

    // The lead approves #7: the rebased entry passes.
    f.with(|w| w.review(PR, "ml-lead", "APPROVED", &own));
    reset(&rebased);
    let out = queue(&rebased, &c1);
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    assert_eq!(f.with(|w| w.status_of(&rebased)).unwrap().state, "success");
}

#[test]
fn usage_errors_exit_2_with_help() {
    let co = Checkout::new(100);
    let root = co.root.display().to_string();
    let out = common::run(&["check", "--github", &root], &[]);
    assert_eq!(out.code, 2);
    assert!(
        out.stderr.contains("error[github-no-pull-request]"),
        "{}",
        out.stderr
    );
    let out = common::run(
        &[
            "check",
            "--github",
            "--repo",
            "org/capacity",
            "--pr",
            "7",
            &root,
        ],
        &[],
    );
    assert_eq!(out.code, 2);
    assert!(out.stderr.contains("error[github-no-token]"));
    assert!(out.stderr.contains("help: pass the token in GITHUB_TOKEN"));
    let out = common::run(
        &["check", "--github", "--repo", "nope", "--pr", "7", &root],
        &[("GITHUB_TOKEN", TOKEN)],
    );
    assert_eq!(out.code, 2);
    assert!(out.stderr.contains("error[github-bad-repository]"));
    let out = common::run(&["check", "--github", "--base", "HEAD", &root], &[]);
    assert_eq!(out.code, 2, "--github takes the base from the pull request");
    let out = common::run(&["check", "--comment", "never", &root], &[]);
    assert_eq!(out.code, 2, "the pull-request flags need --github");
    assert!(out.stderr.contains("--github"));
}

/// Against real GitHub, when a token and a test repository are given:
/// `CAPOPS_GITHUB_E2E_TOKEN` (a token with `repo` scope), `CAPOPS_GITHUB_E2E_REPO`
/// (`owner/name`, a throw-away repository) and `CAPOPS_GITHUB_E2E_PR` (an open
/// pull request in it). It reads the pull request and its reviews (all pages),
/// writes the comment twice (one comment, edited) and sets the `capops` status.
#[test]
#[ignore = "needs CAPOPS_GITHUB_E2E_TOKEN, CAPOPS_GITHUB_E2E_REPO and CAPOPS_GITHUB_E2E_PR"]
fn real_github_end_to_end() {
    use capops::github::{client::Client, comment, rest, retry, status};
    let (Ok(token), Ok(repo), Ok(pr)) = (
        std::env::var("CAPOPS_GITHUB_E2E_TOKEN"),
        std::env::var("CAPOPS_GITHUB_E2E_REPO"),
        std::env::var("CAPOPS_GITHUB_E2E_PR"),
    ) else {
        panic!("set CAPOPS_GITHUB_E2E_TOKEN, CAPOPS_GITHUB_E2E_REPO and CAPOPS_GITHUB_E2E_PR");
    };
    let pr: u64 = pr.parse().unwrap();
    let api = std::env::var("CAPOPS_GITHUB_E2E_API_URL").unwrap_or("https://api.github.com".into());
    let (owner, name) = capops::github::context::split_repository(&repo).unwrap();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let client = Client::new(&api, &token, retry::Policy::default()).unwrap();
        let r = rest::Repo {
            client: &client,
            owner,
            name,
        };
        let pull = r.pull(pr).await.unwrap();
        assert_eq!(pull.number, pr);
        let _reviews = r.reviews(pr).await.unwrap();
        let me = rest::viewer(&client).await.unwrap().expect("a user token");
        let first = format!("{MARKER}\ncapops end-to-end test, first write");
        let second = format!("{MARKER}\ncapops end-to-end test, second write");
        comment::upsert(&r, pr, &me, &first, comment::Mode::Always, true)
            .await
            .unwrap();
        let w = comment::upsert(&r, pr, &me, &second, comment::Mode::Always, true)
            .await
            .unwrap();
        assert_eq!(w.action, "updated");
        let ours: Vec<_> = r
            .comments(pr)
            .await
            .unwrap()
            .into_iter()
            .filter(|c| comment::is_ours(c, &me))
            .collect();
        assert_eq!(ours.len(), 1);
        assert_eq!(ours[0].body.as_deref(), Some(second.as_str()));
        let v = status::Verdict {
            success: true,
            description: "capops end-to-end test".into(),
            summary: String::new(),
            annotations: Vec::new(),
            details_url: None,
        };
        status::publish(&r, &pull.head.sha, "capops", status::Mode::Status, &v)
            .await
            .unwrap();
    });
}

#[test]
fn the_comment_leads_with_the_totals_of_the_change() {
    let co = Checkout::new(100);
    let f = fake(&co);
    f.with(|w| w.review(PR, "bob", "APPROVED", &co.head));
    gate(&co, &f, TOKEN, &[], &[]);
    let body = f.with(|w| w.comments_on(PR))[0].body.clone();
    if std::env::var("CAPOPS_SHOW_COMMENT").is_ok() {
        eprintln!("{body}");
    }
    let totals = body.find("| GPUs requested |").expect("totals");
    let approvals = body.find("**Approvals**").expect("approvals");
    let table = body.find("| | Document |").expect("document table");
    let details = body
        .find("<details><summary>How each decision")
        .expect("folded details");
    assert!(
        totals < approvals && approvals < table && table < details,
        "{body}"
    );
    // 40 -> 100 GPUs: +60; the fixture has no prices.
    assert!(
        body.contains("| +60 | 0 USD | 0 USD | 🟡 1 awaiting approval |"),
        "{body}"
    );
    assert!(body.contains("1 request without a price"));
    assert!(body.contains("Policy from base `main` (`"), "{body}");
    // The details explain the tier.
    assert!(body.contains("tier `director`"), "{body}");
}

#[test]
fn a_failed_comment_creation_is_not_retried_so_never_duplicated() {
    let co = Checkout::new(100);
    let f = fake(&co);
    f.with(|w| {
        w.fail(
            Some(axum::http::Method::POST),
            "/issues/7/comments",
            1,
            FaultKind::Status(502),
        )
    });
    let run = gate(&co, &f, TOKEN, &[], &[]);
    assert_eq!(run.code, 3, "{}", run.stderr);
    assert!(
        run.stderr.contains("error[github-http-error]"),
        "{}",
        run.stderr
    );
    assert_eq!(
        f.with(|w| w.requests("POST /repos/org/capacity/issues/7/comments")),
        1
    );
    // The verdict is still set: the gate does not depend on the comment.
    assert_eq!(f.with(|w| w.status_of(&co.head)).unwrap().state, "failure");
    let run = gate(&co, &f, TOKEN, &[], &[]);
    assert_eq!(run.code, 1);
    assert_eq!(f.with(|w| w.comments_on(PR).len()), 1);
}

#[test]
fn more_than_50_annotations_are_sent_in_batches() {
    // 55 one-GPU requests without a justification: each misses a required field.
    let mut co = Checkout::new(40);
    let mut docs = String::new();
    for i in 0..55 {
        docs.push_str(
            &request(&format!("small-{i:02}"), 1, "x").replace("  justification: x\n", ""),
        );
        docs.push_str("---\n");
    }
    std::fs::write(co.root.join("many.yaml"), docs).unwrap();
    co.head = commit_all(&co.git, "many small requests");
    let f = fake(&co);
    f.with(|w| w.push(PR, &co.head));
    let run = gate(
        &co,
        &f,
        APP_TOKEN,
        &["--format", "human"],
        &[("GITHUB_ACTIONS", "true")],
    );
    assert_eq!(run.code, 1, "{}", run.stderr);
    let runs = f.with(|w| w.check_runs.clone());
    assert_eq!(runs.len(), 1);
    let missing = runs[0]
        .annotations
        .iter()
        .filter(|a| {
            a["title"]
                .as_str()
                .unwrap()
                .contains("misses required fields")
        })
        .count();
    assert_eq!(missing, 55);
    assert_eq!(
        f.with(|w| w.requests("PATCH /repos/org/capacity/check-runs/")),
        1
    );
    // The job log: workflow annotations, the human report and the approvals.
    assert!(run.stdout.contains("::warning"), "{}", run.stdout);
    assert!(
        run.stdout.contains("capops check: changes since main"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains("approvals on the head commit"),
        "{}",
        run.stdout
    );
}

#[test]
fn usage_hours_are_data_only_in_the_usage_pullers_pull_requests() {
    // The base names the usage puller and has two measured hours; the head appends two more.
    let mut co = Checkout::with(40, |root| {
        let config = std::fs::read_to_string(root.join("capops.yaml")).unwrap();
        std::fs::write(
            root.join("capops.yaml"),
            format!("{config}  usage:\n    pullers:\n      - capops-usage[bot]\n"),
        )
        .unwrap();
        std::fs::create_dir_all(root.join("usage")).unwrap();
        std::fs::write(
            root.join("usage/prod.csv"),
            "timestamp,cluster,pool,team,allocated_gpus,used_gpus\n\
             2026-11-21T00:00:00Z,prod,h100,ml,40,31\n\
             2026-11-21T01:00:00Z,prod,h100,ml,40,30\n",
        )
        .unwrap();
    });
    let path = co.root.join("usage/prod.csv");
    let mut csv = std::fs::read_to_string(&path).unwrap();
    csv.push_str(
        "2026-11-21T02:00:00Z,prod,h100,ml,40,32\n2026-11-21T03:00:00Z,prod,h100,ml,40,29\n",
    );
    std::fs::write(&path, csv).unwrap();
    co.head = commit_all(&co.git, "usage: two more hours");
    let f = fake(&co);
    f.with(|w| w.push(PR, &co.head));
    let usage = |run: &Run| -> Value {
        run.json["github"]["decisions"]
            .as_array()
            .unwrap_or_else(|| panic!("no github block: {}\n{}", run.stdout, run.stderr))
            .iter()
            .find(|d| d["kind"] == "UsageHistory")
            .cloned()
            .unwrap_or_else(|| panic!("usage judged: {}", run.stdout))
    };

    // Opened by a person (alice): the hours need finance.
    let run = gate(&co, &f, TOKEN, &[], &[]);
    assert_eq!(run.code, 1, "{}\n{}", run.stdout, run.stderr);
    let d = usage(&run);
    let roles: Vec<&str> = d["roles"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["role"].as_str().unwrap())
        .collect();
    assert_eq!(roles, ["finance"], "{d}");
    assert!(run.stdout.contains("appended by alice"), "{}", run.stdout);

    // The same hours in a pull request the puller opened (on a branch of its
    // own: nobody else pushed to it): data, green without reviews.
    f.with(|w| {
        w.activity.clear();
        w.open_pull(PR, "capops-usage[bot]", &co.base, &co.head);
    });
    let run = gate(&co, &f, TOKEN, &[], &[]);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    assert_eq!(usage(&run)["standing"], "automatic", "{}", usage(&run));
    assert_eq!(f.with(|w| w.status_of(&co.head)).unwrap().state, "success");

    // The puller's pull request, and mallory pushes a commit of her own to
    // its branch: typed hours under the puller's name. Finance again.
    let roles_of = |run: &Run| -> Vec<String> {
        usage(run)["roles"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["role"].as_str().unwrap().to_string())
            .collect()
    };
    f.with(|w| w.push_as(PR, &co.head, "mallory"));
    let run = gate(&co, &f, TOKEN, &[], &[]);
    assert_eq!(run.code, 1, "{}\n{}", run.stdout, run.stderr);
    assert_eq!(roles_of(&run), ["finance"], "{}", usage(&run));
    assert_eq!(f.with(|w| w.status_of(&co.head)).unwrap().state, "failure");

    // A commit linked to no account, pushed as the puller: nobody can say
    // who wrote it. Finance.
    f.with(|w| {
        w.activity.clear();
        w.open_pull(PR, "capops-usage[bot]", &co.base, &co.head);
        w.push_unlinked(PR, &co.head);
    });
    let run = gate(&co, &f, TOKEN, &[], &[]);
    assert_eq!(run.code, 1, "{}\n{}", run.stdout, run.stderr);
    assert_eq!(roles_of(&run), ["finance"], "{}", usage(&run));

    // Who pushed cannot be read: finance.
    f.with(|w| {
        w.activity.clear();
        w.open_pull(PR, "capops-usage[bot]", &co.base, &co.head);
        w.fail(None, "/activity", 5, FaultKind::Status(404));
    });
    let run = gate(&co, &f, TOKEN, &[], &[]);
    assert_eq!(run.code, 1, "{}\n{}", run.stdout, run.stderr);
    assert_eq!(roles_of(&run), ["finance"], "{}", usage(&run));
}

#[test]
fn a_closed_pull_request_writes_nothing() {
    // A review after closing: its head's verdict is left as it is (another
    // open pull request may share the head).
    let co = Checkout::new(100);
    let f = fake(&co);
    f.with(|w| w.pulls.get_mut(&PR).unwrap().state = "closed".into());
    let run = gate(&co, &f, TOKEN, &[], &[]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(
        run.stderr.contains("error[github-pull-request-closed]"),
        "{}",
        run.stderr
    );
    assert!(f.with(|w| w.status_of(&co.head)).is_none());
    assert!(f.with(|w| w.comments_on(PR)).is_empty());
}

#[test]
fn a_pull_request_into_a_branch_capops_does_not_govern_is_not_judged() {
    // The same head, proposed into a branch of the contributor's own whose
    // tree already holds the change: judged against it, nothing changed.
    let co = Checkout::new(100);
    let f = fake(&co);
    f.with(|w| {
        w.pulls.get_mut(&PR).unwrap().base_ref = "evil".into();
        w.branches.insert("evil".into(), co.head.clone());
    });
    let run = gate(&co, &f, TOKEN, &[], &[]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(
        run.stderr.contains("error[github-base-not-judged]") && run.stderr.contains("`main`"),
        "{}",
        run.stderr
    );
    // No comment, and never a green on the head: a failing verdict, which
    // a pull request into a governed branch with the same head would set too.
    assert_eq!(f.with(|w| w.status_of(&co.head)).unwrap().state, "failure");
    assert!(f.with(|w| w.comments_on(PR)).is_empty());

    // A branch the workflow lists is judged, against its tip.
    f.with(|w| {
        w.branches.insert("release".into(), co.base.clone());
        w.pulls.get_mut(&PR).unwrap().base_ref = "release".into();
    });
    let run = gate(&co, &f, TOKEN, &["--base-branch", "release"], &[]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert_eq!(role(&run, "director"), (vec![], 1));
}

#[test]
fn each_governed_branch_has_its_own_verdict_on_a_shared_head() {
    // #PR into main has its director and capacity review; the same head is
    // also proposed into `release` (by a fork, say, whose run cannot write),
    // where nobody approved it. With several governed branches each has its
    // own verdict, `capops/<branch>`: main's green is not release's.
    let co = Checkout::new(100);
    let f = fake(&co);
    let other = PR + 1;
    f.with(|w| {
        w.review(PR, "bob", "APPROVED", &co.head);
        w.review(PR, "dave", "APPROVED", &co.head);
        w.open_pull(other, "alice", &co.base, &co.head);
        w.pulls.get_mut(&other).unwrap().base_ref = "release".into();
        w.branches.insert("release".into(), co.base.clone());
    });
    let governed = ["--base-branch", "main", "--base-branch", "release"];
    let run = gate(&co, &f, TOKEN, &governed, &[]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(run.stderr.contains("`capops/main`"), "{}", run.stderr);
    let status = |ctx: &str| f.with(|w| w.status_named(&co.head, ctx));
    assert_eq!(status("capops/main").unwrap().state, "success");
    assert!(
        status("capops/release").is_none(),
        "release has no verdict yet"
    );
    assert!(status("capops").is_none());
    // The other pull request's run judges it into release: it fails there,
    // and main's verdict stands.
    let number = other.to_string();
    let mut args = vec!["--pr", number.as_str()];
    args.extend_from_slice(&governed);
    let run = gate(&co, &f, TOKEN, &args, &[]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert_eq!(status("capops/release").unwrap().state, "failure");
    assert_eq!(status("capops/main").unwrap().state, "success");

    // A run that cannot tell the base (the pull request cannot be read)
    // sets every governed branch's verdict red.
    f.with(|w| w.fail(None, "/pulls/7", 10, FaultKind::Status(502)));
    let run = gate(&co, &f, TOKEN, &governed, &[]);
    assert_eq!(run.code, 3, "{}", run.stderr);
    assert_eq!(status("capops/main").unwrap().state, "failure");
    assert_eq!(status("capops/release").unwrap().state, "failure");
}

#[test]
fn the_base_is_the_branch_as_it_stands_and_an_outdated_branch_is_refused() {
    let co = Checkout::new(100);
    let f = fake(&co);
    // GitHub's base.sha lags (the base as of the last push), but the head
    // contains main's tip: judged against the tip.
    f.with(|w| w.pulls.get_mut(&PR).unwrap().base_sha = "0".repeat(40));
    let run = gate(&co, &f, TOKEN, &[], &[]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert_eq!(run.json["github"]["baseSha"], co.base.as_str());

    // main moved on (a commit the head lacks): refused until updated, with a
    // failing verdict on the head so no earlier green stands.
    let sig = Signature::now("test", "test@capops.invalid").unwrap();
    let base = co
        .git
        .find_commit(git2::Oid::from_str(&co.base).unwrap())
        .unwrap();
    let moved = co
        .git
        .commit(
            None,
            &sig,
            &sig,
            "main moves",
            &base.tree().unwrap(),
            &[&base],
        )
        .unwrap()
        .to_string();
    f.with(|w| w.branches.insert("main".into(), moved.clone()));
    let run = gate(&co, &f, TOKEN, &[], &[]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(
        run.stderr.contains("error[github-base-out-of-date]"),
        "{}",
        run.stderr
    );
    let status = f.with(|w| w.status_of(&co.head)).unwrap();
    assert_eq!(status.state, "failure");
    assert!(
        status.description.contains("github-base-out-of-date"),
        "{}",
        status.description
    );

    // A branch cut before main moved, opened after: GitHub's base.sha is
    // the tip, but the head lacks it (compared with the tip it would read
    // as undoing main's newer changes). Refused all the same.
    f.with(|w| w.pulls.get_mut(&PR).unwrap().base_sha = moved.clone());
    let run = gate(&co, &f, TOKEN, &[], &[]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(
        run.stderr.contains("error[github-base-out-of-date]"),
        "{}",
        run.stderr
    );

    // In a shallow clone (git's `.git/shallow` names the commits whose
    // parents were not fetched) the tip may only be history not fetched:
    // the workflow's to fix (exit 2), with a failing verdict all the same.
    std::fs::write(co.git.path().join("shallow"), format!("{}\n", co.base)).unwrap();
    let run = gate(&co, &f, TOKEN, &[], &[]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(
        run.stderr.contains("error[github-shallow-checkout]"),
        "{}",
        run.stderr
    );
    assert!(run.stderr.contains("fetch-depth: 0"), "{}", run.stderr);
    let status = f.with(|w| w.status_of(&co.head)).unwrap();
    assert_eq!(status.state, "failure");
}

#[test]
fn whoever_pushed_a_commit_to_the_pull_request_cannot_approve_it() {
    let co = Checkout::new(100);
    let f = fake(&co);
    // bob (a director) pushed the head commit onto alice's pull request, then
    // approved it with dave (capacity review).
    f.with(|w| {
        w.push_as(PR, &co.head, "bob");
        w.review(PR, "bob", "APPROVED", &co.head);
        w.review(PR, "dave", "APPROVED", &co.head);
    });
    let run = gate(&co, &f, TOKEN, &[], &[]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert_eq!(role(&run, "director"), (vec![], 1));
    assert_eq!(role(&run, "capacity-review"), (vec!["dave".to_string()], 0));
    let not_counted = run.json["github"]["notCounted"].to_string();
    assert!(not_counted.contains("pusher"), "{not_counted}");
    // carol, who wrote none of it, completes it.
    f.with(|w| w.review(PR, "carol", "APPROVED", &co.head));
    let run = gate(&co, &f, TOKEN, &[], &[]);
    assert_eq!(run.code, 0, "{}", run.stderr);
}

#[test]
fn no_approval_counts_while_a_commit_belongs_to_no_account() {
    // The head commit's e-mail is linked to no GitHub account: anyone could
    // have written and pushed it, bob and dave included.
    let co = Checkout::new(100);
    let f = fake(&co);
    f.with(|w| {
        w.push_unlinked(PR, &co.head);
        w.review(PR, "bob", "APPROVED", &co.head);
        w.review(PR, "dave", "APPROVED", &co.head);
    });
    let run = gate(&co, &f, TOKEN, &[], &[]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert_eq!(role(&run, "director"), (vec![], 1));
    assert_eq!(role(&run, "capacity-review"), (vec![], 1));
    let not_counted = run.json["github"]["notCounted"].to_string();
    assert!(not_counted.contains("unlinked-commit"), "{not_counted}");
    assert_eq!(f.with(|w| w.status_of(&co.head)).unwrap().state, "failure");
}

#[test]
fn a_reviewer_who_pushed_under_the_authors_identity_is_a_pusher() {
    // bob (a director) commits with alice's linked e-mail, pushes it to her
    // branch, and approves: the commits API says alice wrote everything,
    // the repository activity says bob pushed.
    let co = Checkout::new(100);
    let f = fake(&co);
    f.with(|w| {
        w.push_forged(PR, &co.head, "bob", "alice");
        w.review(PR, "bob", "APPROVED", &co.head);
        w.review(PR, "dave", "APPROVED", &co.head);
    });
    let run = gate(&co, &f, TOKEN, &[], &[]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert_eq!(role(&run, "director"), (vec![], 1));
    assert_eq!(role(&run, "capacity-review"), (vec!["dave".to_string()], 0));
    let not_counted = &run.json["github"]["notCounted"];
    assert!(
        not_counted
            .as_array()
            .unwrap()
            .iter()
            .any(|n| n["login"] == "bob" && n["why"]["reason"] == "pusher"),
        "{not_counted}"
    );
    assert_eq!(f.with(|w| w.status_of(&co.head)).unwrap().state, "failure");
    // The activity was read for the pull request's own branch.
    assert_eq!(
        f.with(|w| w.requests("/activity?")),
        1,
        "{:?}",
        f.with(|w| w.log.clone())
    );
    assert!(
        f.with(|w| w
            .log
            .iter()
            .any(|l| l.contains("ref=refs%2Fheads%2Fchange-7"))),
        "{:?}",
        f.with(|w| w.log.clone())
    );
}

#[test]
fn pushes_to_another_branch_do_not_make_a_pusher() {
    // bob pushed to another pull request's branch, not this one: his
    // approval here counts.
    let co = Checkout::new(100);
    let f = fake(&co);
    f.with(|w| {
        w.record("change-99", "push", "a", "b", "bob");
        w.review(PR, "bob", "APPROVED", &co.head);
        w.review(PR, "dave", "APPROVED", &co.head);
    });
    let run = gate(&co, &f, TOKEN, &[], &[]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(role(&run, "director"), (vec!["bob".to_string()], 0));
}

#[test]
fn no_approval_counts_while_who_pushed_cannot_be_read() {
    for fault in [404, 403] {
        let co = Checkout::new(100);
        let f = fake(&co);
        f.with(|w| {
            w.review(PR, "bob", "APPROVED", &co.head);
            w.review(PR, "dave", "APPROVED", &co.head);
            w.fail(None, "/activity", 5, FaultKind::Status(fault));
        });
        let run = gate(&co, &f, TOKEN, &[], &[]);
        assert_eq!(run.code, 1, "{fault}: {}", run.stderr);
        assert_eq!(role(&run, "director"), (vec![], 1));
        let not_counted = run.json["github"]["notCounted"].to_string();
        assert!(not_counted.contains("pushers-unknown"), "{not_counted}");
        assert_eq!(f.with(|w| w.status_of(&co.head)).unwrap().state, "failure");
    }
    // A push whose actor is null (a deleted account): the same.
    let co = Checkout::new(100);
    let f = fake(&co);
    f.with(|w| {
        w.push_forged(PR, &co.head, "", "alice");
        w.review(PR, "bob", "APPROVED", &co.head);
        w.review(PR, "dave", "APPROVED", &co.head);
    });
    let run = gate(&co, &f, TOKEN, &[], &[]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(
        run.json["github"]["notCounted"]
            .to_string()
            .contains("has no actor"),
        "{}",
        run.json["github"]
    );
    // Activity that does not reach the head (the branch renamed, or its
    // history gone): who put the head there cannot be told. The same.
    let co = Checkout::new(100);
    let f = fake(&co);
    f.with(|w| {
        w.activity.clear();
        w.record("change-7", "push", &co.base, &co.base, "alice");
        w.review(PR, "bob", "APPROVED", &co.head);
        w.review(PR, "dave", "APPROVED", &co.head);
    });
    let run = gate(&co, &f, TOKEN, &[], &[]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(
        run.json["github"]["notCounted"]
            .to_string()
            .contains("does not say who pushed"),
        "{}",
        run.json["github"]
    );
}

#[test]
fn no_approval_counts_while_a_commit_of_the_pull_request_has_no_push() {
    // The pull request's first commit reached the branch by a push GitHub
    // no longer lists (its activity history is limited); only alice's push
    // of the head on top of it is kept. Whoever pushed the first commit
    // could be bob, so his approval does not count.
    let first = "f".repeat(40);
    let run_with = |keep_creation: bool| {
        let co = Checkout::new(100);
        let f = fake(&co);
        f.with(|w| {
            let p = w.pulls.get_mut(&PR).unwrap();
            p.commits.insert(0, ("alice".into(), "alice".into()));
            p.commit_shas.insert(0, first.clone());
            w.activity.clear();
            if keep_creation {
                w.record(
                    "change-7",
                    "branch_creation",
                    &"0".repeat(40),
                    &first,
                    "alice",
                );
            }
            w.record("change-7", "push", &first, &co.head, "alice");
            w.review(PR, "bob", "APPROVED", &co.head);
            w.review(PR, "dave", "APPROVED", &co.head);
        });
        let run = gate(&co, &f, TOKEN, &[], &[]);
        let body = f.with(|w| w.comments_on(PR).last().map(|c| c.body.clone()));
        (run, body.unwrap_or_default())
    };
    let (run, body) = run_with(false);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert_eq!(role(&run, "director"), (vec![], 1));
    let not_counted = run.json["github"]["notCounted"].to_string();
    assert!(
        not_counted.contains("pushers-unknown") && not_counted.contains("ffffffffffff"),
        "{not_counted}"
    );
    // The comment says why the approvals were set aside, not only that
    // some are missing.
    assert!(
        body.contains("Not counted: bob (who pushed cannot be told: the activity of \\`change-7\\` does not say who pushed ffffffffffff)"),
        "{body}"
    );
    // With the push that created the branch kept, the chain is whole.
    let (run, _) = run_with(true);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(role(&run, "director"), (vec!["bob".to_string()], 0));
}

#[test]
fn a_github_failure_after_a_green_verdict_leaves_a_failing_one() {
    let co = Checkout::new(100);
    let f = fake(&co);
    f.with(|w| {
        w.review(PR, "bob", "APPROVED", &co.head);
        w.review(PR, "dave", "APPROVED", &co.head);
    });
    let run = gate(&co, &f, TOKEN, &[], &[]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(f.with(|w| w.status_of(&co.head)).unwrap().state, "success");
    // bob changes his mind; the reviews then cannot be read.
    f.with(|w| {
        w.review(PR, "bob", "CHANGES_REQUESTED", &co.head);
        w.fail(None, "/reviews", 10, FaultKind::Status(502));
    });
    let run = gate(&co, &f, TOKEN, &[], &[]);
    assert_eq!(run.code, 3, "{}", run.stderr);
    let status = f.with(|w| w.status_of(&co.head)).unwrap();
    assert_eq!(status.state, "failure", "{}", status.description);
}

#[test]
fn a_merge_group_verdict_tells_the_truth_whatever_fail_on_says() {
    // research work that is not preemptible is denied by the fixture's policy.
    let co = Checkout::new(100);
    let f = fake(&co);
    let event = merge_group_event(&co, &co.head, &co.base);
    let root = co.root.display().to_string();
    let event = event.display().to_string();
    let env = [
        ("GITHUB_EVENT_NAME", "merge_group"),
        ("GITHUB_EVENT_PATH", event.as_str()),
        ("GITHUB_REPOSITORY", "org/capacity"),
        ("GITHUB_API_URL", f.url.as_str()),
        ("GITHUB_TOKEN", TOKEN),
    ];
    let denied =
        request("grow", 100, "test").replace("workloadClass: training", "workloadClass: research");
    std::fs::write(co.root.join("requests.yaml"), denied).unwrap();
    let head = commit_all(&co.git, "a denied change");
    let event_text = std::fs::read_to_string(&event)
        .unwrap()
        .replace(&co.head, &head);
    std::fs::write(&event, event_text).unwrap();
    let out = common::run(
        &[
            "check",
            "--github",
            "--at",
            "2026-11-22",
            "--fail-on",
            "never",
            &root,
        ],
        &env,
    );
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    let status = f.with(|w| w.status_of(&head)).unwrap();
    assert_eq!(status.state, "failure", "{}", status.description);
}

#[test]
fn a_director_asking_for_changes_blocks_the_director_role() {
    // carol asked for changes on an earlier commit; bob (a director) and
    // dave (capacity review) approve the head. GitHub would block the merge
    // on carol's review, and so does capops, until she approves.
    let co = Checkout::new(100);
    let f = fake(&co);
    f.with(|w| {
        w.review(PR, "carol", "CHANGES_REQUESTED", &co.base);
        w.review(PR, "bob", "APPROVED", &co.head);
        w.review(PR, "dave", "APPROVED", &co.head);
    });
    let run = gate(&co, &f, TOKEN, &[], &[]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert_eq!(role(&run, "director"), (vec!["bob".to_string()], 0));
    let director = run.json["github"]["decisions"][0]["roles"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["role"] == "director")
        .cloned()
        .unwrap();
    assert_eq!(director["changesRequestedBy"], serde_json::json!(["carol"]));
    let status = f.with(|w| w.status_of(&co.head)).unwrap();
    assert_eq!(status.state, "failure");
    // The verdict names the blocked role and who blocks it.
    assert!(
        status
            .description
            .contains("awaiting approval (director: changes requested by carol)"),
        "{}",
        status.description
    );
    let comments = f.with(|w| w.comments_on(PR));
    assert!(
        comments[0].body.contains("changes requested by carol"),
        "{}",
        comments[0].body
    );
    // She approves the head: green.
    f.with(|w| {
        w.review(PR, "carol", "APPROVED", &co.head);
    });
    let run = gate(&co, &f, TOKEN, &[], &[]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(f.with(|w| w.status_of(&co.head)).unwrap().state, "success");
}

#[test]
fn a_bot_is_known_by_its_type_not_only_by_its_login() {
    // GitHub's Copilot agent signs as `Copilot`, an account of type Bot
    // with no `[bot]` in its login. It writes and pushes the head that bob
    // set it going on; bob and dave approve. No approval counts.
    let co = Checkout::new(100);
    let f = fake(&co);
    f.with(|w| {
        w.bots.insert("Copilot".into());
        w.push_forged(PR, &co.head, "Copilot", "Copilot");
        w.review(PR, "bob", "APPROVED", &co.head);
        w.review(PR, "dave", "APPROVED", &co.head);
    });
    let run = gate(&co, &f, TOKEN, &[], &[]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert_eq!(role(&run, "director"), (vec![], 1));
    let not_counted = run.json["github"]["notCounted"].to_string();
    assert!(
        not_counted.contains("bot-authored") && not_counted.contains("copilot[bot]"),
        "{not_counted}"
    );
}
