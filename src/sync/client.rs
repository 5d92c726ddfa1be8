//! The Kubernetes edge: a client per cluster from its kubeconfig context,
//! and the few calls sync makes (list by label selector with paging, get,
//! server-side apply with or without dry-run, merge-patch of node labels,
//! delete with preconditions), each with a timeout, bounded retries on
//! transport failures and 429/5xx, and a count of calls made.
//!
//! Credentials stay inside the client: messages name the cluster, context
//! and server, never tokens, passwords or keys, and any error text is
//! scrubbed of the kubeconfig's secrets before it leaves this module.

// An edge: it reads the kubeconfig and talks to clusters (see clippy.toml).
#![allow(clippy::disallowed_methods, clippy::disallowed_types)]

use super::credential_plugin::{Plugins, Renewing};
use super::diff::{ApiFailure, Cause};
use super::plan::Calls;
use kube::Client;
use kube::config::{KubeConfigOptions, Kubeconfig};
use serde_json::Value;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

/// Attempts per call (the first and two retries).
pub const ATTEMPTS: u32 = 3;
/// The longest a server's `Retry-After` is waited for between tries.
pub const MAX_RETRY_AFTER: Duration = Duration::from_secs(5);
/// Connect and read timeouts.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
pub const READ_TIMEOUT: Duration = Duration::from_secs(30);
/// Page size of lists.
pub const PAGE: u32 = 500;
/// Pages of one list at most (five million objects): past it, or at a
/// continue token the server gave before, the server is paging forever.
pub const MAX_PAGES: usize = 10_000;
/// The largest answer read: a page of 500 objects is a few megabytes; a
/// server that sends more is not read to the end (memory stays bounded).
pub const MAX_ANSWER_BYTES: usize = 256 << 20;

pub use super::kubeconfig::{ConnectError, Source, load};

pub use super::servers::{normal_server, server_of};

/// A connection to one cluster.
#[derive(Clone)]
pub struct Conn {
    client: Client,
    /// When a credential plugin issued the credential: the client renewed near its expiry.
    renew: Option<Arc<super::credential_plugin::Renewing>>,
    /// The API server's URL (shown in messages; never credentials).
    pub server: String,
    secrets: Arc<Vec<String>>,
    counts: Arc<[AtomicUsize; 4]>,
}

/// Which counter a call goes to.
#[derive(Clone, Copy)]
enum Count {
    List = 0,
    Get = 1,
    DryRun = 2,
    Write = 3,
}

/// A failed call: the server answered with a Status, or it could not be reached.
#[derive(Debug, Clone)]
pub enum CallError {
    Api(ApiFailure),
    Transport(String),
}

impl std::fmt::Display for CallError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CallError::Api(a) => write!(f, "{} ({} {})", a.message, a.code, a.reason),
            CallError::Transport(t) => f.write_str(t),
        }
    }
}

/// The `tokenFile`s a kubeconfig's users name.
fn kubeconfig_token_files(kc: Option<&Kubeconfig>) -> Vec<String> {
    kc.into_iter()
        .flat_map(|k| k.auth_infos.iter())
        .filter_map(|a| a.auth_info.as_ref()?.token_file.clone())
        .collect()
}

/// The tokens those files hold, to scrub (short ones would blot out words).
fn file_tokens(paths: impl IntoIterator<Item = String>) -> Vec<String> {
    paths
        .into_iter()
        .filter_map(|p| read_token_file(&p))
        .filter(|t| t.len() >= 4)
        .collect()
}

/// A token file's text (the first 64 KiB), trimmed as kubectl trims it;
/// `None` when it is not a regular file (a pipe would hold the read for
/// ever), cannot be read or holds nothing.
fn read_token_file(path: &str) -> Option<String> {
    use std::io::Read;
    if !std::fs::metadata(path).ok()?.is_file() {
        return None;
    }
    let mut text = String::new();
    std::fs::File::open(path)
        .ok()?
        .take(64 * 1024)
        .read_to_string(&mut text)
        .ok()?;
    let t = text.trim().to_string();
    (!t.is_empty()).then_some(t)
}

