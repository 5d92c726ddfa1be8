//! A stateful fake of the GitHub REST API, for the pull-request loop's tests.
//!
//! It serves the endpoints `capops check --github` calls, with the shapes
//! GitHub documents (REST API version 2022-11-28): absolute `url`/`html_url`
//! fields, reviews listed chronologically, 30 items a page by default (100 at
//! most) with `Link` headers (`rel="next"`, `"last"`, `"first"`, `"prev"`),
//! `x-ratelimit-*` headers, 201 on creation, 404/401/403/422 bodies with
//! `message` and `documentation_url`. It keeps state (pull requests, reviews,
//! comments, statuses, check runs, team memberships) so a test can play a
//! whole pull request's life, and it logs every request.
//!
//! Semantics it follows, because capops depends on them:
//! - dismissing a review changes that review's state to DISMISSED (GitHub
//!   does not add a new review);
//! - `POST` and `PATCH` both edit a comment (`/issues/comments/{id}`);
//! - a comment longer than the body limit (65,536 characters) gets 422;
//! - the pull-request list (`/pulls`) shows open pull requests unless
//!   `state` says otherwise, newest first;
//! - a commit keeps at most 1,000 statuses of one context; more get 422;
//!   the combined status (`/commits/{sha}/status`) lists the latest of each;
//! - team membership answers 200 `{state: active|pending}` or 404;
//! - the repository activity (`/activity?ref=...`) lists every push, force
//!   push and branch creation with the account that made it, newest first,
//!   with cursor pagination (`after`) rather than page numbers;
//! - check runs can be created only with an installation (GitHub App) token;
//!   a user's token gets 403; `GET /user` with an installation token gets 403;
//! - the API may be served under a path prefix (`/api/v3`, as GitHub
//!   Enterprise Server does), and then every URL it returns carries it.
//!
//! Faults (rate limits, server errors) are injected per request path.

#![allow(dead_code)]

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, Method, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

/// GitHub's limit on statuses of one context per commit.
pub const MAX_STATUSES: usize = 1000;

/// Who a token belongs to.
#[derive(Clone, Debug)]
pub struct Account {
    pub login: String,
    pub id: u64,
    /// An installation token (GitHub App, like the Actions token).
    pub installation: bool,
    /// May read org team memberships (read:org / Members: read).
    pub read_org: bool,
}

#[derive(Clone, Debug)]
pub struct Pull {
    pub number: u64,
    pub author: String,
    pub head_sha: String,
    pub base_sha: String,
    /// The branch it merges into.
    pub base_ref: String,
    /// (author login, committer login) of each commit, oldest first.
    pub commits: Vec<(String, String)>,
    /// The SHA of each commit, where known (a synthetic one otherwise).
    pub commit_shas: Vec<String>,
    /// The head branch (`change-{number}`).
    pub head_ref: String,
    /// `open` or `closed`.
    pub state: String,
}

/// One entry of the repository activity.
#[derive(Clone, Debug)]
pub struct ActivityRec {
    pub id: u64,
    /// `refs/heads/<branch>`.
    pub ref_name: String,
    pub before: String,
    pub after: String,
    /// `push`, `force_push`, `branch_creation`, ...
    pub kind: String,
    /// The account that made it (empty: null, as for a deleted account).
    pub actor: String,
    pub timestamp: String,
}

#[derive(Clone, Debug)]
pub struct ReviewRec {
    pub id: u64,
    pub login: String,
    pub state: String,
    pub commit_id: String,
    pub body: String,
    pub submitted_at: String,
    pub bot: bool,
}

#[derive(Clone, Debug)]
pub struct CommentRec {
    pub id: u64,
    pub issue: u64,
    pub login: String,
    pub bot: bool,
    pub body: String,
    pub created_at: String,
    pub updated_at: String,
}

#[derive(Clone, Debug)]
pub struct StatusRec {
    pub sha: String,
    pub state: String,
    pub context: String,
    pub description: String,
    pub target_url: Option<String>,
    pub creator: String,
}

#[derive(Clone, Debug)]
pub struct CheckRunRec {
    pub id: u64,
    pub sha: String,
    pub name: String,
    pub conclusion: String,
    pub title: String,
    pub summary: String,
    pub annotations: Vec<Value>,
}

/// A scripted failure: the next `times` requests whose path contains `path` fail.
#[derive(Clone, Debug)]
pub struct Fault {
    pub method: Option<Method>,
    pub path: String,
    pub times: u32,
    pub kind: FaultKind,
}

#[derive(Clone, Debug)]
pub enum FaultKind {
    /// 403, `x-ratelimit-remaining: 0`, reset in this many seconds.
    PrimaryRateLimit { reset_in: u64 },
    /// 429 with `retry-after`.
    RetryAfter { secs: u64 },
    /// A server error with this status.
    Status(u16),
    /// This status, with a message that quotes the request's credentials
    /// back (as a proxy, a web application firewall or a misconfigured
    /// server can).
    EchoCredentials(u16),
    /// A 200 whose body is not the object asked for but a JSON string
    /// quoting the credentials (a parse error quotes it in turn).
    EchoCredentialsAsOk,
}

