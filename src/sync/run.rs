//! Planning against one cluster: read what is there (one label-selector
//! list per kind, one node list per pool), dry-run what may change, and plan
//! with the pure [`super::diff`]; check that a saved plan is still fresh.
//! [`for_each_cluster`] runs clusters in parallel with a bound; each
//! cluster's result stands alone, so one failing cluster never hides the
//! others. Writing a plan is [`super::apply`].

use super::client::{CallError, Conn};
use super::desired::{Desired, DesiredObject};
use super::diff::{self, DryRun, Live};
use super::kinds::{self, KINDS, Kind, NODE};
use super::nodes;
use super::plan::{ClusterError, ClusterPlan, ObjRef};
use crate::diag::Code;
use crate::render::MANAGED_BY;
use futures::StreamExt;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};

/// How sync runs.
#[derive(Clone, Debug)]
pub struct Settings {
    /// This capacity repository's name (its Config's name).
    pub repository: String,
    /// Calls in flight at once within one cluster.
    pub concurrency: usize,
    /// The repository's Cluster documents (empty: not known).
    pub clusters: Vec<String>,
}

/// Progress of the clusters (progress bars on a terminal; nothing otherwise).
pub trait Progress: Send + Sync {
    fn start(&self, cluster: &str, message: &str);
    fn message(&self, cluster: &str, message: &str);
    fn length(&self, cluster: &str, total: u64);
    fn advance(&self, cluster: &str);
    fn finish(&self, cluster: &str, message: &str);
}

/// No progress shown.
pub struct Quiet;

impl Progress for Quiet {
    fn start(&self, _: &str, _: &str) {}
    fn message(&self, _: &str, _: &str) {}
    fn length(&self, _: &str, _: u64) {}
    fn advance(&self, _: &str) {}
    fn finish(&self, _: &str, _: &str) {}
}

/// Runs `f` for every item, at most `parallel` at once, results in input order.
pub async fn for_each_cluster<T, R, F, Fut>(items: Vec<T>, parallel: usize, f: F) -> Vec<R>
where
    F: Fn(T) -> Fut,
    Fut: std::future::Future<Output = R>,
{
    let mut out: Vec<(usize, R)> = futures::stream::iter(items.into_iter().enumerate())
        .map(|(i, t)| {
            let fut = f(t);
            async move { (i, fut.await) }
        })
        .buffer_unordered(parallel.max(1))
        .collect()
        .await;
    out.sort_by_key(|(i, _)| *i);
    out.into_iter().map(|(_, r)| r).collect()
}

pub(super) fn cluster_error(code: Code, message: String, help: Option<String>) -> ClusterError {
    ClusterError {
        code: code.as_str().to_string(),
        message,
        help,
    }
}

/// The error of a call that failed for the whole cluster.
pub fn call_error(conn: &Conn, what: &str, e: &CallError) -> ClusterError {
    match e {
        CallError::Transport(t) => cluster_error(
            Code::ClusterUnreachable,
            format!("cannot reach {} ({what}): {t}", conn.server),
            Some("check the network, the kubeconfig's server and that the cluster is up".into()),
        ),
        CallError::Api(a) if a.code == 401 || a.code == 403 => cluster_error(
            Code::Forbidden,
            format!("{what}: {} ({})", a.message, a.code),
            Some("give the kubeconfig's user permission to list, get, patch and delete the kinds capops manages (docs/sync.md lists them)".into()),
        ),
        CallError::Api(a) => cluster_error(
            Code::ApiError,
            format!("{what}: {} ({} {})", a.message, a.code, a.reason),
            None,
        ),
    }
}

/// What was read from a cluster.
#[derive(Default)]
pub struct Read {
    pub live: Live,
    /// Nodes each pool's selector matched.
    pub nodes: BTreeMap<String, Vec<Value>>,
}

/// The reference of a live object of `kind`.
pub fn reference(kind: &Kind, v: &Value) -> ObjRef {
    ObjRef {
        order: kind.order,
        api_version: kind.api_version(),
        kind: kind.kind.to_string(),
        namespace: if kind.namespaced {
            v["metadata"]["namespace"].as_str().map(str::to_string)
        } else {
            None
        },
        name: v["metadata"]["name"]
            .as_str()
            .unwrap_or_default()
            .to_string(),
    }
}