impl Conn {
    /// Connects to `context` (the current context when `None`). Error
    /// messages are scrubbed of every credential in the kubeconfig.
    pub async fn connect(
        kubeconfig: Option<&Kubeconfig>,
        context: Option<&str>,
        plugins: &Arc<Plugins>,
    ) -> Result<Conn, ConnectError> {
        let mut secrets = kubeconfig
            .map(super::secrets::kubeconfig_secrets)
            .unwrap_or_default();
        secrets.extend(file_tokens(kubeconfig_token_files(kubeconfig)));
        let scrub = |t: String| super::secrets::scrub_text(&secrets, &t);
        Self::connect_inner(kubeconfig, context, plugins)
            .await
            .map_err(|e| match e {
                ConnectError::BadContext { context, reason } => ConnectError::BadContext {
                    context,
                    reason: scrub(reason),
                },
                e => e,
            })
    }

    async fn connect_inner(
        kubeconfig: Option<&Kubeconfig>,
        context: Option<&str>,
        plugins: &Arc<Plugins>,
    ) -> Result<Conn, ConnectError> {
        let ctx_name = context.unwrap_or("(current)").to_string();
        let mut config = match kubeconfig {
            Some(kc) => {
                if let Some(c) = context
                    && !kc.contexts.iter().any(|n| n.name == c)
                {
                    return Err(ConnectError::NoContext {
                        context: c.to_string(),
                    });
                }
                let opts = KubeConfigOptions {
                    context: context.map(str::to_string),
                    ..Default::default()
                };
                kube::Config::from_custom_kubeconfig(kc.clone(), &opts)
                    .await
                    .map_err(|e| ConnectError::BadContext {
                        context: ctx_name.clone(),
                        reason: e.to_string(),
                    })?
            }
            // A Cluster that names its context is reached through it, never
            // through the pod capops runs in: that may be another cluster.
            None if context.is_some() => {
                return Err(ConnectError::NoContext {
                    context: ctx_name.clone(),
                });
            }
            None => kube::Config::incluster().map_err(|e| ConnectError::BadContext {
                context: "in-cluster".into(),
                reason: e.to_string(),
            })?,
        };
        config.connect_timeout = Some(CONNECT_TIMEOUT);
        config.read_timeout = Some(READ_TIMEOUT);
        config.write_timeout = Some(READ_TIMEOUT);
        // capops retries a call itself (`ATTEMPTS`, in `send`); kube's own
        // layer would retry a 429 or 503 fifteen times more under each of
        // those, for minutes, and the failure would read as a timeout.
        config.default_retry = false;
        // A token file is read as kubectl reads it, trimmed (a file ending
        // in a line break is the rule, and kube would send the break and
        // fail on it), once: a run is minutes long.
        if let Some(path) = config.auth_info.token_file.take() {
            let token = read_token_file(&path).ok_or_else(|| ConnectError::BadContext {
                context: ctx_name.clone(),
                reason: format!(
                    "the file {path} its user's tokenFile names cannot be read or is empty"
                ),
            })?;
            if !super::kubeconfig_check::header_safe(&token) {
                return Err(ConnectError::BadContext {
                    context: ctx_name.clone(),
                    reason: format!(
                        "the file {path} its user's tokenFile names holds a line break, a control character or a character that is not ASCII, which no HTTP header can carry"
                    ),
                });
            }
            config.auth_info.token = Some(token.into());
        }
        // A credential plugin is run by capops, with a deadline (kube would
        // wait for it for ever), before kube sees the configuration.
        let issued = Renewing::credential(plugins, &mut config)
            .await
            .map_err(|e| ConnectError::BadContext {
                context: ctx_name.clone(),
                reason: e.to_string(),
            })?;
        let mut secrets = Vec::new();
        {
            use secrecy::ExposeSecret;
            let a = &config.auth_info;
            for s in [&a.token, &a.password, &a.client_key_data]
                .into_iter()
                .flatten()
            {
                secrets.push(s.expose_secret().to_string());
            }
        }
        secrets.extend(
            kubeconfig
                .map(super::secrets::kubeconfig_secrets)
                .unwrap_or_default(),
        );
        // Tokens read from files (`tokenFile`, the in-cluster service
        // account's) are echoed by servers like any other.
        secrets.extend(file_tokens(
            kubeconfig_token_files(kubeconfig)
                .into_iter()
                .chain(config.auth_info.token_file.clone()),
        ));
        secrets.retain(|s| s.len() >= 4);
        secrets.sort_by_key(|s| std::cmp::Reverse(s.len()));
        secrets.dedup();
        let server = super::secrets::without_userinfo(&config.cluster_url.to_string());
        let client = Client::try_from(config).map_err(|e| ConnectError::BadContext {
            context: ctx_name,
            reason: e.to_string(),
        })?;
        Ok(Conn {
            renew: issued.map(|i| Arc::new(Renewing::start(plugins.clone(), i, client.clone()))),
            client,
            server: server.trim_end_matches('/').to_string(),
            secrets: Arc::new(secrets),
            counts: Arc::new(Default::default()),
        })
    }

