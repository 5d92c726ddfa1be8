//! The sync decisions without a server: ownership, when a dry-run is needed,
//! what the plan says for each answer a server can give, prune rules, node
//! labels and their conflicts, the MIG rollout state, verification, and how
//! plans read.

// Tests build repositories in temporary folders.
#![allow(clippy::disallowed_methods, clippy::disallowed_types)]

use super::desired::{self, DesiredObject};
use super::diff::*;
use super::nodes;
use super::plan::*;
use serde_json::{Value, json};
use std::collections::BTreeMap;

const REPO: &str = "acme";
const CLUSTER: &str = "c";
const ID: Ident = Ident {
    repository: REPO,
    cluster: CLUSTER,
    known: &[],
};

fn rq(ns: &str, gpus: Value) -> Value {
    json!({
        "apiVersion": "v1", "kind": "ResourceQuota",
        "metadata": {"name": "capops-gpu", "namespace": ns,
                     "labels": {"app.kubernetes.io/managed-by": "capops"},
                     "annotations": {"capops.dev/revision": "r1", "capops.dev/sources": "Team/ml"}},
        "spec": {"hard": {"requests.nvidia.com/gpu": gpus}}
    })
}

fn want(v: &Value) -> DesiredObject {
    desired::object(v, REPO, CLUSTER).unwrap()
}

/// A live object as the server would hold `v` after capops applied it.
fn live(v: &Value, rv: &str) -> Value {
    let mut l = want(v).value;
    l["metadata"]["resourceVersion"] = json!(rv);
    l["metadata"]["uid"] = json!(format!("uid-{rv}"));
    l["metadata"]["managedFields"] = json!([{"manager": "capops", "operation": "Apply", "fieldsV1": {
        "f:metadata": {"f:labels": {"f:app.kubernetes.io/managed-by": {}},
                       "f:annotations": {"f:capops.dev/revision": {}, "f:capops.dev/sources": {}, "f:capops.dev/repository": {}}},
        "f:spec": {"f:hard": {"f:requests.nvidia.com/gpu": {}}}}}]);
    l["status"] = json!({"used": {"requests.nvidia.com/gpu": "3"}});
    l
}

fn live_set(objects: &[Value]) -> Live {
    let mut l = Live::default();
    for v in objects {
        let r = want(v).target;
        l.listed.insert(r.clone());
        l.objects.insert(r, v.clone());
    }
    l
}

fn failure(code: u16, reason: &str, message: &str, causes: &[(&str, &str, &str)]) -> ApiFailure {
    let cause = |&(r, f, m): &(&str, &str, &str)| Cause {
        reason: r.into(),
        field: f.into(),
        message: m.into(),
    };
    ApiFailure {
        code,
        reason: reason.into(),
        message: message.into(),
        causes: causes.iter().map(cause).collect(),
        retry_after: None,
    }
}

