//! Inputs that once panicked or took minutes: each now gets a diagnostic and
//! a documented exit code, at once (the run helper fails a command that does
//! not finish within its time limit, and a panic never reports back).

mod common;
use common::{copy_dir, root, run};
use std::path::{Path, PathBuf};

/// A copy of the example repository, changed by `edit`.
fn example_with(edit: impl FnOnce(&Path)) -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let repo = tmp.path().join("repo");
    copy_dir(&root().join("examples/acme"), &repo);
    edit(&repo);
    (tmp, repo)
}

fn replace(path: &Path, from: &str, to: &str) {
    let text = std::fs::read_to_string(path).unwrap();
    assert!(text.contains(from), "{}: no `{from}`", path.display());
    std::fs::write(path, text.replacen(from, to, 1)).unwrap();
}

#[test]
fn a_diagnostic_on_a_line_too_wide_to_draw_is_reported_without_a_snippet() {
    // Column 70,000: miette panics drawing a snippet past column 65,535.
    let (_t, repo) = example_with(|r| {
        std::fs::write(
            r.join("teams/long.yaml"),
            format!(
                "apiVersion: capops.dev/v1alpha1\nkind: Team\nmetadata: {{name: longt}}\nspec: {{displayName: \"{}\", costCenter: 1, bogus: 1}}\n",
                "x".repeat(70_000)
            ),
        )
        .unwrap();
    });
    let repo = repo.display().to_string();
    for cmd in ["validate", "check", "report"] {
        let out = run(&[cmd, &repo], &[]);
        assert_eq!(out.code, 2, "{cmd}: {}", out.stderr);
        assert!(
            out.stderr.contains("error[unknown-field]"),
            "{}",
            out.stderr
        );
        assert!(
            out.stderr.contains("teams/long.yaml:4:700"),
            "{}",
            out.stderr
        );
    }
}

#[test]
fn at_outside_the_years_capops_works_in_is_a_usage_error() {
    let example = common::example();
    let out = run(&["check", &example, "--at", "9999-06-15"], &[]);
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(
        out.stderr.contains("outside the years capops works in"),
        "{}",
        out.stderr
    );
    let out = run(&["report", &example, "--at", "2099-12-31T23:00:00Z"], &[]);
    assert_eq!(out.code, 0, "{}", out.stderr);
}

#[test]
fn a_year_no_clock_can_hold_is_out_of_range_not_an_invalid_date() {
    let (_t, repo) = example_with(|r| {
        replace(
            &r.join("requests/devex.yaml"),
            "end: 2027-06-01",
            "end: 9999-12-31",
        );
    });
    let out = run(&["validate", &repo.display().to_string()], &[]);
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(
        out.stderr.contains("error[value-out-of-range]") && out.stderr.contains("in the year 9999"),
        "{}",
        out.stderr
    );
    assert!(!out.stderr.contains("invalid-date"), "{}", out.stderr);
}

#[test]
fn usage_for_an_unknown_team_points_at_the_row_key() {
    let (_t, repo) = example_with(|r| {
        let f = r.join("usage/infer-l4.csv");
        let mut text = std::fs::read_to_string(&f).unwrap();
        text.push_str("2026-11-01T00:00:00Z,infer-l4,l4-serve,ghosts,1,1\n");
        std::fs::write(&f, text).unwrap();
    });
    let out = run(&["validate", &repo.display().to_string()], &[]);
    assert!(
        out.stderr.contains("error[usage-unknown-reference]")
            || out.stderr.contains("warning[usage-unknown-reference]"),
        "{}",
        out.stderr
    );
    assert!(out.stderr.contains("team `ghosts`"), "{}", out.stderr);
    // The label underlines the row's cluster, pool and team, not the cluster alone.
    let lines: Vec<&str> = out.stderr.lines().collect();
    let row = lines
        .iter()
        .position(|l| l.contains("infer-l4,l4-serve,ghosts"))
        .expect("snippet");
    let marks = lines[row + 1];
    let width = marks.matches(['─', '┬']).count();
    assert_eq!(width, "infer-l4,l4-serve,ghosts".len(), "{}", out.stderr);
}

#[test]
fn a_pool_of_ten_billion_gpus_is_refused_not_overflowed() {
    let (_t, repo) = example_with(|r| {
        let c = r.join("clusters/prod-h100.yaml");
        replace(&c, "gpusPerNode: 8", "gpusPerNode: 100000");
        replace(&c, "nodes: 6", "nodes: 100000");
        replace(
            &c,
            "purchase: {reserved: 4, onDemand: 2}",
            "purchase: {onDemand: 100000}",
        );
    });
    let repo = repo.display().to_string();
    for cmd in ["validate", "check", "report"] {
        let out = run(&[cmd, &repo, "--format", "json"], &[]);
        assert_eq!(out.code, 2, "{cmd}: {}", out.stderr);
        assert!(out.stdout.contains("value-out-of-range"), "{}", out.stdout);
        assert!(out.stdout.contains("10000000000 GPUs"), "{}", out.stdout);
    }
}

#[test]
fn an_absurd_mig_layout_gets_its_nearest_fits_at_once() {
    let (_t, repo) = example_with(|r| {
        replace(
            &r.join("clusters/prod-h100.yaml"),
            "          3g.40gb: 1\n          2g.20gb: 1\n          1g.10gb: 2",
            "          3g.40gb: 20\n          2g.20gb: 20\n          1g.10gb: 1000000\n          1g.20gb: 20\n          4g.40gb: 20\n          7g.80gb: 20",
        );
    });
    let out = run(&["validate", &repo.display().to_string()], &[]);
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(
        out.stderr.contains("mig-layout-does-not-fit"),
        "{}",
        out.stderr
    );
    assert!(out.stderr.contains("7×1g.10gb"), "{}", out.stderr);
}

#[test]
fn a_file_of_many_empty_documents_is_summarized_not_drawn_one_by_one() {
    let (_t, repo) = example_with(|r| {
        std::fs::write(
            r.join("teams/empty.yaml"),
            "---\n".repeat(199_000) + "a: 1\n",
        )
        .unwrap();
    });
    let out = run(&["validate", &repo.display().to_string()], &[]);
    assert_eq!(out.code, 2, "{}", &out.stderr[..out.stderr.len().min(2000)]);
    assert!(
        out.stderr.len() < 100_000,
        "{} bytes of diagnostics",
        out.stderr.len()
    );
    assert!(
        out.stderr.contains("and 198979 more [document-empty]"),
        "{}",
        &out.stderr[out.stderr.len().saturating_sub(2000)..]
    );
    let json = run(
        &["validate", "--format", "json", &repo.display().to_string()],
        &[],
    );
    assert_eq!(json.json["summary"]["warnings"], 198_999);
}