    /// A connection over an existing client (tests, benchmarks).
    pub fn from_client(client: Client, server: &str) -> Conn {
        Conn {
            client,
            renew: None,
            server: server.to_string(),
            secrets: Arc::new(Vec::new()),
            counts: Arc::new(Default::default()),
        }
    }

    /// Calls made so far.
    pub fn calls(&self) -> Calls {
        let c = |i: Count| self.counts[i as usize].load(Ordering::Relaxed);
        Calls {
            lists: c(Count::List),
            gets: c(Count::Get),
            dry_runs: c(Count::DryRun),
            writes: c(Count::Write),
        }
    }

    /// Removes the kubeconfig's secrets from a message.
    pub fn scrub(&self, text: &str) -> String {
        super::secrets::scrub_text(&self.secrets, text)
    }

    async fn send(&self, req: http::Request<Vec<u8>>, count: Count) -> Result<Value, CallError> {
        self.counts[count as usize].fetch_add(1, Ordering::Relaxed);
        let (parts, body) = req.into_parts();
        let mut last = CallError::Transport("no attempt made".into());
        for attempt in 0..ATTEMPTS {
            if attempt > 0 {
                // As long as the server asked (429's `Retry-After`), up to
                // `MAX_RETRY_AFTER`, and never less than the backoff.
                let asked = match &last {
                    CallError::Api(f) => f.retry_after.unwrap_or(0).min(MAX_RETRY_AFTER.as_secs()),
                    _ => 0,
                };
                let wait = Duration::from_millis(250 << attempt).max(Duration::from_secs(asked));
                tokio::time::sleep(wait).await;
            }
            let mut b = http::Request::builder()
                .method(parts.method.clone())
                .uri(parts.uri.clone());
            for (k, v) in &parts.headers {
                b = b.header(k, v);
            }
            let req = b
                .body(body.clone())
                .map_err(|e| CallError::Transport(e.to_string()))?;
            let call = self.exchange(req);
            let result = match tokio::time::timeout(READ_TIMEOUT + CONNECT_TIMEOUT, call).await {
                Ok(r) => r,
                Err(_) => {
                    last = CallError::Transport(format!(
                        "no answer within {}s",
                        (READ_TIMEOUT + CONNECT_TIMEOUT).as_secs()
                    ));
                    continue;
                }
            };
            match result {
                Ok(v) => return Ok(v),
                Err(CallError::Api(failure)) => {
                    let retry = matches!(failure.code, 429 | 500 | 502 | 503 | 504);
                    last = CallError::Api(failure);
                    if !retry {
                        break;
                    }
                }
                Err(e) => last = e,
            }
        }
        Err(last)
    }

