//! Rendering small repositories: what is in force at `--at`, per-class
//! quotas, MIG single strategy, time-slicing configs, and Kueue limits.

// Tests build repositories in temporary folders.
#![allow(clippy::disallowed_methods, clippy::disallowed_types)]

use super::templates::Templates;
use super::*;
use crate::diag::Code;

const CONFIG: &str = "apiVersion: capops.dev/v1alpha1\nkind: Config\nmetadata: {name: c}\nspec:\n  render: {priorityClassQuotas: true}\n";

fn repo(docs: &str) -> Rendered {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("capops.yaml"), CONFIG).unwrap();
    std::fs::write(dir.path().join("docs.yaml"), docs).unwrap();
    // Rendering reports the pipeline's lint (Kueue limits) with its own findings.
    let head = crate::pipeline::validate_dir(dir.path()).unwrap();
    let mut diags = Vec::new();
    let t = Templates::new(&[], &mut diags);
    let mut rendered = render(
        &head.repo,
        &t,
        &Options {
            at: "2026-06-15".parse().unwrap(),
            revision: "r".into(),
            clusters: None,
        },
    );
    // As the commands do: the render's own copy of a lint error is one.
    rendered.diagnostics.splice(0..0, head.diagnostics);
    crate::diag::normalize(&mut rendered.diagnostics);
    rendered
}

fn file<'a>(r: &'a Rendered, path: &str) -> &'a Value {
    &r.files
        .iter()
        .find(|f| f.path == path)
        .unwrap_or_else(|| {
            panic!(
                "no {path}: {:?}",
                r.files.iter().map(|f| &f.path).collect::<Vec<_>>()
            )
        })
        .value
}

const TEAM_AND_CLASSES: &str = r#"
apiVersion: capops.dev/v1alpha1
kind: Team
metadata: {name: ml}
spec:
  costCenter: CC-1
  clusters:
    gpu:
      namespace: ml
      quota: {nvidia.com/gpu: 1000}
---
apiVersion: capops.dev/v1alpha1
kind: PriorityClass
metadata: {name: high}
spec: {value: 1000}
---
apiVersion: capops.dev/v1alpha1
kind: PriorityClass
metadata: {name: low}
spec: {value: 10}
"#;

fn request(name: &str, pool: &str, res: &str, n: u32, window: &str, class: &str) -> String {
    format!(
        "---\napiVersion: capops.dev/v1alpha1\nkind: CapacityRequest\nmetadata: {{name: {name}}}\nspec:\n  team: ml\n  cluster: gpu\n  pool: {pool}\n  resources: {{{res}: {n}}}\n  window: {window}\n  workloadClass: training\n  priorityClass: {class}\n"
    )
}