/// The fake's whole state.
#[derive(Default)]
pub struct World {
    /// `http://127.0.0.1:PORT` (no prefix).
    pub origin: String,
    pub owner: String,
    pub repo: String,
    pub tokens: BTreeMap<String, Account>,
    pub pulls: BTreeMap<u64, Pull>,
    /// Branch name -> tip SHA.
    pub branches: BTreeMap<String, String>,
    pub reviews: BTreeMap<u64, Vec<ReviewRec>>,
    pub comments: Vec<CommentRec>,
    /// (org, slug) -> login -> state.
    pub teams: BTreeMap<(String, String), BTreeMap<String, String>>,
    pub statuses: Vec<StatusRec>,
    pub check_runs: Vec<CheckRunRec>,
    /// The repository activity, oldest first.
    pub activity: Vec<ActivityRec>,
    /// Accounts of type `Bot` besides those whose login ends in `[bot]`
    /// (GitHub's Copilot agent signs as `Copilot`).
    pub bots: std::collections::BTreeSet<String>,
    pub faults: Vec<Fault>,
    /// `METHOD path?query` of every request, in order.
    pub log: Vec<String>,
    /// Every request body received.
    pub bodies: Vec<String>,
    pub comment_limit: usize,
    next_id: u64,
    clock: i64,
}

impl World {
    fn id(&mut self) -> u64 {
        self.next_id += 1;
        self.next_id
    }

    /// The fake clock: one minute further on each call.
    fn now(&mut self) -> String {
        self.clock += 60;
        jiff::Timestamp::from_second(1_795_424_400 + self.clock)
            .unwrap()
            .to_string()
    }

    pub fn add_account(&mut self, token: &str, login: &str, installation: bool, read_org: bool) {
        let id = 1000 + self.tokens.len() as u64;
        self.tokens.insert(
            token.into(),
            Account {
                login: login.into(),
                id,
                installation,
                read_org,
            },
        );
    }

    pub fn add_member(&mut self, team: &str, login: &str, state: &str) {
        let (org, slug) = team.split_once('/').unwrap();
        self.teams
            .entry((org.into(), slug.into()))
            .or_default()
            .insert(login.to_ascii_lowercase(), state.into());
    }

    pub fn open_pull(&mut self, number: u64, author: &str, base_sha: &str, head_sha: &str) {
        let head_ref = format!("change-{number}");
        self.pulls.insert(
            number,
            Pull {
                number,
                author: author.into(),
                head_sha: head_sha.into(),
                base_sha: base_sha.into(),
                base_ref: "main".into(),
                commits: vec![(author.into(), author.into())],
                commit_shas: vec![head_sha.into()],
                head_ref: head_ref.clone(),
                state: "open".into(),
            },
        );
        self.branches
            .entry("main".into())
            .or_insert_with(|| base_sha.into());
        self.record(
            &head_ref,
            "branch_creation",
            &"0".repeat(40),
            head_sha,
            author,
        );
    }

    /// An activity entry: `actor` made `kind` on `branch`.
    pub fn record(&mut self, branch: &str, kind: &str, before: &str, after: &str, actor: &str) {
        let id = self.id();
        let timestamp = self.now();
        self.activity.push(ActivityRec {
            id,
            ref_name: format!("refs/heads/{branch}"),
            before: before.into(),
            after: after.into(),
            kind: kind.into(),
            actor: actor.into(),
            timestamp,
        });
    }

    /// A push of one commit to the pull request's branch by `pusher`, the
    /// commit carrying the git identity GitHub links to `identity` (empty:
    /// to no account).
    pub fn push_forged(&mut self, number: u64, head_sha: &str, pusher: &str, identity: &str) {
        let p = self.pulls.get_mut(&number).unwrap();
        let before = std::mem::replace(&mut p.head_sha, head_sha.into());
        p.commits.push((identity.into(), identity.into()));
        p.commit_shas.push(head_sha.into());
        let branch = p.head_ref.clone();
        self.record(&branch, "push", &before, head_sha, pusher);
    }

    /// A push to the pull request's branch (a commit by its author).
    pub fn push(&mut self, number: u64, head_sha: &str) {
        let author = self.pulls[&number].author.clone();
        self.push_forged(number, head_sha, &author, &author);
    }

    /// A push to the pull request's branch by someone else.
    pub fn push_as(&mut self, number: u64, head_sha: &str, login: &str) {
        self.push_forged(number, head_sha, login, login);
    }

    /// A push by the author of a commit whose git author and committer
    /// e-mail GitHub links to no account (the API's `author` and `committer`
    /// are null).
    pub fn push_unlinked(&mut self, number: u64, head_sha: &str) {
        let author = self.pulls[&number].author.clone();
        self.push_forged(number, head_sha, &author, "");
    }