    /// One HTTP exchange: the body as JSON on success, else the server's
    /// Status (the code is always the HTTP status: not every error body is
    /// a Status, e.g. `404 page not found` for a kind that is not served).
    async fn exchange(&self, req: http::Request<Vec<u8>>) -> Result<Value, CallError> {
        use http_body_util::BodyExt;
        let client = match &self.renew {
            Some(r) => r
                .client()
                .await
                .map_err(|e| CallError::Transport(self.scrub(&e)))?,
            None => self.client.clone(),
        };
        let res = client
            .send(req.map(kube::client::Body::from))
            .await
            .map_err(|e| CallError::Transport(self.scrub(&chain(&e))))?;
        let code = res.status().as_u16();
        let retry_header = res
            .headers()
            .get(http::header::RETRY_AFTER)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.trim().parse::<u64>().ok());
        let bytes = http_body_util::Limited::new(res.into_body(), MAX_ANSWER_BYTES)
            .collect()
            .await
            .map_err(|e| {
                if e.is::<http_body_util::LengthLimitError>() {
                    CallError::Transport(format!(
                        "the answer is larger than {} MiB: not read",
                        MAX_ANSWER_BYTES >> 20
                    ))
                } else {
                    CallError::Transport(self.scrub(&chain(&*e)))
                }
            })?
            .to_bytes();
        if (200..300).contains(&code) {
            let v: Value = serde_json::from_slice(&bytes)
                .map_err(|e| CallError::Transport(format!("the answer is not JSON: {e}")))?;
            // Every answer capops asks for is an object (a `null` taken as
            // one would read as nothing there, or a write done).
            if !v.is_object() {
                return Err(CallError::Transport(format!(
                    "the answer is JSON {}, not a Kubernetes object",
                    match v {
                        Value::Null => "null",
                        Value::Array(_) => "an array",
                        _ => "a single value",
                    }
                )));
            }
            return Ok(v);
        }
        let body: Value = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
        let failure = if body["kind"] == "Status" {
            ApiFailure {
                code,
                // Every text of an answer is scrubbed: a server (or what
                // stands in front of it) may echo the request's headers.
                reason: self.scrub(body["reason"].as_str().unwrap_or_default()),
                message: self.scrub(body["message"].as_str().unwrap_or_default()),
                causes: body["details"]["causes"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .map(|c| Cause {
                        reason: self.scrub(c["reason"].as_str().unwrap_or_default()),
                        field: self.scrub(c["field"].as_str().unwrap_or_default()),
                        message: self.scrub(c["message"].as_str().unwrap_or_default()),
                    })
                    .collect(),
                retry_after: retry_header.or(body["details"]["retryAfterSeconds"].as_u64()),
            }
        } else {
            let text = String::from_utf8_lossy(&bytes);
            let text: String = text.trim().chars().take(200).collect();
            ApiFailure {
                code,
                reason: String::new(),
                message: if body.is_null() && !text.is_empty() {
                    self.scrub(&text)
                } else {
                    format!("HTTP {code}")
                },
                causes: Vec::new(),
                retry_after: retry_header,
            }
        };
        Err(CallError::Api(failure))
    }