/// A label selector string.
pub fn selector(labels: &BTreeMap<String, String>) -> String {
    labels
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(",")
}

/// Lists every kind capops manages (by its label) and each pool's nodes.
pub async fn read(conn: &Conn, desired: &Desired, s: &Settings) -> Result<Read, ClusterError> {
    let owned = format!("{}={}", MANAGED_BY.0, MANAGED_BY.1);
    let lists = futures::stream::iter(KINDS.iter())
        .map(|k| {
            let owned = owned.clone();
            async move { (k, conn.list(&k.path(None), &owned).await) }
        })
        .buffer_unordered(s.concurrency.max(1))
        .collect::<Vec<_>>()
        .await;
    let mut read = Read::default();
    let mut missing = Vec::new();
    let mut lists = lists;
    lists.sort_by_key(|(k, _)| k.order);
    for (kind, result) in lists {
        match result {
            Ok(items) => {
                for v in items {
                    let r = reference(kind, &v);
                    read.live.listed.insert(r.clone());
                    read.live.objects.insert(r, v);
                }
            }
            // A kind the server does not serve: fine unless capops wants objects of it.
            Err(CallError::Api(a)) if a.code == 404 => missing.push(kind),
            Err(e) => {
                return Err(call_error(conn, &format!("listing {}", kind.plural), &e));
            }
        }
    }
    let wanted = |k: &&&Kind| desired.objects.iter().any(|d| d.target.kind == k.kind);
    if let Some(k) = missing.iter().find(|k| !k.kueue && wanted(k)) {
        return Err(cluster_error(
            Code::ApiError,
            format!("the cluster does not serve {} {}", k.api_version(), k.kind),
            None,
        ));
    }
    let needed: Vec<&str> = missing.iter().filter(wanted).map(|k| k.kind).collect();
    if !needed.is_empty() {
        return Err(cluster_error(
            Code::KueueCrdMissing,
            format!(
                "the cluster does not serve kueue.x-k8s.io/v1beta2 {} (the Kueue CRDs are missing or older than v1beta2)",
                needed.join(", ")
            ),
            Some("install Kueue 0.15 or newer in the cluster, or set `kueue.enabled: false` in the Cluster document".into()),
        ));
    }
    for pool in &desired.pools {
        if pool.selector.is_empty() {
            continue;
        }
        let nodes = conn
            .list(&NODE.path(None), &selector(&pool.selector))
            .await
            .map_err(|e| {
                call_error(
                    conn,
                    &format!("listing the nodes of pool {}", pool.pool),
                    &e,
                )
            })?;
        read.nodes.insert(pool.pool.clone(), nodes);
    }
    Ok(read)
}

/// Every node read, once.
pub(super) fn all_nodes(read: &Read) -> Vec<Value> {
    let mut seen = BTreeSet::new();
    read.nodes
        .values()
        .flatten()
        .filter(|n| seen.insert(nodes::name(n).to_string()))
        .cloned()
        .collect()
}

/// The URL path of an object's collection.
pub(super) fn path_of(r: &ObjRef) -> String {
    kinds::find(&r.api_version, &r.kind)
        .map(|k| k.path(r.namespace.as_deref()))
        .unwrap_or_default()
}

async fn dry_run(conn: &Conn, d: &DesiredObject) -> Result<DryRun, CallError> {
    let path = path_of(&d.target);
    match conn
        .apply(&path, &d.target.name, &d.value, true, false)
        .await
    {
        Ok(v) => Ok(DryRun::Applied(v)),
        Err(CallError::Api(f)) if f.field_conflicts().is_some() => {
            // What a forced apply would change, for the plan to show.
            let forced = conn
                .apply(&path, &d.target.name, &d.value, true, true)
                .await
                .ok();
            Ok(DryRun::Conflict { failure: f, forced })
        }
        Err(CallError::Api(f)) => Ok(DryRun::Failed(f)),
        Err(e) => Err(e),
    }
}