    /// Submits a review (state as the REST API spells it) and returns its id.
    pub fn review(&mut self, number: u64, login: &str, state: &str, commit: &str) -> u64 {
        let id = self.id();
        let submitted_at = self.now();
        self.reviews.entry(number).or_default().push(ReviewRec {
            id,
            login: login.into(),
            state: state.into(),
            commit_id: commit.into(),
            body: String::new(),
            submitted_at,
            bot: login.ends_with("[bot]"),
        });
        id
    }

    /// Dismisses a review: GitHub changes its state in place.
    pub fn dismiss(&mut self, number: u64, review_id: u64) {
        for r in self.reviews.get_mut(&number).unwrap() {
            if r.id == review_id {
                r.state = "DISMISSED".into();
            }
        }
    }

    /// A comment written by someone (not through the API under test).
    pub fn comment_as(&mut self, issue: u64, login: &str, body: &str) -> u64 {
        let id = self.id();
        let now = self.now();
        self.comments.push(CommentRec {
            id,
            issue,
            login: login.into(),
            bot: login.ends_with("[bot]"),
            body: body.into(),
            created_at: now.clone(),
            updated_at: now,
        });
        id
    }

    pub fn fail(&mut self, method: Option<Method>, path: &str, times: u32, kind: FaultKind) {
        self.faults.push(Fault {
            method,
            path: path.into(),
            times,
            kind,
        });
    }

    pub fn comments_on(&self, issue: u64) -> Vec<CommentRec> {
        self.comments
            .iter()
            .filter(|c| c.issue == issue)
            .cloned()
            .collect()
    }

    /// The latest status with context `capops` on a commit.
    pub fn status_of(&self, sha: &str) -> Option<StatusRec> {
        self.status_named(sha, "capops")
    }

    /// The latest status with context `context` on a commit.
    pub fn status_named(&self, sha: &str, context: &str) -> Option<StatusRec> {
        self.statuses
            .iter()
            .rev()
            .find(|s| s.sha == sha && s.context == context)
            .cloned()
    }

    pub fn requests(&self, needle: &str) -> usize {
        self.log.iter().filter(|l| l.contains(needle)).count()
    }
}

/// A running fake; stops when dropped.
pub struct FakeGithub {
    pub url: String,
    pub world: Arc<Mutex<World>>,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl FakeGithub {
    pub fn start(owner: &str, repo: &str) -> FakeGithub {
        let world = Arc::new(Mutex::new(World {
            owner: owner.into(),
            repo: repo.into(),
            comment_limit: 65_536,
            ..World::default()
        }));
        let (tx, rx) = std::sync::mpsc::channel();
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let shared = world.clone();
        let thread = std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap();
            rt.block_on(async move {
                let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
                tx.send(listener.local_addr().unwrap()).unwrap();
                let app = Router::new().fallback(handle).with_state(shared);
                axum::serve(listener, app)
                    .with_graceful_shutdown(async {
                        let _ = stopped.await;
                    })
                    .await
                    .unwrap();
            });
        });
        let addr = rx.recv().unwrap();
        let url = format!("http://{addr}");
        world.lock().unwrap().origin = url.clone();
        FakeGithub {
            url,
            world,
            stop: Some(stop),
            thread: Some(thread),
        }
    }

    pub fn with<R>(&self, f: impl FnOnce(&mut World) -> R) -> R {
        f(&mut self.world.lock().unwrap())
    }
}

