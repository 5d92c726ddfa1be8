//! `capops plan`, `apply`, `drift` and `verify` end to end: the command
//! line, in-process, against fake API servers (one per cluster of the
//! example), through a kubeconfig, as a user runs them.

mod common;
mod fake_kube;

use common::{example, run};
use fake_kube::{FakeKube, MigManager};
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

const AT: &str = "2026-11-22";
const CLUSTERS: [(&str, &str); 3] = [
    ("infer-l4", "gke_acme_us-central1_infer-l4"),
    ("prod-h100", "prod-h100-use1"),
    ("train-a100", "train-a100-use2"),
];

/// The example's three clusters as fakes, with their namespaces and GPU nodes.
struct World {
    fakes: BTreeMap<&'static str, FakeKube>,
    dir: tempfile::TempDir,
    kubeconfig: PathBuf,
    token: Option<String>,
}

fn h100_node(name: &str, pool: &str, mig: bool) -> (Value, Value) {
    let mut labels = json!({
        "acme.ai/gpu-pool": pool,
        "nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3",
        "nvidia.com/gpu.count": "8",
    });
    let alloc = if mig {
        labels["nvidia.com/mig.strategy"] = json!("mixed");
        labels["nvidia.com/mig.config.state"] = json!("success");
        json!({"cpu": "192", "nvidia.com/mig-1g.10gb": "16", "nvidia.com/mig-2g.20gb": "8", "nvidia.com/mig-3g.40gb": "8"})
    } else {
        json!({"cpu": "192", "nvidia.com/gpu": "8"})
    };
    let _ = name;
    (labels, alloc)
}

impl World {
    fn new(token: Option<&str>) -> World {
        let mut fakes = BTreeMap::new();
        for (c, _) in CLUSTERS {
            fakes.insert(c, FakeKube::start_with(token));
        }
        fakes["infer-l4"].namespaces(&["devex", "inference", "research", "gpu-operator"]);
        fakes["prod-h100"].namespaces(&["inference", "gpu-operator"]);
        fakes["train-a100"].namespaces(&["research", "training", "gpu-operator"]);
        let h100 = &fakes["prod-h100"];
        for i in 0..6 {
            let (l, a) = h100_node("", "h100-serve", false);
            h100.node(&format!("serve-{i}"), l, a);
        }
        for i in 0..2 {
            let name = format!("mig-{i}");
            let (l, a) = h100_node(&name, "h100-mig", true);
            h100.node(&name, l, a);
            // The GPU operator labels MIG-capable nodes nobody labelled.
            h100.update_as(
                "gpu-operator",
                "v1",
                "Node",
                "",
                &name,
                &json!({"metadata": {"labels": {"nvidia.com/mig.config": "all-disabled"}}}),
            )
            .unwrap();
        }
        let dir = tempfile::tempdir().unwrap();
        let kubeconfig = dir.path().join("kubeconfig");
        let mut w = World {
            fakes,
            dir,
            kubeconfig,
            token: token.map(str::to_string),
        };
        w.write_kubeconfig(None);
        w
    }

    /// Writes the kubeconfig; `down` points that cluster's context at a closed port.
    fn write_kubeconfig(&mut self, down: Option<&str>) {
        let closed = {
            let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
            l.local_addr().unwrap().port()
        };
        let urls: Vec<(String, String)> = CLUSTERS
            .iter()
            .map(|(c, ctx)| {
                let url = if Some(*c) == down {
                    format!("http://127.0.0.1:{closed}")
                } else {
                    self.fakes[c].url()
                };
                (ctx.to_string(), url)
            })
            .collect();
        let refs: Vec<(&str, &str)> = urls.iter().map(|(a, b)| (a.as_str(), b.as_str())).collect();
        FakeKube::kubeconfig(&self.kubeconfig, &refs, self.token.as_deref());
    }

    fn run(&self, args: &[&str]) -> common::Out {
        let kc = self.kubeconfig.display().to_string();
        let mut full: Vec<&str> = args.to_vec();
        if !args.contains(&"--at") {
            full.extend(["--at", AT]);
        }
        full.extend(["--revision", "test-rev"]);
        let home = self.dir.path().display().to_string();
        run(
            &full,
            &[("KUBECONFIG", kc.as_str()), ("HOME", home.as_str())],
        )
    }

    fn reset(&self) {
        for f in self.fakes.values() {
            f.reset_counts();
        }
    }

    fn writes(&self) -> usize {
        self.fakes.values().map(|f| f.counts().writes).sum()
    }
}

fn ex() -> String {
    example()
}

/// A copy of the example the test may edit.
fn copy_example(to: &Path) -> PathBuf {
    let dst = to.join("acme");
    for e in walkdir::WalkDir::new(example()).into_iter().flatten() {
        let rel = e.path().strip_prefix(example()).unwrap();
        let target = dst.join(rel);
        if e.file_type().is_dir() {
            std::fs::create_dir_all(&target).unwrap();
        } else {
            std::fs::copy(e.path(), &target).unwrap();
        }
    }
    dst
}