/// Plans one cluster. Never fails: a cluster that cannot be planned carries its error.
pub async fn plan_cluster(
    conn: &Conn,
    cluster: &str,
    context: Option<&str>,
    desired: &Desired,
    s: &Settings,
    progress: &dyn Progress,
) -> ClusterPlan {
    let mut plan = ClusterPlan {
        cluster: cluster.to_string(),
        context: context.map(str::to_string),
        ..ClusterPlan::default()
    };
    progress.message(cluster, "reading");
    match plan_inner(conn, desired, s, progress, &mut plan).await {
        Ok(()) => {}
        Err(e) => {
            plan.error = Some(e);
            plan.changes.clear();
            plan.nodes.clear();
        }
    }
    plan.calls = conn.calls();
    plan.recount();
    plan
}

/// Whose objects a cluster's sync may change.
fn ident<'a>(s: &'a Settings, desired: &'a Desired) -> diff::Ident<'a> {
    diff::Ident {
        repository: &s.repository,
        cluster: &desired.cluster,
        known: &s.clusters,
    }
}

async fn plan_inner(
    conn: &Conn,
    desired: &Desired,
    s: &Settings,
    progress: &dyn Progress,
    plan: &mut ClusterPlan,
) -> Result<(), ClusterError> {
    let mut read = read(conn, desired, s).await?;
    let need: Vec<&DesiredObject> = desired
        .objects
        .iter()
        .filter(|d| diff::needs_dry_run(d, read.live.objects.get(&d.target), &ident(s, desired)))
        .collect();
    let cluster = plan.cluster.clone();
    let cluster = cluster.as_str();
    progress.length(cluster, need.len() as u64);
    progress.message(cluster, "dry-run");
    let results: Vec<(ObjRef, Result<DryRun, CallError>)> = futures::stream::iter(need)
        .map(|d| async move {
            let r = dry_run(conn, d).await;
            progress.advance(cluster);
            (d.target.clone(), r)
        })
        .buffer_unordered(s.concurrency.max(1))
        .collect()
        .await;
    let mut dry = BTreeMap::new();
    for (r, result) in results {
        match result {
            Ok(d) => {
                dry.insert(r, d);
            }
            Err(e) => return Err(call_error(conn, &format!("dry-run of {r}"), &e)),
        }
    }
    // Objects of the same name capops did not label: read them to tell whose they are.
    let fetch: Vec<ObjRef> = desired
        .objects
        .iter()
        .filter(|d| diff::needs_fetch(read.live.objects.get(&d.target), dry.get(&d.target)))
        .map(|d| d.target.clone())
        .collect();
    for r in fetch {
        match conn.get(&path_of(&r), &r.name).await {
            Ok(Some(v)) => {
                read.live.objects.insert(r, v);
            }
            Ok(None) => {}
            Err(e) => return Err(call_error(conn, &format!("reading {r}"), &e)),
        }
    }
    let (changes, unchanged, observed) =
        diff::plan_objects(&desired.objects, &read.live, &dry, &ident(s, desired));
    plan.changes = changes;
    plan.summary.unchanged = unchanged;
    plan.observed = observed;
    plan.nodes = nodes::plan(&desired.pools, &all_nodes(&read));
    Ok(())
}