impl Drop for FakeGithub {
    fn drop(&mut self) {
        if let Some(s) = self.stop.take() {
            let _ = s.send(());
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn error(status: u16, message: &str) -> Response {
    let code = StatusCode::from_u16(status).unwrap();
    (
        code,
        [("content-type", "application/json; charset=utf-8")],
        json!({
            "message": message,
            "documentation_url": "https://docs.github.com/rest",
            "status": status.to_string(),
        })
        .to_string(),
    )
        .into_response()
}

struct Ctx {
    /// `http://127.0.0.1:PORT` or `.../api/v3`.
    api: String,
    html: String,
}

/// Whether GitHub gives `login` the type `Bot`.
fn is_bot(bots: &std::collections::BTreeSet<String>, login: &str) -> bool {
    login.ends_with("[bot]") || bots.contains(login)
}

fn user(ctx: &Ctx, login: &str, id: u64, bot: bool) -> Value {
    json!({
        "login": login,
        "id": id,
        "node_id": format!("U_{id}"),
        "avatar_url": format!("{}/avatars/u/{id}", ctx.html),
        "gravatar_id": "",
        "url": format!("{}/users/{login}", ctx.api),
        "html_url": format!("{}/{login}", ctx.html),
        "followers_url": format!("{}/users/{login}/followers", ctx.api),
        "repos_url": format!("{}/users/{login}/repos", ctx.api),
        "type": if bot { "Bot" } else { "User" },
        "site_admin": false,
    })
}

fn uid(login: &str) -> u64 {
    login
        .bytes()
        .fold(7u64, |h, b| h.wrapping_mul(31).wrapping_add(b as u64))
        % 1_000_000
}

fn repo_json(ctx: &Ctx, w: &World) -> Value {
    json!({
        "id": 42,
        "node_id": "R_42",
        "name": w.repo,
        "full_name": format!("{}/{}", w.owner, w.repo),
        "private": true,
        "owner": user(ctx, &w.owner, 1, false),
        "html_url": format!("{}/{}/{}", ctx.html, w.owner, w.repo),
        "url": format!("{}/repos/{}/{}", ctx.api, w.owner, w.repo),
        "default_branch": "main",
    })
}

fn pull_json(ctx: &Ctx, w: &World, p: &Pull) -> Value {
    let base = format!("{}/repos/{}/{}", ctx.api, w.owner, w.repo);
    let html = format!("{}/{}/{}/pull/{}", ctx.html, w.owner, w.repo, p.number);
    json!({
        "url": format!("{base}/pulls/{}", p.number),
        "id": 9000 + p.number,
        "node_id": format!("PR_{}", p.number),
        "html_url": html,
        "diff_url": format!("{html}.diff"),
        "issue_url": format!("{base}/issues/{}", p.number),
        "number": p.number,
        "state": p.state,
        "locked": false,
        "title": "Capacity change",
        "user": user(ctx, &p.author, uid(&p.author), p.author.ends_with("[bot]")),
        "body": null,
        "created_at": "2026-11-23T09:00:00Z",
        "updated_at": "2026-11-23T09:00:00Z",
        "closed_at": null,
        "merged_at": null,
        "merge_commit_sha": null,
        "draft": false,
        "author_association": "MEMBER",
        "head": {
            "label": format!("{}:{}", w.owner, p.head_ref),
            "ref": p.head_ref,
            "sha": p.head_sha,
            "user": user(ctx, &w.owner, 1, false),
            "repo": repo_json(ctx, w),
        },
        "commits": p.commits.len(),
        "base": {
            "label": format!("{}:{}", w.owner, p.base_ref),
            "ref": p.base_ref,
            "sha": p.base_sha,
            "user": user(ctx, &w.owner, 1, false),
            "repo": repo_json(ctx, w),
        },
        "_links": {
            "self": {"href": format!("{base}/pulls/{}", p.number)},
            "html": {"href": html},
        },
    })
}

fn review_json(ctx: &Ctx, w: &World, number: u64, r: &ReviewRec) -> Value {
    let base = format!("{}/repos/{}/{}", ctx.api, w.owner, w.repo);
    let html = format!(
        "{}/{}/{}/pull/{number}#pullrequestreview-{}",
        ctx.html, w.owner, w.repo, r.id
    );
    json!({
        "id": r.id,
        "node_id": format!("PRR_{}", r.id),
        "user": user(ctx, &r.login, uid(&r.login), r.bot),
        "body": r.body,
        "state": r.state,
        "html_url": html,
        "pull_request_url": format!("{base}/pulls/{number}"),
        "author_association": "MEMBER",
        "_links": {
            "html": {"href": html},
            "pull_request": {"href": format!("{base}/pulls/{number}")},
        },
        "submitted_at": r.submitted_at,
        "commit_id": r.commit_id,
    })
}

fn comment_json(ctx: &Ctx, w: &World, c: &CommentRec) -> Value {
    let base = format!("{}/repos/{}/{}", ctx.api, w.owner, w.repo);
    json!({
        "id": c.id,
        "node_id": format!("IC_{}", c.id),
        "url": format!("{base}/issues/comments/{}", c.id),
        "html_url": format!("{}/{}/{}/pull/{}#issuecomment-{}", ctx.html, w.owner, w.repo, c.issue, c.id),
        "issue_url": format!("{base}/issues/{}", c.issue),
        "body": c.body,
        "user": user(ctx, &c.login, uid(&c.login), c.bot),
        "created_at": c.created_at,
        "updated_at": c.updated_at,
        "author_association": if c.bot { "NONE" } else { "MEMBER" },
        "performed_via_github_app": null,
    })
}

/// One page of `items`, with GitHub's `Link` header.
fn page(ctx: &Ctx, path: &str, query: &BTreeMap<String, String>, items: Vec<Value>) -> Response {
    let per_page = query
        .get("per_page")
        .and_then(|v| v.parse::<usize>().ok())
        .unwrap_or(30)
        .clamp(1, 100);
    let page = query
        .get("page")
        .and_then(|v| v.parse::<usize>().ok())
        .unwrap_or(1)
        .max(1);
    let last = items.len().div_ceil(per_page).max(1);
    let chunk: Vec<Value> = items
        .into_iter()
        .skip((page - 1) * per_page)
        .take(per_page)
        .collect();
    let link_to = |n: usize| {
        let mut q = query.clone();
        q.insert("per_page".into(), per_page.to_string());
        q.insert("page".into(), n.to_string());
        let qs: Vec<String> = q.iter().map(|(k, v)| format!("{k}={v}")).collect();
        format!("{}{path}?{}", ctx.api, qs.join("&"))
    };
    let mut links = Vec::new();
    if page < last {
        links.push(format!("<{}>; rel=\"next\"", link_to(page + 1)));
        links.push(format!("<{}>; rel=\"last\"", link_to(last)));
    }
    if page > 1 {
        links.push(format!("<{}>; rel=\"first\"", link_to(1)));
        links.push(format!("<{}>; rel=\"prev\"", link_to(page - 1)));
    }
    let mut resp = (StatusCode::OK, Value::Array(chunk).to_string()).into_response();
    if !links.is_empty() {
        resp.headers_mut()
            .insert("link", links.join(", ").parse().unwrap());
    }
    resp
}

/// One page of `items` with cursor pagination, as the repository activity
/// has it: `after` is an opaque cursor, and the `Link` header has `next`
/// (and `prev`) only.
fn cursor_page(
    ctx: &Ctx,
    path: &str,
    query: &BTreeMap<String, String>,
    items: Vec<Value>,
) -> Response {
    let per_page = query
        .get("per_page")
        .and_then(|v| v.parse::<usize>().ok())
        .unwrap_or(30)
        .clamp(1, 100);
    let start = query
        .get("after")
        .and_then(|c| c.strip_prefix("Y3Vyc29y"))
        .and_then(|n| n.parse::<usize>().ok())
        .unwrap_or(0);
    let total = items.len();
    let chunk: Vec<Value> = items.into_iter().skip(start).take(per_page).collect();
    let mut resp = (StatusCode::OK, Value::Array(chunk).to_string()).into_response();
    if start + per_page < total {
        let mut q = query.clone();
        q.insert("per_page".into(), per_page.to_string());
        q.insert("after".into(), format!("Y3Vyc29y{}", start + per_page));
        let qs: Vec<String> = q.iter().map(|(k, v)| format!("{k}={v}")).collect();
        let next = format!("<{}{path}?{}>; rel=\"next\"", ctx.api, qs.join("&"));
        resp.headers_mut().insert("link", next.parse().unwrap());
    }
    resp
}

fn json_status(status: StatusCode, v: Value) -> Response {
    (status, v.to_string()).into_response()
}

async fn handle(
    State(world): State<Arc<Mutex<World>>>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let mut resp = respond(&world, &method, &uri, &headers, &body);
    let h = resp.headers_mut();
    h.insert(
        "content-type",
        "application/json; charset=utf-8".parse().unwrap(),
    );
    h.entry("x-ratelimit-limit")
        .or_insert("5000".parse().unwrap());
    h.entry("x-ratelimit-remaining")
        .or_insert("4999".parse().unwrap());
    h.entry("x-ratelimit-reset")
        .or_insert("1800000000".parse().unwrap());
    h.insert(
        "x-github-api-version-selected",
        "2022-11-28".parse().unwrap(),
    );
    resp
}

fn respond(
    world: &Arc<Mutex<World>>,
    method: &Method,
    uri: &Uri,
    headers: &HeaderMap,
    body: &Bytes,
) -> Response {
    let mut w = world.lock().unwrap();
    let full = uri.path().to_string();
    let (prefix, path) = match full.strip_prefix("/api/v3") {
        Some(rest) => ("/api/v3", rest.to_string()),
        None => ("", full.clone()),
    };
    let ctx = Ctx {
        api: format!("{}{prefix}", w.origin),
        html: format!("{}/web", w.origin),
    };
    w.log.push(format!(
        "{method} {full}{}",
        uri.query().map(|q| format!("?{q}")).unwrap_or_default()
    ));
    w.bodies.push(String::from_utf8_lossy(body).into_owned());
    let query: BTreeMap<String, String> = uri
        .query()
        .unwrap_or("")
        .split('&')
        .filter_map(|kv| kv.split_once('='))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();

    // Injected faults first.
    if let Some(f) = w.faults.iter_mut().find(|f| {
        f.times > 0 && path.contains(&f.path) && f.method.as_ref().is_none_or(|m| m == method)
    }) {
        f.times -= 1;
        return match f.kind {
            FaultKind::PrimaryRateLimit { reset_in } => {
                let reset = jiff::Timestamp::now().as_second() as u64 + reset_in;
                let mut r = error(
                    403,
                    "API rate limit exceeded for installation. If you reach out to GitHub Support for help, please include the request ID.",
                );
                r.headers_mut()
                    .insert("x-ratelimit-remaining", "0".parse().unwrap());
                r.headers_mut()
                    .insert("x-ratelimit-reset", reset.to_string().parse().unwrap());
                r
            }
            FaultKind::RetryAfter { secs } => {
                let mut r = error(
                    429,
                    "You have exceeded a secondary rate limit. Please wait a few minutes before you try again.",
                );
                r.headers_mut()
                    .insert("retry-after", secs.to_string().parse().unwrap());
                r
            }
            FaultKind::Status(s) => error(s, "Server Error"),
            FaultKind::EchoCredentials(s) => {
                let auth = headers
                    .get("authorization")
                    .and_then(|v| v.to_str().ok())
                    .unwrap_or_default();
                let token = auth.split_whitespace().last().unwrap_or_default();
                error(
                    s,
                    &format!("Resource not accessible with {token} (Authorization: {auth})"),
                )
            }
            FaultKind::EchoCredentialsAsOk => {
                let auth = headers
                    .get("authorization")
                    .and_then(|v| v.to_str().ok())
                    .unwrap_or_default();
                (
                    StatusCode::OK,
                    [("content-type", "application/json; charset=utf-8")],
                    json!(format!("echo of {auth}")).to_string(),
                )
                    .into_response()
            }
        };
    }

    // Authentication.
    let token = headers
        .get("authorization")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| {
            v.strip_prefix("Bearer ")
                .or_else(|| v.strip_prefix("token "))
        })
        .map(str::to_string);
    let Some(account) = token.and_then(|t| w.tokens.get(&t).cloned()) else {
        return error(401, "Bad credentials");
    };

    let parts: Vec<&str> = path.trim_matches('/').split('/').collect();
    let json_body = || serde_json::from_slice::<Value>(body).unwrap_or(Value::Null);
    let repo_ok = |o: &str, r: &str| o == w.owner && r == w.repo;
    match (method.as_str(), parts.as_slice()) {
        ("GET", ["user"]) => {
            if account.installation {
                error(403, "Resource not accessible by integration")
            } else {
                json_status(
                    StatusCode::OK,
                    user(&ctx, &account.login, account.id, false),
                )
            }
        }
        ("GET", ["repos", o, r, "pulls"]) if repo_ok(o, r) => {
            // state (open by default: open, closed, all) and base filters,
            // newest first (GitHub's default sort: created, descending).
            let state = query.get("state").map_or("open", String::as_str);
            let items: Vec<Value> = w
                .pulls
                .values()
                .rev()
                .filter(|p| state == "all" || p.state == state)
                .filter(|p| query.get("base").is_none_or(|b| &p.base_ref == b))
                .map(|p| pull_json(&ctx, &w, p))
                .collect();
            page(&ctx, &path, &query, items)
        }
        ("GET", ["repos", o, r, "pulls", n]) if repo_ok(o, r) => {
            match n.parse::<u64>().ok().and_then(|n| w.pulls.get(&n)) {
                Some(p) => json_status(StatusCode::OK, pull_json(&ctx, &w, p)),
                None => error(404, "Not Found"),
            }
        }
        ("GET", ["repos", o, r, "branches", b]) if repo_ok(o, r) => match w.branches.get(*b) {
            Some(sha) => json_status(
                StatusCode::OK,
                json!({"name": b, "commit": {"sha": sha, "url": format!("{}/repos/{o}/{r}/commits/{sha}", ctx.api)}, "protected": *b == "main"}),
            ),
            None => error(404, "Branch not found"),
        },
        ("GET", ["repos", o, r, "activity"]) if repo_ok(o, r) => {
            let wanted = query.get("ref").map(|r| {
                let r = r.replace("%2F", "/").replace("%2f", "/");
                if r.starts_with("refs/") {
                    r
                } else {
                    format!("refs/heads/{r}")
                }
            });
            let kind = query.get("activity_type");
            let items: Vec<Value> = w
                .activity
                .iter()
                .rev()
                .filter(|a| wanted.as_ref().is_none_or(|r| &a.ref_name == r))
                .filter(|a| kind.is_none_or(|k| &a.kind == k))
                .map(|a| {
                    json!({
                        "id": a.id,
                        "node_id": format!("RA_{}", a.id),
                        "before": a.before,
                        "after": a.after,
                        "ref": a.ref_name,
                        "timestamp": a.timestamp,
                        "activity_type": a.kind,
                        "actor": if a.actor.is_empty() { Value::Null } else { user(&ctx, &a.actor, uid(&a.actor), is_bot(&w.bots, &a.actor)) },
                    })
                })
                .collect();
            cursor_page(&ctx, &path, &query, items)
        }
        ("GET", ["repos", o, r, "pulls", n, "commits"]) if repo_ok(o, r) => {
            let Some(p) = n.parse::<u64>().ok().and_then(|n| w.pulls.get(&n)) else {
                return error(404, "Not Found");
            };
            let items: Vec<Value> = p
                .commits
                .iter()
                .enumerate()
                .map(|(i, (a, c))| {
                    json!({
                        "sha": p.commit_shas.get(i).cloned().unwrap_or_else(|| format!("{:040x}", i + 1)),
                        "commit": {
                            "author": {"name": a, "email": format!("{a}@example.com"), "date": "2026-11-23T09:00:00Z"},
                            "committer": {"name": c, "email": format!("{c}@example.com"), "date": "2026-11-23T09:00:00Z"},
                            "message": "change",
                        },
                        "author": if a.is_empty() { Value::Null } else { user(&ctx, a, uid(a), is_bot(&w.bots, a)) },
                        "committer": if c.is_empty() { Value::Null } else { user(&ctx, c, uid(c), is_bot(&w.bots, c)) },
                        "parents": [],
                    })
                })
                .collect();
            page(&ctx, &path, &query, items)
        }
        ("GET", ["repos", o, r, "pulls", n, "reviews"]) if repo_ok(o, r) => {
            let Some(n) = n.parse::<u64>().ok().filter(|n| w.pulls.contains_key(n)) else {
                return error(404, "Not Found");
            };
            let items = w
                .reviews
                .get(&n)
                .map(|rs| rs.iter().map(|r| review_json(&ctx, &w, n, r)).collect())
                .unwrap_or_default();
            page(&ctx, &path, &query, items)
        }
        ("GET", ["repos", o, r, "issues", n, "comments"]) if repo_ok(o, r) => {
            let Some(n) = n.parse::<u64>().ok().filter(|n| w.pulls.contains_key(n)) else {
                return error(404, "Not Found");
            };
            let items = w
                .comments
                .iter()
                .filter(|c| c.issue == n)
                .map(|c| comment_json(&ctx, &w, c))
                .collect();
            page(&ctx, &path, &query, items)
        }
        ("POST", ["repos", o, r, "issues", n, "comments"]) if repo_ok(o, r) => {
            let Some(n) = n.parse::<u64>().ok().filter(|n| w.pulls.contains_key(n)) else {
                return error(404, "Not Found");
            };
            let Some(text) = json_body()["body"].as_str().map(String::from) else {
                return error(422, "Invalid request.\n\n\"body\" wasn't supplied.");
            };
            if text.chars().count() > w.comment_limit {
                return too_long(w.comment_limit);
            }
            let id = w.id();
            let now = w.now();
            let c = CommentRec {
                id,
                issue: n,
                login: account.login.clone(),
                bot: account.installation,
                body: text,
                created_at: now.clone(),
                updated_at: now,
            };
            w.comments.push(c.clone());
            json_status(StatusCode::CREATED, comment_json(&ctx, &w, &c))
        }
        ("POST" | "PATCH", ["repos", o, r, "issues", "comments", id]) if repo_ok(o, r) => {
            let Some(text) = json_body()["body"].as_str().map(String::from) else {
                return error(422, "Invalid request.\n\n\"body\" wasn't supplied.");
            };
            if text.chars().count() > w.comment_limit {
                return too_long(w.comment_limit);
            }
            let now = w.now();
            let id: u64 = id.parse().unwrap_or(0);
            let Some(c) = w.comments.iter_mut().find(|c| c.id == id) else {
                return error(404, "Not Found");
            };
            c.body = text;
            c.updated_at = now;
            let c = c.clone();
            json_status(StatusCode::OK, comment_json(&ctx, &w, &c))
        }
        ("GET", ["orgs", org, "teams", slug, "memberships", login]) => {
            let state = w
                .teams
                .get(&(org.to_string(), slug.to_string()))
                .and_then(|m| m.get(&login.to_ascii_lowercase()))
                .cloned();
            match state.filter(|_| account.read_org) {
                Some(state) => json_status(
                    StatusCode::OK,
                    json!({
                        "url": format!("{}/organizations/1/team/7/memberships/{login}", ctx.api),
                        "role": "member",
                        "state": state,
                    }),
                ),
                None => error(404, "Not Found"),
            }
        }
        ("GET", ["repos", o, r, "commits", sha, "statuses"]) if repo_ok(o, r) => {
            // Every status of the commit, newest first, with who set it.
            let items: Vec<Value> = w
                .statuses
                .iter()
                .rev()
                .filter(|s| s.sha == *sha)
                .map(|s| {
                    json!({
                        "url": format!("{}/repos/{}/{}/statuses/{sha}", ctx.api, w.owner, w.repo),
                        "state": s.state,
                        "description": s.description,
                        "target_url": s.target_url,
                        "context": s.context,
                        "creator": user(&ctx, &s.creator, uid(&s.creator), false),
                    })
                })
                .collect();
            page(&ctx, &path, &query, items)
        }
        ("GET", ["repos", o, r, "commits", sha, "status"]) if repo_ok(o, r) => {
            // The combined status: the latest of each context, newest first.
            let mut seen = std::collections::BTreeSet::new();
            let statuses: Vec<Value> = w
                .statuses
                .iter()
                .rev()
                .filter(|s| s.sha == *sha && seen.insert(s.context.clone()))
                .map(|s| {
                    json!({
                        "url": format!("{}/repos/{}/{}/statuses/{sha}", ctx.api, w.owner, w.repo),
                        "state": s.state,
                        "description": s.description,
                        "target_url": s.target_url,
                        "context": s.context,
                    })
                })
                .collect();
            let state = if statuses.is_empty() {
                "pending"
            } else if statuses.iter().all(|s| s["state"] == "success") {
                "success"
            } else if statuses
                .iter()
                .any(|s| s["state"] == "failure" || s["state"] == "error")
            {
                "failure"
            } else {
                "pending"
            };
            json_status(
                StatusCode::OK,
                json!({
                    "state": state,
                    "sha": sha,
                    "total_count": statuses.len(),
                    "statuses": statuses,
                    "repository": repo_json(&ctx, &w),
                }),
            )
        }
        ("POST", ["repos", o, r, "statuses", sha]) if repo_ok(o, r) => {
            let b = json_body();
            let Some(state) = b["state"]
                .as_str()
                .filter(|s| ["error", "failure", "pending", "success"].contains(s))
            else {
                return error(422, "Validation Failed");
            };
            let description = b["description"].as_str().unwrap_or("").to_string();
            if description.chars().count() > 140 {
                return error(
                    422,
                    "Validation Failed: description is too long (maximum is 140 characters)",
                );
            }
            let rec = StatusRec {
                sha: sha.to_string(),
                state: state.into(),
                context: b["context"].as_str().unwrap_or("default").into(),
                description: description.clone(),
                target_url: b["target_url"].as_str().map(String::from),
                creator: account.login.clone(),
            };
            let same = |s: &&StatusRec| s.sha == rec.sha && s.context == rec.context;
            if w.statuses.iter().filter(same).count() >= MAX_STATUSES {
                return error(
                    422,
                    "Validation Failed: This SHA and context has reached the maximum number of statuses.",
                );
            }
            w.statuses.push(rec.clone());
            let id = w.id();
            let now = w.now();
            json_status(
                StatusCode::CREATED,
                json!({
                    "url": format!("{}/repos/{}/{}/statuses/{sha}", ctx.api, w.owner, w.repo),
                    "avatar_url": format!("{}/avatars/u/1", ctx.html),
                    "id": id,
                    "node_id": format!("SC_{id}"),
                    "state": rec.state,
                    "description": rec.description,
                    "target_url": rec.target_url,
                    "context": rec.context,
                    "created_at": now,
                    "updated_at": now,
                    "creator": user(&ctx, &account.login, account.id, account.installation),
                }),
            )
        }
        ("POST", ["repos", o, r, "check-runs"]) if repo_ok(o, r) => {
            if !account.installation {
                return error(403, "You must authenticate via a GitHub App.");
            }
            let b = json_body();
            let anns = b["output"]["annotations"]
                .as_array()
                .cloned()
                .unwrap_or_default();
            if anns.len() > 50 {
                return error(422, "Only 50 annotations may be sent per request");
            }
            let id = w.id();
            let rec = CheckRunRec {
                id,
                sha: b["head_sha"].as_str().unwrap_or("").into(),
                name: b["name"].as_str().unwrap_or("").into(),
                conclusion: b["conclusion"].as_str().unwrap_or("").into(),
                title: b["output"]["title"].as_str().unwrap_or("").into(),
                summary: b["output"]["summary"].as_str().unwrap_or("").into(),
                annotations: anns,
            };
            w.check_runs.push(rec.clone());
            json_status(StatusCode::CREATED, check_run_json(&ctx, &w, &rec))
        }
        ("PATCH", ["repos", o, r, "check-runs", id]) if repo_ok(o, r) => {
            if !account.installation {
                return error(403, "You must authenticate via a GitHub App.");
            }
            let b = json_body();
            let anns = b["output"]["annotations"]
                .as_array()
                .cloned()
                .unwrap_or_default();
            if anns.len() > 50 {
                return error(422, "Only 50 annotations may be sent per request");
            }
            let id: u64 = id.parse().unwrap_or(0);
            let Some(run) = w.check_runs.iter_mut().find(|c| c.id == id) else {
                return error(404, "Not Found");
            };
            run.annotations.extend(anns);
            let rec = run.clone();
            json_status(StatusCode::OK, check_run_json(&ctx, &w, &rec))
        }
        _ => error(404, "Not Found"),
    }
}

fn too_long(limit: usize) -> Response {
    json_status(
        StatusCode::UNPROCESSABLE_ENTITY,
        json!({
            "message": "Validation Failed",
            "errors": [{
                "resource": "IssueComment",
                "code": "custom",
                "field": "body",
                "message": format!("body is too long (maximum is {limit} characters)"),
            }],
            "documentation_url": "https://docs.github.com/rest/issues/comments#create-an-issue-comment",
            "status": "422",
        }),
    )
}

fn check_run_json(ctx: &Ctx, w: &World, c: &CheckRunRec) -> Value {
    json!({
        "id": c.id,
        "node_id": format!("CR_{}", c.id),
        "head_sha": c.sha,
        "external_id": "",
        "url": format!("{}/repos/{}/{}/check-runs/{}", ctx.api, w.owner, w.repo, c.id),
        "html_url": format!("{}/{}/{}/runs/{}", ctx.html, w.owner, w.repo, c.id),
        "details_url": null,
        "status": "completed",
        "conclusion": c.conclusion,
        "started_at": "2026-11-23T09:00:00Z",
        "completed_at": "2026-11-23T09:00:01Z",
        "output": {
            "title": c.title,
            "summary": c.summary,
            "text": null,
            "annotations_count": c.annotations.len(),
            "annotations_url": format!("{}/repos/{}/{}/check-runs/{}/annotations", ctx.api, w.owner, w.repo, c.id),
        },
        "name": c.name,
        "app": {"id": 15368, "slug": "github-actions", "name": "GitHub Actions"},
        "pull_requests": [],
    })
}