#[test]
fn plan_apply_then_nothing_to_do() {
    let w = World::new(None);
    let out = w.run(&["plan", &ex()]);
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    assert!(
        out.stdout
            .contains("cluster prod-h100 (context prod-h100-use1):"),
        "{}",
        out.stdout
    );
    assert!(out.stdout.contains("  + ClusterQueue inference\n"));
    assert!(
        out.stdout
            .contains("  + ResourceQuota inference/capops-gpu\n")
    );
    assert!(out.stdout.contains("  ~ Node mig-0 (pool h100-mig)\n"));
    assert!(out.stdout.contains(r#"metadata.labels["nvidia.com/mig.config"]: "all-disabled" → "capops-1g.10gb-x2-2g.20gb-x1-3g.40gb-x1""#), "{}", out.stdout);
    assert!(
        out.stdout.contains(
            r#"metadata.labels["nvidia.com/device-plugin.config"]: (none) → "capops-mixed-mig""#
        ),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout
            .contains("  Plan: 16 to add, 2 to change, 0 to delete, 0 conflicts.\n"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.contains(
            "Overall: Plan: 43 to add, 2 to change, 0 to delete, 0 conflicts. (3 clusters)"
        ),
        "{}",
        out.stdout
    );
    // A plan writes nothing.
    assert_eq!(w.writes(), 0);
    w.reset();
    let out = w.run(&["apply", &ex(), "--yes"]);
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    assert!(
        out.stdout
            .contains("cluster prod-h100: 18 applied, 0 skipped, 0 failed (18 writes)"),
        "{}",
        out.stdout
    );
    // 43 objects and 2 nodes, one write each.
    assert_eq!(w.writes(), 45);
    // What landed: quotas, queues, the mig-parted config with all-disabled, node labels.
    let h = &w.fakes["prod-h100"];
    let rq = h
        .get("v1", "ResourceQuota", "inference", "capops-gpu")
        .unwrap();
    assert_eq!(
        rq["metadata"]["annotations"]["capops.dev/repository"],
        "acme"
    );
    assert_eq!(
        rq["metadata"]["labels"]["app.kubernetes.io/managed-by"],
        "capops"
    );
    assert_eq!(rq["spec"]["hard"]["requests.nvidia.com/gpu"], "48");
    let cm = h
        .get(
            "v1",
            "ConfigMap",
            "gpu-operator",
            "capops-mig-parted-config",
        )
        .unwrap();
    assert!(
        cm["data"]["config.yaml"]
            .as_str()
            .unwrap()
            .contains("all-disabled:")
    );
    let node = h.get("v1", "Node", "", "mig-1").unwrap();
    assert_eq!(
        node["metadata"]["labels"]["nvidia.com/mig.config"],
        "capops-1g.10gb-x2-2g.20gb-x1-3g.40gb-x1"
    );
    // Apply order: priority classes before queues, queues before quotas, node labels last.
    let log = h.log();
    let pos = |needle: &str| {
        log.iter()
            .position(|l| l.starts_with("PATCH") && l.contains(needle) && !l.contains("dryRun"))
            .unwrap_or_else(|| panic!("{needle} in {log:#?}"))
    };
    assert!(pos("/priorityclasses/") < pos("/resourceflavors/"));
    assert!(pos("/resourceflavors/") < pos("/clusterqueues/"));
    assert!(pos("/clusterqueues/") < pos("/localqueues/"));
    assert!(pos("/localqueues/") < pos("/resourcequotas/"));
    assert!(pos("/resourcequotas/") < pos("/configmaps/"));
    assert!(pos("/configmaps/") < pos("/nodes/"));
    // Again: zero writes, and the plan needs one list per kind and no dry-run.
    w.reset();
    let out = w.run(&["apply", &ex(), "--yes"]);
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    assert!(
        out.stdout
            .contains("cluster prod-h100: no changes, 0 writes"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout
            .contains("Apply complete: 0 writes in 3 clusters.")
    );
    assert_eq!(w.writes(), 0);
    let c = w.fakes["prod-h100"].counts();
    assert_eq!((c.dry_runs, c.gets, c.writes), (0, 0, 0), "{c:?}");
    // 8 kinds, and the nodes of the one MIG pool.
    assert_eq!(c.lists, 9, "{:#?}", w.fakes["prod-h100"].log());
}

#[test]
fn a_changed_quota_is_one_update_and_a_removed_team_one_prune() {
    let w = World::new(None);
    assert_eq!(w.run(&["apply", &ex(), "--yes"]).code, 0);
    let tmp = tempfile::tempdir().unwrap();
    let repo = copy_example(tmp.path());
    let repo_s = repo.display().to_string();
    // Remove team devex (infer-l4 only) and its requests.
    std::fs::remove_file(repo.join("teams/devex.yaml")).unwrap();
    std::fs::remove_file(repo.join("requests/devex.yaml")).unwrap();
    let out = w.run(&["plan", &repo_s, "--cluster", "infer-l4"]);
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    assert!(
        out.stdout.contains("  - ResourceQuota devex/capops-gpu\n"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout
            .contains("Plan: 0 to add, 0 to change, 1 to delete, 0 conflicts."),
        "{}",
        out.stdout
    );
    w.reset();
    let out = w.run(&["apply", &repo_s, "--cluster", "infer-l4", "--yes"]);
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    assert_eq!(w.writes(), 1);
    assert!(
        w.fakes["infer-l4"]
            .get("v1", "ResourceQuota", "devex", "capops-gpu")
            .is_none()
    );
    // A later moment: a request has ended, so a quota shrinks: one update per object it touches.
    let out = w.run(&[
        "plan",
        &ex(),
        "--cluster",
        "prod-h100",
        "--at",
        "2027-06-01",
    ]);
    assert!(
        out.stdout.contains("~ ResourceQuota inference/capops-gpu"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout
            .contains(r#"spec.hard["requests.nvidia.com/gpu"]: "48" → "#),
        "{}",
        out.stdout
    );
}

#[test]
fn what_capops_does_not_own_is_a_conflict_never_pruned_and_blocks_nothing_else() {
    let w = World::new(None);
    let t = &w.fakes["train-a100"];
    // Made by hand, before capops: a quota in the training namespace.
    t.create_as(
        "kubectl-create",
        &json!({"apiVersion": "v1", "kind": "ResourceQuota",
                "metadata": {"name": "capops-gpu", "namespace": "training"},
                "spec": {"hard": {"requests.nvidia.com/gpu": "1"}}}),
    )
    .unwrap();
    // Tracked by Argo CD: the research LocalQueue.
    t.apply_as(
        "argocd-controller",
        &json!({"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "LocalQueue",
                "metadata": {"name": "gpu", "namespace": "research",
                             "annotations": {"argocd.argoproj.io/tracking-id": "gpu:kueue.x-k8s.io/LocalQueue:research/gpu"}},
                "spec": {"clusterQueue": "research"}}),
        false,
    )
    .unwrap();
    // Another capacity repository's quota with capops's label.
    t.apply_as(
        "capops",
        &json!({"apiVersion": "v1", "kind": "ResourceQuota",
                "metadata": {"name": "capops-gpu", "namespace": "research",
                             "labels": {"app.kubernetes.io/managed-by": "capops"},
                             "annotations": {"capops.dev/repository": "other-org"}},
                "spec": {"hard": {"requests.nvidia.com/gpu": "3"}}}),
        false,
    )
    .unwrap();
    let out = w.run(&["plan", &ex(), "--cluster", "train-a100"]);
    assert_eq!(out.code, 1, "{}{}", out.stdout, out.stderr);
    assert!(out.stdout.contains("  ! ResourceQuota training/capops-gpu: exists and was not created by capops (managed by kubectl-create)\n"), "{}", out.stdout);
    assert!(out.stdout.contains("  ! LocalQueue research/gpu: tracked by Argo CD (annotation argocd.argoproj.io/tracking-id); capops never touches it\n"));
    assert!(out.stdout.contains("  ! ResourceQuota research/capops-gpu: owned by the capacity repository `other-org`; capops never touches it\n"));
    assert!(
        out.stdout
            .contains("Plan: 16 to add, 0 to change, 0 to delete, 3 conflicts."),
        "{}",
        out.stdout
    );
    let out = w.run(&["apply", &ex(), "--cluster", "train-a100", "--yes"]);
    assert_eq!(out.code, 1, "{}{}", out.stdout, out.stderr);
    assert!(
        out.stdout
            .contains("16 applied, 3 skipped, 0 failed (16 writes)"),
        "{}",
        out.stdout
    );
    assert_eq!(
        t.get("v1", "ResourceQuota", "training", "capops-gpu")
            .unwrap()["spec"]["hard"]["requests.nvidia.com/gpu"],
        "1"
    );
    // Wanting nothing of them: none is pruned (the other repository's carries capops's label).
    let tmp = tempfile::tempdir().unwrap();
    let repo = copy_example(tmp.path());
    std::fs::remove_file(repo.join("teams/research.yaml")).unwrap();
    std::fs::remove_file(repo.join("requests/research.yaml")).unwrap();
    let out = w.run(&[
        "plan",
        &repo.display().to_string(),
        "--cluster",
        "train-a100",
    ]);
    assert!(
        !out.stdout.contains("- ResourceQuota research/capops-gpu"),
        "{}",
        out.stdout
    );
    assert!(
        !out.stdout.contains("- LocalQueue research/gpu"),
        "{}",
        out.stdout
    );
    // --force-conflicts takes the hand-made quota over, never Argo's or the other repository's.
    let out = w.run(&[
        "apply",
        &ex(),
        "--cluster",
        "train-a100",
        "--yes",
        "--force-conflicts",
    ]);
    assert_eq!(out.code, 1, "{}{}", out.stdout, out.stderr);
    let rq = t
        .get("v1", "ResourceQuota", "training", "capops-gpu")
        .unwrap();
    assert_eq!(
        rq["metadata"]["annotations"]["capops.dev/repository"],
        "acme"
    );
    assert_eq!(
        t.get("v1", "ResourceQuota", "research", "capops-gpu")
            .unwrap()["metadata"]["annotations"]["capops.dev/repository"],
        "other-org"
    );
}

#[test]
fn an_unreachable_cluster_does_not_hide_the_others() {
    let mut w = World::new(None);
    w.write_kubeconfig(Some("train-a100"));
    let out = w.run(&["plan", &ex()]);
    assert_eq!(out.code, 3, "{}{}", out.stdout, out.stderr);
    assert!(
        out.stdout
            .contains("cluster infer-l4 (context gke_acme_us-central1_infer-l4):\n  + "),
        "{}",
        out.stdout
    );
    assert!(out.stdout.contains("cluster train-a100 (context train-a100-use2):\n  error[cluster-unreachable]: cannot reach http://127.0.0.1:"), "{}", out.stdout);
    assert!(
        out.stderr
            .contains("error: could not sync: train-a100 (cluster-unreachable)"),
        "{}",
        out.stderr
    );
    let out = w.run(&["apply", &ex(), "--yes", "--format", "json"]);
    assert_eq!(out.code, 3);
    let v: Value = serde_json::from_str(&out.stdout).unwrap();
    let clusters = v["clusters"].as_array().unwrap();
    assert_eq!(clusters[2]["error"]["code"], "cluster-unreachable");
    assert_eq!(clusters[1]["writes"], 18);
    assert!(
        w.fakes["infer-l4"]
            .get("v1", "ResourceQuota", "devex", "capops-gpu")
            .is_some()
    );
}

#[test]
fn missing_namespace_kueue_and_context_are_clear_diagnostics() {
    let w = World::new(None);
    w.fakes["prod-h100"].remove_kueue();
    w.fakes["train-a100"].delete("v1", "Namespace", "", "training");
    let out = w.run(&["plan", &ex()]);
    assert_eq!(out.code, 3, "{}{}", out.stdout, out.stderr);
    assert!(out.stdout.contains("error[kueue-crd-missing]: the cluster does not serve kueue.x-k8s.io/v1beta2 WorkloadPriorityClass, ResourceFlavor, Cohort, ClusterQueue, LocalQueue"), "{}", out.stdout);
    assert!(out.stdout.contains("help: install Kueue 0.15 or newer"));
    assert!(out.stdout.contains("x ResourceQuota training/capops-gpu: error[namespace-missing]: ResourceQuota training/capops-gpu: namespaces \"training\" not found"), "{}", out.stdout);
    assert!(out.stdout.contains("help: create the namespace `training`"));
    assert!(!out.stdout.contains("panicked") && !out.stderr.contains("panicked"));
    // A context the kubeconfig lacks.
    let kc = w.dir.path().join("other");
    FakeKube::kubeconfig(&kc, &[("elsewhere", &w.fakes["infer-l4"].url())], None);
    let kc = kc.display().to_string();
    let out = run(
        &[
            "plan",
            &ex(),
            "--cluster",
            "infer-l4",
            "--kubeconfig",
            &kc,
            "--at",
            AT,
        ],
        &[],
    );
    assert_eq!(out.code, 3, "{}{}", out.stdout, out.stderr);
    assert!(out.stdout.contains("error[kube-context-missing]: the kubeconfig has no context `gke_acme_us-central1_infer-l4`"), "{}", out.stdout);
    // A kubeconfig that is not one: named, never quoted (it may hold a token).
    let garbage = w.dir.path().join("garbage");
    std::fs::write(&garbage, "users: [{token: s3cr3t-in-a-broken-file\n").unwrap();
    let g = garbage.display().to_string();
    let out = run(&["plan", &ex(), "--kubeconfig", &g, "--at", AT], &[]);
    assert_eq!(out.code, 2, "{}{}", out.stdout, out.stderr);
    assert!(out.stderr.contains(&format!("error[kubeconfig-invalid]: cannot read the kubeconfig {g}: it does not read as YAML: yaml-syntax at line 1")), "{}", out.stderr);
    assert!(!out.stderr.contains("s3cr3t"));
    // A FIFO would block the read forever: refused before it is opened.
    let fifo = w.dir.path().join("fifo");
    assert!(
        std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success()
    );
    let f = fifo.display().to_string();
    let out = run(&["plan", &ex(), "--kubeconfig", &f, "--at", AT], &[]);
    assert_eq!(out.code, 2, "{}{}", out.stdout, out.stderr);
    assert!(
        out.stderr.contains("it is not a regular file"),
        "{}",
        out.stderr
    );
    // No kubeconfig at all.
    let out = run(&["plan", &ex(), "--at", AT], &[]);
    assert_eq!(out.code, 2);
    assert!(
        out.stderr
            .starts_with("error[kubeconfig-invalid]: no kubeconfig"),
        "{}",
        out.stderr
    );
}

#[test]
fn credentials_never_appear_in_output() {
    let token = "capops-test-token-9f8e7d6c5b4a";
    let w = World::new(Some(token));
    let plan_file = w.dir.path().join("plan.json");
    let pf = plan_file.display().to_string();
    let mut seen = String::new();
    for args in [
        vec!["plan", &ex(), "--out", &pf],
        vec!["plan", &ex(), "--format", "json"],
        vec!["apply", &ex(), "--yes"],
        vec!["drift", &ex(), "--format", "markdown"],
        vec!["verify", &ex(), "--format", "json"],
    ] {
        let out = w.run(&args);
        assert!(
            out.code == 0 || out.code == 1,
            "{args:?}: {}{}",
            out.stdout,
            out.stderr
        );
        seen.push_str(&out.stdout);
        seen.push_str(&out.stderr);
    }
    seen.push_str(&std::fs::read_to_string(&plan_file).unwrap());
    // A wrong token: the server says no, and the message carries no token either.
    let mut bad = World::new(Some("the-right-one"));
    bad.token = Some(token.into());
    bad.write_kubeconfig(None);
    let out = bad.run(&["plan", &ex()]);
    assert_eq!(out.code, 3);
    assert!(out.stdout.contains("error[forbidden]"), "{}", out.stdout);
    seen.push_str(&out.stdout);
    seen.push_str(&out.stderr);
    assert!(!seen.contains(token), "the token leaked");
    assert!(!seen.contains("9f8e7d6c5b4a"));
}

/// The World's kubeconfig with its user's token replaced by a credential
/// plugin running `body` (a shell script), never interactive.
fn with_plugin(w: &World, body: &str) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let script = w.dir.path().join("plugin.sh");
    std::fs::write(&script, format!("#!/bin/sh\n{body}\n")).unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    let token = w.token.as_deref().unwrap();
    let text = std::fs::read_to_string(&w.kubeconfig).unwrap();
    let exec = format!(
        "    exec:\n      apiVersion: client.authentication.k8s.io/v1\n      command: {}\n      args: [--client-secret=PLUGIN-ARG-SECRET]\n      interactiveMode: Never\n",
        script.display()
    );
    let replaced = text.replace(&format!("    token: \"{token}\"\n"), &exec);
    assert_ne!(replaced, text);
    std::fs::write(&w.kubeconfig, replaced).unwrap();
    script
}

#[test]
fn a_credential_plugin_runs_once_for_every_cluster_and_its_token_is_never_shown() {
    let token = "plugin-issued-token-5e6f7a8b";
    let w = World::new(Some(token));
    let runs = w.dir.path().join("runs");
    with_plugin(
        &w,
        &format!(
            "echo run >> {}\necho '{{\"apiVersion\":\"client.authentication.k8s.io/v1\",\"kind\":\"ExecCredential\",\"status\":{{\"token\":\"{token}\",\"expirationTimestamp\":\"2999-01-01T00:00:00Z\"}}}}'",
            runs.display()
        ),
    );
    let out = w.run(&["plan", &ex(), "--format", "json"]);
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    let plan: Value = serde_json::from_str(&out.stdout).unwrap();
    // Every cluster was read with the plugin's token (the fakes demand it).
    assert!(
        plan["summary"]["add"].as_u64().unwrap() > 0,
        "{}",
        out.stdout
    );
    assert_eq!(plan["clusters"].as_array().unwrap().len(), 3);
    assert!(
        plan["clusters"]
            .as_array()
            .unwrap()
            .iter()
            .all(|c| c["error"].is_null()),
        "{}",
        out.stdout
    );
    // Three clusters, one user: one login.
    assert_eq!(std::fs::read_to_string(&runs).unwrap().lines().count(), 1);
    assert!(!out.stdout.contains(token) && !out.stderr.contains(token));
}

#[test]
fn a_token_no_http_header_can_carry_is_refused_not_a_crash() {
    // From a plugin: that cluster's user fails (exit 3), never a panic.
    let w = World::new(Some("tok"));
    with_plugin(
        &w,
        r#"printf '%s' '{"status":{"token":"SECRET-A\r\nX-Evil: 1"}}'"#,
    );
    let out = w.run(&["plan", &ex()]);
    assert_eq!(out.code, 3, "{}{}", out.stdout, out.stderr);
    assert!(out.stdout.contains("line break"), "{}", out.stdout);
    assert!(!out.stdout.contains("SECRET-A") && !out.stderr.contains("SECRET-A"));
    // In the kubeconfig: the file is refused (exit 2), the token not shown.
    let mut w = World::new(None);
    w.token = Some("SECRET-B\\r\\nX-Evil: 1".into());
    w.write_kubeconfig(None);
    let out = w.run(&["plan", &ex()]);
    assert_eq!(out.code, 2, "{}{}", out.stdout, out.stderr);
    assert!(
        out.stderr.contains("kubeconfig-invalid") && out.stderr.contains("line break"),
        "{}",
        out.stderr
    );
    assert!(!out.stderr.contains("SECRET-B"), "{}", out.stderr);
}

#[test]
fn a_credential_plugin_that_never_answers_is_stopped() {
    let w = World::new(Some("the-token-it-never-gives"));
    with_plugin(&w, "echo PLUGIN-STDERR-SECRET >&2\nsleep 600");
    let kc = w.kubeconfig.display().to_string();
    let home = w.dir.path().display().to_string();
    let start = std::time::Instant::now();
    let out = run(
        &["plan", &ex(), "--at", AT, "--revision", "r"],
        &[
            ("KUBECONFIG", kc.as_str()),
            ("HOME", home.as_str()),
            ("CAPOPS_CREDENTIAL_PLUGIN_TIMEOUT", "1"),
        ],
    );
    // Not for ever: each cluster is reported, none planned (exit 3).
    assert!(start.elapsed() < std::time::Duration::from_secs(60));
    assert_eq!(out.code, 3, "{}{}", out.stdout, out.stderr);
    assert!(
        out.stdout.contains("gave no credential within 1 s"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.contains("CAPOPS_CREDENTIAL_PLUGIN_TIMEOUT"),
        "{}",
        out.stdout
    );
    let all = format!("{}{}", out.stdout, out.stderr);
    assert!(
        !all.contains("PLUGIN-STDERR-SECRET") && !all.contains("PLUGIN-ARG-SECRET"),
        "{all}"
    );
    // A timeout that is not a number of seconds is refused before anything runs.
    let out = run(
        &["plan", &ex(), "--at", AT],
        &[
            ("KUBECONFIG", kc.as_str()),
            ("CAPOPS_CREDENTIAL_PLUGIN_TIMEOUT", "5m"),
        ],
    );
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(
        out.stderr.contains("not a number of seconds"),
        "{}",
        out.stderr
    );
}

#[test]
fn a_wait_interval_that_is_not_a_sane_number_of_seconds_is_refused() {
    let w = World::new(None);
    for bad in ["nan", "0", "-1", "inf", "1e-300", "5m"] {
        let flag = format!("--wait-interval={bad}");
        let out = w.run(&["apply", &ex(), "--yes", "--wait", &flag]);
        assert_eq!(out.code, 2, "{bad}: {}{}", out.stdout, out.stderr);
        assert!(out.stderr.contains("--wait-interval"), "{}", out.stderr);
    }
    // A timeout past what the clock can add panicked after the writes.
    for bad in ["18446744073709551615", "9223372036854775807", "-1", "86401"] {
        let flag = format!("--wait-timeout={bad}");
        let out = w.run(&["apply", &ex(), "--yes", "--wait", &flag]);
        assert_eq!(out.code, 2, "{bad}: {}{}", out.stdout, out.stderr);
        assert!(out.stderr.contains("--wait-timeout"), "{}", out.stderr);
    }
}

#[test]
fn a_removed_gcp_auth_provider_is_refused_and_its_command_never_run() {
    // client-go dropped `auth-provider: gcp` in 1.26; kube would still run
    // its `cmd-path`, with no deadline. capops refuses it as kubectl does.
    use std::os::unix::fs::PermissionsExt;
    let w = World::new(Some("tok"));
    let ran = w.dir.path().join("ran");
    let script = w.dir.path().join("gcloud.sh");
    std::fs::write(
        &script,
        format!("#!/bin/sh\ntouch {}\nsleep 600\n", ran.display()),
    )
    .unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    let text = std::fs::read_to_string(&w.kubeconfig).unwrap();
    let provider = format!(
        "    auth-provider:\n      name: gcp\n      config:\n        cmd-path: {}\n        cmd-args: config config-helper --format=json\n        token-key: '{{.credential.access_token}}'\n",
        script.display()
    );
    let replaced = text.replace("    token: \"tok\"\n", &provider);
    assert_ne!(replaced, text);
    std::fs::write(&w.kubeconfig, replaced).unwrap();
    let out = w.run(&["plan", &ex()]);
    assert_eq!(out.code, 3, "{}{}", out.stdout, out.stderr);
    assert!(
        out.stdout.contains("auth-provider: gcp") && out.stdout.contains("1.26"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.contains("gke-gcloud-auth-plugin"),
        "{}",
        out.stdout
    );
    assert!(!ran.exists(), "the provider's command ran");
}

#[test]
fn a_saved_plan_applies_only_while_the_clusters_are_unchanged() {
    let w = World::new(None);
    assert_eq!(w.run(&["apply", &ex(), "--yes"]).code, 0);
    let h = &w.fakes["prod-h100"];
    // Someone edits the quota by hand; the plan restores it.
    h.update_as(
        "kubectl-edit",
        "v1",
        "ResourceQuota",
        "inference",
        "capops-gpu",
        &json!({"spec": {"hard": {"requests.nvidia.com/gpu": "100"}}}),
    )
    .unwrap();
    let plan = w.dir.path().join("plan.json");
    let p = plan.display().to_string();
    let out = w.run(&["plan", &ex(), "--out", &p]);
    assert_eq!(out.code, 1, "{}{}", out.stdout, out.stderr);
    let saved: Value = serde_json::from_str(&std::fs::read_to_string(&plan).unwrap()).unwrap();
    let change = saved["clusters"][1]["changes"][0].clone();
    assert_eq!(change["action"], "conflict");
    assert_eq!(change["conflict"]["fields"][0]["manager"], "kubectl-edit");
    assert!(
        saved["clusters"][1]["observed"]["ResourceQuota/inference/capops-gpu"]["resourceVersion"]
            .is_string()
    );
    // A status update does not make it stale; a change does.
    w.reset();
    h.update_as(
        "kubectl-label",
        "v1",
        "ResourceQuota",
        "inference",
        "capops-gpu",
        &json!({"metadata": {"labels": {"team": "inference"}}}),
    )
    .unwrap();
    let out = w.run(&["apply", &ex(), "--plan", &p, "--yes", "--force-conflicts"]);
    assert_eq!(out.code, 1, "{}{}", out.stdout, out.stderr);
    assert!(out.stderr.contains("error[plan-stale]"), "{}", out.stderr);
    assert!(
        out.stderr
            .contains("prod-h100: ResourceQuota/inference/capops-gpu changed since the plan"),
        "{}",
        out.stderr
    );
    assert_eq!(w.writes(), 0, "apply wrote nothing");
    // Planned again, applied from the file with --force-conflicts.
    let out = w.run(&["plan", &ex(), "--out", &p]);
    assert_eq!(out.code, 1);
    let out = w.run(&["apply", &ex(), "--plan", &p, "--yes", "--force-conflicts"]);
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    assert_eq!(
        h.get("v1", "ResourceQuota", "inference", "capops-gpu")
            .unwrap()["spec"]["hard"]["requests.nvidia.com/gpu"],
        "48"
    );
    // A plan edited by hand: a cluster listed twice, a time that is not one.
    let out = w.run(&["plan", &ex(), "--out", &p]);
    assert!(out.code <= 1, "{}", out.stderr);
    w.reset();
    let mut v: Value = serde_json::from_str(&std::fs::read_to_string(&plan).unwrap()).unwrap();
    let first = v["clusters"][0].clone();
    v["clusters"].as_array_mut().unwrap().push(first);
    std::fs::write(&plan, v.to_string()).unwrap();
    let out = w.run(&["apply", &ex(), "--plan", &p, "--yes"]);
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(out.stderr.contains("twice"), "{}", out.stderr);
    v["clusters"].as_array_mut().unwrap().pop();
    v["at"] = "hello".into();
    std::fs::write(&plan, v.to_string()).unwrap();
    let out = w.run(&["apply", &ex(), "--plan", &p, "--yes"]);
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(out.stderr.contains("is not a time"), "{}", out.stderr);
    assert_eq!(w.writes(), 0, "nothing applied from either");
    // Not a plan file.
    std::fs::write(&plan, "{}").unwrap();
    let out = w.run(&["apply", &ex(), "--plan", &p, "--yes"]);
    assert_eq!(out.code, 2);
    assert!(
        out.stderr.contains("is not a capops plan"),
        "{}",
        out.stderr
    );
}

#[test]
fn drift_is_exit_1_with_json_and_an_issue_body() {
    let mut w = World::new(None);
    assert_eq!(w.run(&["apply", &ex(), "--yes"]).code, 0);
    let out = w.run(&["drift", &ex()]);
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    // A ClusterQueue edited with force by someone else, and an object deleted by hand.
    let t = &w.fakes["train-a100"];
    t.apply_as(
        "kubectl",
        &json!({"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ClusterQueue",
        "metadata": {"name": "training"}, "spec": {"cohortName": "rogue"}}),
        true,
    )
    .unwrap();
    t.delete("kueue.x-k8s.io/v1beta2", "LocalQueue", "research", "gpu");
    let out = w.run(&["drift", &ex(), "--format", "json"]);
    assert_eq!(out.code, 1, "{}{}", out.stdout, out.stderr);
    let v: Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(v["drifted"], true);
    let c = &v["plan"]["clusters"][2];
    assert_eq!(c["summary"]["add"], 1);
    assert_eq!(c["summary"]["conflict"], 1);
    let out = w.run(&["drift", &ex(), "--format", "markdown"]);
    assert_eq!(out.code, 1);
    assert!(
        out.stdout.starts_with("## capops drift: `acme`\n"),
        "{}",
        out.stdout
    );
    assert!(out.stdout.contains("### `train-a100`"));
    assert!(
        out.stdout
            .contains("| + | LocalQueue `research/gpu` | missing from the cluster |"),
        "{}",
        out.stdout
    );
    assert!(out.stdout.contains("| ! | ClusterQueue `training` | fields owned by another manager: .spec.cohortName (owned by kubectl) |"), "{}", out.stdout);
    assert!(!out.stdout.contains("### `infer-l4`"));
    assert!(
        out.stdout
            .contains("Checked 3 clusters against revision `test-rev`")
            && out.stdout.contains(": 1 differs.\n"),
        "{}",
        out.stdout
    );
    // A cluster that cannot be reached is not counted as one that differs.
    w.write_kubeconfig(Some("infer-l4"));
    let out = w.run(&["drift", &ex(), "--format", "markdown"]);
    assert!(
        out.stdout
            .contains(": 1 differs, 1 could not be checked.\n"),
        "{}",
        out.stdout
    );
}

#[test]
fn mig_rollout_waits_for_the_mig_manager_and_verify_checks_the_nodes() {
    let w = World::new(None);
    let h = &w.fakes["prod-h100"];
    h.mig_manager(Some(MigManager {
        result: "success".into(),
        delay_ms: 30,
    }));
    let out = w.run(&[
        "apply",
        &ex(),
        "--cluster",
        "prod-h100",
        "--yes",
        "--wait",
        "--wait-interval",
        "0.1",
        "--wait-timeout",
        "10",
    ]);
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    assert!(
        out.stdout.contains(
            "  MIG mig-0 (pool h100-mig) → capops-1g.10gb-x2-2g.20gb-x1-3g.40gb-x1: success\n"
        ),
        "{}",
        out.stdout
    );
    assert!(out.stdout.contains("  MIG mig-1 (pool h100-mig)"));
    let out = w.run(&["verify", &ex(), "--cluster", "prod-h100"]);
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    assert!(
        out.stdout
            .contains("cluster prod-h100: every pool's nodes match")
    );
    // A node with other GPUs, one missing, and a failed MIG change.
    h.update_as(
        "gfd",
        "v1",
        "Node",
        "",
        "serve-5",
        &json!({"metadata": {"labels": {"nvidia.com/gpu.product": "NVIDIA-A100-SXM4-80GB"}}}),
    )
    .unwrap();
    h.delete("v1", "Node", "", "serve-4");
    h.update_as(
        "nvidia-mig-manager",
        "v1",
        "Node",
        "",
        "mig-1",
        &json!({"metadata": {"labels": {"nvidia.com/mig.config.state": "failed"}}}),
    )
    .unwrap();
    let out = w.run(&[
        "verify",
        &ex(),
        "--cluster",
        "prod-h100",
        "--format",
        "json",
    ]);
    assert_eq!(out.code, 1, "{}{}", out.stdout, out.stderr);
    let v: Value = serde_json::from_str(&out.stdout).unwrap();
    let checks: Vec<(String, String)> = v["clusters"][0]["mismatches"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            (
                m["check"].as_str().unwrap().to_string(),
                m["node"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect();
    assert_eq!(
        checks,
        vec![
            ("node-count".to_string(), "".to_string()),
            ("gpu-model".to_string(), "serve-5".to_string()),
            ("mig-state".to_string(), "mig-1".to_string()),
        ]
    );
    // A MIG manager that fails: --wait reports it and exits 3.
    let w2 = World::new(None);
    w2.fakes["prod-h100"].mig_manager(Some(MigManager {
        result: "failed".into(),
        delay_ms: 10,
    }));
    let out = w2.run(&[
        "apply",
        &ex(),
        "--cluster",
        "prod-h100",
        "--yes",
        "--wait",
        "--wait-interval",
        "0.1",
        "--wait-timeout",
        "10",
    ]);
    assert_eq!(out.code, 3, "{}{}", out.stdout, out.stderr);
    assert!(out.stdout.contains(": failed\n"), "{}", out.stdout);
    assert!(
        out.stderr.contains("mig-0 (mig-rollout-failed)"),
        "{}",
        out.stderr
    );
    // Nobody answers: timeout.
    let w3 = World::new(None);
    let out = w3.run(&[
        "apply",
        &ex(),
        "--cluster",
        "prod-h100",
        "--yes",
        "--wait",
        "--wait-interval",
        "0.1",
        "--wait-timeout",
        "0",
    ]);
    assert_eq!(out.code, 3, "{}{}", out.stdout, out.stderr);
    assert!(
        out.stderr.contains("(mig-rollout-timeout)"),
        "{}",
        out.stderr
    );
}

#[test]
fn scripts_must_say_yes_and_transient_errors_are_retried() {
    let w = World::new(None);
    let out = w.run(&["apply", &ex(), "--cluster", "infer-l4"]);
    assert_eq!(out.code, 2, "{}{}", out.stdout, out.stderr);
    assert!(out.stderr.contains("help: pass --yes"), "{}", out.stderr);
    assert_eq!(w.writes(), 0);
    // Two 503s in a row are retried; the plan goes through.
    w.fakes["infer-l4"].fail_next(&[503, 503]);
    let out = w.run(&["plan", &ex(), "--cluster", "infer-l4"]);
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    assert!(out.stdout.contains("Plan: 8 to add"), "{}", out.stdout);
}

#[test]
fn two_clusters_on_one_api_server_are_refused_before_anything_is_sent() {
    let mut w = World::new(None);
    // infer-l4's context reaches prod-h100's API server: applying either
    // would prune the other's quotas and priority classes.
    let prod = w.fakes["prod-h100"].url();
    let train = w.fakes["train-a100"].url();
    FakeKube::kubeconfig(
        &w.kubeconfig,
        &[
            ("prod-h100-use1", prod.as_str()),
            ("train-a100-use2", train.as_str()),
            ("gke_acme_us-central1_infer-l4", &format!("{prod}/")),
        ],
        None,
    );
    w.reset();
    let e = ex();
    for args in [
        vec!["plan", &e],
        vec!["apply", &e, "--yes"],
        vec!["apply", &e, "--yes", "--cluster", "infer-l4"],
        vec!["drift", &e],
    ] {
        let out = w.run(&args);
        assert_eq!(out.code, 2, "{args:?}: {}{}", out.stdout, out.stderr);
        assert!(
            out.stderr.contains("error[kube-context-shared]: the clusters `infer-l4` (context `gke_acme_us-central1_infer-l4`), `prod-h100` (context `prod-h100-use1`) all reach the API server"),
            "{}",
            out.stderr
        );
        assert!(out.stderr.contains("nothing was sent to any cluster"));
    }
    // Not even read: nothing was listed, dry-run or written anywhere.
    for f in w.fakes.values() {
        let c = f.counts();
        assert_eq!((c.lists, c.gets, c.dry_runs, c.writes), (0, 0, 0, 0));
    }
    // train-a100 shares nothing, so it alone may still be synced.
    let out = w.run(&["plan", &ex(), "--cluster", "train-a100"]);
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);

    // Two Clusters without kubeContext are both the current context.
    let repo = copy_example(w.dir.path());
    for c in ["infer-l4", "train-a100"] {
        let f = repo.join(format!("clusters/{c}.yaml"));
        let text = std::fs::read_to_string(&f).unwrap();
        let kept: Vec<&str> = text
            .lines()
            .filter(|l| !l.contains("kubeContext"))
            .collect();
        std::fs::write(&f, kept.join("\n") + "\n").unwrap();
    }
    w.write_kubeconfig(None);
    let out = w.run(&["plan", repo.to_str().unwrap(), "--cluster", "infer-l4"]);
    assert_eq!(out.code, 2, "{}{}", out.stdout, out.stderr);
    assert!(
        out.stderr.contains("`infer-l4` (no kubeContext: the current context), `train-a100` (no kubeContext: the current context)"),
        "{}",
        out.stderr
    );
}

#[test]
fn prunes_wait_until_every_create_and_update_of_the_cluster_lands() {
    let w = World::new(None);
    assert_eq!(w.run(&["apply", &ex(), "--yes"]).code, 0);
    // Research moves to a namespace on infer-l4 that does not exist yet.
    let tmp = tempfile::tempdir().unwrap();
    let repo = copy_example(tmp.path());
    let repo_s = repo.display().to_string();
    let team = repo.join("teams/research.yaml");
    let text = std::fs::read_to_string(&team).unwrap();
    let moved = text.replacen(
        "    infer-l4:\n      namespace: research\n",
        "    infer-l4:\n      namespace: research-ml\n",
        1,
    );
    assert_ne!(moved, text);
    std::fs::write(&team, moved).unwrap();
    let out = w.run(&["apply", &repo_s, "--cluster", "infer-l4", "--yes"]);
    assert_ne!(out.code, 0, "{}{}", out.stdout, out.stderr);
    assert!(
        out.stdout.contains("namespace-missing"),
        "{}{}",
        out.stdout,
        out.stderr
    );
    assert!(
        out.stdout.contains("prune-held-back"),
        "{}{}",
        out.stdout,
        out.stderr
    );
    // The old quota stays: research is never left without one.
    let old = w.fakes["infer-l4"].get("v1", "ResourceQuota", "research", "capops-gpu");
    assert!(old.is_some());
    // Once the namespace exists, the same apply moves the quota.
    w.fakes["infer-l4"].namespaces(&["research-ml"]);
    let out = w.run(&["apply", &repo_s, "--cluster", "infer-l4", "--yes"]);
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    assert!(
        w.fakes["infer-l4"]
            .get("v1", "ResourceQuota", "research-ml", "capops-gpu")
            .is_some()
    );
    assert!(
        w.fakes["infer-l4"]
            .get("v1", "ResourceQuota", "research", "capops-gpu")
            .is_none()
    );
}

#[test]
fn a_context_that_reaches_another_clusters_server_touches_none_of_its_objects() {
    let w = World::new(None);
    assert_eq!(w.run(&["apply", &ex(), "--yes"]).code, 0);
    let before = w.fakes["train-a100"].all("kueue.x-k8s.io/v1beta2", "ClusterQueue");
    assert_eq!(before.len(), 2);
    // A stale kubeconfig: infer-l4's and train-a100's contexts swapped.
    let (infer, train, prod) = (
        w.fakes["infer-l4"].url(),
        w.fakes["train-a100"].url(),
        w.fakes["prod-h100"].url(),
    );
    FakeKube::kubeconfig(
        &w.kubeconfig,
        &[
            ("prod-h100-use1", prod.as_str()),
            ("train-a100-use2", infer.as_str()),
            ("gke_acme_us-central1_infer-l4", train.as_str()),
        ],
        None,
    );
    let out = w.run(&["plan", &ex(), "--cluster", "infer-l4"]);
    assert!(
        out.stdout
            .contains("applied for this repository's Cluster `train-a100`"),
        "{}{}",
        out.stdout,
        out.stderr
    );
    assert!(
        !out.stdout.contains("  - "),
        "nothing pruned: {}",
        out.stdout
    );
    w.reset();
    let out = w.run(&["apply", &ex(), "--cluster", "infer-l4", "--yes"]);
    assert_ne!(out.code, 0, "{}{}", out.stdout, out.stderr);
    // train-a100's queues and quotas are all still there, unchanged.
    assert_eq!(
        w.fakes["train-a100"].all("kueue.x-k8s.io/v1beta2", "ClusterQueue"),
        before
    );
    let quota = w.fakes["train-a100"]
        .get("v1", "ResourceQuota", "research", "capops-gpu")
        .unwrap();
    assert_eq!(quota["spec"]["hard"]["requests.nvidia.com/gpu"], "104");
}

#[test]
fn a_plan_file_edited_to_delete_or_write_what_plan_would_not_is_refused() {
    let w = World::new(None);
    assert_eq!(w.run(&["apply", &ex(), "--yes"]).code, 0);
    let h = &w.fakes["prod-h100"];
    h.create_as(
        "kubeadm",
        &json!({"apiVersion": "v1", "kind": "ConfigMap",
                "metadata": {"name": "coredns", "namespace": "gpu-operator"},
                "data": {"Corefile": "."}}),
    )
    .unwrap();
    let plan = w.dir.path().join("plan.json");
    let p = plan.display().to_string();
    assert_eq!(w.run(&["plan", &ex(), "--out", &p]).code, 0);
    let saved: Value = serde_json::from_str(&std::fs::read_to_string(&plan).unwrap()).unwrap();
    let i = saved["clusters"]
        .as_array()
        .unwrap()
        .iter()
        .position(|c| c["cluster"] == "prod-h100")
        .unwrap();
    for (what, change) in [
        (
            "delete",
            json!({"action": "delete", "order": 5, "apiVersion": "v1", "kind": "ConfigMap",
                   "namespace": "gpu-operator", "name": "coredns"}),
        ),
        (
            "write",
            json!({"action": "create", "order": 4, "apiVersion": "v1", "kind": "ResourceQuota",
                   "namespace": "inference", "name": "pods-zero",
                   "object": {"apiVersion": "v1", "kind": "ResourceQuota",
                              "metadata": {"name": "pods-zero", "namespace": "inference"},
                              "spec": {"hard": {"pods": "0"}}}}),
        ),
    ] {
        let mut edited = saved.clone();
        edited["clusters"][i]["changes"]
            .as_array_mut()
            .unwrap()
            .push(change);
        std::fs::write(&plan, serde_json::to_string(&edited).unwrap()).unwrap();
        w.reset();
        let out = w.run(&["apply", &ex(), "--plan", &p, "--yes"]);
        assert_ne!(out.code, 0, "{what}: {}{}", out.stdout, out.stderr);
        assert!(
            out.stderr.contains("error[plan-stale]")
                && out.stderr.contains("the plan")
                && (out.stderr.contains("coredns") || out.stderr.contains("pods-zero")),
            "{what}: {}",
            out.stderr
        );
        assert_eq!(w.writes(), 0, "{what}");
    }
    // What the checkout renders, changed: a quota's value, or a delete of
    // an object it still renders.
    let quota = h
        .get("v1", "ResourceQuota", "inference", "capops-gpu")
        .unwrap();
    let mut bigger = quota.clone();
    bigger["spec"]["hard"]["requests.nvidia.com/gpu"] = json!("100000");
    for (change, says) in [
        (
            json!({"action": "update", "order": 4, "apiVersion": "v1", "kind": "ResourceQuota",
                   "namespace": "inference", "name": "capops-gpu", "object": bigger}),
            "the plan writes ResourceQuota/inference/capops-gpu other than the checkout renders it",
        ),
        (
            json!({"action": "delete", "order": 4, "apiVersion": "v1", "kind": "ResourceQuota",
                   "namespace": "inference", "name": "capops-gpu",
                   "uid": quota["metadata"]["uid"], "resourceVersion": quota["metadata"]["resourceVersion"]}),
            "the plan deletes ResourceQuota/inference/capops-gpu, which the checkout renders",
        ),
    ] {
        let mut edited = saved.clone();
        edited["clusters"][i]["changes"] = json!([change]);
        std::fs::write(&plan, serde_json::to_string(&edited).unwrap()).unwrap();
        w.reset();
        let out = w.run(&["apply", &ex(), "--plan", &p, "--yes"]);
        assert!(out.stderr.contains(says), "{says}: {}", out.stderr);
        assert_eq!(w.writes(), 0);
    }
    assert_eq!(
        h.get("v1", "ResourceQuota", "inference", "capops-gpu")
            .unwrap()["spec"],
        quota["spec"]
    );
    // A label capops never sets, on a node.
    let mut edited = saved.clone();
    edited["clusters"][i]["nodes"] = json!([{"node": "serve-0", "pool": "h100-serve",
        "labels": {"team": {"before": null, "after": "x"}}}]);
    std::fs::write(&plan, serde_json::to_string(&edited).unwrap()).unwrap();
    w.reset();
    let out = w.run(&["apply", &ex(), "--plan", &p, "--yes"]);
    assert!(
        out.stderr.contains(
            "the plan sets team=x on node serve-0, which pool `h100-serve` does not ask for"
        ),
        "{}",
        out.stderr
    );
    assert_eq!(w.writes(), 0);
    assert!(
        h.get("v1", "ConfigMap", "gpu-operator", "coredns")
            .is_some()
    );
    assert!(
        h.get("v1", "ResourceQuota", "inference", "pods-zero")
            .is_none()
    );
}

#[test]
fn an_apply_from_a_checkout_behind_the_cluster_is_refused() {
    let w = World::new(None);
    let tmp = tempfile::tempdir().unwrap();
    let repo = copy_example(tmp.path());
    let git = git2::Repository::init(&repo).unwrap();
    let old = common::commit_all(&git, "acme");
    // A newer commit removes team devex; it is applied (its prune included).
    std::fs::remove_file(repo.join("teams/devex.yaml")).unwrap();
    std::fs::remove_file(repo.join("requests/devex.yaml")).unwrap();
    let new = common::commit_all(&git, "devex leaves");
    let kc = w.kubeconfig.display().to_string();
    let home = w.dir.path().display().to_string();
    let env = [("KUBECONFIG", kc.as_str()), ("HOME", home.as_str())];
    let r = repo.to_str().unwrap();
    let out = run(&["apply", r, "--yes", "--at", AT], &env);
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    let quota = w.fakes["infer-l4"]
        .get("v1", "ResourceQuota", "research", "capops-gpu")
        .unwrap();
    assert_eq!(
        quota["metadata"]["annotations"]["capops.dev/revision"],
        new.as_str()
    );
    // A checkout of the older commit (a laptop that has not pulled) would
    // bring devex back and roll the rest back: refused, nothing sent.
    let obj = git.revparse_single(&old).unwrap();
    git.checkout_tree(&obj, Some(git2::build::CheckoutBuilder::new().force()))
        .unwrap();
    git.set_head_detached(obj.id()).unwrap();
    w.reset();
    let out = run(&["apply", r, "--yes", "--at", AT], &env);
    assert_eq!(out.code, 1, "{}{}", out.stdout, out.stderr);
    assert!(
        out.stderr.contains("error[revision-behind-cluster]")
            && out
                .stderr
                .contains(&format!("infer-l4: objects applied from {}", &new[..12])),
        "{}",
        out.stderr
    );
    assert_eq!(w.writes(), 0);
    // On purpose, it goes through.
    let out = run(
        &["apply", r, "--yes", "--at", AT, "--allow-older-revision"],
        &env,
    );
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    assert!(
        w.fakes["infer-l4"]
            .get("v1", "ResourceQuota", "devex", "capops-gpu")
            .is_some()
    );
    // The same older documents copied without `.git`: nothing says the
    // copy holds the commit the cluster was applied from, so it is refused
    // as well (it rolled the cluster back, stamped `unversioned`).
    let copy = tmp.path().join("copy");
    std::fs::create_dir_all(&copy).unwrap();
    for entry in std::fs::read_dir(&repo).unwrap() {
        let entry = entry.unwrap();
        if entry.file_name() != ".git" {
            let to = copy.join(entry.file_name());
            if entry.path().is_dir() {
                common::copy_dir(&entry.path(), &to);
            } else {
                std::fs::copy(entry.path(), to).unwrap();
            }
        }
    }
    std::fs::remove_file(copy.join("teams/research.yaml")).unwrap();
    std::fs::remove_file(copy.join("requests/research.yaml")).unwrap();
    w.reset();
    let c = copy.to_str().unwrap();
    let out = run(&["apply", c, "--yes", "--at", AT], &env);
    assert_eq!(out.code, 1, "{}{}", out.stdout, out.stderr);
    assert!(
        out.stderr.contains("error[revision-behind-cluster]")
            && out.stderr.contains("this checkout is not a git repository"),
        "{}",
        out.stderr
    );
    assert_eq!(w.writes(), 0);
    // A worktree whose `.git` names a folder that is not there (a CI
    // container that mounted the worktree alone) is not outside git.
    std::fs::write(copy.join(".git"), "gitdir: /nonexistent/worktrees/acme\n").unwrap();
    for args in [&["render", c][..], &["plan", c], &["apply", c, "--yes"]] {
        let command = args[0];
        let out = run(&[args, &["--at", AT]].concat(), &env);
        assert_eq!(out.code, 3, "{command}: {}{}", out.stdout, out.stderr);
        assert!(
            out.stderr.contains("not a repository git can open"),
            "{command}: {}",
            out.stderr
        );
    }
    assert_eq!(w.writes(), 0);
}

#[test]
fn a_new_namespaces_quota_taken_by_another_tool_holds_the_old_one() {
    let w = World::new(None);
    assert_eq!(w.run(&["apply", &ex(), "--yes"]).code, 0);
    let h = &w.fakes["infer-l4"];
    h.namespaces(&["research2"]);
    h.create_as(
        "kubectl-create",
        &json!({"apiVersion": "v1", "kind": "ResourceQuota",
                "metadata": {"name": "capops-gpu", "namespace": "research2"},
                "spec": {"hard": {"requests.nvidia.com/gpu": "1"}}}),
    )
    .unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let repo = copy_example(tmp.path());
    let team = repo.join("teams/research.yaml");
    let text = std::fs::read_to_string(&team).unwrap().replacen(
        "    infer-l4:\n      namespace: research\n",
        "    infer-l4:\n      namespace: research2\n",
        1,
    );
    std::fs::write(&team, text).unwrap();
    let out = w.run(&[
        "apply",
        repo.to_str().unwrap(),
        "--cluster",
        "infer-l4",
        "--yes",
    ]);
    assert!(
        out.stdout.contains("object-not-owned") && out.stdout.contains("prune-held-back"),
        "{}{}",
        out.stdout,
        out.stderr
    );
    assert!(
        h.get("v1", "ResourceQuota", "research", "capops-gpu")
            .is_some()
    );
}

#[test]
fn one_api_server_spelled_two_ways_is_still_one() {
    let w = World::new(None);
    let prod = w.fakes["prod-h100"].url();
    let train = w.fakes["train-a100"].url();
    let port = prod.rsplit(':').next().unwrap().to_string();
    for spelling in [
        format!("http://localhost:{port}"),
        format!("HTTP://127.0.0.1:0{port}/"),
        format!("http://[::ffff:127.0.0.1]:{port}"),
    ] {
        FakeKube::kubeconfig(
            &w.kubeconfig,
            &[
                ("prod-h100-use1", prod.as_str()),
                ("train-a100-use2", train.as_str()),
                ("gke_acme_us-central1_infer-l4", spelling.as_str()),
            ],
            None,
        );
        let out = w.run(&["plan", &ex(), "--cluster", "infer-l4"]);
        assert_eq!(out.code, 2, "{spelling}: {}{}", out.stdout, out.stderr);
        assert!(
            out.stderr.contains("error[kube-context-shared]"),
            "{spelling}: {}",
            out.stderr
        );
    }
}

#[test]
fn a_plan_file_replaces_only_a_plan_and_only_a_whole_one() {
    let mut w = World::new(None);
    let repo = copy_example(w.dir.path());
    let r = repo.display().to_string();
    // Where capops reads, or a file that is not a plan (the kubeconfig):
    // refused before any cluster is asked, the file kept.
    let config = repo.join("capops.yaml");
    let config_text = std::fs::read_to_string(&config).unwrap();
    let kubeconfig_text = std::fs::read_to_string(&w.kubeconfig).unwrap();
    for target in [config.clone(), w.kubeconfig.clone()] {
        let t = target.display().to_string();
        let out = w.run(&["plan", &r, "--out", &t]);
        assert_eq!(out.code, 2, "{t}: {}{}", out.stdout, out.stderr);
        assert!(out.stderr.contains("nothing was written"), "{}", out.stderr);
        assert!(
            out.stdout.is_empty(),
            "no cluster was asked: {}",
            out.stdout
        );
    }
    assert_eq!(std::fs::read_to_string(&config).unwrap(), config_text);
    assert_eq!(
        std::fs::read_to_string(&w.kubeconfig).unwrap(),
        kubeconfig_text
    );
    // A plan is replaced by a plan; an empty file (what `mktemp` makes)
    // holds nothing to lose.
    let plan = w.dir.path().join("plan.json");
    let p = plan.display().to_string();
    std::fs::write(&plan, "").unwrap();
    let out = w.run(&["plan", &r, "--out", &p]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        std::fs::read_to_string(&plan)
            .unwrap()
            .contains("\"clusters\"")
    );
    assert_eq!(w.run(&["plan", &r, "--out", &p]).code, 0);
    let whole = std::fs::read_to_string(&plan).unwrap();
    // A cluster that cannot be planned: the old plan is kept.
    w.write_kubeconfig(Some("train-a100"));
    let out = w.run(&["plan", &r, "--out", &p]);
    assert_eq!(out.code, 3, "{}", out.stderr);
    assert!(
        out.stderr
            .contains("not written: 1 cluster could not be planned"),
        "{}",
        out.stderr
    );
    assert_eq!(std::fs::read_to_string(&plan).unwrap(), whole);
    // A plan to apply is a plain file: an endless device is not read.
    #[cfg(unix)]
    {
        let out = w.run(&["apply", &r, "--plan", "/dev/zero", "--yes"]);
        assert_eq!(out.code, 2, "{}", out.stderr);
        assert!(out.stderr.contains("not a plain file"), "{}", out.stderr);
    }
}

#[test]
fn a_kubeconfig_that_does_not_read_says_what_and_where_but_never_its_text() {
    let tmp = tempfile::tempdir().unwrap();
    let secret = "s3cr3t-t0ken-value";
    let cases = [
        (
            "tab.yaml",
            format!("apiVersion: v1\nkind: Config\nusers:\n\t- name: {secret}\n"),
            "yaml-syntax at line 4, column 1",
        ),
        ("empty.yaml", String::new(), "it is empty"),
        (
            "nul.yaml",
            format!("apiVersion: v1\ntoken: {secret}\0\n"),
            "a NUL byte at line 2",
        ),
    ];
    for (name, text, said) in cases {
        let path = tmp.path().join(name);
        std::fs::write(&path, &text).unwrap();
        let out = run(
            &["plan", &ex(), "--kubeconfig", &path.display().to_string()],
            &[],
        );
        assert_eq!(out.code, 2, "{name}: {}", out.stderr);
        assert!(
            out.stderr.contains("error[kubeconfig-invalid]"),
            "{name}: {}",
            out.stderr
        );
        assert!(out.stderr.contains(said), "{name}: {}", out.stderr);
        assert!(!out.stderr.contains(secret), "{name}: {}", out.stderr);
        assert!(!out.stdout.contains(secret), "{name}: {}", out.stdout);
    }
}

#[test]
fn writes_that_name_an_object_that_did_not_land_wait_for_it() {
    // Another tool made ResourceFlavor h100-mig before capops: capops does
    // not take it over, so ClusterQueue inference, which names it, and the
    // LocalQueue that names that, are held back (a queue naming a flavor
    // that is not capops's would be written against whatever it holds), as
    // are the prunes. The MIG layouts' ConfigMap likewise holds the nodes'
    // layout labels.
    let w = World::new(None);
    let h = &w.fakes["prod-h100"];
    h.create_as(
        "kubectl-create",
        &json!({"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ResourceFlavor",
                "metadata": {"name": "h100-mig"}, "spec": {}}),
    )
    .unwrap();
    h.create_as(
        "kubectl-create",
        &json!({"apiVersion": "v1", "kind": "ConfigMap",
                "metadata": {"name": "capops-mig-parted-config", "namespace": "gpu-operator"},
                "data": {"config.yaml": "version: v1\nmig-configs: {}\n"}}),
    )
    .unwrap();
    let out = w.run(&["apply", &ex(), "--yes", "--cluster", "prod-h100"]);
    assert_ne!(out.code, 0, "{}{}", out.stdout, out.stderr);
    assert!(out.stdout.contains("write-held-back"), "{}", out.stdout);
    assert!(
        out.stdout
            .contains("ClusterQueue inference: not written: it names ResourceFlavor h100-mig"),
        "{}",
        out.stdout
    );
    assert!(
        h.get("kueue.x-k8s.io/v1beta2", "ClusterQueue", "", "inference")
            .is_none()
    );
    assert!(
        h.get(
            "kueue.x-k8s.io/v1beta2",
            "LocalQueue",
            "inference",
            "inference"
        )
        .is_none()
    );
    let node = h.get("v1", "Node", "", "mig-1").unwrap();
    assert_eq!(
        node["metadata"]["labels"]["nvidia.com/mig.config"],
        "all-disabled"
    );
    // Once the other tool's objects are gone, the same apply writes them all.
    h.delete("kueue.x-k8s.io/v1beta2", "ResourceFlavor", "", "h100-mig");
    h.delete(
        "v1",
        "ConfigMap",
        "gpu-operator",
        "capops-mig-parted-config",
    );
    let out = w.run(&["apply", &ex(), "--yes", "--cluster", "prod-h100"]);
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    assert!(
        h.get("kueue.x-k8s.io/v1beta2", "ClusterQueue", "", "inference")
            .is_some()
    );
    let node = h.get("v1", "Node", "", "mig-1").unwrap();
    assert_ne!(
        node["metadata"]["labels"]["nvidia.com/mig.config"],
        "all-disabled"
    );
}

#[test]
fn an_object_being_deleted_is_not_in_sync() {
    // Kueue's finalizer holds ClusterQueue inference while workloads run
    // on it; someone deletes it. It still has every field capops wants, but
    // it disappears once the finalizer goes: plan and drift say so, and
    // apply neither writes it nor counts the cluster done.
    let w = World::new(None);
    assert_eq!(w.run(&["apply", &ex(), "--yes"]).code, 0);
    let h = &w.fakes["prod-h100"];
    h.update_as(
        "kueue-controller",
        "kueue.x-k8s.io/v1beta2",
        "ClusterQueue",
        "",
        "inference",
        &json!({"metadata": {"finalizers": ["kueue.x-k8s.io/resource-in-use"]}}),
    )
    .unwrap();
    h.delete("kueue.x-k8s.io/v1beta2", "ClusterQueue", "", "inference");
    let live = h
        .get("kueue.x-k8s.io/v1beta2", "ClusterQueue", "", "inference")
        .unwrap();
    assert!(live["metadata"]["deletionTimestamp"].is_string(), "{live}");
    for command in ["plan", "drift"] {
        let out = w.run(&[command, &ex(), "--cluster", "prod-h100"]);
        assert_ne!(out.code, 0, "{command}: {}{}", out.stdout, out.stderr);
        assert!(
            out.stdout.contains("object-terminating")
                && out
                    .stdout
                    .contains("ClusterQueue inference: being deleted since"),
            "{command}: {}{}",
            out.stdout,
            out.stderr
        );
    }
    let out = w.run(&["apply", &ex(), "--yes", "--cluster", "prod-h100"]);
    assert_ne!(out.code, 0, "{}{}", out.stdout, out.stderr);
    assert!(out.stdout.contains("object-terminating"), "{}", out.stdout);
}

#[test]
fn a_cluster_that_names_its_context_is_never_reached_in_cluster() {
    // No kubeconfig anywhere, in a pod (the service account's variables
    // set): a Cluster that names its kubeContext is not reached through
    // the pod's own cluster, which may be another one.
    let home = tempfile::tempdir().unwrap();
    let h = home.path().display().to_string();
    let out = run(
        &["plan", &ex(), "--cluster", "infer-l4"],
        &[
            ("HOME", h.as_str()),
            ("KUBECONFIG", ""),
            ("KUBERNETES_SERVICE_HOST", "127.0.0.1"),
            ("KUBERNETES_SERVICE_PORT", "1"),
        ],
    );
    assert_eq!(out.code, 3, "{}{}", out.stdout, out.stderr);
    assert!(
        out.stdout.contains("error[kube-context-missing]") && !out.stderr.contains("in-cluster"),
        "{}{}",
        out.stdout,
        out.stderr
    );
}

#[test]
fn a_workload_priority_class_waits_for_its_priority_class() {
    // A PriorityClass's value cannot change in place (422). Its Kueue twin
    // would take the new value alone, and Kueue would rank workloads apart
    // from how the scheduler ranks their pods: it waits.
    let w = World::new(None);
    assert_eq!(
        w.run(&["apply", &ex(), "--yes", "--cluster", "prod-h100"])
            .code,
        0
    );
    let tmp = tempfile::tempdir().unwrap();
    let repo = copy_example(tmp.path());
    let f = repo.join("priority-classes.yaml");
    let text = std::fs::read_to_string(&f).unwrap();
    let before = w.fakes["prod-h100"]
        .get(
            "kueue.x-k8s.io/v1beta2",
            "WorkloadPriorityClass",
            "",
            "development",
        )
        .unwrap();
    let old = format!("  value: {}\n", before["value"]);
    assert!(text.contains(&old), "{old}");
    std::fs::write(&f, text.replacen(&old, "  value: 77\n", 1)).unwrap();
    let out = w.run(&[
        "apply",
        repo.to_str().unwrap(),
        "--yes",
        "--cluster",
        "prod-h100",
    ]);
    assert_ne!(out.code, 0, "{}{}", out.stdout, out.stderr);
    assert!(
        out.stdout.contains(
            "WorkloadPriorityClass development: not written: it names PriorityClass development"
        ),
        "{}",
        out.stdout
    );
    let after = w.fakes["prod-h100"]
        .get(
            "kueue.x-k8s.io/v1beta2",
            "WorkloadPriorityClass",
            "",
            "development",
        )
        .unwrap();
    assert_eq!(after["value"], before["value"]);
}

#[test]
fn prunes_wait_while_another_cluster_of_the_apply_could_not_be_planned() {
    // A team's quota in infer-l4 is no longer rendered (it may be moving to
    // train-a100), and train-a100 cannot be reached: infer-l4 keeps it until
    // an apply reaches every cluster.
    let mut w = World::new(None);
    w.fakes["infer-l4"].namespaces(&["temp"]);
    let tmp = tempfile::tempdir().unwrap();
    let repo = copy_example(tmp.path());
    std::fs::write(
        repo.join("teams/temp.yaml"),
        "apiVersion: capops.dev/v1alpha1\nkind: Team\nmetadata: {name: temp}\nspec:\n  displayName: Temp\n  costCenter: CC-1\n  leads: [someone]\n  clusters:\n    infer-l4:\n      namespace: temp\n      quota: {nvidia.com/gpu: 1}\n",
    )
    .unwrap();
    let out = w.run(&["apply", repo.to_str().unwrap(), "--yes"]);
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    let quota = |w: &World| w.fakes["infer-l4"].get("v1", "ResourceQuota", "temp", "capops-gpu");
    assert!(quota(&w).is_some());
    w.write_kubeconfig(Some("train-a100"));
    let out = w.run(&["apply", &ex(), "--yes"]);
    assert_eq!(out.code, 3, "{}{}", out.stdout, out.stderr);
    assert!(
        out.stdout.contains("prune-held-back")
            && out.stdout.contains("train-a100 could not be planned"),
        "{}",
        out.stdout
    );
    assert!(quota(&w).is_some());
    // Every cluster reached: the prune goes through.
    w.write_kubeconfig(None);
    let out = w.run(&["apply", &ex(), "--yes"]);
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    assert!(quota(&w).is_none());
}

#[test]
fn a_cluster_pinned_to_its_api_server_is_never_reached_through_another() {
    // infer-l4 pins a server its context does not reach (the context was
    // re-pointed, or merged from another kubeconfig); prod-h100 pins its
    // own, spelled another way. infer-l4 is refused before anything is
    // read from or sent to it; the others are planned and applied.
    let w = World::new(None);
    let tmp = tempfile::tempdir().unwrap();
    let repo = copy_example(tmp.path());
    let pin = |file: &str, context: &str, server: &str| {
        let f = repo.join("clusters").join(file);
        let text = std::fs::read_to_string(&f).unwrap();
        let line = format!("  kubeContext: {context}\n");
        assert!(text.contains(&line), "{text}");
        std::fs::write(
            &f,
            text.replacen(&line, &format!("{line}  apiServer: {server}\n"), 1),
        )
        .unwrap();
    };
    pin(
        "infer-l4.yaml",
        "gke_acme_us-central1_infer-l4",
        "https://34.118.0.10",
    );
    let prod = w.fakes["prod-h100"]
        .url()
        .replace("http://127.0.0.1", "HTTP://localhost");
    pin("prod-h100.yaml", "prod-h100-use1", &format!("{prod}/"));
    let dir = repo.to_str().unwrap();
    w.reset();
    for args in [vec!["plan", dir], vec!["apply", dir, "--yes"]] {
        let out = w.run(&args);
        assert_eq!(out.code, 3, "{}{}", out.stdout, out.stderr);
        let url = w.fakes["infer-l4"].url();
        assert!(
            out.stdout.contains(&format!(
                "error[api-server-mismatch]: the context `gke_acme_us-central1_infer-l4` reaches {url}, but the Cluster's apiServer is https://34.118.0.10"
            )),
            "{}",
            out.stdout
        );
        assert_eq!(w.fakes["infer-l4"].counts().total(), 0);
        assert!(w.fakes["prod-h100"].counts().total() > 0);
    }
    // The apply wrote prod-h100 and train-a100, nothing on infer-l4.
    assert!(w.fakes["prod-h100"].counts().writes > 0);
    assert!(w.fakes["train-a100"].counts().writes > 0);
    assert!(w.fakes["infer-l4"].all("v1", "ResourceQuota").is_empty());
}

#[test]
fn a_configmap_left_as_someone_edited_it_holds_the_layout_labels() {
    // Someone edits the MIG manager's ConfigMap by hand; then a reviewed
    // layout change is applied. The ConfigMap is a field conflict, not
    // written: labelling the nodes with the new layout, which it does not
    // hold, would fail their reconfiguration. They wait, and so do prunes.
    let w = World::new(None);
    let h = &w.fakes["prod-h100"];
    assert_eq!(
        w.run(&["apply", &ex(), "--yes", "--cluster", "prod-h100"])
            .code,
        0
    );
    h.update_as(
        "kubectl-edit",
        "v1",
        "ConfigMap",
        "gpu-operator",
        "capops-mig-parted-config",
        &json!({"data": {"config.yaml": "version: v1\nmig-configs: {}\n"}}),
    )
    .unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let repo = copy_example(tmp.path());
    let f = repo.join("clusters/prod-h100.yaml");
    let text = std::fs::read_to_string(&f).unwrap();
    let old = "        layout:\n          3g.40gb: 1\n          2g.20gb: 1\n          1g.10gb: 2\n";
    assert!(text.contains(old), "{text}");
    std::fs::write(
        &f,
        text.replace(
            old,
            "        layout:\n          3g.40gb: 1\n          2g.20gb: 1\n          1g.10gb: 1\n",
        ),
    )
    .unwrap();
    let before =
        h.get("v1", "Node", "", "mig-0").unwrap()["metadata"]["labels"]["nvidia.com/mig.config"]
            .clone();
    let out = w.run(&[
        "apply",
        repo.to_str().unwrap(),
        "--yes",
        "--cluster",
        "prod-h100",
    ]);
    assert_eq!(out.code, 1, "{}{}", out.stdout, out.stderr);
    assert!(out.stdout.contains("field-conflict"), "{}", out.stdout);
    assert!(out.stdout.contains("write-held-back"), "{}", out.stdout);
    for n in ["mig-0", "mig-1"] {
        let node = h.get("v1", "Node", "", n).unwrap();
        assert_eq!(node["metadata"]["labels"]["nvidia.com/mig.config"], before);
    }
}

#[test]
fn a_team_moving_to_a_cluster_that_refuses_it_keeps_its_old_quota() {
    // temp moves from infer-l4 to train-a100, where its namespace does not
    // exist yet: infer-l4's quota stays until train-a100's lands.
    let w = World::new(None);
    w.fakes["infer-l4"].namespaces(&["temp"]);
    let tmp = tempfile::tempdir().unwrap();
    let repo = copy_example(tmp.path());
    let team = |cluster: &str| {
        format!(
            "apiVersion: capops.dev/v1alpha1\nkind: Team\nmetadata: {{name: temp}}\nspec:\n  displayName: Temp\n  costCenter: CC-1\n  leads: [someone]\n  clusters:\n    {cluster}:\n      namespace: temp\n      quota: {{nvidia.com/gpu: 1}}\n"
        )
    };
    std::fs::write(repo.join("teams/temp.yaml"), team("infer-l4")).unwrap();
    let dir = repo.to_str().unwrap();
    assert_eq!(w.run(&["apply", dir, "--yes"]).code, 0);
    let quota = |c: &str| w.fakes[c].get("v1", "ResourceQuota", "temp", "capops-gpu");
    assert!(quota("infer-l4").is_some());
    std::fs::write(repo.join("teams/temp.yaml"), team("train-a100")).unwrap();
    let out = w.run(&["apply", dir, "--yes"]);
    assert_eq!(out.code, 3, "{}{}", out.stdout, out.stderr);
    assert!(
        out.stdout.contains(
            "not deleted: train-a100 could not be planned or has writes that will not land"
        ),
        "{}",
        out.stdout
    );
    assert!(quota("infer-l4").is_some());
    w.fakes["train-a100"].namespaces(&["temp"]);
    let out = w.run(&["apply", dir, "--yes"]);
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    assert!(quota("infer-l4").is_none() && quota("train-a100").is_some());
}

#[test]
fn a_plan_file_cannot_take_over_a_hand_made_object_or_relabel_a_node_out_of_its_pool() {
    let w = World::new(None);
    let h = &w.fakes["prod-h100"];
    // A hand-made quota of capops's name, without its label: a conflict.
    h.create_as(
        "kubectl-create",
        &json!({"apiVersion": "v1", "kind": "ResourceQuota",
                "metadata": {"name": "capops-gpu", "namespace": "inference"},
                "spec": {"hard": {"requests.nvidia.com/gpu": "8"}}}),
    )
    .unwrap();
    let plan = w.dir.path().join("plan.json");
    let p = plan.display().to_string();
    assert_eq!(
        w.run(&["plan", &ex(), "--out", &p, "--cluster", "prod-h100"])
            .code,
        1
    );
    let saved: Value = serde_json::from_str(&std::fs::read_to_string(&plan).unwrap()).unwrap();
    // Edited: the conflict made an update.
    let mut edited = saved.clone();
    for c in edited["clusters"][0]["changes"].as_array_mut().unwrap() {
        if c["kind"] == "ResourceQuota" && c["namespace"] == "inference" {
            assert_eq!(c["action"], "conflict", "{c}");
            c["action"] = json!("update");
            c.as_object_mut().unwrap().remove("conflict");
        }
    }
    std::fs::write(&plan, serde_json::to_string(&edited).unwrap()).unwrap();
    w.reset();
    let out = w.run(&[
        "apply",
        &ex(),
        "--plan",
        &p,
        "--yes",
        "--cluster",
        "prod-h100",
    ]);
    assert!(
        out.stderr.contains("error[plan-stale]")
            && out.stderr.contains(
                "the plan updates ResourceQuota/inference/capops-gpu, which is not capops's"
            ),
        "{}",
        out.stderr
    );
    assert_eq!(w.writes(), 0);
    // Unedited, but node mig-1 moved to the serving pool since the plan:
    // it is not relabelled with the MIG pool's layout.
    std::fs::write(&plan, serde_json::to_string(&saved).unwrap()).unwrap();
    h.update_as(
        "kubectl-label",
        "v1",
        "Node",
        "",
        "mig-1",
        &json!({"metadata": {"labels": {"acme.ai/gpu-pool": "h100-serve"}}}),
    )
    .unwrap();
    w.reset();
    let out = w.run(&[
        "apply",
        &ex(),
        "--plan",
        &p,
        "--yes",
        "--cluster",
        "prod-h100",
        "--force-conflicts",
    ]);
    assert!(
        out.stderr
            .contains("node mig-1 is not in pool h100-mig now"),
        "{}",
        out.stderr
    );
    assert_eq!(w.writes(), 0);
}

#[test]
fn a_pin_the_kubeconfig_contradicts_is_refused_before_any_login() {
    // The kubeconfig already says the context reaches another server: the
    // credential plugin (a login, perhaps to the wrong cluster) never runs.
    let w = World::new(Some("plugin-token-1a2b3c4d"));
    let runs = w.dir.path().join("runs");
    with_plugin(&w, &format!("echo run >> {}\nexit 1", runs.display()));
    let tmp = tempfile::tempdir().unwrap();
    let repo = copy_example(tmp.path());
    let f = repo.join("clusters/infer-l4.yaml");
    let text = std::fs::read_to_string(&f).unwrap();
    let line = "  kubeContext: gke_acme_us-central1_infer-l4\n";
    assert!(text.contains(line));
    std::fs::write(
        &f,
        text.replacen(
            line,
            &format!("{line}  apiServer: https://34.118.0.10\n"),
            1,
        ),
    )
    .unwrap();
    let out = w.run(&["plan", repo.to_str().unwrap(), "--cluster", "infer-l4"]);
    assert_eq!(out.code, 3, "{}{}", out.stdout, out.stderr);
    assert!(
        out.stdout.contains("error[api-server-mismatch]"),
        "{}",
        out.stdout
    );
    assert!(!runs.exists(), "the plugin ran");
    assert_eq!(w.fakes["infer-l4"].counts().total(), 0);
}