/// Whether a saved plan still describes the cluster: the objects it read
/// are unchanged (a different resourceVersion with the same content is a
/// status update, not a change), no object of this repository appeared,
/// nothing it creates exists, node labels are as they were. Returns the
/// reasons it is stale, and the current resourceVersions (the apply's
/// preconditions).
pub async fn check_fresh(
    conn: &Conn,
    plan: &ClusterPlan,
    desired: &Desired,
    s: &Settings,
) -> Result<(Vec<String>, BTreeMap<String, String>), ClusterError> {
    let read = read(conn, desired, s).await?;
    let mut stale = Vec::new();
    let mut current: BTreeMap<String, String> = BTreeMap::new();
    let by_key: BTreeMap<String, &Value> = read
        .live
        .objects
        .iter()
        .map(|(r, v)| (super::plan::key(r), v))
        .collect();
    for (key, seen) in &plan.observed {
        let live = match by_key.get(key) {
            Some(v) => Some((*v).clone()),
            None => {
                let Some(r) = parse_key(key) else { continue };
                conn.get(&path_of(&r), &r.name)
                    .await
                    .map_err(|e| call_error(conn, &format!("reading {r}"), &e))?
            }
        };
        match live {
            None => stale.push(format!("{key} was deleted since the plan")),
            Some(v) => {
                let now = diff::observed(&v);
                if now.resource_version != seen.resource_version && now.content != seen.content {
                    stale.push(format!(
                        "{key} changed since the plan (resourceVersion {} → {})",
                        seen.resource_version, now.resource_version
                    ));
                }
                current.insert(key.clone(), now.resource_version);
            }
        }
    }
    stale.extend(untrusted_changes(plan, &by_key, &ident(s, desired)));
    // A create was planned for an absent object: one there now (another
    // cluster's, another tool's) would be taken over by the apply.
    for c in plan
        .changes
        .iter()
        .filter(|c| c.action == super::plan::Action::Create)
    {
        let key = super::plan::key(&c.target);
        let exists = match by_key.get(&key) {
            Some(_) => true,
            None => conn
                .get(&path_of(&c.target), &c.target.name)
                .await
                .map_err(|e| call_error(conn, &format!("reading {}", c.target), &e))?
                .is_some(),
        };
        if exists {
            stale.push(format!(
                "{key} exists now; the plan creates it (an apply would take it over)"
            ));
        }
    }
    // An update must be to an object that is capops's now: one without
    // capops's label (hand-made, or another tool's) is a conflict `plan`
    // shows, never an update, and a plan file edited so would take it over.
    for c in plan
        .changes
        .iter()
        .filter(|c| c.action == super::plan::Action::Update)
    {
        let key = super::plan::key(&c.target);
        let live = match by_key.get(&key) {
            Some(v) => Some((*v).clone()),
            None => conn
                .get(&path_of(&c.target), &c.target.name)
                .await
                .map_err(|e| call_error(conn, &format!("reading {}", c.target), &e))?,
        };
        match live {
            None => stale.push(format!("{key} is gone; the plan updates it")),
            Some(v) if diff::owner(&v, &ident(s, desired)) != diff::Owner::Ours => {
                stale.push(format!(
                    "the plan updates {key}, which is not capops's (`capops plan` shows it as a conflict, never an update)"
                ));
            }
            Some(_) => {}
        }
    }
    for (r, v) in &read.live.objects {
        let key = super::plan::key(r);
        if !plan.observed.contains_key(&key)
            && diff::owner(v, &ident(s, desired)) == diff::Owner::Ours
        {
            stale.push(format!("{key} appeared since the plan"));
        }
    }
    let nodes_now: BTreeMap<String, Value> = all_nodes(&read)
        .into_iter()
        .map(|n| (nodes::name(&n).to_string(), n))
        .collect();
    for n in &plan.nodes {
        let node = match nodes_now.get(&n.node) {
            Some(v) => Some(v.clone()),
            None => conn
                .get(&NODE.path(None), &n.node)
                .await
                .map_err(|e| call_error(conn, &format!("reading node {}", n.node), &e))?,
        };
        let Some(node) = node else {
            stale.push(format!("node {} is gone", n.node));
            continue;
        };
        // The node must be in its pool now, as the checkout selects the
        // pool's nodes: one moved out since the plan (or a plan file edited
        // to list another pool's node) would get a layout not its own.
        match desired.pools.iter().find(|p| p.pool == n.pool) {
            Some(p)
                if p.selector
                    .iter()
                    .all(|(k, v)| nodes::label(&node, k) == Some(v.as_str())) => {}
            Some(_) => stale.push(format!(
                "node {} is not in pool {} now (its labels do not match the pool's nodeLabels)",
                n.node, n.pool
            )),
            None => stale.push(format!(
                "node {} is planned for pool {}, which the checkout does not have",
                n.node, n.pool
            )),
        }
        for (k, l) in &n.labels {
            if nodes::label(&node, k) != l.before.as_deref() {
                stale.push(format!("node {} label {k} changed since the plan", n.node));
            }
        }
    }
    Ok((stale, current))
}

