//! Names that `capops validate` refuses because `capops render` could not
//! write what they stand for: a cluster named after the node-label plans'
//! folder, a reservation named after a file of its Terraform module, two quotas one file name, a zone outside its
//! region, a LocalQueue name no label can carry, node labels no node can
//! carry, a description Kueue refuses. Each would otherwise pass the gate and
//! stop render for every cluster after merge.

mod common;

use common::{copy_dir, example, run};
use std::path::{Path, PathBuf};

fn fresh() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path().join("repo");
    copy_dir(Path::new(&example()), &repo);
    (dir, repo)
}

fn edit(repo: &Path, file: &str, f: impl FnOnce(String) -> String) {
    let path = repo.join(file);
    let text = std::fs::read_to_string(&path).unwrap_or_default();
    std::fs::write(&path, f(text)).unwrap();
}

/// Validates and returns the exit code and the diagnostics' codes.
fn validate(repo: &Path) -> (i32, Vec<String>) {
    let v = run(
        &["validate", "--format", "json", repo.to_str().unwrap()],
        &[],
    );
    (v.code, common::codes(&v.json))
}

/// The example validates, and `code` is not among its diagnostics; after
/// `change`, validation fails with `code` exactly `n` times.
fn refused(change: impl FnOnce(&Path), code: &str, n: usize) {
    let (_d, repo) = fresh();
    let (before, codes) = validate(&repo);
    assert_eq!(before, 0, "the example validates: {codes:?}");
    assert!(!codes.iter().any(|c| c == code), "{codes:?}");
    change(&repo);
    let (after, codes) = validate(&repo);
    assert_eq!(after, 2, "{codes:?}");
    assert_eq!(codes.iter().filter(|c| *c == code).count(), n, "{codes:?}");
}

#[test]
fn a_cluster_named_after_the_node_label_plans_folder_is_refused() {
    // `node-labels/` holds every cluster's plan as `<cluster>.yaml`; a
    // cluster of that name would share the folder (and `render --cluster`
    // would prune the others' plans). `cloud` is fine: its Terraform lives
    // in subfolders.
    refused(
        |repo| {
            for name in ["node-labels", "cloud"] {
                edit(repo, &format!("clusters/{name}.yaml"), |_| {
                    std::fs::read_to_string(repo.join("clusters/infer-l4.yaml"))
                        .unwrap()
                        .replace("name: infer-l4", &format!("name: {name}"))
                        .replace(
                            "kubeContext: gke_acme_us-central1_infer-l4",
                            &format!("kubeContext: ctx-{name}"),
                        )
                });
            }
        },
        "name-invalid",
        1,
    );
}

#[test]
fn a_reservation_named_after_a_terraform_file_of_its_module_is_refused() {
    refused(
        |repo| {
            let text =
                std::fs::read_to_string(repo.join("reservations/h100-serve-1y.yaml")).unwrap();
            for name in ["providers", "variables"] {
                edit(repo, &format!("reservations/{name}.yaml"), |_| {
                    text.replace("name: h100-serve-1y", &format!("name: {name}"))
                });
            }
        },
        "name-invalid",
        2,
    );
}

#[test]
fn a_zone_outside_the_reservations_region_is_refused() {
    refused(
        |repo| {
            edit(repo, "reservations/h100-serve-1y.yaml", |t| {
                t.replace("zone: us-east-1a", "zone: eu-west-1a")
            })
        },
        "name-invalid",
        1,
    );
}

#[test]
fn a_pools_zone_outside_its_clusters_region_is_refused() {
    refused(
        |repo| {
            edit(repo, "clusters/infer-l4.yaml", |t| {
                t.replace("zone: us-central1-b", "zone: us-east1-b")
            })
        },
        "name-invalid",
        1,
    );
}

#[test]
fn a_local_queue_name_longer_than_a_label_value_is_refused() {
    // A valid DNS subdomain of 71 characters: workloads could not name it in
    // `kueue.x-k8s.io/queue-name` (at most 63).
    let long = format!("{}.{}", "a".repeat(35), "b".repeat(35));
    refused(
        |repo| {
            edit(repo, "capops.yaml", |t| {
                format!("{t}  render:\n    localQueue: {long}\n")
            })
        },
        "name-invalid",
        1,
    );
}