    /// Every object of a collection matching a label selector, page by page.
    pub async fn list(&self, path: &str, selector: &str) -> Result<Vec<Value>, CallError> {
        let mut items = Vec::new();
        let mut token: Option<String> = None;
        let mut seen = std::collections::HashSet::new();
        loop {
            if seen.len() >= MAX_PAGES {
                return Err(CallError::Transport(format!(
                    "listing {path} did not end after {MAX_PAGES} pages of {PAGE}"
                )));
            }
            let mut lp = kube::api::ListParams::default()
                .labels(selector)
                .limit(PAGE);
            if let Some(t) = &token {
                lp = lp.continue_token(t);
            }
            let req = kube::core::Request::new(path)
                .list(&lp)
                .map_err(|e| CallError::Transport(e.to_string()))?;
            let page = self.send(req, Count::List).await?;
            // Lists leave out each item's apiVersion and kind.
            let api = page["apiVersion"].as_str().unwrap_or_default().to_string();
            let kind = page["kind"]
                .as_str()
                .and_then(|k| k.strip_suffix("List"))
                .unwrap_or_default()
                .to_string();
            // A list always has its items, an empty list `[]`.
            let Some(page_items) = page["items"].as_array().cloned() else {
                return Err(CallError::Transport(format!(
                    "listing {path} answered without `items`: not a Kubernetes list"
                )));
            };
            for mut item in page_items {
                if let Some(m) = item.as_object_mut() {
                    m.entry("apiVersion").or_insert_with(|| api.clone().into());
                    m.entry("kind").or_insert_with(|| kind.clone().into());
                }
                items.push(item);
            }
            token = page["metadata"]["continue"]
                .as_str()
                .filter(|t| !t.is_empty())
                .map(str::to_string);
            match &token {
                None => return Ok(items),
                // The same page again: the list would never end.
                Some(t) if !seen.insert(t.clone()) => {
                    return Err(CallError::Transport(format!(
                        "listing {path} came back to a page it had sent (its continue token repeats): the server pages forever"
                    )));
                }
                Some(_) => {}
            }
        }
    }

    /// One object by name; `None` when it does not exist.
    pub async fn get(&self, path: &str, name: &str) -> Result<Option<Value>, CallError> {
        let req = kube::core::Request::new(path)
            .get(name, &Default::default())
            .map_err(|e| CallError::Transport(e.to_string()))?;
        match self.send(req, Count::Get).await {
            Ok(v) => Ok(Some(v)),
            Err(CallError::Api(a)) if a.code == 404 => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// Server-side apply as the `capops` field manager.
    pub async fn apply(
        &self,
        path: &str,
        name: &str,
        object: &Value,
        dry_run: bool,
        force: bool,
    ) -> Result<Value, CallError> {
        let mut pp = kube::api::PatchParams::apply(super::desired::FIELD_MANAGER);
        pp.dry_run = dry_run;
        pp.force = force;
        let req = kube::core::Request::new(path)
            .patch(name, &pp, &kube::api::Patch::Apply(object))
            .map_err(|e| CallError::Transport(e.to_string()))?;
        self.send(req, if dry_run { Count::DryRun } else { Count::Write })
            .await
    }

    /// A JSON merge patch as the `capops` field manager (node labels: a
    /// merge patch never creates a node that went away).
    pub async fn merge_patch(
        &self,
        path: &str,
        name: &str,
        patch: &Value,
        dry_run: bool,
    ) -> Result<Value, CallError> {
        let pp = kube::api::PatchParams {
            field_manager: Some(super::desired::FIELD_MANAGER.into()),
            dry_run,
            ..Default::default()
        };
        let req = kube::core::Request::new(path)
            .patch(name, &pp, &kube::api::Patch::Merge(patch))
            .map_err(|e| CallError::Transport(e.to_string()))?;
        self.send(req, if dry_run { Count::DryRun } else { Count::Write })
            .await
    }

    /// Deletes an object if it still has this uid and resourceVersion.
    pub async fn delete(
        &self,
        path: &str,
        name: &str,
        uid: Option<&str>,
        resource_version: Option<&str>,
    ) -> Result<(), CallError> {
        let dp = kube::api::DeleteParams {
            preconditions: Some(kube::api::Preconditions {
                uid: uid.map(str::to_string),
                resource_version: resource_version.map(str::to_string),
            }),
            ..Default::default()
        };
        let req = kube::core::Request::new(path)
            .delete(name, &dp)
            .map_err(|e| CallError::Transport(e.to_string()))?;
        self.send(req, Count::Write).await.map(|_| ())
    }
}

/// An error and its sources, one line.
fn chain(e: &dyn std::error::Error) -> String {
    let mut s = e.to_string();
    let mut cur = e.source();
    while let Some(c) = cur {
        let t = c.to_string();
        if !s.contains(&t) {
            s.push_str(": ");
            s.push_str(&t);
        }
        cur = c.source();
    }
    s
}