/// A plan file is data anyone could edit between `plan` and `apply`: each
/// of its changes must be one `capops plan` could have made. A delete
/// must name an object the plan read (`observed`) that is, now, this
/// repository's and cluster's and was applied by capops, with its uid; a
/// write must be an object of a kind capops syncs, named as its target,
/// with capops's label and this repository's and cluster's annotations.
fn untrusted_changes(
    plan: &ClusterPlan,
    live: &BTreeMap<String, &Value>,
    id: &diff::Ident<'_>,
) -> Vec<String> {
    let mut out = Vec::new();
    // Nodes get only the labels capops renders for pools.
    let labels = [
        crate::render::operator::MIG_LABEL,
        crate::render::operator::DEVICE_PLUGIN_LABEL,
    ];
    for n in &plan.nodes {
        for k in n.labels.keys().filter(|k| !labels.contains(&k.as_str())) {
            out.push(format!(
                "the plan sets label {k} on node {}, which capops never sets",
                n.node
            ));
        }
    }
    for c in &plan.changes {
        let key = super::plan::key(&c.target);
        match c.action {
            super::plan::Action::Delete => {
                let ours = live.get(&key).is_some_and(|v| {
                    diff::owner(v, id) == diff::Owner::Ours
                        && diff::applied_by_capops(v)
                        && v["metadata"]["uid"].as_str() == c.uid.as_deref()
                });
                if !plan.observed.contains_key(&key) || c.uid.is_none() || !ours {
                    out.push(format!(
                        "the plan deletes {key}, which is not an object capops applied for this repository and cluster as the plan read it"
                    ));
                }
            }
            _ => {
                let Some(o) = &c.object else { continue };
                // Whose the live object is, read now, not as the file says.
                if let Some(v) = live.get(&key)
                    && matches!(
                        diff::owner(v, id),
                        diff::Owner::Gitops { .. }
                            | diff::Owner::OtherRepository(_)
                            | diff::Owner::OtherCluster(_)
                    )
                {
                    out.push(format!(
                        "the plan writes {key}, which capops never writes here (another tool's, repository's or cluster's)"
                    ));
                    continue;
                }
                let meta = &o["metadata"];
                let kind = kinds::find(
                    o["apiVersion"].as_str().unwrap_or_default(),
                    o["kind"].as_str().unwrap_or_default(),
                );
                let named = kind.is_some_and(|k| {
                    k.kind == c.target.kind
                        && k.api_version() == c.target.api_version
                        && meta["name"].as_str() == Some(c.target.name.as_str())
                        && meta["namespace"].as_str() == c.target.namespace.as_deref()
                });
                let marked = meta["labels"][crate::render::MANAGED_BY.0]
                    == crate::render::MANAGED_BY.1
                    && meta["annotations"][super::desired::REPOSITORY].as_str()
                        == Some(id.repository)
                    && meta["annotations"][super::desired::CLUSTER].as_str() == Some(id.cluster);
                if !named || !marked {
                    out.push(format!(
                        "the plan writes {key} as something `capops plan` does not write (another kind or name, or without capops's label and this repository's and cluster's annotations)"
                    ));
                }
            }
        }
    }
    out
}

/// The reference a `plan::key` names.
pub fn parse_key(key: &str) -> Option<ObjRef> {
    let parts: Vec<&str> = key.split('/').collect();
    let (kind, ns, name) = match parts.as_slice() {
        [k, n] => (*k, None, *n),
        [k, ns, n] => (*k, Some(ns.to_string()), *n),
        _ => return None,
    };
    let k = KINDS.iter().find(|x| x.kind == kind)?;
    Some(ObjRef {
        order: k.order,
        api_version: k.api_version(),
        kind: k.kind.to_string(),
        namespace: ns,
        name: name.to_string(),
    })
}

/// The nodes of each pool of a cluster (for `verify`).
pub async fn pool_nodes(
    conn: &Conn,
    pools: &[(String, BTreeMap<String, String>)],
) -> Result<BTreeMap<String, Vec<Value>>, ClusterError> {
    let mut out = BTreeMap::new();
    for (pool, sel) in pools {
        if sel.is_empty() {
            out.insert(pool.clone(), Vec::new());
            continue;
        }
        let nodes = conn
            .list(&NODE.path(None), &selector(sel))
            .await
            .map_err(|e| call_error(conn, &format!("listing the nodes of pool {pool}"), &e))?;
        out.insert(pool.clone(), nodes);
    }
    Ok(out)
}