#[test]
fn quotas_count_requests_in_force_per_class_under_the_single_strategy() {
    let docs = format!(
        r#"{TEAM_AND_CLASSES}
---
apiVersion: capops.dev/v1alpha1
kind: Cluster
metadata: {{name: gpu}}
spec:
  environment: research
  provider: onprem
  migStrategy: single
  nodePools:
    - name: mig
      gpuModel: a100-80gb
      gpusPerNode: 8
      nodes: 2
      nodeLabels: {{pool: mig}}
      mig: {{layout: {{1g.10gb: 7}}}}
{}{}{}"#,
        request(
            "now-high",
            "mig",
            "nvidia.com/gpu",
            14,
            "{start: 2026-06-01, end: 2026-07-01}",
            "high"
        ),
        request(
            "now-low",
            "mig",
            "nvidia.com/gpu",
            7,
            "{start: 2026-01-01, end: 2027-01-01}",
            "low"
        ),
        request(
            "ended",
            "mig",
            "nvidia.com/gpu",
            50,
            "{start: 2026-01-01, end: 2026-06-15}",
            "low"
        ),
    );
    let r = repo(&docs);
    assert!(!r.has_errors(), "{:?}", r.diagnostics);
    // Single strategy: MIG instances are `nvidia.com/gpu`; the request that
    // ended at the instant of --at does not count.
    let q = file(&r, "gpu/resourcequota-ml-capops-gpu.yaml");
    assert_eq!(
        q["spec"]["hard"],
        serde_json::json!({"requests.nvidia.com/gpu": "21"})
    );
    let high = file(&r, "gpu/resourcequota-ml-capops-gpu-high.yaml");
    assert_eq!(high["spec"]["hard"]["requests.nvidia.com/gpu"], "14");
    assert_eq!(
        high["spec"]["scopeSelector"]["matchExpressions"][0],
        serde_json::json!({"operator": "In", "scopeName": "PriorityClass", "values": ["high"]})
    );
    assert_eq!(
        file(&r, "gpu/resourcequota-ml-capops-gpu-low.yaml")["spec"]["hard"]["requests.nvidia.com/gpu"],
        "7"
    );
    // The MIG manager config and the node label its nodes need.
    let cm = file(
        &r,
        "gpu/configmap-gpu-operator-capops-mig-parted-config.yaml",
    );
    let config = cm["data"]["config.yaml"].as_str().unwrap();
    assert!(config.contains("capops-1g.10gb-x7:\n  - devices: all\n    mig-devices:\n      \"1g.10gb\": 7\n    mig-enabled: true\n"), "{config}");
    // The GPU operator labels unlabelled MIG-capable nodes `all-disabled`:
    // the config always has it.
    assert!(
        config.contains("all-disabled:\n  - devices: all\n    mig-enabled: false\n"),
        "{config}"
    );
    let plan = file(&r, "node-labels/gpu.yaml");
    assert_eq!(
        plan["pools"][0]["labels"]["nvidia.com/mig.config"],
        "capops-1g.10gb-x7"
    );
    assert_eq!(plan["pools"][0]["selector"]["pool"], "mig");
    // The device plugin runs the Cluster's MIG strategy on the pool's nodes.
    assert_eq!(
        plan["pools"][0]["labels"]["nvidia.com/device-plugin.config"],
        "capops-single-mig"
    );
    let dp = file(
        &r,
        "gpu/configmap-gpu-operator-capops-device-plugin-config.yaml",
    );
    assert_eq!(
        dp["data"]["capops-single-mig"],
        "flags:\n  migStrategy: single\nversion: v1\n"
    );
}

#[test]
fn time_slicing_gets_a_device_plugin_config_and_kueue_limits_are_enforced() {
    let labels: String = (0..9).map(|i| format!("l{i}: v, ")).collect();
    let docs = format!(
        r#"{TEAM_AND_CLASSES}
---
apiVersion: capops.dev/v1alpha1
kind: Cluster
metadata: {{name: gpu}}
spec:
  environment: development
  provider: onprem
  kueue: {{enabled: true}}
  nodePools:
    - name: shared
      gpuModel: t4
      gpusPerNode: 1
      nodes: 4
      nodeLabels: {{pool: shared, l0: shared}}
      timeSlicing: {{replicas: 4}}
    - name: labelled
      gpuModel: l4
      gpusPerNode: 1
      nodes: 1
      nodeLabels: {{{labels}}}
{}"#,
        request(
            "ci",
            "shared",
            "nvidia.com/gpu",
            6,
            "{start: 2026-01-01, end: 2027-01-01}",
            "low"
        ),
    );
    let r = repo(&docs);
    let codes: Vec<Code> = r.diagnostics.iter().map(|d| d.code).collect();
    assert_eq!(codes, [Code::KueueLimitExceeded], "{:?}", r.diagnostics);
    assert!(
        r.diagnostics[0].message.contains("9 node labels"),
        "{}",
        r.diagnostics[0].message
    );
    // No Kueue objects for a cluster Kueue would reject; the rest renders.
    assert!(!r.files.iter().any(|f| f.path.contains("clusterqueue")));
    let cm = file(
        &r,
        "gpu/configmap-gpu-operator-capops-device-plugin-config.yaml",
    );
    let text = cm["data"]["capops-none-gpu-x4"].as_str().unwrap();
    assert_eq!(
        text,
        "flags:\n  migStrategy: none\nsharing:\n  timeSlicing:\n    resources:\n    - name: nvidia.com/gpu\n      replicas: 4\nversion: v1\n"
    );
    assert_eq!(
        file(&r, "node-labels/gpu.yaml")["pools"][0]["labels"]["nvidia.com/device-plugin.config"],
        "capops-none-gpu-x4"
    );
    assert_eq!(
        file(&r, "gpu/resourcequota-ml-capops-gpu.yaml")["spec"]["hard"]["requests.nvidia.com/gpu"],
        "6"
    );
}

