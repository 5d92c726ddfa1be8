//! The contract suite: the same behaviour tests against the fake API server
//! and against the real Kubernetes API machinery (etcd and
//! apiextensions-apiserver serving the Kueue kinds through CRDs), so the
//! fake the other sync tests rely on cannot drift from the real semantics.
//!
//! Part one checks the API semantics sync relies on (server-side apply,
//! managedFields, conflicts, force, dry-run, resourceVersions, Status
//! bodies, label-selector lists with `continue`); part two runs capops's
//! plan and apply scenarios. The real tier runs when `.ci/kube-apiserver.sh`
//! has built the server, and must run when CAPOPS_CI is set.

mod fake_kube;
#[path = "contract/real.rs"]
mod real;

use capops::sync::apply::{ApplyOptions, apply_cluster};
use capops::sync::client::{CallError, Conn};
use capops::sync::desired::{self, Desired};
use capops::sync::diff::ApiFailure;
use capops::sync::plan::{Action, Conflict};
use capops::sync::run::{self, Quiet, Settings};
use kube::config::{KubeConfigOptions, Kubeconfig};
use serde_json::{Value, json};
use std::path::Path;

const KUEUE: &str = "/apis/kueue.x-k8s.io/v1beta2";

/// A server under test.
struct Backend {
    name: &'static str,
    client: kube::Client,
    conn: Conn,
}

async fn client_for(kubeconfig: &Path) -> kube::Client {
    let kc = Kubeconfig::read_from(kubeconfig).unwrap();
    let config = kube::Config::from_custom_kubeconfig(kc, &KubeConfigOptions::default())
        .await
        .unwrap();
    kube::Client::try_from(config).unwrap()
}

async fn conn_for(kubeconfig: &Path) -> Conn {
    let kc = Kubeconfig::read_from(kubeconfig).unwrap();
    let plugins = std::sync::Arc::new(capops::sync::credential_plugin::Plugins::new(None, false));
    Conn::connect(Some(&kc), None, &plugins).await.unwrap()
}

/// Server-side apply as any field manager.
async fn apply_as(
    b: &Backend,
    manager: &str,
    path: &str,
    obj: &Value,
    force: bool,
    dry_run: bool,
) -> Result<Value, ApiFailure> {
    let mut pp = kube::api::PatchParams::apply(manager);
    pp.force = force;
    pp.dry_run = dry_run;
    let name = obj["metadata"]["name"].as_str().unwrap();
    let req = kube::core::Request::new(path)
        .patch(name, &pp, &kube::api::Patch::Apply(obj))
        .unwrap();
    b.client.request::<Value>(req).await.map_err(failure)
}

fn failure(e: kube::Error) -> ApiFailure {
    match e {
        kube::Error::Api(s) => ApiFailure {
            code: s.code,
            reason: s.reason.clone(),
            message: s.message.clone(),
            causes: s
                .details
                .map(|d| {
                    d.causes
                        .into_iter()
                        .map(|c| capops::sync::diff::Cause {
                            reason: c.reason,
                            field: c.field,
                            message: c.message,
                        })
                        .collect()
                })
                .unwrap_or_default(),
            retry_after: None,
        },
        e => panic!("not an API error: {e}"),
    }
}

async fn get(b: &Backend, path: &str, name: &str) -> Option<Value> {
    b.conn.get(path, name).await.unwrap()
}

fn cq(name: &str, cohort: &str, quota: Value) -> Value {
    json!({
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "ClusterQueue",
        "metadata": {"name": name, "labels": {"app.kubernetes.io/managed-by": "capops"}},
        "spec": {
            "cohortName": cohort,
            "namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": name}},
            "resourceGroups": [{
                "coveredResources": ["nvidia.com/gpu"],
                "flavors": [{"name": "h100", "resources": [{"name": "nvidia.com/gpu", "nominalQuota": quota}]}]
            }]
        }
    })
}

fn rf(name: &str) -> Value {
    json!({
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "ResourceFlavor",
        "metadata": {"name": name, "labels": {"app.kubernetes.io/managed-by": "capops"}},
        "spec": {"nodeLabels": {"acme.ai/gpu-pool": name}}
    })
}

