//! A fake Kubernetes API server for capops's sync tests and benchmark,
//! served over HTTP on a loopback port so that the real kube client (and
//! the whole `capops` command line, through a kubeconfig) talks to it.
//!
//! It follows the real server's semantics for what capops uses (see
//! [`store`] and [`ssa`]): server-side apply with per-manager
//! `managedFields`, conflicts with causes, force, `dryRun=All`,
//! resourceVersions (no write, no new version, when nothing changes),
//! preconditions, Status bodies, label-selector lists with `continue`,
//! namespaces that must exist, canonical quantities in typed fields. Kueue
//! kinds come from the same CRD files the contract suite installs in the
//! real apiextensions-apiserver, and `tests/contract.rs` runs one behaviour
//! suite against both, so this fake cannot drift from the real semantics.
//! Deliberate differences: times in managedFields come from a logical clock
//! (one second per write, so tests can order them), and only JSON bodies
//! are read.
//!
//! It lives under `tests/` (test-only code, never in the binary); the
//! benchmark includes it with `#[path]`.

#![allow(dead_code)]

pub mod selector;
pub mod ssa;
pub mod store;

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, Method, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};
use std::collections::{BTreeMap, VecDeque};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use store::{Reply, Store};

/// Sorts object keys (the real server writes custom resources that way).
pub fn sorted(v: &Value) -> Value {
    match v {
        Value::Object(m) => {
            let mut keys: Vec<&String> = m.keys().collect();
            keys.sort();
            Value::Object(
                keys.into_iter()
                    .map(|k| (k.clone(), sorted(&m[k])))
                    .collect(),
            )
        }
        Value::Array(a) => Value::Array(a.iter().map(sorted).collect()),
        _ => v.clone(),
    }
}

/// Requests the fake answered, by what they did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    pub lists: usize,
    pub gets: usize,
    pub dry_runs: usize,
    /// Patches, creates and deletes that were not dry-runs (answered 2xx or not).
    pub writes: usize,
}

impl Counts {
    pub fn total(&self) -> usize {
        self.lists + self.gets + self.dry_runs + self.writes
    }
}

/// Simulates the GPU operator's MIG manager on nodes whose
/// `nvidia.com/mig.config` label changes: `pending`, then `result`.
#[derive(Clone, Debug)]
pub struct MigManager {
    pub result: String,
    pub delay_ms: u64,
}

struct Shared {
    store: Mutex<Store>,
    counts: Mutex<Counts>,
    log: Mutex<Vec<String>>,
    token: Option<String>,
    fail: Mutex<VecDeque<u16>>,
    mig: Mutex<Option<MigManager>>,
}

/// A running fake API server.
pub struct FakeKube {
    shared: Arc<Shared>,
    pub port: u16,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
    handle: tokio::runtime::Handle,
}

/// The CRDs of the Kueue kinds (the contract suite installs the same).
pub fn crd_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/contract/crds")
}

impl FakeKube {
    /// Starts a fake with the core kinds and Kueue's CRDs.
    pub fn start() -> FakeKube {
        Self::start_with(None)
    }

    /// Starts a fake that wants `Authorization: Bearer <token>`.
    pub fn start_with(token: Option<&str>) -> FakeKube {
        let shared = Arc::new(Shared {
            store: Mutex::new(Store::new(store::kinds(&crd_dir()))),
            counts: Mutex::new(Counts::default()),
            log: Mutex::new(Vec::new()),
            token: token.map(str::to_string),
            fail: Mutex::new(VecDeque::new()),
            mig: Mutex::new(None),
        });
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind a loopback port");
        listener.set_nonblocking(true).unwrap();
        let port = listener.local_addr().unwrap().port();
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let (tx, rx) = std::sync::mpsc::channel();
        let s = shared.clone();
        let thread = std::thread::spawn(move || {
            // One thread per fake: a benchmark runs fifty of them.
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap();
            tx.send(rt.handle().clone()).unwrap();
            rt.block_on(async move {
                let listener = tokio::net::TcpListener::from_std(listener).unwrap();
                let app = axum::Router::new().fallback(handle).with_state(s);
                let _ = axum::serve(listener, app)
                    .with_graceful_shutdown(async {
                        let _ = stopped.await;
                    })
                    .await;
            });
        });
        let handle = rx.recv().unwrap();
        FakeKube {
            shared,
            port,
            stop: Some(stop),
            thread: Some(thread),
            handle,
        }
    }

    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// Requests answered so far.
    pub fn counts(&self) -> Counts {
        *self.shared.counts.lock().unwrap()
    }

    pub fn reset_counts(&self) {
        *self.shared.counts.lock().unwrap() = Counts::default();
        self.shared.log.lock().unwrap().clear();
    }