#[test]
fn quota_keys_that_kubernetes_ignores_are_named() {
    assert!(unenforced_quota_key("limits.nvidia.com/gpu").is_some());
    assert!(unenforced_quota_key("nvidia.com/gpu").is_some());
    assert!(unenforced_quota_key("requests.nvidia.com/gpu").is_none());
    assert!(unenforced_quota_key("requests.nvidia.com/mig-1g.10gb").is_none());
    assert!(unenforced_quota_key("count/jobs.batch").is_none());
    assert!(unenforced_quota_key("limits.cpu").is_none());
    let mut problems = Vec::new();
    let q = serde_json::json!({
        "apiVersion": "v1", "kind": "ResourceQuota",
        "metadata": {"name": "q", "labels": {"app.kubernetes.io/instance": "x"}},
        "spec": {"hard": {"requests.nvidia.com/gpu": "1.5", "limits.nvidia.com/gpu": "2"}}
    });
    verify(&q, "v1", "ResourceQuota", &mut problems);
    let codes: Vec<Code> = problems.iter().map(|p| p.0).collect();
    assert_eq!(
        codes,
        [
            Code::ReservedLabel,
            Code::QuotaKeyNotEnforced,
            Code::QuotaKeyNotEnforced
        ]
    );
}

#[test]
fn a_teams_borrowing_and_lending_limits_are_split_among_flavors_not_copied() {
    use serde_json::json;
    let flavor = |name: &str, nominal: u64, borrow: Option<u64>, lend: Option<u64>| {
        json!({"name": name, "resources": [{
            "name": "nvidia.com/gpu", "nominal_quota": nominal,
            "borrowing_limit": borrow, "lending_limit": lend.map(|l| l.min(nominal)),
            "team_lending_limit": lend,
        }]})
    };
    // Borrowing 32 over pools of 256, 240 and 16 GPUs; lending 64 of 16 + 64 held.
    let out = super::kube::split_team_limits(
        vec![
            (flavor("train", 0, Some(32), Some(64)), vec![256]),
            (flavor("research", 64, Some(32), Some(64)), vec![240]),
            (flavor("small", 16, Some(32), Some(64)), vec![16]),
        ],
        1,
    );
    let got: Vec<(String, u64, u64, u64)> = out
        .iter()
        .map(|f| {
            let r = &f["resources"][0];
            (
                f["name"].as_str().unwrap().to_string(),
                r["nominal_quota"].as_u64().unwrap(),
                r["borrowing_limit"].as_u64().unwrap(),
                r["lending_limit"].as_u64().unwrap(),
            )
        })
        .collect();
    // 32 × 256/512 = 16, 32 × 240/512 = 15, 32 × 16/512 = 1; lending
    // spends 64 in pool order: train holds 0, research's 64, then nothing
    // is left for small's 16. The team's own flavors come first.
    assert_eq!(
        got,
        vec![
            ("research".into(), 64, 15, 64),
            ("small".into(), 16, 1, 0),
            ("train".into(), 0, 16, 0),
        ]
    );
    let borrowed: u64 = got.iter().map(|g| g.2).sum();
    assert_eq!(borrowed, 32);
}