#[test]
fn ownership_comes_from_gitops_markers_the_label_and_the_repository() {
    let mut v = live(&rq("ml", json!("8")), "1");
    assert_eq!(owner(&v, &ID), Owner::Ours);
    // Applied for another Cluster of this repository: that cluster's, even
    // when this context reaches its API server; an object applied before
    // capops named the cluster is taken as this one's.
    let known = [CLUSTER.to_string(), "other-cluster".to_string()];
    let here = Ident {
        repository: REPO,
        cluster: "other-cluster",
        known: &known,
    };
    assert_eq!(owner(&v, &here), Owner::OtherCluster(CLUSTER.into()));
    // A Cluster no longer in the repository (renamed, removed): claimable.
    let renamed = ["other-cluster".to_string()];
    let after = Ident {
        known: &renamed,
        ..here
    };
    assert_eq!(owner(&v, &after), Owner::Ours);
    let mut older = v.clone();
    older["metadata"]["annotations"]
        .as_object_mut()
        .unwrap()
        .remove("capops.dev/cluster");
    assert_eq!(owner(&older, &here), Owner::Ours);
    assert_eq!(
        owner(
            &v,
            &Ident {
                repository: "other",
                cluster: CLUSTER,
                known: &[]
            }
        ),
        Owner::OtherRepository(REPO.into())
    );
    v["metadata"]["annotations"]["argocd.argoproj.io/tracking-id"] =
        json!("app:/ResourceQuota:ml/capops-gpu");
    assert!(matches!(owner(&v, &ID), Owner::Gitops { tool, .. } if tool == "Argo CD"));
    let mut f = live(&rq("ml", json!("8")), "1");
    f["metadata"]["labels"]["kustomize.toolkit.fluxcd.io/name"] = json!("gpu");
    assert!(matches!(owner(&f, &ID), Owner::Gitops { tool, .. } if tool == "Flux"));
    // Argo CD's label tracking, its common instance label, its multi-instance
    // annotation, and Helm releases: the tool's, whatever capops's label says.
    for (annotation, key, tool) in [
        (
            false,
            "app.kubernetes.io/instance",
            "Argo CD (label tracking) or Helm",
        ),
        (false, "argocd.argoproj.io/instance", "Argo CD"),
        (true, "argocd.argoproj.io/installation-id", "Argo CD"),
        (true, "meta.helm.sh/release-name", "Helm"),
    ] {
        let mut g = live(&rq("ml", json!("8")), "1");
        let at = if annotation { "annotations" } else { "labels" };
        g["metadata"][at][key] = json!("gpu-capacity");
        assert!(
            matches!(owner(&g, &ID), Owner::Gitops { tool: t, .. } if t == tool),
            "{key}"
        );
    }
    let mut u = live(&rq("ml", json!("8")), "1");
    u["metadata"]["annotations"]
        .as_object_mut()
        .unwrap()
        .remove("capops.dev/repository");
    assert_eq!(owner(&u, &ID), Owner::Unclaimed);
    let mut h = live(&rq("ml", json!("8")), "1");
    h["metadata"]["labels"] = json!({});
    h["metadata"]["managedFields"] = json!([{"manager": "kubectl-create", "operation": "Update"}, {"manager": "capops", "operation": "Apply"}]);
    assert_eq!(
        owner(&h, &ID),
        Owner::Foreign(vec!["kubectl-create".into()])
    );
}

#[test]
fn a_dry_run_is_needed_only_when_something_may_change() {
    let d = want(&rq("ml", json!("8")));
    assert!(needs_dry_run(&d, None, &ID), "absent");
    let same = live(&rq("ml", json!("8000m")), "1");
    assert!(
        !needs_dry_run(&d, Some(&same), &ID),
        "same value, other spelling"
    );
    let mut other_rev = same.clone();
    other_rev["metadata"]["annotations"]["capops.dev/revision"] = json!("r0");
    assert!(
        !needs_dry_run(&d, Some(&other_rev), &ID),
        "only the revision differs"
    );
    let changed = live(&rq("ml", json!("4")), "1");
    assert!(needs_dry_run(&d, Some(&changed), &ID));
    // capops owned a field it no longer applies: the apply removes it.
    let mut extra = same.clone();
    extra["spec"]["hard"]["requests.nvidia.com/mig-1g.10gb"] = json!("2");
    extra["metadata"]["managedFields"][0]["fieldsV1"]["f:spec"]["f:hard"]["f:requests.nvidia.com/mig-1g.10gb"] =
        json!({});
    assert!(needs_dry_run(&d, Some(&extra), &ID));
    // Someone else's extra field is not capops's business.
    let mut theirs = same.clone();
    theirs["spec"]["scopes"] = json!(["NotTerminating"]);
    assert!(!needs_dry_run(&d, Some(&theirs), &ID));
    let mut argo = same.clone();
    argo["metadata"]["annotations"]["argocd.argoproj.io/tracking-id"] = json!("x");
    assert!(
        !needs_dry_run(&d, Some(&argo), &ID),
        "never written, nothing to ask"
    );
}