    /// `METHOD path?query` of every request answered.
    pub fn log(&self) -> Vec<String> {
        self.shared.log.lock().unwrap().clone()
    }

    /// The next requests answer with these HTTP codes (503 and the like).
    pub fn fail_next(&self, codes: &[u16]) {
        self.shared.fail.lock().unwrap().extend(codes);
    }

    pub fn mig_manager(&self, m: Option<MigManager>) {
        *self.shared.mig.lock().unwrap() = m;
    }

    /// Removes a kind (a cluster without Kueue: `remove_kind("clusterqueues")`).
    pub fn remove_kind(&self, plural: &str) {
        self.shared
            .store
            .lock()
            .unwrap()
            .kinds
            .retain(|k| k.plural != plural);
    }

    pub fn remove_kueue(&self) {
        for p in [
            "workloadpriorityclasses",
            "resourceflavors",
            "cohorts",
            "clusterqueues",
            "localqueues",
        ] {
            self.remove_kind(p);
        }
    }

    fn kind_index(&self, api_version: &str, kind: &str) -> usize {
        self.shared
            .store
            .lock()
            .unwrap()
            .kind_of(api_version, kind)
            .unwrap_or_else(|| panic!("the fake does not serve {api_version} {kind}"))
    }

    /// Creates namespaces.
    pub fn namespaces(&self, names: &[&str]) {
        for n in names {
            self.create_as(
                "setup",
                &json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": n}}),
            )
            .unwrap();
        }
    }

    /// Adds a node with labels and allocatable resources; GFD and the
    /// kubelet own them (Update).
    pub fn node(&self, name: &str, labels: Value, allocatable: Value) {
        self.create_as(
            "kubelet",
            &json!({"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": labels},
                    "status": {"allocatable": allocatable, "capacity": allocatable}}),
        )
        .unwrap();
    }

    /// Creates an object as an Update by `manager` (like `kubectl create`).
    pub fn create_as(&self, manager: &str, obj: &Value) -> Result<Value, Value> {
        let ki = self.kind_index(
            obj["apiVersion"].as_str().unwrap(),
            obj["kind"].as_str().unwrap(),
        );
        let ns = obj["metadata"]["namespace"]
            .as_str()
            .unwrap_or("")
            .to_string();
        let name = obj["metadata"]["name"].as_str().unwrap().to_string();
        let r = self
            .shared
            .store
            .lock()
            .unwrap()
            .create(ki, &ns, &name, obj, manager);
        result(r)
    }

    /// Server-side apply by another field manager.
    pub fn apply_as(&self, manager: &str, obj: &Value, force: bool) -> Result<Value, Value> {
        let ki = self.kind_index(
            obj["apiVersion"].as_str().unwrap(),
            obj["kind"].as_str().unwrap(),
        );
        let ns = obj["metadata"]["namespace"]
            .as_str()
            .unwrap_or("")
            .to_string();
        let name = obj["metadata"]["name"].as_str().unwrap().to_string();
        let r = self
            .shared
            .store
            .lock()
            .unwrap()
            .apply(ki, &ns, &name, obj, manager, force, false);
        result(r)
    }

    /// A merge patch by another field manager (`kubectl edit`, `kubectl label`, an operator).
    pub fn update_as(
        &self,
        manager: &str,
        api_version: &str,
        kind: &str,
        ns: &str,
        name: &str,
        patch: &Value,
    ) -> Result<Value, Value> {
        let ki = self.kind_index(api_version, kind);
        let r = self
            .shared
            .store
            .lock()
            .unwrap()
            .merge_patch(ki, ns, name, patch, manager, false);
        result(r)
    }

    /// An object as the API would return it.
    pub fn get(&self, api_version: &str, kind: &str, ns: &str, name: &str) -> Option<Value> {
        let ki = self.kind_index(api_version, kind);
        let r = self.shared.store.lock().unwrap().get(ki, ns, name);
        (r.code == 200).then_some(r.body)
    }

    /// Every stored object of a kind.
    pub fn all(&self, api_version: &str, kind: &str) -> Vec<Value> {
        let ki = self.kind_index(api_version, kind);
        let r = self
            .shared
            .store
            .lock()
            .unwrap()
            .list(ki, None, &BTreeMap::new());
        r.body["items"].as_array().cloned().unwrap_or_default()
    }

    /// Deletes an object directly.
    pub fn delete(&self, api_version: &str, kind: &str, ns: &str, name: &str) {
        let ki = self.kind_index(api_version, kind);
        self.shared
            .store
            .lock()
            .unwrap()
            .delete(ki, ns, name, &json!({}), false);
    }

    /// Writes a kubeconfig with one context per `(context, server URL)`,
    /// all using `token` (if any); the first context is current.
    pub fn kubeconfig(path: &Path, contexts: &[(&str, &str)], token: Option<&str>) {
        let mut y = String::from("apiVersion: v1\nkind: Config\nclusters:\n");
        for (c, url) in contexts {
            y.push_str(&format!("- name: {c}\n  cluster:\n    server: \"{url}\"\n"));
        }
        y.push_str("users:\n- name: capops-test\n  user:");
        match token {
            Some(t) => y.push_str(&format!("\n    token: \"{t}\"\n")),
            None => y.push_str(" {}\n"),
        }
        y.push_str("contexts:\n");
        for (c, _) in contexts {
            y.push_str(&format!(
                "- name: {c}\n  context:\n    cluster: {c}\n    user: capops-test\n"
            ));
        }
        y.push_str(&format!("current-context: {}\n", contexts[0].0));
        std::fs::write(path, y).unwrap();
    }
}