/// A team's borrowing limit on `nvidia.com/mig-1g.5gb` limits the A100's
/// 1g.5gb instances only: never, by a profile name's memory tolerance, the
/// A30's `mig-1g.6gb` in another pool of the cluster (Kueue keys limits by
/// the exact resource name).
#[test]
fn a_teams_mig_limit_limits_the_resource_it_names_only() {
    let docs = r#"
apiVersion: capops.dev/v1alpha1
kind: Cluster
metadata: {name: c1}
spec:
  environment: research
  provider: onprem
  migStrategy: mixed
  kueue: {enabled: true, cohort: c1}
  nodePools:
    - {name: p-a100, gpuModel: a100-40gb, gpusPerNode: 1, nodes: 1, nodeLabels: {p: a}, mig: {layout: {1g.5gb: 7}}}
    - {name: p-a30, gpuModel: a30-24gb, gpusPerNode: 1, nodes: 1, nodeLabels: {p: d}, mig: {layout: {1g.6gb: 4}}}
---
apiVersion: capops.dev/v1alpha1
kind: Team
metadata: {name: t1}
spec:
  costCenter: x
  clusters:
    c1:
      namespace: t1
      quota: {nvidia.com/mig-1g.5gb: 7, nvidia.com/mig-1g.6gb: 4}
      borrowingLimit: {nvidia.com/mig-1g.5gb: 5}
"#;
    let r = repo(docs);
    let errors: Vec<_> = r.diagnostics.iter().filter(|d| d.is_error()).collect();
    assert!(errors.is_empty(), "{errors:#?}");
    let cq = r
        .files
        .iter()
        .find(|f| {
            f.value["kind"] == "ClusterQueue"
                && f.value["metadata"]["name"]
                    .as_str()
                    .is_some_and(|n| n.contains("t1"))
        })
        .map(|f| &f.value)
        .expect("t1's ClusterQueue");
    let mut limits = Vec::new();
    for group in cq["spec"]["resourceGroups"].as_array().unwrap() {
        for flavor in group["flavors"].as_array().unwrap() {
            for res in flavor["resources"].as_array().unwrap() {
                limits.push((
                    flavor["name"].as_str().unwrap().to_string(),
                    res["name"].as_str().unwrap().to_string(),
                    res.get("borrowingLimit").cloned(),
                ));
            }
        }
    }
    let of = |name: &str| {
        limits
            .iter()
            .filter(|l| l.1 == name)
            .filter_map(|l| l.2.clone())
            .collect::<Vec<_>>()
    };
    assert_eq!(
        of("nvidia.com/mig-1g.5gb"),
        vec![serde_json::json!("5")],
        "{limits:?}"
    );
    assert!(of("nvidia.com/mig-1g.6gb").is_empty(), "{limits:?}");
}

#[test]
fn strings_for_terraform_are_literals() {
    let mut v = serde_json::json!({
        "a": "x${file(\"/etc/passwd\")}",
        "b": ["%{ for x in y }", "plain", "$${already}"],
        "c": {"d": 3, "e": "${"},
    });
    super::cloud::literal(&mut v);
    assert_eq!(
        v,
        serde_json::json!({
            "a": "x$${file(\"/etc/passwd\")}",
            "b": ["%%{ for x in y }", "plain", "$$${already}"],
            "c": {"d": 3, "e": "$${"},
        })
    );
}

#[test]
fn the_sources_annotation_stays_within_what_kubernetes_allows() {
    let few: Vec<String> = vec!["Team/a".into(), "CapacityRequest/b".into()];
    assert_eq!(sources_value(&few), "Team/a,CapacityRequest/b");
    // 4,000 requests in force for one team: the list would be about 300 KB,
    // past the 256 KiB Kubernetes allows for all of an object's annotations.
    let many: Vec<String> = (0..4000)
        .map(|i| format!("CapacityRequest/a-rather-long-request-name-{i:05}"))
        .collect();
    let v = sources_value(&many);
    assert!(v.len() <= MAX_SOURCES_BYTES, "{}", v.len());
    assert!(v.starts_with("CapacityRequest/a-rather-long-request-name-00000,"));
    let shown = v.matches("CapacityRequest/").count();
    assert!(v.ends_with(&format!(",… and {} more", 4000 - shown)), "{v}");
    // One name longer than the limit by itself.
    let huge = vec!["Team/".to_string() + &"x".repeat(MAX_SOURCES_BYTES)];
    assert_eq!(sources_value(&huge), "… 1 document");
}