#[test]
fn the_plan_follows_each_answer_of_the_server() {
    let a = rq("a", json!("8"));
    let b = rq("b", json!("8"));
    let c = rq("c", json!("8"));
    let e = rq("e", json!("8"));
    let f = rq("f", json!("8"));
    let desired: Vec<DesiredObject> = [&a, &b, &c, &e, &f].iter().map(|v| want(v)).collect();
    let live = live_set(&[
        live(&rq("b", json!("4")), "7"),
        live(&rq("c", json!("8")), "8"),
    ]);
    let mut dry = BTreeMap::new();
    let mut after_a = want(&a).value;
    after_a["metadata"]["uid"] = json!("new");
    dry.insert(desired[0].target.clone(), DryRun::Applied(after_a));
    let mut after_b = live.objects[&desired[1].target].clone();
    after_b["spec"]["hard"]["requests.nvidia.com/gpu"] = json!("8");
    after_b["metadata"]["annotations"]["capops.dev/revision"] = json!("r2");
    dry.insert(desired[1].target.clone(), DryRun::Applied(after_b));
    dry.insert(
        desired[3].target.clone(),
        DryRun::Failed(failure(404, "NotFound", "namespaces \"e\" not found", &[])),
    );
    dry.insert(
        desired[4].target.clone(),
        DryRun::Failed(failure(
            422,
            "Invalid",
            "ResourceQuota \"capops-gpu\" is invalid",
            &[(
                "FieldValueInvalid",
                "spec.hard[requests.nvidia.com/gpu]",
                "bad",
            )],
        )),
    );
    let (changes, unchanged, observed) = plan_objects(&desired, &live, &dry, &ID);
    assert_eq!(unchanged, 1, "c needs nothing");
    let by_ns = |ns: &str| {
        changes
            .iter()
            .find(|c| c.target.namespace.as_deref() == Some(ns))
            .unwrap()
    };
    assert_eq!(by_ns("a").action, Action::Create);
    assert!(by_ns("a").object.is_some());
    let u = by_ns("b");
    assert_eq!(u.action, Action::Update);
    assert_eq!(u.resource_version.as_deref(), Some("7"));
    // One field, the revision annotation left out.
    assert_eq!(u.diff.len(), 1, "{:?}", u.diff);
    assert_eq!(u.diff[0].path, r#"spec.hard["requests.nvidia.com/gpu"]"#);
    assert_eq!(
        (u.diff[0].before.clone(), u.diff[0].after.clone()),
        (Some(json!("4")), Some(json!("8")))
    );
    let err = by_ns("e").error.clone().unwrap();
    assert_eq!(err.code, "namespace-missing");
    assert!(err.help.unwrap().contains("create the namespace `e`"));
    let err = by_ns("f").error.clone().unwrap();
    assert_eq!(err.code, "object-invalid");
    assert!(
        err.message
            .contains("fields: spec.hard[requests.nvidia.com/gpu]"),
        "{}",
        err.message
    );
    assert_eq!(observed.len(), 2);
    assert_eq!(observed["ResourceQuota/b/capops-gpu"].resource_version, "7");
}

#[test]
fn field_conflicts_name_the_manager_and_show_what_force_would_do() {
    let d = want(&rq("ml", json!("8")));
    let l = live(&rq("ml", json!("4")), "3");
    let mut forced = l.clone();
    forced["spec"]["hard"]["requests.nvidia.com/gpu"] = json!("8");
    let f = failure(
        409,
        "Conflict",
        "Apply failed with 1 conflict",
        &[(
            "FieldManagerConflict",
            ".spec.hard.requests.nvidia.com/gpu",
            "conflict with \"kubectl-edit\"",
        )],
    );
    let dry = BTreeMap::from([(
        d.target.clone(),
        DryRun::Conflict {
            failure: f,
            forced: Some(forced),
        },
    )]);
    let (changes, _, _) = plan_objects(std::slice::from_ref(&d), &live_set(&[l]), &dry, &ID);
    let c = &changes[0];
    assert_eq!(c.action, Action::Conflict);
    let Some(Conflict::Fields { fields }) = &c.conflict else {
        panic!("{c:?}")
    };
    assert_eq!(fields[0].manager.as_deref(), Some("kubectl-edit"));
    assert!(c.conflict.as_ref().unwrap().forceable());
    assert_eq!(c.diff.len(), 1);
}

#[test]
fn prune_takes_only_this_repositorys_objects_queues_before_what_they_name() {
    let pc = json!({"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "value": 10,
        "metadata": {"name": "old", "labels": {"app.kubernetes.io/managed-by": "capops"}}});
    let cq = json!({"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ClusterQueue", "spec": {},
        "metadata": {"name": "old", "labels": {"app.kubernetes.io/managed-by": "capops"}}});
    let lq = json!({"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "LocalQueue", "spec": {"clusterQueue": "old"},
        "metadata": {"name": "gpu", "namespace": "old", "labels": {"app.kubernetes.io/managed-by": "capops"}}});
    let mut objects: Vec<Value> = [&pc, &cq, &lq]
        .iter()
        .map(|v| {
            let mut l = live(v, "5");
            l["metadata"]["uid"] = json!("u");
            l
        })
        .collect();
    // capops's label and this repository's annotation, patched on by another
    // manager (capops never applied it): not capops's to delete.
    let mut patched = want(&rq("gpu-operator", json!("1"))).value;
    patched["metadata"]["resourceVersion"] = json!("10");
    patched["metadata"]["managedFields"] = json!([{"manager": "kubectl-patch", "operation": "Update", "fieldsV1": {
        "f:metadata": {"f:labels": {"f:app.kubernetes.io/managed-by": {}},
                       "f:annotations": {"f:capops.dev/repository": {}}}}}]);
    objects.push(patched);
    let mut other = live(&rq("x", json!("1")), "6");
    other["metadata"]["annotations"]["capops.dev/repository"] = json!("another");
    let mut unclaimed = live(&rq("y", json!("1")), "7");
    unclaimed["metadata"]["annotations"]
        .as_object_mut()
        .unwrap()
        .remove("capops.dev/repository");
    let mut argo = live(&rq("z", json!("1")), "8");
    argo["metadata"]["annotations"]["argocd.argoproj.io/tracking-id"] = json!("t");
    // This repository's, applied for another of its clusters: never pruned here.
    let mut sibling = live(&rq("w", json!("1")), "9");
    sibling["metadata"]["annotations"]["capops.dev/cluster"] = json!("train-a100");
    objects.extend([other, unclaimed, argo, sibling]);
    let (changes, _, _) = plan_objects(&[], &live_set(&objects), &BTreeMap::new(), &ID);
    let deleted: Vec<String> = changes
        .iter()
        .map(|c| format!("{:?} {}", c.action, c.target))
        .collect();
    assert_eq!(
        deleted,
        vec![
            "Delete LocalQueue old/gpu",
            "Delete ClusterQueue old",
            "Delete PriorityClass old"
        ]
    );
    assert_eq!(changes[0].uid.as_deref(), Some("u"));
    assert_eq!(changes[0].resource_version.as_deref(), Some("5"));
}

#[test]
fn an_unlabelled_object_of_the_same_name_is_fetched_and_never_taken_silently() {
    let d = want(&rq("ml", json!("8")));
    let mut existing = want(&rq("ml", json!("8"))).value;
    existing["metadata"]["resourceVersion"] = json!("9");
    assert!(needs_fetch(None, Some(&DryRun::Applied(existing.clone()))));
    assert!(!needs_fetch(
        None,
        Some(&DryRun::Applied(want(&rq("ml", json!("8"))).value))
    ));
    let mut hand = rq("ml", json!("1"));
    hand["metadata"]["labels"] = json!({});
    hand["metadata"]["resourceVersion"] = json!("9");
    hand["metadata"]["managedFields"] =
        json!([{"manager": "kubectl-create", "operation": "Update"}]);
    let mut l = Live::default();
    l.objects.insert(d.target.clone(), hand);
    let dry = BTreeMap::from([(d.target.clone(), DryRun::Applied(existing))]);
    let (changes, _, _) = plan_objects(std::slice::from_ref(&d), &l, &dry, &ID);
    assert_eq!(
        changes[0].conflict,
        Some(Conflict::NotOwned {
            managers: vec!["kubectl-create".into()]
        })
    );
    // Not listed, so never a prune candidate either.
    let (none, _, _) = plan_objects(&[], &l, &BTreeMap::new(), &ID);
    assert!(none.is_empty());
}

#[test]
fn content_hash_ignores_status_and_bookkeeping() {
    let a = live(&rq("ml", json!("8")), "1");
    let mut b = a.clone();
    b["metadata"]["resourceVersion"] = json!("2");
    b["status"] = json!({"used": {"requests.nvidia.com/gpu": "7"}});
    assert_eq!(content_hash(&a), content_hash(&b));
    b["spec"]["hard"]["requests.nvidia.com/gpu"] = json!("9");
    assert_ne!(content_hash(&a), content_hash(&b));
}

fn node(name: &str, labels: Value, managed: Value) -> Value {
    json!({"metadata": {"name": name, "labels": labels, "managedFields": managed}})
}

fn pool(name: &str, sel: (&str, &str), labels: &[(&str, &str)]) -> desired::PoolLabels {
    desired::PoolLabels {
        pool: name.into(),
        selector: BTreeMap::from([(sel.0.to_string(), sel.1.to_string())]),
        labels: labels
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
        nodes: 1,
    }
}

#[test]
fn node_labels_change_unless_another_manager_chose_otherwise() {
    let mig = "nvidia.com/mig.config";
    let owned_by = |m: &str, key: &str| {
        json!([{"manager": m, "operation": "Update", "time": "2026-11-23T00:00:01Z",
        "fieldsV1": {"f:metadata": {"f:labels": {format!("f:{key}"): {}}}}}])
    };
    let nodes = vec![
        node("fresh", json!({"pool": "p"}), json!([])),
        node(
            "done",
            json!({"pool": "p", mig: "capops-x"}),
            owned_by("capops", mig),
        ),
        node(
            "default",
            json!({"pool": "p", mig: "all-disabled"}),
            owned_by("gpu-operator", mig),
        ),
        node(
            "hand",
            json!({"pool": "p", mig: "all-1g.10gb"}),
            owned_by("kubectl-label", mig),
        ),
        node("both", json!({"pool": "p", "extra": "y"}), json!([])),
    ];
    let pools = vec![
        pool("p", ("pool", "p"), &[(mig, "capops-x")]),
        pool("q", ("extra", "y"), &[(mig, "capops-y")]),
    ];
    let changes = nodes::plan(&pools, &nodes);
    let by = |n: &str| changes.iter().find(|c| c.node == n);
    assert_eq!(
        by("fresh").unwrap().labels[mig],
        LabelChange {
            before: None,
            after: "capops-x".into()
        }
    );
    assert!(by("fresh").unwrap().conflict.is_none());
    assert!(by("done").is_none());
    assert!(
        by("default").unwrap().conflict.is_none(),
        "the operator's default is replaced"
    );
    let Some(Conflict::Fields { fields }) = &by("hand").unwrap().conflict else {
        panic!()
    };
    assert_eq!(fields[0].manager.as_deref(), Some("kubectl-label"));
    assert!(
        matches!(&by("both").unwrap().conflict, Some(Conflict::Pools { pools, .. }) if pools == &vec!["p".to_string(), "q".to_string()])
    );
}

#[test]
fn the_rollout_counts_only_states_written_after_the_label() {
    let state = |s: &str, at: &str| {
        node(
            "n",
            json!({"nvidia.com/mig.config.state": s}),
            json!([{"manager": "nvidia-mig-manager", "operation": "Update", "time": at,
        "fieldsV1": {"f:metadata": {"f:labels": {"f:nvidia.com/mig.config.state": {}}}}}]),
        )
    };
    let at = "2026-11-23T00:00:05Z";
    assert_eq!(
        nodes::rollout(&state("success", "2026-11-23T00:00:01Z"), at),
        nodes::Rollout::Waiting
    );
    assert_eq!(
        nodes::rollout(&state("pending", "2026-11-23T00:00:06Z"), at),
        nodes::Rollout::Pending
    );
    assert_eq!(
        nodes::rollout(&state("success", "2026-11-23T00:00:07Z"), at),
        nodes::Rollout::Success
    );
    assert_eq!(
        nodes::rollout(&state("failed", "2026-11-23T00:00:07Z"), at),
        nodes::Rollout::Failed
    );
    assert!(nodes::Rollout::Failed.done() && !nodes::Rollout::Pending.done());
}

#[test]
fn gfd_product_labels_name_catalog_models() {
    let id = |p: &str| nodes::product_model(p).map(|m| m.id);
    assert_eq!(id("NVIDIA-H100-80GB-HBM3"), Some("h100-80gb-sxm"));
    assert_eq!(id("NVIDIA-A100-SXM4-40GB-MIG-1g.5gb"), Some("a100-40gb"));
    assert_eq!(id("NVIDIA-A100-SXM4-80GB"), Some("a100-80gb"));
    assert_eq!(id("Tesla-T4-SHARED"), Some("t4"));
    assert_eq!(id("NVIDIA-L4"), Some("l4"));
    assert_eq!(id("Some-Other-GPU"), None);
}

#[test]
fn verify_compares_nodes_with_the_pool() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("capops.yaml"),
        "apiVersion: capops.dev/v1alpha1\nkind: Config\nmetadata: {name: c}\nspec: {}\n",
    )
    .unwrap();
    std::fs::write(dir.path().join("c.yaml"), r#"apiVersion: capops.dev/v1alpha1
kind: Cluster
metadata: {name: gpu}
spec:
  environment: research
  provider: onprem
  nodePools:
    - {name: mig, gpuModel: h100-80gb-sxm, gpusPerNode: 2, nodes: 2, nodeLabels: {pool: mig}, mig: {layout: {1g.10gb: 7}}}
    - {name: whole, gpuModel: l4, gpusPerNode: 1, nodes: 1, nodeLabels: {pool: whole}, timeSlicing: {replicas: 4}}
"#).unwrap();
    let head = crate::pipeline::validate_dir(dir.path()).unwrap();
    assert!(head.is_valid(), "{:?}", head.diagnostics);
    let spec = &head.repo.clusters["gpu"].spec;
    let good_mig = |n: &str| {
        json!({"metadata": {"name": n, "labels": {
        "nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3", "nvidia.com/gpu.count": "2",
        "nvidia.com/mig.config": "cfg", "nvidia.com/mig.config.state": "success", "nvidia.com/mig.strategy": "mixed"}},
        "status": {"allocatable": {"nvidia.com/mig-1g.10gb": "14"}}})
    };
    let whole = json!({"metadata": {"name": "w", "labels": {"nvidia.com/gpu.product": "NVIDIA-L4", "nvidia.com/gpu.count": "1"}},
        "status": {"allocatable": {"nvidia.com/gpu": "4"}}});
    let configs = BTreeMap::from([("mig".to_string(), "cfg".to_string())]);
    let found = BTreeMap::from([
        ("mig".to_string(), vec![good_mig("m0"), good_mig("m1")]),
        ("whole".to_string(), vec![whole.clone()]),
    ]);
    assert_eq!(nodes::verify(spec, &found, &configs), vec![]);
    let mut bad = good_mig("m1");
    bad["metadata"]["labels"]["nvidia.com/mig.strategy"] = json!("single");
    bad["status"]["allocatable"]["nvidia.com/mig-1g.10gb"] = json!("7");
    let mut whole_bad = whole;
    whole_bad["status"]["allocatable"]["nvidia.com/gpu"] = json!("1");
    let found = BTreeMap::from([
        ("mig".to_string(), vec![bad]),
        ("whole".to_string(), vec![whole_bad]),
    ]);
    let checks: Vec<String> = nodes::verify(spec, &found, &configs)
        .iter()
        .map(|m| format!("{} {} {}", m.check, m.expected, m.found))
        .collect();
    assert_eq!(
        checks,
        vec![
            "node-count 2 nodes 1 nodes match pool=mig",
            "mig-strategy mixed single",
            "allocatable nvidia.com/mig-1g.10gb 14 nvidia.com/mig-1g.10gb 7",
            "allocatable nvidia.com/gpu 4 nvidia.com/gpu 1",
        ]
    );
}