fn result(r: Reply) -> Result<Value, Value> {
    if r.code < 300 {
        Ok(r.body)
    } else {
        Err(r.body)
    }
}

impl Drop for FakeKube {
    fn drop(&mut self) {
        if let Some(s) = self.stop.take() {
            let _ = s.send(());
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// A request path: the kind (group, version, plural), namespace and name.
type Route = (String, String, String, Option<String>, Option<String>, bool);

/// A request path: group, version, plural, namespace, name, and whether it is the status subresource.
fn route(path: &str) -> Option<Route> {
    let parts: Vec<&str> = path.trim_matches('/').split('/').collect();
    let (group, version, rest) = match parts.as_slice() {
        ["api", v, rest @ ..] => (String::new(), v.to_string(), rest),
        ["apis", g, v, rest @ ..] => (g.to_string(), v.to_string(), rest),
        _ => return None,
    };
    let (ns, plural, name, status) = match rest {
        ["namespaces", ns, plural] => (Some(ns.to_string()), plural.to_string(), None, false),
        ["namespaces", ns, plural, name] => (
            Some(ns.to_string()),
            plural.to_string(),
            Some(name.to_string()),
            false,
        ),
        ["namespaces", ns, plural, name, "status"] => (
            Some(ns.to_string()),
            plural.to_string(),
            Some(name.to_string()),
            true,
        ),
        [plural] => (None, plural.to_string(), None, false),
        [plural, name] => (None, plural.to_string(), Some(name.to_string()), false),
        [plural, name, "status"] => (None, plural.to_string(), Some(name.to_string()), true),
        _ => return None,
    };
    Some((group, version, plural, ns, name, status))
}

fn query(uri: &Uri) -> BTreeMap<String, String> {
    uri.query()
        .map(|q| {
            url_decode_pairs(q)
                .into_iter()
                .collect::<BTreeMap<String, String>>()
        })
        .unwrap_or_default()
}

fn url_decode_pairs(q: &str) -> Vec<(String, String)> {
    q.split('&')
        .filter(|p| !p.is_empty())
        .map(|p| {
            let (k, v) = p.split_once('=').unwrap_or((p, ""));
            (decode(k), decode(v))
        })
        .collect()
}

fn decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'+' => out.push(b' '),
            b'%' if i + 2 < b.len() => {
                if let Ok(x) = u8::from_str_radix(&s[i + 1..i + 3], 16) {
                    out.push(x);
                    i += 2;
                } else {
                    out.push(b'%');
                }
            }
            c => out.push(c),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn reply(r: Reply) -> Response {
    let code = StatusCode::from_u16(r.code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    (
        code,
        [("content-type", "application/json")],
        serde_json::to_vec(&r.body).unwrap_or_default(),
    )
        .into_response()
}

async fn handle(
    State(s): State<Arc<Shared>>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let q = query(&uri);
    s.log.lock().unwrap().push(format!(
        "{method} {}",
        uri.path_and_query().map(|p| p.as_str()).unwrap_or("")
    ));
    if let Some(t) = &s.token {
        let auth = headers
            .get("authorization")
            .and_then(|h| h.to_str().ok())
            .unwrap_or("");
        if auth != format!("Bearer {t}") {
            return reply(store::status(401, "Unauthorized", "Unauthorized", None));
        }
    }
    let dry_run = q.get("dryRun").is_some_and(|d| d == "All");
    {
        let mut c = s.counts.lock().unwrap();
        match method {
            Method::GET if route(uri.path()).is_some_and(|r| r.4.is_none()) => c.lists += 1,
            Method::GET => c.gets += 1,
            _ if dry_run => c.dry_runs += 1,
            _ => c.writes += 1,
        }
    }
    if let Some(code) = s.fail.lock().unwrap().pop_front() {
        return reply(store::status(
            code,
            "ServiceUnavailable",
            "injected failure",
            None,
        ));
    }
    if uri.path() == "/livez" || uri.path() == "/readyz" {
        return (StatusCode::OK, "ok").into_response();
    }
    let Some((group, version, plural, ns, name, status_sub)) = route(uri.path()) else {
        return (StatusCode::NOT_FOUND, "404 page not found\n").into_response();
    };
    let mut st = s.store.lock().unwrap();
    let Some(ki) = st.kind(&group, &version, &plural) else {
        return (StatusCode::NOT_FOUND, "404 page not found\n").into_response();
    };
    let namespaced = st.kinds[ki].namespaced;
    let ns_str = if namespaced {
        ns.clone().unwrap_or_default()
    } else {
        String::new()
    };
    if namespaced && name.is_some() && ns.is_none() {
        return (StatusCode::NOT_FOUND, "404 page not found\n").into_response();
    }
    let r = match (&method, &name) {
        (&Method::GET, None) => st.list(ki, if namespaced { ns.as_deref() } else { None }, &q),
        (&Method::GET, Some(n)) => st.get(ki, &ns_str, n),
        (&Method::PATCH, Some(n)) => {
            let ct = headers
                .get("content-type")
                .and_then(|h| h.to_str().ok())
                .unwrap_or("");
            let Ok(patch) = serde_json::from_slice::<Value>(&body) else {
                return reply(store::status(
                    400,
                    "BadRequest",
                    "the fake reads JSON bodies only",
                    None,
                ));
            };
            let manager = q.get("fieldManager").cloned();
            if status_sub {
                if !ct.starts_with("application/merge-patch+json") {
                    return reply(store::status(
                        415,
                        "UnsupportedMediaType",
                        "the fake patches status with merge patches only",
                        None,
                    ));
                }
                st.patch_status(ki, &ns_str, n, &patch, dry_run)
            } else if ct.starts_with("application/apply-patch") {
                let Some(manager) = manager.filter(|m| !m.is_empty()) else {
                    return reply(store::status(
                        400,
                        "BadRequest",
                        "PATCH request with apply-patch content type requires fieldManager",
                        None,
                    ));
                };
                let force = q.get("force").is_some_and(|f| f == "true");
                st.apply(ki, &ns_str, n, &patch, &manager, force, dry_run)
            } else if ct.starts_with("application/merge-patch+json") {
                let manager = manager.unwrap_or_else(|| "unknown".into());
                let before = st.get(ki, &ns_str, n).body;
                let r = st.merge_patch(ki, &ns_str, n, &patch, &manager, dry_run);
                if r.code == 200 && !dry_run && plural == "nodes" {
                    let label =
                        |v: &Value| v["metadata"]["labels"]["nvidia.com/mig.config"].clone();
                    if label(&before) != label(&r.body) {
                        mig_manager(&s, n.clone());
                    }
                }
                r
            } else {
                store::status(
                    415,
                    "UnsupportedMediaType",
                    &format!("the fake does not take {ct}"),
                    None,
                )
            }
        }
        (&Method::POST, None) => {
            let Ok(obj) = serde_json::from_slice::<Value>(&body) else {
                return reply(store::status(
                    400,
                    "BadRequest",
                    "the fake reads JSON bodies only",
                    None,
                ));
            };
            let Some(name) = obj["metadata"]["name"].as_str().map(str::to_string) else {
                return reply(store::status(
                    422,
                    "Invalid",
                    "metadata.name: Required value",
                    None,
                ));
            };
            let manager = q
                .get("fieldManager")
                .cloned()
                .unwrap_or_else(|| "unknown".into());
            let mut obj = obj;
            obj["apiVersion"] = st.kinds[ki].api_version().into();
            obj["kind"] = st.kinds[ki].kind.clone().into();
            st.create(ki, &ns_str, &name, &obj, &manager)
        }
        (&Method::DELETE, Some(n)) => {
            let options = serde_json::from_slice::<Value>(&body).unwrap_or(json!({}));
            st.delete(ki, &ns_str, n, &options, dry_run)
        }
        _ => store::status(
            405,
            "MethodNotAllowed",
            &format!("{method} is not supported here"),
            None,
        ),
    };
    reply(r)
}

/// Starts the simulated MIG manager on a relabelled node.
fn mig_manager(s: &Arc<Shared>, node: String) {
    let Some(m) = s.mig.lock().unwrap().clone() else {
        return;
    };
    let s = s.clone();
    tokio::spawn(async move {
        for state in ["pending", m.result.as_str()] {
            tokio::time::sleep(std::time::Duration::from_millis(m.delay_ms)).await;
            let mut st = s.store.lock().unwrap();
            let ki = st.kind_of("v1", "Node").unwrap();
            st.merge_patch(
                ki,
                "",
                &node,
                &json!({"metadata": {"labels": {"nvidia.com/mig.config.state": state}}}),
                "nvidia-mig-manager",
                false,
            );
        }
    });
}