#[test]
fn a_mapping_of_80000_unknown_keys_is_reported_in_linear_time() {
    let (_t, repo) = example_with(|r| {
        let keys: String = (0..80_000).map(|i| format!("  k{i}: v\n")).collect();
        std::fs::write(
            r.join("teams/keys.yaml"),
            format!("apiVersion: capops.dev/v1alpha1\nkind: Team\nmetadata:\n  name: kk\nspec:\n  displayName: K\n  costCenter: \"1\"\n{keys}"),
        )
        .unwrap();
    });
    let out = run(
        &["validate", &repo.display().to_string(), "--format", "json"],
        &[],
    );
    assert_eq!(out.code, 2);
    assert!(
        out.stdout.contains("unknown field `k0`"),
        "{}",
        &out.stdout[..out.stdout.len().min(2000)]
    );
}

#[test]
fn a_file_of_thousands_of_wrong_values_describes_the_first_thousand() {
    // 5,000 Teams whose spec is a number: 5,000 `wrong-type` problems in
    // one file. A diagnostic is about a kilobyte; millions of them once
    // took gigabytes. The first 1,000 are described, the rest counted.
    let (_t, repo) = example_with(|r| {
        let docs: String = (0..5_000)
            .map(|i| format!("---\napiVersion: capops.dev/v1alpha1\nkind: Team\nmetadata: {{name: w{i}}}\nspec: {i}\n"))
            .collect();
        std::fs::write(r.join("teams/wrong.yaml"), docs).unwrap();
    });
    let out = run(
        &["validate", &repo.display().to_string(), "--format", "json"],
        &[],
    );
    assert_eq!(out.code, 2, "{}", out.stderr);
    let json: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    let diags = json["diagnostics"].as_array().unwrap();
    let of = |code: &str| diags.iter().filter(|d| d["code"] == code).count();
    assert_eq!(of("wrong-type"), 1_000);
    assert_eq!(of("problems-not-shown"), 1);
    let last = diags
        .iter()
        .find(|d| d["code"] == "problems-not-shown")
        .unwrap();
    assert!(
        last["message"]
            .as_str()
            .unwrap()
            .contains(" 4000 more problems"),
        "{last}"
    );
    assert_eq!(last["severity"], "error");
}

#[test]
fn a_usage_file_of_thousands_of_bad_rows_describes_the_first_thousand() {
    let (_t, repo) = example_with(|r| {
        let rows: String = (0..3_000).map(|i| format!("x{i},a,b,c,1,1\n")).collect();
        std::fs::write(
            r.join("usage/bad.csv"),
            format!("timestamp,cluster,pool,team,allocated_gpus,used_gpus\n{rows}"),
        )
        .unwrap();
    });
    let out = run(
        &["validate", &repo.display().to_string(), "--format", "json"],
        &[],
    );
    assert_eq!(out.code, 2, "{}", out.stderr);
    let diags = out.json["diagnostics"].as_array().unwrap();
    let in_bad =
        |d: &&serde_json::Value| d["file"].as_str().is_some_and(|f| f.ends_with("bad.csv"));
    let bad: Vec<_> = diags.iter().filter(in_bad).collect();
    // 1,000 described, and one that counts the rest.
    assert_eq!(
        bad.iter().filter(|d| d["code"] == "usage-bad-row").count(),
        1_001
    );
    // The rest are counted under their own code (a Config may lower
    // `usage-bad-row`, and then lowers the count with it).
    let last: Vec<_> = bad
        .iter()
        .filter(|d| {
            d["message"]
                .as_str()
                .unwrap()
                .contains("more `usage-bad-row` problems")
        })
        .collect();
    assert_eq!(last.len(), 1);
    assert_eq!(last[0]["code"], "usage-bad-row");
    assert!(
        last[0]["message"]
            .as_str()
            .unwrap()
            .contains(" 2000 more `usage-bad-row` problems than the 1000 described"),
        "{}",
        last[0]
    );
    // At row 1,001: line 1,002 of the file.
    assert_eq!(last[0]["line"], 1_002, "{}", last[0]);
    assert!(!bad.iter().any(|d| d["code"] == "problems-not-shown"));
}

#[test]
fn thousands_of_warnings_in_a_usage_file_stay_warnings() {
    // 1,500 rows that use more than they were allocated: a warning each.
    // Past the 1,000 described they are counted in a warning, not an error
    // no Config can lower (which stopped every check of the repository).
    let (_t, repo) = example_with(|r| {
        let rows: String = (0..1_500)
            .map(|i| {
                format!(
                    "2026-06-{:02}T{:02}:00:00Z,infer-l4,t4-batch,inference,1,2\n",
                    1 + i / 24 % 28,
                    i % 24
                )
            })
            .collect();
        std::fs::write(
            r.join("usage/over.csv"),
            format!("timestamp,cluster,pool,team,allocated_gpus,used_gpus\n{rows}"),
        )
        .unwrap();
    });
    let out = run(
        &["validate", &repo.display().to_string(), "--format", "json"],
        &[],
    );
    let diags = out.json["diagnostics"].as_array().unwrap();
    let over: Vec<_> = diags
        .iter()
        .filter(|d| d["file"].as_str().is_some_and(|f| f.ends_with("over.csv")))
        .collect();
    assert!(
        over.iter()
            .all(|d| d["code"] == "usage-used-exceeds-allocated" && d["severity"] == "warning"),
        "{over:?}"
    );
    assert_eq!(over.len(), 1_001, "1,000 described and one count");
    assert!(over.iter().any(|d| {
        d["message"]
            .as_str()
            .unwrap()
            .contains(" 500 more `usage-used-exceeds-allocated` problems")
    }));
    assert_eq!(out.code, 0, "{}", out.stderr);
}

