//! `capops check` on the example and its outputs: the tiers the example's
//! requests land in, JSON, the Markdown pull-request comment (and its size
//! limit), GitHub annotations and SARIF, and `capops explain`.

use std::collections::BTreeMap;
use std::path::Path;

mod common;
use common::{example, root, run};

#[test]
fn the_examples_requests_land_in_the_tiers_their_sizes_call_for() {
    let out = run(
        &[
            "check",
            "--format",
            "json",
            "--at",
            "2026-11-22",
            &example(),
        ],
        &[],
    );
    assert_eq!(out.code, 1, "{}", out.stderr);
    let v: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    let tiers: BTreeMap<String, (String, String, f64)> = v["decisions"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| d["kind"] == "CapacityRequest")
        .map(|d| {
            (
                d["name"].as_str().unwrap().to_string(),
                (
                    d["tier"].as_str().unwrap().to_string(),
                    d["decision"].as_str().unwrap().to_string(),
                    d["facts"]["request"]["gpus"].as_f64().unwrap(),
                ),
            )
        })
        .collect();
    assert_eq!(tiers.len(), 13);
    // Judged alone (no base), each request's ask is its own size; the tier is at
    // least the size's, and a finding says why when it is higher (a long window,
    // a costly one, the team's quota).
    let rank = |t: &str| {
        ["auto", "team-lead", "director", "vp"]
            .iter()
            .position(|x| *x == t)
            .unwrap()
    };
    for d in v["decisions"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| d["kind"] == "CapacityRequest")
    {
        let name = d["name"].as_str().unwrap();
        let (tier, _, gpus) = &tiers[name];
        let by_size = if *gpus < 10.0 {
            "auto"
        } else if *gpus <= 50.0 {
            "team-lead"
        } else if *gpus <= 200.0 {
            "director"
        } else {
            "vp"
        };
        assert!(
            rank(tier) >= rank(by_size),
            "{name}: {gpus} GPUs in tier {tier}"
        );
        let escalated = d["findings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f["effect"] == "escalate");
        assert!(
            rank(tier) == rank(by_size) || escalated,
            "{name}: {gpus} GPUs in tier {tier} without a finding that says why"
        );
    }
    // Every tier is represented.
    for t in ["auto", "team-lead", "director", "vp"] {
        assert!(
            tiers.values().any(|(x, _, _)| x == t),
            "no request in tier {t}"
        );
    }
    // 2 GPUs for a year: the auto tier approves windows of up to 183 days.
    assert_eq!(tiers["devex-ci-runners"].0, "team-lead");
    // 32 H100s for a year cost 1.9 M over the window: a VP.
    assert_eq!(tiers["inference-llm-serving"].0, "vp");
    assert_eq!(
        tiers["training-foundation-q1"],
        ("vp".into(), "needs-approval".into(), 256.0)
    );
    // 3 GPU-equivalents of MIG slices, but for a year: longer than auto approves.
    assert_eq!(tiers["inference-small-models-mig"].0, "team-lead");
    assert_eq!(tiers["inference-batch-embeddings"].1, "denied");
    assert_eq!(v["summary"]["exitCode"], 1);
    // The time-sliced inference request and the oversized reservation.
    assert_eq!(v["summary"]["denied"], 2);
    let reservation = v["decisions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["name"] == "a100-research-6mo")
        .unwrap();
    assert_eq!(reservation["decision"], "denied");
    assert_eq!(
        reservation["findings"][0]["rule"],
        "reservations-must-be-used"
    );
    // 25 capacity blocks at 14.75 for 4,368 hours; demand near 40% strands about 60%.
    let facts = &reservation["facts"]["reservation"];
    assert_eq!(facts["total_cost"], 1_610_700.0);
    let share = facts["stranded_share"].as_f64().unwrap();
    assert!((0.55..0.7).contains(&share), "{share}");
    assert!(facts["stranded_cost_p10"].as_f64() >= facts["stranded_cost"].as_f64());
    // Costs of requests are in their facts.
    let llm = v["decisions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["name"] == "inference-llm-serving")
        .unwrap();
    assert!(llm["facts"]["request"]["monthly_cost"].as_f64().unwrap() > 100_000.0);
    assert!(v["base"].is_null());
    assert_eq!(v["policy"], "built-in default (policies/default.yaml)");
}

#[test]
fn human_output_lists_decisions_with_places_and_approvers() {
    let out = run(&["check", "--at", "2026-11-22", &example()], &[]);
    assert_eq!(out.code, 1);
    assert!(
        out.stdout
            .contains("DENY CapacityRequest/inference-batch-embeddings"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout
            .contains("examples/acme/requests/inference.yaml:77:9"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.contains("approvals: 1 × director (@acme-ai/gpu-directors); 1 × capacity-review (@acme-ai/capacity-review)"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout
            .contains("deny no-spot-for-production-inference:"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.trim_end().ends_with("need approval, 2 denied"),
        "{}",
        out.stdout
    );
    // The reservation is denied with its stranded spend, and a size that would do.
    assert!(
        out.stdout.contains("DENY Reservation/a100-research-6mo"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.contains("deny reservations-must-be-used: 200 GPUs reserved, but the forecast demand of train-a100/a100-research uses"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.contains("of 1,610,700 stranded at P50"),
        "{}",
        out.stdout
    );
}

#[test]
fn the_markdown_comment_summarises_links_and_folds_details() {
    let env = [
        ("GITHUB_SERVER_URL", "https://github.com"),
        ("GITHUB_REPOSITORY", "acme/capacity"),
        ("GITHUB_SHA", "0123456789abcdef"),
    ];
    let out = run(
        &[
            "check",
            "--format",
            "markdown",
            "--at",
            "2026-11-22",
            &example(),
        ],
        &env,
    );
    assert_eq!(out.code, 1);
    let md = &out.stdout;
    assert!(
        md.starts_with("<!-- capops:check -->\n### GPU capacity check: 19 documents · ❌ 2 denied"),
        "{md}"
    );
    assert!(
        md.contains("| | Document | Change | GPUs | Tier | Approvals required | Missing | Facts |")
    );
    assert!(
        md.contains("| ❌ | `CapacityRequest/inference-batch-embeddings` | – | 1.50 | auto |"),
        "{md}"
    );
    assert!(
        md.contains(
            "| 🟡 | `CapacityRequest/training-foundation-q1` | – | 256 | vp | 1 × vp (`erin-vp`)<br>1 × capacity-review (`acme-ai/capacity-review`) | – | 2027-01-04→2027-04-05, within quota, 372,631 USD/month, pool demand P50 407 / P90 550 of 320 GPUs |"
        ),
        "{md}"
    );
    let link = format!(
        "[`{}/requests/inference.yaml:77`](https://github.com/acme/capacity/blob/0123456789abcdef/{}/requests/inference.yaml#L77)",
        example(),
        example()
    );
    assert!(md.contains(&link), "{md}");
    assert!(md.contains("<details><summary>How each decision was reached</summary>"));
    // The forecast chart for each changed pool renders as Mermaid in GitHub.
    assert!(md.contains("**Forecast against capacity**"), "{md}");
    assert!(md.contains("```mermaid\n%%{init"), "{md}");
    assert!(
        md.contains("    title \"train-a100/a100-research: GPUs, demand against capacity\""),
        "{md}"
    );
    assert!(md.contains("xychart-beta"), "{md}");
    assert!(md.len() <= capops::output::markdown::COMMENT_LIMIT);
    // Without the GitHub environment, places are plain text.
    let plain = run(
        &[
            "check",
            "--format",
            "markdown",
            "--at",
            "2026-11-22",
            &example(),
        ],
        &[],
    );
    assert!(
        plain
            .stdout
            .contains("`examples/acme/requests/inference.yaml:77`")
            || plain.stdout.contains("inference.yaml:77`")
    );
    assert!(!plain.stdout.contains("https://github.com"));
}

/// Text outside inline code spans and fenced blocks (what GitHub renders as
/// Markdown).
fn outside_code(md: &str) -> String {
    let mut out = String::new();
    let mut rest = md;
    while let Some(i) = rest.find('`') {
        out.push_str(&rest[..i]);
        let run = rest[i..].chars().take_while(|c| *c == '`').count();
        let fence = "`".repeat(run);
        let after = &rest[i + run..];
        // The closing run of exactly the same length.
        let mut k = 0;
        let mut end = None;
        while let Some(j) = after[k..].find(&fence) {
            let at = k + j;
            let longer = after[at + run..].starts_with('`');
            if !longer && (at == 0 || !after[..at].ends_with('`')) {
                end = Some(at);
                break;
            }
            k = at + after[at..].chars().take_while(|c| *c == '`').count();
        }
        match end {
            Some(e) => rest = &after[e + run..],
            None => {
                out.push_str(&rest[i..]);
                rest = "";
            }
        }
    }
    out.push_str(rest);
    out
}

#[test]
fn file_names_and_messages_cannot_inject_markdown_html_or_mentions() {
    let tmp = tempfile::tempdir().unwrap();
    let repo = tmp.path().join("acme");
    common::copy_dir(&root().join("examples/acme"), &repo);
    let hostile = "a|b <img src=x onerror=y> @mallory [x](https:\\evil) `c`.yaml";
    std::fs::rename(
        repo.join("requests/inference.yaml"),
        repo.join("requests").join(hostile),
    )
    .unwrap();
    let env = [
        ("GITHUB_SERVER_URL", "https://github.com"),
        ("GITHUB_REPOSITORY", "acme/capacity"),
        ("GITHUB_SHA", "0123456789abcdef"),
    ];
    let out = run(
        &[
            "check",
            "--format",
            "markdown",
            "--at",
            "2026-11-22",
            repo.to_str().unwrap(),
        ],
        &env,
    );
    assert_eq!(out.code, 1, "{}", out.stderr);
    let md = &out.stdout;
    // The file is named (in code) and its link is percent-encoded.
    assert!(md.contains("a%7Cb%20%3Cimg%20src%3Dx"), "{md}");
    assert!(
        md.contains("[``"),
        "a fence longer than the name's backtick: {md}"
    );
    let rendered = outside_code(md);
    assert!(!rendered.contains("<img"), "{rendered}");
    assert!(!rendered.contains("@mallory"), "{rendered}");
    assert!(!rendered.contains("](https:\\evil)"), "{rendered}");
    // Every table row keeps its eight cells: no `|` escaped the code spans.
    for line in md
        .lines()
        .filter(|l| l.starts_with("| ") && l.contains("CapacityRequest/"))
    {
        let cells = line.replace("\\|", "").matches('|').count();
        assert_eq!(cells, 9, "{line}");
    }
}

#[test]
fn the_markdown_comment_never_exceeds_githubs_limit() {
    // 1,500 requests that are all denied by two rules: far more than a comment holds.
    let tmp = tempfile::tempdir().unwrap();
    let repo = tmp.path();
    for entry in std::fs::read_dir(root().join("policies/tests/fixture")).unwrap() {
        let e = entry.unwrap();
        std::fs::copy(e.path(), repo.join(e.file_name())).unwrap();
    }
    let mut text = String::new();
    for i in 0..1500 {
        text.push_str(&format!(
            "---\napiVersion: capops.dev/v1alpha1\nkind: CapacityRequest\nmetadata:\n  name: serving-request-with-a-long-name-{i:04}\nspec:\n  team: ml\n  cluster: prod\n  pool: t4-shared\n  resources: {{nvidia.com/gpu: 1}}\n  window: {{start: 2026-12-01, end: 2027-01-01}}\n  workloadClass: inference\n  priorityClass: prod-high\n  justification: x\n  successMetrics: [y]\n"
        ));
    }
    std::fs::write(repo.join("many.yaml"), text).unwrap();
    let out = run(
        &[
            "check",
            "--format",
            "markdown",
            "--at",
            "2026-11-22",
            &repo.display().to_string(),
        ],
        &[],
    );
    // 1,500 GPUs in a pool of 32: the state itself is refused (pool-overcommitted), and
    // the comment still says everything it can.
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(
        out.stderr.contains("error[pool-overcommitted]"),
        "{}",
        out.stderr
    );
    let md = &out.stdout;
    assert!(
        md.len() <= capops::output::markdown::COMMENT_LIMIT,
        "{} characters",
        md.len()
    );
    assert!(
        md.contains("more (see the JSON output)") || md.contains("more findings omitted"),
        "{}",
        &md[md.len() - 500..]
    );
    assert!(md.contains("Details omitted to fit GitHub's comment limit"));
    assert!(md.starts_with("<!-- capops:check -->\n### GPU capacity check:"));
}

#[test]
fn annotations_mark_denied_and_waiting_documents() {
    let out = run(
        &["check", "--at", "2026-11-22", &example()],
        &[("GITHUB_ACTIONS", "true")],
    );
    let errors: Vec<&str> = out
        .stdout
        .lines()
        .filter(|l| l.starts_with("::error "))
        .collect();
    let warnings: Vec<&str> = out
        .stdout
        .lines()
        .filter(|l| l.starts_with("::warning "))
        .collect();
    assert_eq!(errors.len(), 2, "{errors:?}");
    assert!(
        errors[0].contains("requests/inference.yaml,line=77,col=9"),
        "{}",
        errors[0]
    );
    assert!(
        errors[0].contains(
            "title=capops denied::CapacityRequest inference-batch-embeddings is denied: "
        ),
        "{}",
        errors[0]
    );
    assert!(
        errors[1].contains("reservations/a100-research-6mo.yaml,line=6"),
        "{}",
        errors[1]
    );
    assert_eq!(warnings.len(), 10, "{warnings:?}");
    assert!(
        warnings
            .iter()
            .any(|w| w.contains("training-foundation-q1 needs approval (tier vp)"))
    );
}

#[test]
fn sarif_carries_policy_findings() {
    let out = run(
        &[
            "check",
            "--format",
            "sarif",
            "--at",
            "2026-11-22",
            &example(),
        ],
        &[],
    );
    let v: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    let results = v["runs"][0]["results"].as_array().unwrap();
    let rules = v["runs"][0]["tool"]["driver"]["rules"].as_array().unwrap();
    assert!(
        results
            .iter()
            .any(|r| r["ruleId"] == "policy/no-spot-for-production-inference"
                && r["level"] == "error")
    );
    assert_eq!(
        results
            .iter()
            .filter(|r| r["ruleId"] == "approval-required")
            .count(),
        10
    );
    for r in results {
        let i = r["ruleIndex"].as_u64().unwrap() as usize;
        assert_eq!(rules[i]["id"], r["ruleId"]);
    }
}

#[test]
fn explain_shows_every_tier_and_rule_with_the_facts_read() {
    let out = run(
        &[
            "explain",
            "research-rl-experiments",
            "--path",
            &example(),
            "--at",
            "2026-11-22",
        ],
        &[],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    let text = &out.stdout;
    assert!(
        text.starts_with("CapacityRequest research-rl-experiments ("),
        "{text}"
    );
    assert!(text.contains("change.team_delta_gpus = 80"), "{text}");
    assert!(text.contains("→ true: lands in tier `director`"), "{text}");
    assert!(text.contains("research-is-preemptible"), "{text}");
    assert!(text.contains("request.preemptible = true"), "{text}");
    assert!(
        text.contains("decision: needs approval (tier director)"),
        "{text}"
    );
    let json = run(
        &[
            "explain",
            "research-rl-experiments",
            "--path",
            &example(),
            "--at",
            "2026-11-22",
            "--format",
            "json",
        ],
        &[],
    );
    let v: serde_json::Value = serde_json::from_str(&json.stdout).unwrap();
    assert_eq!(v["command"], "explain");
    let trace = v["trace"].as_array().unwrap();
    assert_eq!(trace.iter().filter(|t| t["kind"] == "tier").count(), 4);
    assert_eq!(trace.iter().filter(|t| t["kind"] == "rule").count(), 22);
    let tier = trace.iter().find(|t| t["name"] == "director").unwrap();
    assert_eq!(tier["result"], true);
    assert_eq!(tier["reads"]["change.team_delta_gpus"], 80);
    let unknown = run(&["explain", "no-such-request", "--path", &example()], &[]);
    assert_eq!(unknown.code, 2);
    assert!(Path::new(&example()).exists());
    // A kind judged only when it changes, without a base: said so, not
    // "since the base revision".
    let class = run(&["explain", "development", "--path", &example()], &[]);
    assert_eq!(class.code, 2);
    assert!(
        class
            .stderr
            .contains("is not judged without a base revision")
            && !class.stderr.contains("since the base revision"),
        "{}",
        class.stderr
    );
}

#[test]
fn explain_takes_kind_slash_name_where_documents_of_two_kinds_share_a_name() {
    // A request named like the team it belongs to.
    let tmp = tempfile::tempdir().unwrap();
    let repo = tmp.path().join("acme");
    common::copy_dir(Path::new(&example()), &repo);
    let text = std::fs::read_to_string(repo.join("requests/training.yaml")).unwrap();
    std::fs::write(
        repo.join("requests/training.yaml"),
        text.replacen("name: training-finetune-baseline", "name: training", 1),
    )
    .unwrap();
    let r = repo.display().to_string();
    let explain = |name: &str| run(&["explain", name, &r, "--at", "2026-11-22"], &[]);
    let both = explain("training");
    assert_eq!(both.code, 2, "{}", both.stderr);
    assert!(
        both.stderr.contains("`training` names 2 documents"),
        "{}",
        both.stderr
    );
    assert!(
        both.stderr
            .contains("`CapacityRequest/training` or `Team/training`"),
        "{}",
        both.stderr
    );
    let team = explain("Team/training");
    assert_eq!(team.code, 0, "{}", team.stderr);
    assert!(
        team.stdout.starts_with("Team training ("),
        "{}",
        team.stdout
    );
    let request = explain("capacityrequest/training");
    assert_eq!(request.code, 0, "{}", request.stderr);
    assert!(
        request.stdout.starts_with("CapacityRequest training ("),
        "{}",
        request.stdout
    );
    // A misspelt team's name is matched against every kind's names.
    let typo = explain("inferenc");
    assert_eq!(typo.code, 2);
    assert!(
        typo.stderr.contains("did you mean `inference`?"),
        "{}",
        typo.stderr
    );
}

#[test]
fn the_default_pack_passes_its_own_tests() {
    let out = run(
        &["test", &root().join("policies/tests").display().to_string()],
        &[],
    );
    assert_eq!(out.code, 0, "{}", out.stdout);
    assert!(out.stdout.contains("44 passed, 0 failed"), "{}", out.stdout);
    let json = run(
        &[
            "test",
            "--format",
            "json",
            &root().join("policies/tests").display().to_string(),
        ],
        &[],
    );
    let v: serde_json::Value = serde_json::from_str(&json.stdout).unwrap();
    assert_eq!(v["failed"], 0);
}

#[test]
fn a_failing_policy_test_is_reported_with_its_differences() {
    let tmp = tempfile::tempdir().unwrap();
    let case = tmp.path().join("wrong.yaml");
    let text = std::fs::read_to_string(root().join("policies/tests/tier-auto-under-10.yaml"))
        .unwrap()
        .replace("tier: auto", "tier: vp")
        .replace("fixture", "unused");
    std::fs::write(
        &case,
        format!(
            "fixture: {}\n{text}",
            root().join("policies/tests/fixture").display()
        ),
    )
    .unwrap();
    let out = run(&["test", &tmp.path().display().to_string()], &[]);
    assert_eq!(out.code, 1, "{}", out.stdout);
    assert!(out.stdout.contains("FAIL wrong"), "{}", out.stdout);
    assert!(
        out.stdout.contains("`eight`: tier auto, expected vp"),
        "{}",
        out.stdout
    );
    // Growth credited to a team the base does not hold tests nothing: the
    // case does not read (a mistake in the case, not in the policy), exit 2,
    // naming it.
    let text = std::fs::read_to_string(root().join("policies/tests/tier-auto-under-10.yaml"))
        .unwrap()
        .replace("fixture", "unused");
    std::fs::write(
        &case,
        format!(
            "fixture: {}\nrecentGrowth: {{reserach: 40}}\n{text}",
            root().join("policies/tests/fixture").display()
        ),
    )
    .unwrap();
    let out = run(&["test", &tmp.path().display().to_string()], &[]);
    assert_eq!(out.code, 2, "{}", out.stdout);
    assert!(
        out.stdout.contains(&format!(
            "cannot read the case {}: recentGrowth.reserach: the base holds no team `reserach`",
            case.display()
        )),
        "{}",
        out.stdout
    );
    // At the team's key: line 2, column 16.
    assert!(out.stdout.contains("small) at 2:16"), "{}", out.stdout);
    // So does a change that removes a document the base does not hold.
    let text =
        std::fs::read_to_string(root().join("policies/tests/change-modify-crosses-a-tier.yaml"))
            .unwrap()
            .replace(
                "\nexpect:",
                "\n  remove: [CapacityRequest/no-such-request]\nexpect:",
            );
    assert!(text.contains("no-such-request"), "{text}");
    std::fs::write(
        &case,
        format!(
            "fixture: {}\n{}",
            root().join("policies/tests/fixture").display(),
            text.replace("fixture:", "unused:")
        ),
    )
    .unwrap();
    let out = run(&["test", &tmp.path().display().to_string()], &[]);
    assert_eq!(out.code, 2, "{}", out.stdout);
    assert!(
        out.stdout.contains(
            "change.remove: the base holds no CapacityRequest/no-such-request to remove at "
        ),
        "{}",
        out.stdout
    );
    // A case judged as it stands cannot also be a change: `documents` would
    // be dropped without a word.
    std::fs::write(
        &case,
        format!(
            "fixture: {}\ndocuments: |\n  a: 1\n{}",
            root().join("policies/tests/fixture").display(),
            text.replace("fixture:", "unused:")
        ),
    )
    .unwrap();
    let out = run(&["test", &tmp.path().display().to_string()], &[]);
    assert_eq!(out.code, 2, "{}", out.stdout);
    assert!(
        out.stdout
            .contains("documents and change: a case is judged as it stands")
            && out.stdout.contains(" at 2:1"),
        "{}",
        out.stdout
    );
}

#[test]
fn a_policy_test_that_does_not_read_is_invalid_input_with_its_place() {
    let fixture = root().join("policies/tests/fixture").display().to_string();
    for (body, says) in [
        (
            format!("description: x\nfixture: {fixture}\nat: 2026-02-30\nexpect: {{exit: 0}}\n"),
            "at: `2026-02-30` is not a real date",
        ),
        (
            format!("description: x\nfixture: {fixture}\nat: 2026-02-01\nexpect: {{exit: -1}}\n"),
            "expect.exit: -1 is not an exit code `check` gives (0, 1, 2 or 3) at 4:16",
        ),
        (
            format!(
                "description: x\nfixture: {fixture}\nat: 2026-02-01\nexpect:\n  decisions:\n    r: {{decision: maybe}}\n"
            ),
            "expect.decisions.r.decision: `maybe` is not a decision (approved, needs-approval or denied) at 6:19",
        ),
        (
            // The last day jiff has: the month after it is past the calendar.
            format!("description: x\nfixture: {fixture}\nat: 9999-01-01\nexpect: {{exit: 0}}\n"),
            "at: 9999 is outside the years capops works in (2000-2099)",
        ),
        (
            format!(
                "description: x\nfixture: {fixture}\nat: 2026-02-01\nchange:\n  remove: [Team/ok, Nope/zzz]\nexpect: {{exit: 0}}\n"
            ),
            "change.remove: `Nope` in `Nope/zzz` is not a document kind at 5:21",
        ),
        (
            "description: x\nfixture: no-such-folder\nat: 2026-02-01\nexpect: {exit: 0}\n"
                .to_string(),
            "no-such-folder is not a folder",
        ),
    ] {
        let tmp = tempfile::tempdir().unwrap();
        std::fs::write(tmp.path().join("broken.yaml"), &body).unwrap();
        let out = run(&["test", &tmp.path().display().to_string()], &[]);
        assert_eq!(out.code, 2, "{body}: {}", out.stdout);
        assert!(
            out.stdout.contains("cannot read the case"),
            "{}",
            out.stdout
        );
        assert!(out.stdout.contains(says), "{body}: {}", out.stdout);
    }
}

#[test]
fn an_overcommitted_pool_names_the_requests_in_force_at_the_most() {
    // t4-shared has 32 shares. 20 from December, 14 more from the 15th,
    // and 6 more on the 20th only: over from the 15th, most on the 20th.
    let tmp = tempfile::tempdir().unwrap();
    let repo = tmp.path();
    for entry in std::fs::read_dir(root().join("policies/tests/fixture")).unwrap() {
        let e = entry.unwrap();
        std::fs::copy(e.path(), repo.join(e.file_name())).unwrap();
    }
    let request = |name: &str, gpus: u32, start: &str, end: &str| {
        format!(
            "---\napiVersion: capops.dev/v1alpha1\nkind: CapacityRequest\nmetadata:\n  name: {name}\nspec:\n  team: ml\n  cluster: prod\n  pool: t4-shared\n  resources: {{nvidia.com/gpu: {gpus}}}\n  window: {{start: {start}, end: {end}}}\n  workloadClass: inference\n  priorityClass: prod-high\n  justification: x\n  successMetrics: [y]\n"
        )
    };
    let text = request("base-load", 20, "2026-12-01", "2027-01-01")
        + &request("second", 14, "2026-12-15", "2027-01-01")
        + &request("spike", 6, "2026-12-20", "2026-12-21");
    std::fs::write(repo.join("r.yaml"), text).unwrap();
    let out = run(
        &[
            "check",
            "--format",
            "json",
            "--at",
            "2026-11-22",
            &repo.display().to_string(),
        ],
        &[],
    );
    assert_eq!(out.code, 2, "{}", out.stderr);
    let v: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    let d = v["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["code"] == "pool-overcommitted")
        .expect("pool-overcommitted");
    assert_eq!(
        d["message"],
        "from 2026-12-15T00:00:00Z the requests in force commit 40 units of nvidia.com/gpu in prod/t4-shared, which has 32 (at the most, from 2026-12-20T00:00:00Z: base-load 20, second 14, spike 6)"
    );
    let related: Vec<u64> = d["related"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["line"].as_u64().unwrap())
        .collect();
    assert_eq!(related, vec![5, 20, 35], "{d}");
}

#[test]
fn a_request_priced_in_part_shows_its_cost_as_the_least_it_costs_and_counts_in_the_totals() {
    // train-a100 gains a pool the catalogs do not price: the requests of the
    // cluster are priced in part (their quota reaches it), not unpriced.
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path().join("capacity");
    common::copy_dir(Path::new(&example()), &repo);
    let cluster = repo.join("clusters/train-a100.yaml");
    let mut text = std::fs::read_to_string(&cluster).unwrap();
    text.push_str(
        "    - name: h200-x\n      gpuModel: h200-141gb\n      instanceType: p5e.48xlarge\n      gpusPerNode: 8\n      nodes: 8\n      purchase: {onDemand: 8}\n      zone: us-east-2a\n      nodeLabels:\n        acme.ai/gpu-pool: h200-x\n      taints:\n        - {key: nvidia.com/gpu, value: present, effect: NoSchedule}\n",
    );
    std::fs::write(&cluster, text).unwrap();
    let r = repo.to_str().unwrap();
    let human = run(&["check", "--at", "2026-11-22", r], &[]);
    let sweep = human
        .stdout
        .split("CapacityRequest/")
        .find(|s| s.starts_with("training-eval-sweep"))
        .unwrap_or_else(|| panic!("{}", human.stdout));
    assert!(
        sweep.contains("cost: ") && sweep.contains("at least: another pool of train-a100"),
        "{sweep}"
    );
    assert!(!sweep.contains("cost: unknown"), "{sweep}");
    let md = run(
        &["check", "--at", "2026-11-22", "--format", "markdown", r],
        &[],
    );
    assert!(md.stdout.contains("priced in part"), "{}", md.stdout);
    assert!(
        !md.stdout.contains("without a price left out"),
        "{}",
        md.stdout
    );
}