fn managers(v: &Value) -> Vec<(String, String)> {
    v["metadata"]["managedFields"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|m| {
            (
                m["manager"].as_str().unwrap_or_default().to_string(),
                m["operation"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect()
}

fn quota(v: &Value) -> Value {
    v["spec"]["resourceGroups"][0]["flavors"][0]["resources"][0]["nominalQuota"].clone()
}

fn rv(v: &Value) -> String {
    v["metadata"]["resourceVersion"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

// ---- Part one: API semantics --------------------------------------------

async fn apply_records_the_manager_and_dry_run_persists_nothing(b: &Backend) {
    let obj = cq("a1", "c", json!("4"));
    let dry = apply_as(
        b,
        "capops",
        &format!("{KUEUE}/clusterqueues"),
        &obj,
        false,
        true,
    )
    .await
    .unwrap();
    assert_eq!(quota(&dry), json!("4"));
    assert!(
        dry["metadata"].get("resourceVersion").is_none(),
        "{}: a dry-run create has no resourceVersion",
        b.name
    );
    assert!(dry["metadata"]["uid"].is_string());
    assert!(
        get(b, &format!("{KUEUE}/clusterqueues"), "a1")
            .await
            .is_none(),
        "{}: dry-run persisted",
        b.name
    );
    let live = apply_as(
        b,
        "capops",
        &format!("{KUEUE}/clusterqueues"),
        &obj,
        false,
        false,
    )
    .await
    .unwrap();
    assert_eq!(
        managers(&live),
        vec![("capops".to_string(), "Apply".to_string())]
    );
    assert!(!rv(&live).is_empty());
    assert_eq!(live["metadata"]["generation"], json!(1));
    // The same apply again writes nothing: the resourceVersion stays.
    let again = apply_as(
        b,
        "capops",
        &format!("{KUEUE}/clusterqueues"),
        &obj,
        false,
        false,
    )
    .await
    .unwrap();
    assert_eq!(
        rv(&again),
        rv(&live),
        "{}: an identical apply made a new version",
        b.name
    );
    // Custom resources keep quantities as written.
    let q = apply_as(
        b,
        "capops",
        &format!("{KUEUE}/clusterqueues"),
        &cq("a1", "c", json!("4000m")),
        false,
        true,
    )
    .await
    .unwrap();
    assert_eq!(quota(&q), json!("4000m"));
}

async fn another_manager_conflicts_then_forces(b: &Backend) {
    let path = format!("{KUEUE}/clusterqueues");
    apply_as(
        b,
        "capops",
        &path,
        &cq("a2", "mine", json!("4")),
        false,
        false,
    )
    .await
    .unwrap();
    let theirs = json!({"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ClusterQueue",
        "metadata": {"name": "a2"}, "spec": {"cohortName": "theirs"}});
    let err = apply_as(b, "kubectl", &path, &theirs, false, false)
        .await
        .unwrap_err();
    assert_eq!(
        (err.code, err.reason.as_str()),
        (409, "Conflict"),
        "{}",
        b.name
    );
    assert_eq!(err.causes.len(), 1);
    assert_eq!(err.causes[0].reason, "FieldManagerConflict");
    assert_eq!(err.causes[0].field, ".spec.cohortName");
    assert_eq!(err.causes[0].message, "conflict with \"capops\"");
    let conflicts = err.field_conflicts().unwrap();
    assert_eq!(conflicts[0].manager.as_deref(), Some("capops"));
    // Same value: no conflict, shared ownership.
    let same = json!({"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ClusterQueue",
        "metadata": {"name": "a2"}, "spec": {"cohortName": "mine"}});
    apply_as(b, "shared", &path, &same, false, false)
        .await
        .unwrap();
    // Forced: kubectl takes the field; capops no longer owns it, so leaving it out keeps it.
    let forced = apply_as(b, "kubectl", &path, &theirs, true, false)
        .await
        .unwrap();
    assert_eq!(forced["spec"]["cohortName"], "theirs");
    let mut without = cq("a2", "x", json!("4"));
    without["spec"]
        .as_object_mut()
        .unwrap()
        .remove("cohortName");
    let after = apply_as(b, "capops", &path, &without, false, false)
        .await
        .unwrap();
    assert_eq!(after["spec"]["cohortName"], "theirs", "{}", b.name);
    let owners = capops::sync::fields::owners_of(
        &after,
        &[
            capops::sync::fields::Seg::Key("spec".into()),
            capops::sync::fields::Seg::Key("cohortName".into()),
        ],
        "capops",
    );
    // Forcing took the field from every manager that held another value.
    assert_eq!(owners, vec!["kubectl".to_string()]);
}

async fn a_field_goes_when_its_sole_owner_stops_applying_it(b: &Backend) {
    let path = format!("{KUEUE}/clusterqueues");
    let mut with = cq("a3", "c", json!("1"));
    with["spec"]["queueingStrategy"] = json!("StrictFIFO");
    let v = apply_as(b, "capops", &path, &with, false, false)
        .await
        .unwrap();
    assert_eq!(v["spec"]["queueingStrategy"], "StrictFIFO");
    let v2 = apply_as(b, "capops", &path, &cq("a3", "c", json!("1")), false, false)
        .await
        .unwrap();
    assert!(
        v2["spec"].get("queueingStrategy").is_none(),
        "{}: {v2}",
        b.name
    );
    assert_eq!(v2["metadata"]["generation"], json!(2));
}

async fn invalid_objects_get_422_with_causes(b: &Backend) {
    let path = format!("{KUEUE}/clusterqueues");
    let mut bad = cq("a4", "c", json!("1"));
    bad["spec"]["queueingStrategy"] = json!("Bogus");
    let err = apply_as(b, "capops", &path, &bad, false, false)
        .await
        .unwrap_err();
    assert_eq!(
        (err.code, err.reason.as_str()),
        (422, "Invalid"),
        "{}",
        b.name
    );
    let fields: Vec<&str> = err.causes.iter().map(|c| c.field.as_str()).collect();
    assert_eq!(fields, vec!["spec.queueingStrategy"], "{}", b.name);
    assert_eq!(err.causes[0].reason, "FieldValueNotSupported");
    assert!(
        err.message
            .starts_with("ClusterQueue.kueue.x-k8s.io \"a4\" is invalid"),
        "{}",
        err.message
    );
    let mut neg = cq("a4", "c", json!("lots"));
    neg["metadata"]["name"] = json!("a4");
    let err = apply_as(b, "capops", &path, &neg, false, false)
        .await
        .unwrap_err();
    assert_eq!(err.code, 422);
    assert!(
        err.causes.iter().any(|c| c.field.ends_with("nominalQuota")),
        "{}: {:?}",
        b.name,
        err.causes
    );
}

async fn stale_versions_and_preconditions_conflict(b: &Backend) {
    let path = format!("{KUEUE}/resourceflavors");
    let v = apply_as(b, "capops", &path, &rf("a5"), false, false)
        .await
        .unwrap();
    let mut stale = rf("a5");
    stale["metadata"]["resourceVersion"] = json!("1");
    let err = apply_as(b, "capops", &path, &stale, false, false)
        .await
        .unwrap_err();
    assert_eq!(
        (err.code, err.reason.as_str()),
        (409, "Conflict"),
        "{}",
        b.name
    );
    assert!(
        err.message.contains("the object has been modified"),
        "{}",
        err.message
    );
    // Delete with a stale resourceVersion or a wrong uid: 409; then delete, then 404.
    let e = b
        .conn
        .delete(&path, "a5", None, Some("1"))
        .await
        .unwrap_err();
    assert!(
        matches!(&e, CallError::Api(a) if a.code == 409),
        "{}: {e}",
        b.name
    );
    let e = b
        .conn
        .delete(
            &path,
            "a5",
            Some("00000000-0000-0000-0000-000000000000"),
            None,
        )
        .await
        .unwrap_err();
    assert!(
        matches!(&e, CallError::Api(a) if a.code == 409 && a.message.contains("UID")),
        "{e}"
    );
    b.conn
        .delete(&path, "a5", v["metadata"]["uid"].as_str(), Some(&rv(&v)))
        .await
        .unwrap();
    let e = b.conn.delete(&path, "a5", None, None).await.unwrap_err();
    match e {
        CallError::Api(a) => {
            assert_eq!((a.code, a.reason.as_str()), (404, "NotFound"));
            assert_eq!(a.message, "resourceflavors.kueue.x-k8s.io \"a5\" not found");
        }
        e => panic!("{e}"),
    }
    assert!(get(b, &path, "a5").await.is_none());
}

async fn lists_select_by_label_page_by_page(b: &Backend) {
    let path = format!("{KUEUE}/resourceflavors");
    for i in 0..5 {
        let mut o = rf(&format!("a6-{i}"));
        o["metadata"]["labels"]["capops.dev/case"] = json!("a6");
        o["metadata"]["labels"]["tier"] = json!(if i % 2 == 0 { "even" } else { "odd" });
        apply_as(b, "capops", &path, &o, false, false)
            .await
            .unwrap();
    }
    let names = |items: &[Value]| -> Vec<String> {
        items
            .iter()
            .map(|v| v["metadata"]["name"].as_str().unwrap().to_string())
            .collect()
    };
    let all = b.conn.list(&path, "capops.dev/case=a6").await.unwrap();
    assert_eq!(names(&all), vec!["a6-0", "a6-1", "a6-2", "a6-3", "a6-4"]);
    assert_eq!(all[0]["kind"], "ResourceFlavor");
    let even = b
        .conn
        .list(&path, "capops.dev/case=a6,tier in (even)")
        .await
        .unwrap();
    assert_eq!(names(&even), vec!["a6-0", "a6-2", "a6-4"]);
    let not_odd = b
        .conn
        .list(&path, "capops.dev/case=a6,tier!=odd")
        .await
        .unwrap();
    assert_eq!(names(&not_odd).len(), 3);
    // Pages of two, following `continue`.
    let mut seen = Vec::new();
    let mut token: Option<String> = None;
    let mut pages = 0;
    loop {
        let mut q = format!("{path}?labelSelector=capops.dev%2Fcase%3Da6&limit=2");
        if let Some(t) = &token {
            q.push_str(&format!("&continue={t}"));
        }
        let req = http::Request::get(q).body(Vec::new()).unwrap();
        let page: Value = b.client.request(req).await.unwrap();
        pages += 1;
        seen.extend(names(page["items"].as_array().unwrap()));
        token = page["metadata"]["continue"]
            .as_str()
            .filter(|t| !t.is_empty())
            .map(str::to_string);
        if token.is_none() {
            break;
        }
    }
    assert_eq!(pages, 3, "{}", b.name);
    assert_eq!(seen.len(), 5);
    let bad = b.conn.list(&path, "tier===x").await.unwrap_err();
    assert!(
        matches!(&bad, CallError::Api(a) if a.code == 400),
        "{}: {bad}",
        b.name
    );
    let missing = b
        .conn
        .list(&format!("{KUEUE}/workloads"), "")
        .await
        .unwrap_err();
    assert!(
        matches!(&missing, CallError::Api(a) if a.code == 404),
        "{}: {missing}",
        b.name
    );
}

// ---- Part two: capops scenarios ------------------------------------------

fn desired(repo: &str, objects: &[Value]) -> Desired {
    let mut d = Desired {
        cluster: "c".into(),
        ..Desired::default()
    };
    for o in objects {
        d.objects.push(desired::object(o, repo, "c").unwrap());
    }
    d.objects.sort_by(|a, b| a.target.cmp(&b.target));
    d
}

fn settings(repo: &str) -> Settings {
    Settings {
        repository: repo.into(),
        concurrency: 4,
        clusters: Vec::new(),
    }
}

async fn plan(b: &Backend, d: &Desired, repo: &str) -> capops::sync::plan::ClusterPlan {
    let conn = b.conn.clone();
    run::plan_cluster(&conn, "c", None, d, &settings(repo), &Quiet).await
}

async fn apply(
    b: &Backend,
    p: &capops::sync::plan::ClusterPlan,
    repo: &str,
    force: bool,
) -> capops::sync::apply::ClusterApply {
    let o = ApplyOptions {
        force_conflicts: force,
        ..ApplyOptions::default()
    };
    apply_cluster(&b.conn, p, &o, &settings(repo), &Quiet).await
}

async fn create_then_nothing_then_one_update_then_one_prune(b: &Backend) {
    let repo = "repo-s1";
    let path = format!("{KUEUE}/clusterqueues");
    let objs = vec![
        rf("s1-h100"),
        cq("s1-a", "s1", json!("8")),
        cq("s1-b", "s1", json!("4")),
    ];
    let d = desired(repo, &objs);
    let p = plan(b, &d, repo).await;
    assert!(p.error.is_none(), "{}: {:?}", b.name, p.error);
    assert_eq!(
        (
            p.summary.add,
            p.summary.change,
            p.summary.delete,
            p.summary.conflict
        ),
        (3, 0, 0, 0)
    );
    let r = apply(b, &p, repo, false).await;
    assert_eq!(r.writes, 3, "{}: {:?}", b.name, r.outcomes);
    assert_eq!(r.failed(), 0);
    let rv_a = rv(&get(b, &path, "s1-a").await.unwrap());
    // Second run: nothing to do, and no dry-run needed either.
    let before = b.conn.calls();
    let p2 = plan(b, &d, repo).await;
    assert_eq!(
        p2.summary,
        capops::sync::plan::Summary {
            unchanged: 3,
            ..Default::default()
        },
        "{}: {:?}",
        b.name,
        p2.changes
    );
    let r2 = apply(b, &p2, repo, false).await;
    assert_eq!(r2.writes, 0);
    let calls = b.conn.calls();
    assert_eq!(calls.dry_runs - before.dry_runs, 0, "{}", b.name);
    assert_eq!(calls.writes - before.writes, 0);
    assert_eq!(rv(&get(b, &path, "s1-a").await.unwrap()), rv_a);
    // A changed quota is one update, with the field shown.
    let d3 = desired(
        repo,
        &[
            rf("s1-h100"),
            cq("s1-a", "s1", json!("10")),
            cq("s1-b", "s1", json!("4")),
        ],
    );
    let p3 = plan(b, &d3, repo).await;
    assert_eq!(
        (p3.summary.add, p3.summary.change, p3.summary.delete),
        (0, 1, 0),
        "{}",
        b.name
    );
    let u = &p3.changes[0];
    assert_eq!((u.action, u.target.name.as_str()), (Action::Update, "s1-a"));
    let d = &u.diff[0];
    assert!(d.path.ends_with("nominalQuota"), "{}", d.path);
    assert_eq!(
        (d.before.clone(), d.after.clone()),
        (Some(json!("8")), Some(json!("10")))
    );
    let r3 = apply(b, &p3, repo, false).await;
    assert_eq!(r3.writes, 1);
    assert_eq!(quota(&get(b, &path, "s1-a").await.unwrap()), json!("10"));
    // A removed team is one prune.
    let d4 = desired(repo, &[rf("s1-h100"), cq("s1-a", "s1", json!("10"))]);
    let p4 = plan(b, &d4, repo).await;
    assert_eq!(
        (p4.summary.add, p4.summary.change, p4.summary.delete),
        (0, 0, 1),
        "{}",
        b.name
    );
    assert_eq!(p4.changes[0].target.name, "s1-b");
    apply(b, &p4, repo, false).await;
    assert!(get(b, &path, "s1-b").await.is_none());
}

async fn equal_quantities_are_no_change(b: &Backend) {
    let repo = "repo-s2";
    let p = plan(b, &desired(repo, &[cq("s2-a", "s2", json!("1000m"))]), repo).await;
    apply(b, &p, repo, false).await;
    let p2 = plan(b, &desired(repo, &[cq("s2-a", "s2", json!("1"))]), repo).await;
    assert_eq!(p2.summary.unchanged, 1, "{}: {:?}", b.name, p2.changes);
    assert!(p2.changes.is_empty());
}

async fn what_capops_does_not_own_is_a_conflict_and_never_pruned(b: &Backend) {
    let repo = "repo-s3";
    let path = format!("{KUEUE}/clusterqueues");
    // By hand (no capops label), by Argo CD, and by another capacity repository.
    let mut by_hand = cq("s3-hand", "x", json!("1"));
    by_hand["metadata"]["labels"] = json!({});
    apply_as(
        b,
        "kubectl-client-side-apply",
        &path,
        &by_hand,
        false,
        false,
    )
    .await
    .unwrap();
    let mut argo = cq("s3-argo", "x", json!("1"));
    argo["metadata"]["annotations"] =
        json!({"argocd.argoproj.io/tracking-id": "gpu:kueue.x-k8s.io/ClusterQueue:/s3-argo"});
    apply_as(b, "argocd-controller", &path, &argo, false, false)
        .await
        .unwrap();
    let mut other = cq("s3-other", "x", json!("1"));
    other["metadata"]["annotations"] = json!({"capops.dev/repository": "someone-else"});
    apply_as(b, "capops", &path, &other, false, false)
        .await
        .unwrap();
    let wanted = vec![
        cq("s3-hand", "s3", json!("2")),
        cq("s3-argo", "s3", json!("2")),
        cq("s3-other", "s3", json!("2")),
        cq("s3-mine", "s3", json!("2")),
    ];
    let p = plan(b, &desired(repo, &wanted), repo).await;
    assert!(p.error.is_none(), "{:?}", p.error);
    let by_name = |n: &str| p.changes.iter().find(|c| c.target.name == n).unwrap();
    assert!(
        matches!(
            &by_name("s3-hand").conflict,
            Some(Conflict::NotOwned { .. })
        ),
        "{}: {:?}",
        b.name,
        by_name("s3-hand")
    );
    assert!(
        matches!(&by_name("s3-argo").conflict, Some(Conflict::Gitops { tool, .. }) if tool == "Argo CD")
    );
    assert!(
        matches!(&by_name("s3-other").conflict, Some(Conflict::OtherRepository { repository }) if repository == "someone-else")
    );
    assert_eq!(by_name("s3-mine").action, Action::Create);
    assert_eq!(
        (p.summary.add, p.summary.conflict, p.summary.delete),
        (1, 3, 0)
    );
    // The conflicts do not block the other object.
    let r = apply(b, &p, repo, false).await;
    assert_eq!(r.writes, 1, "{}: {:?}", b.name, r.outcomes);
    assert!(get(b, &path, "s3-mine").await.is_some());
    assert_eq!(quota(&get(b, &path, "s3-hand").await.unwrap()), json!("1"));
    // Desiring none of them: only capops's own object of this repository is pruned.
    let p2 = plan(b, &desired(repo, &[]), repo).await;
    let deleted: Vec<&str> = p2
        .changes
        .iter()
        .filter(|c| c.action == Action::Delete)
        .map(|c| c.target.name.as_str())
        .collect();
    assert_eq!(deleted, vec!["s3-mine"], "{}", b.name);
    // --force-conflicts takes the hand-made one over, never Argo's or the other repository's.
    let p3 = plan(b, &desired(repo, &wanted), repo).await;
    let r3 = apply(b, &p3, repo, true).await;
    assert_eq!(
        quota(&get(b, &path, "s3-hand").await.unwrap()),
        json!("2"),
        "{}: {:?}",
        b.name,
        r3.outcomes
    );
    assert_eq!(quota(&get(b, &path, "s3-argo").await.unwrap()), json!("1"));
    assert_eq!(quota(&get(b, &path, "s3-other").await.unwrap()), json!("1"));
}

async fn a_field_conflict_blocks_only_its_object(b: &Backend) {
    let repo = "repo-s4";
    let path = format!("{KUEUE}/clusterqueues");
    let p = plan(
        b,
        &desired(
            repo,
            &[cq("s4-a", "s4", json!("1")), cq("s4-b", "s4", json!("1"))],
        ),
        repo,
    )
    .await;
    apply(b, &p, repo, false).await;
    // Someone edits a's cohort with their own manager (forced over capops).
    let theirs = json!({"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ClusterQueue",
        "metadata": {"name": "s4-a"}, "spec": {"cohortName": "hijacked"}});
    apply_as(b, "kubectl", &path, &theirs, true, false)
        .await
        .unwrap();
    let p2 = plan(
        b,
        &desired(
            repo,
            &[
                cq("s4-a", "s4-new", json!("3")),
                cq("s4-b", "s4", json!("3")),
            ],
        ),
        repo,
    )
    .await;
    let a = p2.changes.iter().find(|c| c.target.name == "s4-a").unwrap();
    let Some(Conflict::Fields { fields }) = &a.conflict else {
        panic!("{}: expected a field conflict, got {a:?}", b.name)
    };
    assert_eq!(fields[0].field, ".spec.cohortName");
    assert_eq!(fields[0].manager.as_deref(), Some("kubectl"));
    // The forced dry-run shows what --force-conflicts would do.
    assert!(
        a.diff.iter().any(|d| d.path == "spec.cohortName"),
        "{:?}",
        a.diff
    );
    let r = apply(b, &p2, repo, false).await;
    assert_eq!(r.writes, 1);
    assert_eq!(quota(&get(b, &path, "s4-b").await.unwrap()), json!("3"));
    assert_eq!(
        quota(&get(b, &path, "s4-a").await.unwrap()),
        json!("1"),
        "{}",
        b.name
    );
}

async fn a_plan_goes_stale_on_change_not_on_status(b: &Backend) {
    let repo = "repo-s5";
    let path = format!("{KUEUE}/clusterqueues");
    let d = desired(repo, &[cq("s5-a", "s5", json!("1"))]);
    let p = plan(b, &d, repo).await;
    apply(b, &p, repo, false).await;
    let d2 = desired(repo, &[cq("s5-a", "s5", json!("2"))]);
    let p2 = plan(b, &d2, repo).await;
    // A status update changes the resourceVersion, not the object.
    let req = http::Request::patch(format!("{path}/s5-a/status"))
        .header("content-type", "application/merge-patch+json")
        .body(serde_json::to_vec(&json!({"status": {"pendingWorkloads": 3}})).unwrap())
        .unwrap();
    b.client.request::<Value>(req).await.unwrap();
    let (stale, current) = run::check_fresh(&b.conn, &p2, &d2, &settings(repo))
        .await
        .unwrap();
    assert!(stale.is_empty(), "{}: {stale:?}", b.name);
    assert_ne!(
        current["ClusterQueue/s5-a"],
        p2.observed["ClusterQueue/s5-a"].resource_version
    );
    // Someone changes the object: the plan is stale.
    let theirs = json!({"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ClusterQueue",
        "metadata": {"name": "s5-a"}, "spec": {"queueingStrategy": "StrictFIFO"}});
    apply_as(b, "kubectl", &path, &theirs, false, false)
        .await
        .unwrap();
    let (stale, _) = run::check_fresh(&b.conn, &p2, &d2, &settings(repo))
        .await
        .unwrap();
    assert_eq!(stale.len(), 1, "{}: {stale:?}", b.name);
    assert!(stale[0].starts_with("ClusterQueue/s5-a changed since the plan"));
}

async fn suite(b: &Backend) {
    apply_records_the_manager_and_dry_run_persists_nothing(b).await;
    another_manager_conflicts_then_forces(b).await;
    a_field_goes_when_its_sole_owner_stops_applying_it(b).await;
    invalid_objects_get_422_with_causes(b).await;
    stale_versions_and_preconditions_conflict(b).await;
    lists_select_by_label_page_by_page(b).await;
    create_then_nothing_then_one_update_then_one_prune(b).await;
    equal_quantities_are_no_change(b).await;
    what_capops_does_not_own_is_a_conflict_and_never_pruned(b).await;
    a_field_conflict_blocks_only_its_object(b).await;
    a_plan_goes_stale_on_change_not_on_status(b).await;
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

#[test]
fn contract_against_the_fake() {
    let fake = fake_kube::FakeKube::start();
    let dir = tempfile::tempdir().unwrap();
    let kc = dir.path().join("kubeconfig");
    fake_kube::FakeKube::kubeconfig(&kc, &[("fake", &fake.url())], None);
    runtime().block_on(async {
        let b = Backend {
            name: "fake",
            client: client_for(&kc).await,
            conn: conn_for(&kc).await,
        };
        suite(&b).await;
    });
}

#[test]
fn contract_against_the_real_apiserver() {
    let Some(install) = real::available() else {
        return;
    };
    let server = real::RealApiserver::start(&install);
    runtime().block_on(async {
        let client = client_for(&server.kubeconfig).await;
        server.ready(&client, &fake_kube::crd_dir()).await;
        let b = Backend {
            name: "real",
            client,
            conn: conn_for(&server.kubeconfig).await,
        };
        suite(&b).await;
    });
}

/// The core kinds the real apiextensions-apiserver does not serve (it has no
/// core API): their semantics, as the reference describes kube-apiserver's,
/// checked on the fake alone.
#[test]
fn core_kinds_on_the_fake() {
    let fake = fake_kube::FakeKube::start();
    fake.namespaces(&["ml"]);
    fake.node("n1", json!({"pool": "a"}), json!({"nvidia.com/gpu": "8"}));
    let dir = tempfile::tempdir().unwrap();
    let kc = dir.path().join("kubeconfig");
    fake_kube::FakeKube::kubeconfig(&kc, &[("fake", &fake.url())], None);
    runtime().block_on(async {
        let conn = conn_for(&kc).await;
        let rq = |ns: &str, v: &str| json!({"apiVersion": "v1", "kind": "ResourceQuota",
            "metadata": {"name": "q", "namespace": ns}, "spec": {"hard": {"requests.nvidia.com/gpu": v}}});
        // Typed quantities come back canonical.
        let v = conn.apply("/api/v1/namespaces/ml/resourcequotas", "q", &rq("ml", "8000m"), false, false).await.unwrap();
        assert_eq!(v["spec"]["hard"]["requests.nvidia.com/gpu"], "8");
        let e = conn.apply("/api/v1/namespaces/ml/resourcequotas", "q", &rq("ml", "eight"), true, false).await.unwrap_err();
        assert!(matches!(&e, CallError::Api(a) if a.code == 422), "{e}");
        // An object in a namespace that does not exist: 404 naming the namespace.
        match conn.apply("/api/v1/namespaces/gone/resourcequotas", "q", &rq("gone", "1"), true, false).await.unwrap_err() {
            CallError::Api(a) => {
                assert_eq!((a.code, a.reason.as_str()), (404, "NotFound"));
                assert_eq!(a.message, "namespaces \"gone\" not found");
            }
            e => panic!("{e}"),
        }
        // A merge patch is an Update: the manager owns what it changed; it never creates.
        let n = conn
            .merge_patch("/api/v1/nodes", "n1", &json!({"metadata": {"labels": {"nvidia.com/mig.config": "x"}}}), false)
            .await
            .unwrap();
        let owners = capops::sync::fields::owners_of(
            &n,
            &[
                capops::sync::fields::Seg::Key("metadata".into()),
                capops::sync::fields::Seg::Key("labels".into()),
                capops::sync::fields::Seg::Key("nvidia.com/mig.config".into()),
            ],
            "nobody",
        );
        assert_eq!(owners, vec!["capops".to_string()]);
        let e = conn.merge_patch("/api/v1/nodes", "n2", &json!({"metadata": {"labels": {"a": "b"}}}), false).await.unwrap_err();
        assert!(matches!(&e, CallError::Api(a) if a.code == 404), "{e}");
        // PriorityClass value is immutable.
        let pc = |v: i64| json!({"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "p"}, "value": v});
        conn.apply("/apis/scheduling.k8s.io/v1/priorityclasses", "p", &pc(10), false, false).await.unwrap();
        match conn.apply("/apis/scheduling.k8s.io/v1/priorityclasses", "p", &pc(20), false, false).await.unwrap_err() {
            CallError::Api(a) => {
                assert_eq!(a.code, 422);
                assert_eq!(a.causes[0].field, "value");
            }
            e => panic!("{e}"),
        }
        // Core lists leave out each item's apiVersion and kind; the client puts them back.
        let items = conn.list("/api/v1/resourcequotas", "").await.unwrap();
        assert_eq!((items[0]["apiVersion"].as_str(), items[0]["kind"].as_str()), (Some("v1"), Some("ResourceQuota")));
    });
}