#[test]
fn thousands_of_pools_on_the_same_nodes_are_a_problem_each_not_one_a_pair() {
    // 2,000 pools with the same labels: 1,999,000 pairs, once a diagnostic
    // each (a 530 KB file of 6,000 such pools ran out of memory).
    let (_t, repo) = example_with(|r| {
        let pools: String = (0..2_000)
            .map(|i| format!("    - {{name: p{i}, gpuModel: l4, gpusPerNode: 1, nodes: 1, nodeLabels: {{pool: same}}}}\n"))
            .collect();
        std::fs::write(
            r.join("clusters/same.yaml"),
            format!("apiVersion: capops.dev/v1alpha1\nkind: Cluster\nmetadata:\n  name: same\nspec:\n  environment: development\n  provider: onprem\n  nodePools:\n{pools}"),
        )
        .unwrap();
    });
    let out = run(
        &["validate", &repo.display().to_string(), "--format", "json"],
        &[],
    );
    assert_eq!(out.code, 2, "{}", out.stderr);
    let shared: Vec<_> = out.json["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| d["code"] == "node-pools-share-nodes")
        .collect();
    assert_eq!(shared.len(), 1_999);
    let last = shared
        .iter()
        .find(|d| {
            d["message"]
                .as_str()
                .unwrap()
                .starts_with("pools `p1999` and `p0`")
        })
        .unwrap();
    assert!(
        last["message"]
            .as_str()
            .unwrap()
            .contains("1998 more of its pools"),
        "{last}"
    );
}

#[test]
fn a_snippet_whose_context_is_megabytes_is_not_drawn() {
    // The unknown field's own line is short; the line after it is a
    // megabyte. The snippet would show it whole.
    let (_t, repo) = example_with(|r| {
        std::fs::write(
            r.join("teams/wide.yaml"),
            format!(
                "apiVersion: capops.dev/v1alpha1\nkind: Team\nmetadata: {{name: widet}}\nspec:\n  bogus: 1\n  displayName: \"{}\"\n  costCenter: \"1\"\n",
                "x".repeat(1_000_000)
            ),
        )
        .unwrap();
    });
    let out = run(&["validate", &repo.display().to_string()], &[]);
    assert_eq!(out.code, 2, "{}", &out.stderr[..out.stderr.len().min(2000)]);
    assert!(
        out.stderr.contains("error[unknown-field]"),
        "{}",
        &out.stderr[..out.stderr.len().min(2000)]
    );
    assert!(
        out.stderr.contains("teams/wide.yaml:5:3"),
        "{}",
        &out.stderr[..out.stderr.len().min(2000)]
    );
    assert!(
        out.stderr.len() < 10_000,
        "{} bytes of diagnostics",
        out.stderr.len()
    );
    // Two labels of one diagnostic far apart in a file: the snippet would
    // draw every line between them.
    let (_t, repo) = example_with(|r| {
        let team = "apiVersion: capops.dev/v1alpha1\nkind: Team\nmetadata: {name: twice}\nspec: {displayName: T, costCenter: \"1\"}\n";
        let between = "# a comment\n".repeat(100_000);
        std::fs::write(
            r.join("teams/twice.yaml"),
            format!("{team}{between}---\n{team}"),
        )
        .unwrap();
    });
    let out = run(&["validate", &repo.display().to_string()], &[]);
    assert_eq!(out.code, 2);
    let shown = &out.stderr[..out.stderr.len().min(2000)];
    assert!(out.stderr.contains("error[duplicate-name]"), "{shown}");
    assert!(out.stderr.contains("teams/twice.yaml:100008:18"), "{shown}");
    assert!(
        out.stderr.len() < 10_000,
        "{} bytes of diagnostics",
        out.stderr.len()
    );
}

#[test]
fn a_fifo_in_the_repository_is_reported_not_waited_on() {
    // Reading a FIFO blocks until something writes to it: never read.
    for name in ["teams/pipe.yaml", "usage/pipe.csv"] {
        let (_t, repo) = example_with(|r| {
            let path = r.join(name);
            let made = std::process::Command::new("mkfifo")
                .arg(&path)
                .status()
                .unwrap();
            assert!(made.success());
        });
        let out = run(&["validate", &repo.display().to_string()], &[]);
        assert_eq!(out.code, 2, "{name}: {}", out.stderr);
        assert!(
            out.stderr.contains("error[file-unreadable]")
                && out.stderr.contains("not a regular file")
                && out.stderr.contains("replace it with a plain file"),
            "{}",
            out.stderr
        );
    }
}

#[test]
fn a_folder_named_like_the_config_is_not_a_repository_without_one() {
    let (_t, repo) = example_with(|r| {
        std::fs::remove_file(r.join("capops.yaml")).unwrap();
        std::fs::create_dir(r.join("capops.yaml")).unwrap();
    });
    let out = run(&["validate", &repo.display().to_string()], &[]);
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(
        out.stderr.contains("error[file-unreadable]") && out.stderr.contains("a folder"),
        "{}",
        out.stderr
    );
    // The help says what to do about a folder, not about permissions.
    assert!(
        out.stderr.contains("move the folder away") && !out.stderr.contains("permissions"),
        "{}",
        out.stderr
    );
}

#[test]
fn a_file_of_more_than_200000_documents_is_too_large() {
    let (_t, repo) = example_with(|r| {
        std::fs::write(r.join("teams/many.yaml"), "x\n---\n".repeat(250_000)).unwrap();
    });
    let out = run(&["validate", &repo.display().to_string()], &[]);
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(
        out.stderr.contains("error[yaml-too-large]")
            && out.stderr.contains("more than 200000 documents"),
        "{}",
        out.stderr
    );
}

#[test]
fn an_output_that_is_a_device_or_a_link_is_written_through_not_replaced() {
    // A device given as --out (through a link here, `/dev/stdout` is one)
    // is written to, never replaced by a plain file; a link to a file is
    // followed and the file it names replaced.
    let example = common::example();
    let tmp = tempfile::tempdir().unwrap();
    let null = tmp.path().join("null");
    std::os::unix::fs::symlink("/dev/null", &null).unwrap();
    let out = run(
        &[
            "report",
            &example,
            "--at",
            "2026-11-22",
            "--out",
            &null.display().to_string(),
        ],
        &[],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        std::fs::symlink_metadata(&null)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    let target = tmp.path().join("report.md");
    std::fs::write(&target, "old").unwrap();
    let link = tmp.path().join("link.md");
    std::os::unix::fs::symlink(&target, &link).unwrap();
    let out = run(
        &[
            "report",
            &example,
            "--at",
            "2026-11-22",
            "--out",
            &link.display().to_string(),
        ],
        &[],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert_ne!(std::fs::read_to_string(&target).unwrap(), "old");
}

#[test]
fn a_currency_that_is_not_an_iso_code_is_refused_and_names_are_escaped() {
    let (_t, repo) = example_with(|r| {
        replace(
            &r.join("capops.yaml"),
            "currency: USD",
            "currency: \"<img src=x>|`x`\"",
        );
    });
    let out = run(&["validate", &repo.display().to_string()], &[]);
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(
        out.stderr.contains("error[invalid-value]") && out.stderr.contains("ISO 4217"),
        "{}",
        out.stderr
    );
    let (_t, repo) = example_with(|r| {
        replace(
            &r.join("capops.yaml"),
            "organization: Acme AI",
            "organization: \"</title><img src=x># H\"",
        );
    });
    let out = run(
        &[
            "report",
            &repo.display().to_string(),
            "--at",
            "2026-11-22",
            "--format",
            "markdown",
        ],
        &[],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    let title = out.stdout.lines().next().unwrap();
    assert!(
        title.starts_with("# &lt;/title&gt;&lt;img src=x&gt;\\# H"),
        "{title}"
    );
}

#[test]
fn an_invalid_document_is_reported_once_not_again_by_every_reference_to_it() {
    // A Team and a Cluster whose shape does not check: their own error, and
    // no "does not exist" for the requests, reservations and usage naming them.
    let (_t, repo) = example_with(|r| {
        replace(
            &r.join("teams/research.yaml"),
            "nvidia.com/gpu: 120",
            "nvidia.com/gpu: -1",
        );
        replace(
            &r.join("clusters/prod-h100.yaml"),
            "gpusPerNode: 8",
            "gpusPerNode: 0",
        );
    });
    let out = run(&["validate", &repo.display().to_string()], &[]);
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert_eq!(
        out.stderr.matches("error[value-out-of-range]").count(),
        2,
        "{}",
        out.stderr
    );
    for cascade in ["unknown-team", "unknown-cluster", "usage-unknown-reference"] {
        assert!(!out.stderr.contains(cascade), "{cascade}: {}", out.stderr);
    }
    // A file that does not parse at all: the names its text holds are not
    // reported again wherever they are referenced.
    for (file, from, to, code) in [
        (
            "teams/inference.yaml",
            "  costCenter: ",
            "  costCenter: CC-1\n  costCenter: ",
            "yaml-duplicate-key",
        ),
        (
            "clusters/prod-h100.yaml",
            "      nodes: 6\n",
            "      nodes: [6\n",
            "yaml-syntax",
        ),
    ] {
        let (_t, repo) = example_with(|r| replace(&r.join(file), from, to));
        let out = run(&["validate", &repo.display().to_string()], &[]);
        assert_eq!(out.code, 2, "{}", out.stderr);
        assert_eq!(out.stderr.matches("× error[").count(), 1, "{}", out.stderr);
        assert!(
            out.stderr.contains(&format!("error[{code}]")),
            "{}",
            out.stderr
        );
    }
    // A file of which nothing can be read (too large; binary from its first
    // byte) names nothing known: its error, and no "does not exist" for the
    // requests and usage naming the team it holds.
    for (what, bytes) in [
        ("file-too-large", {
            let mut b = std::fs::read(root().join("examples/acme/teams/devex.yaml")).unwrap();
            b.extend(format!("#{}\n", "x".repeat(17 << 20)).into_bytes());
            b
        }),
        ("file-binary", b"\0kind: Team\n".to_vec()),
    ] {
        let (_t, repo) =
            example_with(|r| std::fs::write(r.join("teams/devex.yaml"), bytes).unwrap());
        let out = run(&["validate", &repo.display().to_string()], &[]);
        assert_eq!(out.code, 2, "{}", out.stderr);
        assert_eq!(out.stderr.matches("× error[").count(), 1, "{}", out.stderr);
        assert!(
            out.stderr.contains(&format!("error[{what}]")),
            "{}",
            out.stderr
        );
        assert!(
            !out.stderr.contains("usage-unknown-reference"),
            "{}",
            out.stderr
        );
    }
    // A MIG profile spelled otherwise is one error with one fix: the team
    // quota keyed by the device plugin's name is not told to follow the typo.
    let (_t, repo) = example_with(|r| {
        replace(
            &r.join("clusters/prod-h100.yaml"),
            "1g.10gb: 2",
            "1G.10GB: 2",
        )
    });
    let out = run(&["validate", &repo.display().to_string()], &[]);
    assert_eq!(out.stderr.matches("× error[").count(), 1, "{}", out.stderr);
    assert!(
        out.stderr.contains("error[mig-profile-spelling]"),
        "{}",
        out.stderr
    );
    // A reference to a name nothing holds still is one, beside a link not
    // followed (a warning, which names nothing unknown: it must not hide
    // dangling references from the gate).
    let (_t, repo) = example_with(|r| {
        replace(
            &r.join("requests/research.yaml"),
            "team: research",
            "team: reserch",
        );
        std::os::unix::fs::symlink("/nonexistent", r.join("teams/ghost.yaml")).unwrap();
    });
    let out = run(&["validate", &repo.display().to_string()], &[]);
    assert!(out.stderr.contains("error[unknown-team]"), "{}", out.stderr);
    assert!(
        out.stderr.contains("symlink-not-followed"),
        "{}",
        out.stderr
    );
}

#[test]
fn a_policy_test_case_that_does_not_read_is_invalid_input_with_its_path() {
    let tmp = tempfile::tempdir().unwrap();
    let case = tmp.path().join("bad.yaml");
    std::fs::write(&case, "a: [\n").unwrap();
    let out = run(&["test", &tmp.path().display().to_string()], &[]);
    assert_eq!(out.code, 2, "{}{}", out.stdout, out.stderr);
    assert!(
        out.stdout
            .contains(&format!("{}: unclosed bracket", case.display()))
            && out.stdout.contains("at 1:4"),
        "{}",
        out.stdout
    );
}

#[test]
fn escape_sequences_in_documents_and_names_never_reach_the_terminal() {
    // A value that would retitle the window and clear the screen, and a
    // file name that would turn the rest of the log red.
    let (_t, repo) = example_with(|r| {
        let team = r.join("teams/devex.yaml");
        let text = std::fs::read_to_string(&team).unwrap();
        let line = text
            .lines()
            .find(|l| l.trim_start().starts_with("monthlyBudget:"))
            .unwrap()
            .to_string();
        replace(&team, &line, "  monthlyBudget: \"\\e]0;pwned\\a\\e[2Jabc\"");
        std::fs::write(r.join("teams/dev\u{1b}[31mex\nx.yaml"), "x").unwrap();
    });
    let repo = repo.display().to_string();
    for colour in ["never", "always"] {
        let out = run(&["validate", &repo, "--color", colour], &[]);
        assert_eq!(out.code, 2, "{}", out.stderr);
        for text in [&out.stdout, &out.stderr] {
            assert!(!text.contains("\u{1b}]0;"), "{colour}: {text}");
            assert!(!text.contains("\u{1b}[2J"), "{colour}: {text}");
            assert!(!text.contains("\u{1b}[31mex"), "{colour}: {text}");
            assert!(!text.contains('\u{7}'), "{colour}: {text}");
        }
        assert!(
            out.stderr.contains("\\u001b]0;pwned\\u0007"),
            "{}",
            out.stderr
        );
        // The name stays on its line.
        assert!(
            out.stderr.contains("dev\\u001b[31mex\\nx.yaml"),
            "{}",
            out.stderr
        );
    }
}

#[test]
fn odd_values_are_named_as_written() {
    let doc = |name: &str, spec: &str| {
        format!(
            "apiVersion: capops.dev/v1alpha1\nkind: Team\nmetadata: {{name: {name}}}\nspec:\n  costCenter: CC-1\n{spec}"
        )
    };
    let (_t, repo) = example_with(|r| {
        let w = |p: &str, t: String| std::fs::write(r.join(p), t).unwrap();
        w(
            "teams/tagged.yaml",
            doc("tagged", "  displayName: !!binary aGVsbG8=\n"),
        );
        w(
            "teams/custom.yaml",
            doc("custom", "  displayName: !custom x\n"),
        );
        w(
            "teams/merged.yaml",
            doc("merged", "  <<: {displayName: x}\n"),
        );
        w(
            "teams/huge.yaml",
            doc(
                "huge",
                &format!("  monthlyBudget: \"{}\"\n", "9".repeat(5_000)),
            ),
        );
        w("teams/nan.yaml", doc("nan", "  monthlyBudget: .nan\n"));
        w(
            "kinds.yaml",
            "apiVersion: capops.dev/v1alpha1\nkind: [Team]\n---\napiVersion: 1.0\nkind: Team\n"
                .into(),
        );
        w(
            "teams/neg.yaml",
            doc("neg", "  monthlyBudget: -9223372036854775809\n"),
        );
        let mut utf16 = vec![0xFF, 0xFE];
        for u in doc("wide", "").encode_utf16() {
            utf16.extend(u.to_le_bytes());
        }
        std::fs::write(r.join("teams/wide.yaml"), utf16).unwrap();
    });
    let out = run(&["validate", &repo.display().to_string()], &[]);
    assert_eq!(out.code, 2, "{}", out.stderr);
    for says in [
        "the tag `!!binary` is not supported",
        "the tag `!custom` is not supported",
        "merge keys (`<<`) are not supported",
        "is out of range for an amount",
        "(5000 characters)",
        "`spec.monthlyBudget` must be a finite number, found NaN",
        "kind must be a string, found a list",
        "apiVersion must be a string, found the number `1`",
        "the integer -9223372036854775809 is too small",
        "this file is UTF-16 text, not UTF-8",
    ] {
        assert!(out.stderr.contains(says), "{says}:\n{}", out.stderr);
    }
    // Echoed cut, not whole.
    assert!(!out.stderr.contains(&"9".repeat(100)));
}

#[test]
fn a_write_that_fails_part_way_leaves_the_old_file_and_no_temporary_file() {
    // A file size limit of 4 KiB: capops ignores SIGXFSZ, so the write fails
    // with EFBIG; the report is larger, the old one stays, nothing is left over.
    let (tmp, repo) = example_with(|_| {});
    let dir = tmp.path().join("out");
    std::fs::create_dir(&dir).unwrap();
    let report = dir.join("report.md");
    std::fs::write(&report, "the old report\n").unwrap();
    let status = std::process::Command::new("bash")
        .arg("-c")
        .arg(
            "ulimit -f 4; exec \"$0\" report --at 2026-11-22 --format markdown --out \"$2\" \"$1\"",
        )
        .arg(env!("CARGO_BIN_EXE_capops"))
        .arg(&repo)
        .arg(&report)
        .output()
        .unwrap();
    assert_eq!(
        status.status.code(),
        Some(3),
        "{}",
        String::from_utf8_lossy(&status.stderr)
    );
    assert_eq!(
        std::fs::read_to_string(&report).unwrap(),
        "the old report\n"
    );
    let left: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(left, vec!["report.md".to_string()]);
}

#[test]
fn a_backtest_never_writes_its_forecasts_over_its_input() {
    let tmp = tempfile::tempdir().unwrap();
    let csv = tmp.path().join("bt.csv");
    let text = "timestamp,series,v\n2026-01-01T00:00:00Z,a,1\n";
    std::fs::write(&csv, text).unwrap();
    let c = csv.display().to_string();
    let out = run(
        &[
            "forecast", "backtest", "--csv", &c, "--value", "v", "--out", &c,
        ],
        &[],
    );
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(out.stderr.contains("is the input CSV"), "{}", out.stderr);
    assert_eq!(std::fs::read_to_string(&csv).unwrap(), text);
}

#[test]
fn a_backtest_replaces_only_its_own_forecasts() {
    let tmp = tempfile::tempdir().unwrap();
    let csv = tmp.path().join("bt.csv");
    let mut text = String::from("timestamp,series,v\n");
    for h in 0..24 * 40 {
        let t = jiff::Timestamp::from_second(1_767_225_600 + h * 3600).unwrap();
        text.push_str(&format!(
            "{},a,{}\n",
            t.strftime("%Y-%m-%dT%H:%M:%SZ"),
            h % 24
        ));
    }
    std::fs::write(&csv, &text).unwrap();
    let backtest = |out: &std::path::Path| {
        run(
            &[
                "forecast",
                "backtest",
                "--csv",
                &csv.display().to_string(),
                "--value",
                "v",
                "--out",
                &out.display().to_string(),
            ],
            &[],
        )
    };
    // A Config (or usage history, or anything else), directly or through a
    // link: refused before anything is measured, the file kept.
    let config = tmp.path().join("capops.yaml");
    let config_text = "apiVersion: capops.dev/v1alpha1\nkind: Config\n";
    std::fs::write(&config, config_text).unwrap();
    let link = tmp.path().join("forecasts.csv");
    #[cfg(unix)]
    std::os::unix::fs::symlink(&config, &link).unwrap();
    #[cfg(not(unix))]
    std::fs::copy(&config, &link).unwrap();
    for target in [&config, &link] {
        let out = backtest(target);
        assert_eq!(out.code, 2, "{}", out.stderr);
        assert!(
            out.stderr.contains("is not a backtest's forecasts"),
            "{}",
            out.stderr
        );
        assert!(out.stdout.is_empty(), "nothing measured: {}", out.stdout);
    }
    assert_eq!(std::fs::read_to_string(&config).unwrap(), config_text);
    // A new file, then the same file again (its own forecasts), then an
    // empty one: written.
    let fresh = tmp.path().join("fresh.csv");
    for _ in 0..2 {
        let out = backtest(&fresh);
        assert_eq!(out.code, 0, "{}", out.stderr);
        assert!(
            std::fs::read_to_string(&fresh)
                .unwrap()
                .starts_with("series,cutoff,timestamp,p10,p50,p90\n")
        );
    }
    let empty = tmp.path().join("empty.csv");
    std::fs::write(&empty, "").unwrap();
    assert_eq!(backtest(&empty).code, 0);
}

#[test]
fn a_series_spread_over_decades_is_shown_at_its_mistyped_row() {
    // A year mistyped at the end of a long file: the error points at that
    // row and names its hour, not the series' first row.
    let row = "2099-11-21T23:00:00Z,infer-l4,t4-batch,devex,1,0.5\n";
    let (_tmp, repo) = example_with(|repo| {
        let path = repo.join("usage/infer-l4.csv");
        let mut text = std::fs::read_to_string(&path).unwrap();
        text.push_str(row);
        std::fs::write(&path, text).unwrap();
    });
    let lines = std::fs::read_to_string(repo.join("usage/infer-l4.csv"))
        .unwrap()
        .lines()
        .count();
    let out = run(
        &["validate", "--format", "json", &repo.display().to_string()],
        &[],
    );
    assert_eq!(out.code, 2, "{}", out.stderr);
    let d = out.json["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["code"] == "usage-bad-row")
        .expect("the series spans too long")
        .clone();
    assert_eq!(d["line"], lines as u64, "{d}");
    assert!(
        d["message"]
            .as_str()
            .unwrap()
            .contains("farthest from the rest is for 2099-11-21T23:00:00Z)"),
        "{d}"
    );
    // The same row in a file read before: named as such.
    let (_tmp, repo) = example_with(|repo| {
        std::fs::write(
            repo.join("usage/extra.csv"),
            format!("timestamp,cluster,pool,team,allocated_gpus,used_gpus\n{row}"),
        )
        .unwrap();
    });
    let out = run(
        &["validate", "--format", "json", &repo.display().to_string()],
        &[],
    );
    let d = out.json["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["code"] == "usage-bad-row")
        .expect("the series spans too long")
        .clone();
    assert!(
        d["message"]
            .as_str()
            .unwrap()
            .contains("2099-11-21T23:00:00Z, in a usage file read before this one"),
        "{d}"
    );
}

#[test]
fn a_series_over_its_pool_is_shown_at_the_row_with_the_most_gpus() {
    // One bad row at the end of a long file: the error points at it, not at
    // the series' first row (which is fine), in a file kept as rows only.
    let (_tmp, repo) = example_with(|repo| {
        let path = repo.join("usage/infer-l4.csv");
        let mut text = std::fs::read_to_string(&path).unwrap();
        text.push_str("2026-11-21T05:00:00Z,infer-l4,l4-serve,devex,100,0\n");
        std::fs::write(&path, text).unwrap();
    });
    let lines = std::fs::read_to_string(repo.join("usage/infer-l4.csv"))
        .unwrap()
        .lines()
        .count();
    let out = run(
        &["validate", "--format", "json", &repo.display().to_string()],
        &[],
    );
    assert_eq!(out.code, 2, "{}", out.stderr);
    let d = out.json["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["code"] == "usage-exceeds-capacity")
        .expect("the series is over its pool");
    assert!(
        d["file"].as_str().unwrap().ends_with("usage/infer-l4.csv"),
        "{d}"
    );
    assert_eq!(d["line"], lines as u64, "{d}");
    assert_eq!(d["column"], 1);
    assert!(
        d["message"].as_str().unwrap().contains("reaches 100 GPUs"),
        "{d}"
    );
    // And the human output can show the row.
    let out = run(&["validate", &repo.display().to_string()], &[]);
    assert!(
        out.stderr.contains("infer-l4,l4-serve,devex,100,0"),
        "{}",
        out.stderr
    );
}

#[test]
fn conflicting_usage_rows_are_shown_at_the_row_that_differs() {
    // The series' first row is fine; the conflict is a second row for an
    // hour near the end of the file, and the first conflicting hour is the
    // one shown even when a later hour's conflict is read first.
    let (_tmp, repo) = example_with(|repo| {
        let path = repo.join("usage/infer-l4.csv");
        let mut text = std::fs::read_to_string(&path).unwrap();
        text.push_str("2026-11-20T05:00:00Z,infer-l4,l4-serve,devex,3,0\n");
        text.push_str("2026-11-19T05:00:00Z,infer-l4,l4-serve,devex,4,0\n");
        // A third and fourth row of the same hour: still one hour.
        text.push_str("2026-11-19T05:00:00Z,infer-l4,l4-serve,devex,5,0\n");
        text.push_str("2026-11-19T05:00:00Z,infer-l4,l4-serve,devex,4,0\n");
        std::fs::write(&path, text).unwrap();
    });
    let lines = std::fs::read_to_string(repo.join("usage/infer-l4.csv"))
        .unwrap()
        .lines()
        .count();
    let out = run(
        &["validate", "--format", "json", &repo.display().to_string()],
        &[],
    );
    assert_eq!(out.code, 2, "{}", out.stderr);
    let found: Vec<_> = out.json["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| d["code"] == "usage-conflicting-rows")
        .collect();
    assert_eq!(found.len(), 1, "one diagnostic for the series: {found:?}");
    let d = found[0];
    assert!(d["message"].as_str().unwrap().contains("2 hours"), "{d}");
    assert!(
        d["message"]
            .as_str()
            .unwrap()
            .contains("2026-11-19T05:00:00Z"),
        "{d}"
    );
    // The first row that differs in the first hour: the file's last but two.
    assert_eq!(d["line"], lines as u64 - 2, "{d}");
    assert_eq!(d["column"], 1);
}

#[test]
fn errors_in_a_policy_test_cases_documents_are_shown_at_the_cases_lines() {
    let (_t, repo) = example_with(|r| {
        std::fs::create_dir_all(r.join("tests")).unwrap();
        let request = |gpus: &str| {
            format!(
                "apiVersion: capops.dev/v1alpha1\nkind: CapacityRequest\nmetadata: {{name: r}}\nspec:\n  team: research\n  cluster: prod-h100\n  pool: h100-train\n  resources: {{nvidia.com/gpu: {gpus}}}\n  window: {{start: 2026-12-01, end: 2027-01-01}}\n  workloadClass: training\n  justification: needed\n  successMetrics: [used]\n"
            )
        };
        let block: String = request("thirty")
            .lines()
            .map(|l| format!("      {l}\n"))
            .collect();
        std::fs::write(
            r.join("tests/block.yaml"),
            format!(
                "description: d\nat: 2026-11-22\nchange:\n  add: |\n{block}expect:\n  exit: 1\n"
            ),
        )
        .unwrap();
        // Written as one quoted string, its lines are not the case's.
        std::fs::write(
            r.join("tests/quoted.yaml"),
            format!(
                "description: d\nat: 2026-11-22\ndocuments: {}\nexpect:\n  exit: 1\n",
                serde_json::to_string(&request("thirty")).unwrap()
            ),
        )
        .unwrap();
    });
    let out = run(&["test", &repo.join("tests").display().to_string()], &[]);
    assert_eq!(out.code, 1, "{}{}", out.stdout, out.stderr);
    // `thirty` is on the case's line 12 (4 lines before the block, then the
    // request's 8th line), after 6 spaces and `  resources: {nvidia.com/gpu: `.
    assert!(
        out.stdout.contains(
            "error wrong-type at line 12, column 37 of the case (in `change.add`): `spec.resources.nvidia.com/gpu` must be a whole number"
        ),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout
            .contains("error wrong-type in `documents`, its line 8, column 31"),
        "{}",
        out.stdout
    );
}

#[test]
fn policy_test_case_files_are_read_strictly() {
    // Each of these would have passed, or failed as a test, while saying
    // nothing of the mistake in the case itself.
    let good = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("policies/tests/change-only-changes-are-judged.yaml"),
    )
    .unwrap();
    let cases = [
        (
            format!("{good}---\ndescription: a second case\n"),
            "a case file holds one case",
        ),
        (
            good.replacen("expect:\n", "expect:\n  codes: [no-such-code]\n", 1),
            "`no-such-code` is not a diagnostic code",
        ),
    ];
    for (text, said) in cases {
        let tmp = tempfile::tempdir().unwrap();
        std::fs::write(tmp.path().join("case.yaml"), &text).unwrap();
        let out = run(&["test", &tmp.path().display().to_string()], &[]);
        assert_eq!(out.code, 2, "{said}: {}", out.stdout);
        assert!(out.stdout.contains(said), "{said}: {}", out.stdout);
    }
}

#[test]
fn template_overrides_are_checked_by_validate_and_errors_shown_at_their_line() {
    let builtin = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("src/render/templates/kubernetes/priorityclass.yaml.j2"),
    )
    .unwrap();
    // An unclosed block: `validate` finds it (it passed before), at the
    // line where the template ends unclosed.
    let broken = builtin.replace("{%- if description %}", "{%- if description %}{% if x %}");
    let (_t, repo) = example_with(|r| {
        std::fs::create_dir_all(r.join("templates/kubernetes")).unwrap();
        std::fs::write(
            r.join("templates/kubernetes/priorityclass.yaml.j2"),
            &broken,
        )
        .unwrap();
    });
    let out = run(
        &["validate", "--format", "json", &repo.display().to_string()],
        &[],
    );
    assert_eq!(out.code, 2, "{}", out.stdout);
    let d = &out.json["diagnostics"][0];
    assert_eq!(d["code"], "template-error", "{d}");
    assert_eq!(d["line"], broken.lines().count() as u64, "{d}");
    // An undefined value: `render` shows it at its line, quoting it.
    let undefined = builtin.replacen("metadata:\n", "metadata:\n# {{ nosuchvar.x }}\n", 1);
    let line = undefined
        .lines()
        .position(|l| l.contains("nosuchvar"))
        .unwrap()
        + 1;
    let (_t, repo) = example_with(|r| {
        std::fs::create_dir_all(r.join("templates/kubernetes")).unwrap();
        std::fs::write(
            r.join("templates/kubernetes/priorityclass.yaml.j2"),
            &undefined,
        )
        .unwrap();
    });
    let out_dir = repo.join("out");
    let out = run(
        &[
            "render",
            "--format",
            "json",
            &repo.display().to_string(),
            "--out",
            &out_dir.display().to_string(),
        ],
        &[],
    );
    assert_eq!(out.code, 2, "{}{}", out.stdout, out.stderr);
    let d = out.json["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["code"] == "template-error")
        .unwrap_or_else(|| panic!("{}", out.stdout));
    assert_eq!(d["line"], line as u64, "{d}");
    assert!(
        d["message"]
            .as_str()
            .unwrap()
            .contains("`# {{ nosuchvar.x }}`"),
        "{d}"
    );
}

#[test]
fn ignore_patterns_that_can_match_nothing_are_errors_at_the_pattern() {
    let (_t, repo) = example_with(|r| {
        let path = r.join("capops.yaml");
        let text = std::fs::read_to_string(&path).unwrap();
        let text = text.replacen(
            "spec:\n",
            "spec:\n  ignore: [\"/abs/\", \"../x\", \"\", \"drafts/\"]\n",
            1,
        );
        std::fs::write(&path, text).unwrap();
    });
    let out = run(
        &["validate", "--format", "json", &repo.display().to_string()],
        &[],
    );
    assert_eq!(out.code, 2, "{}", out.stdout);
    let found: Vec<String> = out.json["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| d["code"] == "invalid-value")
        .map(|d| d["message"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(
        found,
        [
            "the ignore pattern `/abs/` is absolute: it can match no file",
            "the ignore pattern `../x` climbs out of the repository with `..`: it can match no file",
            "the ignore pattern `` is empty: it can match no file",
        ],
        "{}",
        out.stdout
    );
}

#[test]
fn a_reservation_of_another_providers_type_is_one_error_not_a_false_zone_error() {
    let (_t, repo) = example_with(|r| {
        let path = r.join("reservations/h100-serve-1y.yaml");
        let text = std::fs::read_to_string(&path).unwrap();
        std::fs::write(
            &path,
            text.replace("  provider: aws\n", "  provider: gcp\n"),
        )
        .unwrap();
    });
    let out = run(
        &["validate", "--format", "json", &repo.display().to_string()],
        &[],
    );
    assert_eq!(out.code, 2, "{}", out.stdout);
    let messages: Vec<String> = out.json["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| d["file"].as_str().unwrap().ends_with("h100-serve-1y.yaml"))
        .map(|d| d["message"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(
        messages[0],
        "the type `aws-capacity-reservation` is one of `aws`'s, but the provider is `gcp`",
        "{}",
        out.stdout
    );
    // The zone is AWS's, right for the type: not blamed on the provider's typo.
    assert!(
        !messages
            .iter()
            .any(|m| m.contains("is not a zone of region")),
        "{messages:?}"
    );
}

#[test]
fn a_template_nested_past_the_walks_depth_is_refused_not_a_stack_overflow() {
    // A chain of 120,000 filters or `~` is as deep a syntax tree: walking
    // (and dropping) it overflowed the stack and aborted every command that
    // reads the templates.
    let builtin = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("src/render/templates/kubernetes/resourcequota.yaml.j2"),
    )
    .unwrap();
    for chain in [" ~ name".repeat(25_000), "|lower".repeat(40_000)] {
        let text = format!("{builtin}\n# {{{{ name{chain} }}}}\n");
        let (_t, repo) = example_with(|r| {
            std::fs::create_dir_all(r.join("templates/kubernetes")).unwrap();
            std::fs::write(r.join("templates/kubernetes/resourcequota.yaml.j2"), &text).unwrap();
        });
        let out = run(
            &["validate", "--format", "json", &repo.display().to_string()],
            &[],
        );
        assert_eq!(out.code, 2, "{}", out.stderr);
        let d = &out.json["diagnostics"][0];
        assert_eq!(d["code"], "template-error", "{d}");
        assert!(
            d["message"]
                .as_str()
                .unwrap()
                .contains("nests more than 200 deep"),
            "{d}"
        );
    }
}

#[cfg(unix)]
#[test]
fn policy_test_case_links_are_refused_by_name_not_followed_or_skipped() {
    let tmp = tempfile::tempdir().unwrap();
    let secret = tmp.path().join("secret.txt");
    std::fs::write(&secret, "CAPOPS-SECRET-OUTSIDE").unwrap();
    let cases = tmp.path().join("cases");
    std::fs::create_dir_all(&cases).unwrap();
    std::os::unix::fs::symlink(&secret, cases.join("leak.yaml")).unwrap();
    std::os::unix::fs::symlink(tmp.path().join("nowhere"), cases.join("gone.yaml")).unwrap();
    let out = run(&["test", &cases.display().to_string()], &[]);
    assert_eq!(out.code, 2, "{}", out.stdout);
    assert!(
        !out.stdout.contains("CAPOPS-SECRET-OUTSIDE"),
        "{}",
        out.stdout
    );
    for name in ["leak.yaml", "gone.yaml"] {
        assert!(
            out.stdout.contains(&format!("{name}: is a link")),
            "{name}: {}",
            out.stdout
        );
    }
}

#[test]
fn render_into_a_folder_under_a_file_names_the_file_not_the_manifest() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("afile");
    std::fs::write(&file, "hi\n").unwrap();
    let out = run(
        &[
            "render",
            &root().join("examples/acme").display().to_string(),
            "--at",
            "2026-11-22",
            "--out",
            &file.join("sub").display().to_string(),
        ],
        &[],
    );
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(
        out.stderr.contains("is a file, not a folder"),
        "{}",
        out.stderr
    );
    assert!(!out.stderr.contains("manifest"), "{}", out.stderr);
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "hi\n");
}

#[test]
fn a_checkout_git_refuses_to_open_is_not_taken_for_one_outside_git() {
    // Another user's checkout (a CI container running as root on the
    // runner's workspace): git refuses it as of dubious ownership. render
    // stamped `unversioned` and apply skipped its guard against rolling a
    // cluster back; now every command that reads revisions stops, exit 3.
    let (tmp, repo) = example_with(|_| {});
    let git = git2::Repository::init(&repo).unwrap();
    common::commit_all(&git, "base");
    let owned_elsewhere = [repo.clone(), repo.join(".git")]
        .iter()
        .all(|p| std::os::unix::fs::chown(p, Some(4242), Some(4242)).is_ok());
    if !owned_elsewhere || git2::Repository::discover(&repo).is_ok() {
        eprintln!("skipped: this user cannot give the checkout to another (not root)");
        return;
    }
    let path = repo.display().to_string();
    let out_dir = tmp.path().join("out");
    let out_arg = out_dir.display().to_string();
    for args in [
        vec!["render", &path, "--out", &out_arg, "--at", "2026-11-22"],
        vec!["check", "--base", "HEAD", "--at", "2026-11-22", &path],
        vec!["report", &path, "--at", "2026-11-22"],
    ] {
        let out = run(&args, &[]);
        assert_eq!(out.code, 3, "{args:?}: {}", out.stderr);
        assert!(
            out.stderr
                .contains("git refuses to open the repository holding"),
            "{args:?}: {}",
            out.stderr
        );
        assert!(out.stderr.contains("safe.directory"), "{}", out.stderr);
    }
    assert!(!out_dir.exists(), "nothing rendered");
    // Outside git altogether it still renders, stamped `unversioned`.
    std::fs::remove_dir_all(repo.join(".git")).unwrap();
    let out = run(
        &["render", &path, "--out", &out_arg, "--at", "2026-11-22"],
        &[],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
}

#[test]
fn a_folder_whose_path_is_too_long_to_open_is_reported_not_skipped() {
    // teams/x/x/.../deep.yaml past PATH_MAX (4,096 bytes): the folder could
    // not be listed, and its documents vanished with a valid verdict.
    let (_t, repo) = example_with(|r| {
        // Made a step at a time, each folder opened from the one before:
        // no single call can name the whole path.
        let dir = std::ffi::CString::new(r.join("teams").display().to_string()).unwrap();
        let x = c"x";
        // SAFETY: plain POSIX calls on descriptors this closure owns and
        // closes; every return value is checked.
        unsafe {
            let mut fd = libc::open(dir.as_ptr(), libc::O_DIRECTORY | libc::O_RDONLY);
            assert!(fd >= 0);
            for _ in 0..2_100 {
                assert_eq!(libc::mkdirat(fd, x.as_ptr(), 0o755), 0);
                let next = libc::openat(fd, x.as_ptr(), libc::O_DIRECTORY | libc::O_RDONLY);
                assert!(next >= 0);
                libc::close(fd);
                fd = next;
            }
            let text = b"apiVersion: capops.dev/v1alpha1\nkind: Team\n";
            let f = libc::openat(
                fd,
                c"deep.yaml".as_ptr(),
                libc::O_CREAT | libc::O_WRONLY,
                0o644,
            );
            assert!(f >= 0);
            assert_eq!(
                libc::write(f, text.as_ptr().cast(), text.len()),
                text.len() as isize
            );
            libc::close(f);
            libc::close(fd);
        }
    });
    let out = run(
        &["validate", &repo.display().to_string(), "--format", "json"],
        &[],
    );
    assert_eq!(out.code, 2, "{}", out.stderr);
    let unread: Vec<_> = out.json["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| d["code"] == "file-unreadable")
        .collect();
    assert!(!unread.is_empty(), "{}", out.stdout);
    assert!(
        unread[0]["message"]
            .as_str()
            .unwrap()
            .contains("cannot be listed"),
        "{}",
        unread[0]
    );
}

#[test]
fn report_out_dash_is_stdout_and_explain_keeps_a_name_on_one_line() {
    let (_t, repo) = example_with(|_| {});
    let path = repo.display().to_string();
    // `--out -` wrote a file named `-` into the checkout.
    let out = run(&["report", &path, "--at", "2026-11-22", "--out", "-"], &[]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(out.stdout.len() > 1_000, "{}", out.stdout);
    assert!(!repo.join("-").exists() && !Path::new("-").exists());
    // A name with a line break cannot start a line of the log (a GitHub
    // Actions `::error::` command).
    let out = run(
        &[
            "explain",
            "x\n::error::injected",
            "--at",
            "2026-11-22",
            &path,
        ],
        &[],
    );
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(
        out.stderr.contains("x\\n::error::injected"),
        "{}",
        out.stderr
    );
    assert!(
        !out.stderr.lines().any(|l| l.starts_with("::error::")),
        "{}",
        out.stderr
    );
}

#[test]
fn a_path_that_is_a_link_loop_is_no_config_for_every_command() {
    // `check`, `render` and `report` read git first, and git's "too many
    // levels of symbolic links" came out as exit 3 with a safe.directory hint.
    let dir = tempfile::tempdir().unwrap();
    let looped = dir.path().join("loop");
    std::os::unix::fs::symlink(&looped, &looped).unwrap();
    let p = looped.to_str().unwrap();
    for args in [
        &["validate", p][..],
        &["check", p, "--at", "2026-11-22"],
        &["render", p, "--at", "2026-11-22"],
        &["report", p, "--at", "2026-11-22"],
    ] {
        let out = common::run(args, &[]);
        assert_eq!(out.code, 2, "{args:?}: {}{}", out.stdout, out.stderr);
        assert!(out.stderr.contains("no-config"), "{args:?}: {}", out.stderr);
    }
}