#[test]
fn plans_read_like_terraform() {
    let mut p = ClusterPlan {
        cluster: "gpu".into(),
        context: Some("ctx".into()),
        changes: vec![Change {
            action: Action::Update,
            target: want(&rq("ml", json!("8"))).target,
            resource_version: Some("1".into()),
            uid: None,
            live_revision: None,
            diff: vec![super::fields::FieldDiff {
                path: r#"spec.hard["requests.nvidia.com/gpu"]"#.into(),
                before: Some(json!("4")),
                after: Some(json!("8")),
            }],
            conflict: None,
            error: None,
            object: None,
        }],
        ..ClusterPlan::default()
    };
    p.recount();
    assert_eq!(p.summary.change, 1);
    let text = super::report::cluster_plan(&p);
    assert_eq!(
        text,
        "cluster gpu (context ctx):\n  ~ ResourceQuota ml/capops-gpu\n      spec.hard[\"requests.nvidia.com/gpu\"]: \"4\" → \"8\"\n  Plan: 0 to add, 1 to change, 0 to delete, 0 conflicts.\n"
    );
    // The plan file reads back as the same plan.
    let plan = Plan {
        version: PLAN_VERSION,
        repository: REPO.into(),
        clusters: vec![p],
        ..Plan::default()
    };
    let back: Plan = serde_json::from_str(&serde_json::to_string(&plan).unwrap()).unwrap();
    assert_eq!(back, plan);
}
