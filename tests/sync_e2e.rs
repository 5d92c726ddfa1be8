//! `capops plan`, `apply`, `drift` and prune against a real cluster. Opt-in:
//!
//!     CAPOPS_E2E_KUBECONFIG=~/.kube/config cargo test --test sync_e2e -- --ignored
//!
//! The test works in a namespace and a PriorityClass of its own
//! (`capops-e2e-<pid>`), creates the namespace itself (capops does not) and
//! deletes both at the end. It uses the kubeconfig's current context; set
//! CAPOPS_E2E_KUEUE=1 when the cluster runs Kueue 0.15 or newer to include
//! the Kueue kinds.

mod common;

use std::path::Path;

fn write_repo(dir: &Path, id: &str, context: &str, kueue: bool, gpus: u32, with_team: bool) {
    let _ = std::fs::remove_dir_all(dir);
    std::fs::create_dir_all(dir).unwrap();
    std::fs::write(
        dir.join("capops.yaml"),
        format!(
            "apiVersion: capops.dev/v1alpha1\nkind: Config\nmetadata: {{name: {id}}}\nspec: {{}}\n"
        ),
    )
    .unwrap();
    let kueue = if kueue {
        format!("  kueue: {{cohort: {id}}}\n")
    } else {
        String::new()
    };
    let mut docs = format!(
        r#"apiVersion: capops.dev/v1alpha1
kind: Cluster
metadata: {{name: e2e}}
spec:
  environment: development
  provider: onprem
  kubeContext: {context}
{kueue}  nodePools:
    - {{name: l4, gpuModel: l4, gpusPerNode: 1, nodes: 1, nodeLabels: {{capops.dev/e2e-pool: {id}}}}}
---
apiVersion: capops.dev/v1alpha1
kind: PriorityClass
metadata: {{name: {id}}}
spec: {{value: 1000, description: capops end-to-end test}}
"#
    );
    if with_team {
        docs.push_str(&format!(
            r#"---
apiVersion: capops.dev/v1alpha1
kind: Team
metadata: {{name: {id}}}
spec:
  costCenter: CC-E2E
  clusters:
    e2e: {{namespace: {id}}}
---
apiVersion: capops.dev/v1alpha1
kind: CapacityRequest
metadata: {{name: {id}}}
spec:
  team: {id}
  cluster: e2e
  pool: l4
  resources: {{nvidia.com/gpu: {gpus}}}
  window: {{start: 2026-01-01, end: 2030-01-01}}
  workloadClass: development
  priorityClass: {id}
"#
        ));
    }
    std::fs::write(dir.join("docs.yaml"), docs).unwrap();
}

fn kubectl_like(kubeconfig: &str, f: impl AsyncFnOnce(kube::Client)) {
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let kc = kube::config::Kubeconfig::read_from(kubeconfig).unwrap();
        let config = kube::Config::from_custom_kubeconfig(kc, &Default::default())
            .await
            .unwrap();
        f(kube::Client::try_from(config).unwrap()).await;
    });
}

#[test]
#[ignore = "needs cluster"]
fn plan_apply_drift_and_prune_on_a_real_cluster() {
    let Some(kubeconfig) = std::env::var("CAPOPS_E2E_KUBECONFIG").ok() else {
        eprintln!(
            "skipped: set CAPOPS_E2E_KUBECONFIG to a kubeconfig whose current context may be written to"
        );
        return;
    };
    let kueue = std::env::var("CAPOPS_E2E_KUEUE").is_ok_and(|v| v == "1");
    let id = format!("capops-e2e-{}", std::process::id());
    let kc = kube::config::Kubeconfig::read_from(&kubeconfig).unwrap();
    let context = kc.current_context.clone().expect("a current context");
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path().join("repo");
    let repo_s = repo.display().to_string();
    let env = [("KUBECONFIG", kubeconfig.as_str())];
    let ns = id.clone();
    kubectl_like(&kubeconfig, async |client| {
        let api: kube::Api<k8s_openapi::api::core::v1::Namespace> = kube::Api::all(client);
        let n: k8s_openapi::api::core::v1::Namespace =
            serde_json::from_value(serde_json::json!({"metadata": {"name": ns}})).unwrap();
        api.create(&Default::default(), &n).await.unwrap();
    });
    let run = |args: &[&str]| common::run(args, &env);
    write_repo(&repo, &id, &context, kueue, 2, true);
    let out = run(&["plan", &repo_s]);
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    assert!(
        out.stdout
            .contains(&format!("+ ResourceQuota {id}/capops-gpu")),
        "{}",
        out.stdout
    );
    let out = run(&["apply", &repo_s, "--yes"]);
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    let out = run(&["apply", &repo_s, "--yes"]);
    assert!(
        out.stdout.contains("cluster e2e: no changes, 0 writes"),
        "{}",
        out.stdout
    );
    assert_eq!(run(&["drift", &repo_s]).code, 0);
    // A bigger request: one update of the quota (and the ClusterQueue with Kueue).
    write_repo(&repo, &id, &context, kueue, 4, true);
    let out = run(&["plan", &repo_s]);
    assert!(
        out.stdout
            .contains(&format!("~ ResourceQuota {id}/capops-gpu")),
        "{}",
        out.stdout
    );
    assert_eq!(run(&["drift", &repo_s]).code, 1);
    assert_eq!(run(&["apply", &repo_s, "--yes"]).code, 0);
    // The team goes: its quota is pruned.
    write_repo(&repo, &id, &context, kueue, 4, false);
    let out = run(&["apply", &repo_s, "--yes"]);
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    assert!(
        out.stdout
            .contains(&format!("- ResourceQuota {id}/capops-gpu: applied")),
        "{}",
        out.stdout
    );
    // Clean up: the PriorityClass (and Kueue objects) by pruning an empty repository, then the namespace.
    std::fs::write(
        repo.join("docs.yaml"),
        format!(
            "apiVersion: capops.dev/v1alpha1\nkind: Cluster\nmetadata: {{name: e2e}}\nspec:\n  environment: development\n  provider: onprem\n  kubeContext: {context}\n  nodePools:\n    - {{name: l4, gpuModel: l4, gpusPerNode: 1, nodes: 1}}\n"
        ),
    )
    .unwrap();
    let out = run(&["apply", &repo_s, "--yes"]);
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    assert!(
        out.stdout
            .contains(&format!("- PriorityClass {id}: applied")),
        "{}",
        out.stdout
    );
    let ns = id.clone();
    kubectl_like(&kubeconfig, async |client| {
        let api: kube::Api<k8s_openapi::api::core::v1::Namespace> = kube::Api::all(client);
        api.delete(&ns, &Default::default()).await.unwrap();
    });
}