#[test]
fn node_labels_no_node_can_carry_are_refused_without_kueue_too() {
    // infer-l4 runs no Kueue: its labels select the time-sliced pool's nodes
    // in the node-label plan. The key and the value are each wrong: two.
    refused(
        |repo| {
            edit(repo, "clusters/infer-l4.yaml", |t| {
                t.replace(
                    "cloud.google.com/gke-accelerator: nvidia-tesla-t4",
                    "cloud.google.com/gke-accelerator: nvidia-tesla-t4\n        \"Bad Key!\": \"a b/c\"",
                )
            })
        },
        "name-invalid",
        2,
    );
}

#[test]
fn node_labels_and_taints_no_node_can_carry_are_shown_at_the_key_or_value_with_kueue() {
    // prod-h100 runs Kueue: each bad key or value is its own `name-invalid`
    // at its own place (line and column), not one message at the pool.
    let (_d, repo) = fresh();
    edit(&repo, "clusters/prod-h100.yaml", |t| {
        t.replacen(
            "acme.ai/gpu-pool: h100-serve",
            "acme.ai/gpu-pool: \"-serve\"",
            1,
        )
        .replacen(
            "- {key: nvidia.com/gpu, value: present, effect: NoSchedule}",
            "- {key: Bad_Key/x, value: present, effect: NoSchedule}",
            1,
        )
    });
    let v = run(
        &["validate", "--format", "json", repo.to_str().unwrap()],
        &[],
    );
    assert_eq!(v.code, 2, "{}", v.stdout);
    let bad: Vec<(String, u64, u64)> = v.json["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| d["code"] == "name-invalid")
        .map(|d| {
            (
                d["message"].as_str().unwrap().to_string(),
                d["line"].as_u64().unwrap(),
                d["column"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(bad.len(), 2, "{bad:?}");
    let text = std::fs::read_to_string(repo.join("clusters/prod-h100.yaml")).unwrap();
    let place = |needle: &str| {
        let at = text.find(needle).unwrap();
        let line = text[..at].matches('\n').count() as u64 + 1;
        let col = (at - text[..at].rfind('\n').map_or(0, |n| n + 1)) as u64 + 1;
        (line, col)
    };
    assert!(bad[0].0.contains("node label value `-serve`"), "{bad:?}");
    assert_eq!((bad[0].1, bad[0].2), place("\"-serve\""));
    assert!(bad[1].0.contains("taint key `Bad_Key/x`"), "{bad:?}");
    assert_eq!((bad[1].1, bad[1].2), place("Bad_Key/x"));
    assert!(
        !common::codes(&v.json)
            .iter()
            .any(|c| c == "kueue-limit-exceeded")
    );
}

#[test]
fn a_description_kueue_refuses_is_refused_before_render() {
    refused(
        |repo| {
            edit(repo, "priority-classes.yaml", |t| {
                t.replace(
                    "description: Customer-facing inference; preempts everything else",
                    &format!("description: {}", "x".repeat(2049)),
                )
            })
        },
        "kueue-limit-exceeded",
        1,
    );
}

#[test]
fn two_namespaces_whose_class_quotas_share_a_file_are_refused() {
    // `research` + `capops-gpu-x-capops-gpu` and `research-capops-gpu-x` +
    // `capops-gpu`, both in infer-l4.
    refused(
        |repo| {
            edit(repo, "capops.yaml", |t| {
                format!("{t}  render:\n    priorityClassQuotas: true\n")
            });
            edit(repo, "priority-classes.yaml", |t| {
                format!(
                    "{t}---\napiVersion: capops.dev/v1alpha1\nkind: PriorityClass\nmetadata:\n  name: x-capops-gpu\nspec:\n  value: 10\n"
                )
            });
            edit(repo, "teams/devex.yaml", |t| {
                t.replace("namespace: devex", "namespace: research-capops-gpu-x")
            });
        },
        "rendered-file-clash",
        1,
    );
}

#[test]
fn a_lowered_label_problem_still_stops_render_rather_than_dropping_the_queues() {
    // The Config may lower `name-invalid` for validate and check, but a
    // Kueue cluster whose flavor cannot be written gets no Kueue objects,
    // and a render (or plan, or apply) without them would prune the live
    // queues: render refuses instead, and the folder keeps what it had.
    let (dir, repo) = fresh();
    let out = dir.path().join("out");
    let render = |out: &Path| {
        run(
            &[
                "render",
                repo.to_str().unwrap(),
                "--at",
                "2026-11-22",
                "--revision",
                "test",
                "--out",
                out.to_str().unwrap(),
            ],
            &[],
        )
    };
    let first = render(&out);
    assert_eq!(first.code, 0, "{}", first.stderr);
    let before = std::fs::read_dir(out.join("prod-h100")).unwrap().count();
    assert!(std::fs::read_dir(out.join("prod-h100")).unwrap().any(|e| {
        e.unwrap()
            .file_name()
            .to_string_lossy()
            .starts_with("clusterqueue-")
    }));
    edit(&repo, "clusters/prod-h100.yaml", |t| {
        t.replacen(
            "acme.ai/gpu-pool: h100-serve",
            "acme.ai/gpu-pool: \"-serve\"",
            1,
        )
    });
    edit(&repo, "capops.yaml", |t| {
        t.replacen(
            "  currency: USD\n",
            "  currency: USD\n  severities:\n    name-invalid: warning\n",
            1,
        )
    });
    let (code, codes) = validate(&repo);
    assert_eq!(code, 0, "{codes:?}");
    assert!(codes.contains(&"name-invalid".to_string()), "{codes:?}");
    let second = render(&out);
    assert_eq!(second.code, 2, "{}", second.stderr);
    assert!(
        second.stderr.contains("error[name-invalid]"),
        "{}",
        second.stderr
    );
    assert!(
        second.stderr.contains("nothing was written"),
        "{}",
        second.stderr
    );
    assert_eq!(
        std::fs::read_dir(out.join("prod-h100")).unwrap().count(),
        before
    );
}

#[test]
fn a_description_with_characters_yaml_must_escape_renders_and_reads_back() {
    // DEL, a C1 control, NEL, U+2028 and U+FFFE are valid in a document's
    // text and in JSON, but not raw in YAML (or read as line breaks): the
    // rendered objects escape them, and read back the same description.
    let (dir, repo) = fresh();
    let odd = "a\u{7f}b\u{90}c\u{85}d\u{2028}e\u{fffe}f";
    edit(&repo, "priority-classes.yaml", |t| {
        t.replace(
            "description: Customer-facing inference; preempts everything else",
            "description: \"a\\x7fb\\u0090c\\Nd\\u2028e\\ufffef\"",
        )
    });
    let (code, codes) = validate(&repo);
    assert_eq!(code, 0, "{codes:?}");
    let out = dir.path().join("out");
    let r = run(
        &[
            "render",
            repo.to_str().unwrap(),
            "--at",
            "2026-11-22",
            "--out",
            out.to_str().unwrap(),
        ],
        &[],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let text =
        std::fs::read_to_string(out.join("prod-h100/priorityclass-production-inference.yaml"))
            .unwrap();
    let v: serde_json::Value = serde_saphyr::from_str(&text).unwrap();
    assert_eq!(v["description"], odd, "{text}");
}

#[test]
fn a_revision_no_cloud_tag_can_carry_is_refused() {
    // `--revision` is stamped on every object and cloud resource (an AWS
    // tag: at most 256 characters of a small set): what a commit id or tag
    // is passes, anything else is refused before anything is rendered.
    let (_dir, repo) = fresh();
    let render = |rev: &str| {
        run(
            &[
                "render",
                repo.to_str().unwrap(),
                "--at",
                "2026-11-22",
                "--out",
                "-",
                "--revision",
                rev,
            ],
            &[],
        )
    };
    for bad in ["a#b", "a\nb", "(x)", "", &"a".repeat(129)] {
        let r = render(bad);
        assert_eq!(r.code, 2, "{bad:?}: {}", r.stderr);
        assert!(r.stdout.is_empty());
    }
    let ok = render("3a59fb42a4e2+dirty");
    assert_eq!(ok.code, 0, "{}", ok.stderr);
    assert!(ok.stdout.contains("3a59fb42a4e2+dirty"));
}
