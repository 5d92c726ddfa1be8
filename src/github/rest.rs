//! The GitHub REST endpoints capops calls, and the few fields it reads.
//!
//! The models are deliberately small and lenient (unknown fields ignored,
//! optional where GitHub may send null): capops reads a handful of fields and
//! should not break when GitHub adds or drops others. Paths follow GitHub's
//! REST reference (API version 2022-11-28).

use super::GithubError;
use super::client::{Client, Method, Reply, expect_ok, parse, seg};
use crate::policy::approvals::{Membership, Review, ReviewState};
use serde::Deserialize;
use serde_json::json;

/// The name commit statuses and check runs carry.
pub const CONTEXT: &str = "capops";

/// The name of the verdict for pull requests into `base`: `capops` when one
/// branch is governed, `capops/<base>` when several are. A commit carries one
/// verdict per name, and the same head proposed into two branches is two
/// changes: each branch's protection requires its own.
pub fn context_for(listed: &[String], base: &str) -> String {
    if listed.len() > 1 {
        format!("{CONTEXT}/{base}")
    } else {
        CONTEXT.to_string()
    }
}

/// The names of every governed branch's verdict.
pub fn contexts(listed: &[String]) -> Vec<String> {
    if listed.len() > 1 {
        listed.iter().map(|b| context_for(listed, b)).collect()
    } else {
        vec![CONTEXT.to_string()]
    }
}

#[derive(Clone, Debug, Deserialize)]
pub struct User {
    pub login: String,
    #[serde(rename = "type", default)]
    pub kind: Option<String>,
}

#[derive(Clone, Debug, Deserialize)]
pub struct GitRef {
    pub sha: String,
    #[serde(rename = "ref", default)]
    pub name: String,
    #[serde(default)]
    pub repo: Option<RepoInfo>,
}

#[derive(Clone, Debug, Deserialize)]
pub struct RepoInfo {
    #[serde(default)]
    pub default_branch: Option<String>,
    /// `owner/name`: for a pull request's head, the fork it comes from.
    #[serde(default)]
    pub full_name: Option<String>,
}

/// `GET /repos/{o}/{r}/branches/{branch}`: the branch's tip.
#[derive(Clone, Debug, Deserialize)]
struct Branch {
    commit: BranchCommit,
}

#[derive(Clone, Debug, Deserialize)]
struct BranchCommit {
    sha: String,
}

/// One commit of a pull request, as `GET /pulls/{n}/commits` lists it: the
/// GitHub accounts its author and committer map to (null when none does).
#[derive(Clone, Debug, Deserialize)]
struct ApiCommit {
    #[serde(default)]
    sha: String,
    #[serde(default)]
    author: Option<User>,
    #[serde(default)]
    committer: Option<User>,
}

use super::activity::Activity;
pub use super::activity::BranchPushers;

/// GitHub lists at most this many commits of a pull request.
pub const MAX_PULL_COMMITS: u64 = 250;

/// What a pull request's commits say about who wrote them.
#[derive(Clone, Debug, Default)]
pub struct PullCommits {
    /// The logins that authored or committed them (lowercase, sorted,
    /// without duplicates).
    pub logins: Vec<String>,
    /// The commits (short SHAs) whose author or committer is linked to no account.
    pub unlinked: Vec<String>,
    /// Every commit's SHA, oldest first.
    pub shas: Vec<String>,
}

#[derive(Clone, Debug, Deserialize)]
pub struct PullRequest {
    pub number: u64,
    #[serde(default)]
    pub state: String,
    pub user: Option<User>,
    pub head: GitRef,
    pub base: GitRef,
    #[serde(default)]
    pub html_url: String,
    /// How many commits the pull request has.
    #[serde(default)]
    pub commits: Option<u64>,
}

#[derive(Clone, Debug, Deserialize)]
struct ApiReview {
    id: u64,
    user: Option<User>,
    #[serde(default)]
    state: String,
    commit_id: Option<String>,
    submitted_at: Option<String>,
}

#[derive(Clone, Debug, Deserialize)]
pub struct Comment {
    pub id: u64,
    pub user: Option<User>,
    #[serde(default)]
    pub body: Option<String>,
    #[serde(default)]
    pub html_url: String,
}

#[derive(Clone, Debug, Deserialize)]
struct TeamMembership {
    state: String,
}

#[derive(Clone, Debug, Deserialize)]
pub struct CheckRun {
    pub id: u64,
    #[serde(default)]
    pub name: String,
    #[serde(default)]
    pub html_url: Option<String>,
}

#[derive(Clone, Debug, Deserialize)]
pub struct Status {
    #[serde(default)]
    pub url: String,
}

/// One status of a commit, as `GET /commits/{sha}/statuses` lists it.
#[derive(Clone, Debug, Deserialize)]
pub struct LatestStatus {
    #[serde(default)]
    pub context: String,
    #[serde(default)]
    pub state: String,
    #[serde(default)]
    pub description: Option<String>,
    #[serde(default)]
    pub target_url: Option<String>,
    /// Who set it (anyone who may write statuses may set any context).
    #[serde(default)]
    pub creator: Option<User>,
}

/// One repository's endpoints.
pub struct Repo<'a> {
    pub client: &'a Client,
    pub owner: String,
    pub name: String,
}

impl Repo<'_> {
    fn path(&self, rest: &str) -> String {
        self.client.url(&format!(
            "/repos/{}/{}{rest}",
            seg(&self.owner),
            seg(&self.name)
        ))
    }

    async fn call(
        &self,
        method: Method,
        url: &str,
        body: Option<&serde_json::Value>,
        what: &str,
    ) -> Result<Reply, GithubError> {
        let reply = self.client.send(method, url, body, what).await?;
        expect_ok(&reply, what)?;
        Ok(reply)
    }

    /// `GET /repos/{o}/{r}/pulls/{n}`: read fresh, not from the event, since
    /// a push may have landed since.
    pub async fn pull(&self, number: u64) -> Result<PullRequest, GithubError> {
        let what = format!("reading pull request #{number}");
        let reply = self
            .call(
                Method::Get,
                &self.path(&format!("/pulls/{number}")),
                None,
                &what,
            )
            .await?;
        parse(&reply, &what)
    }

    /// The tip of a branch, read now (a pull request's `base.sha` is the base
    /// as of its last push, not the branch as it stands).
    pub async fn branch_tip(&self, branch: &str) -> Result<String, GithubError> {
        let what = format!("reading the tip of branch `{branch}`");
        let reply = self
            .call(
                Method::Get,
                &self.path(&format!("/branches/{}", seg(branch))),
                None,
                &what,
            )
            .await?;
        let b: Branch = parse(&reply, &what)?;
        Ok(b.commit.sha)
    }

    /// The pull request's commits, all pages: the GitHub logins that
    /// authored or committed them, the commits whose author or committer
    /// GitHub links to no account (their identity is only what the committer
    /// wrote), and their SHAs. GitHub lists at most 250
    /// commits: a pull request with more is refused, since who pushed its
    /// other commits cannot be read.
    pub async fn pushers(
        &self,
        number: u64,
        count: Option<u64>,
    ) -> Result<PullCommits, GithubError> {
        let what = format!("listing the commits of pull request #{number}");
        if let Some(n) = count.filter(|n| *n > MAX_PULL_COMMITS) {
            return Err(GithubError::TooManyCommits { number, commits: n });
        }
        let url = self.path(&format!("/pulls/{number}/commits?per_page=100"));
        let raw: Vec<ApiCommit> = self.client.get_all(&url, &what).await?;
        if raw.len() as u64 >= MAX_PULL_COMMITS && count.is_none() {
            return Err(GithubError::TooManyCommits {
                number,
                commits: raw.len() as u64,
            });
        }
        let mut out: Vec<String> = raw
            .iter()
            .flat_map(|c| [&c.author, &c.committer])
            .flatten()
            .map(|u| super::activity::account_key(&u.login, u.kind.as_deref()))
            .collect();
        out.sort();
        out.dedup();
        let unlinked = raw
            .iter()
            .filter(|c| c.author.is_none() || c.committer.is_none())
            .map(|c| c.sha.chars().take(12).collect())
            .collect();
        Ok(PullCommits {
            logins: out,
            unlinked,
            shas: raw.into_iter().map(|c| c.sha).collect(),
        })
    }

    /// Who pushed to `branch` of this repository: the actors of its
    /// activities (`GET /repos/{o}/{r}/activity?ref=refs/heads/{branch}`,
    /// all pages), which must account for every one of `commits` from
    /// `head` back ([`super::activity`]). A branch reused for an earlier
    /// pull request keeps its pushers (they count as pushers here too). Not
    /// readable (403 or 404: the token may not read the fork, GitHub
    /// Enterprise Server without the endpoint) is `Unknown`, not an error:
    /// the gate then counts no approval.
    pub async fn branch_pushers(
        &self,
        branch: &str,
        head: &str,
        commits: &[String],
    ) -> Result<BranchPushers, GithubError> {
        let what = format!(
            "listing who pushed to branch `{branch}` of {}/{}",
            self.owner, self.name
        );
        let url = self.path(&format!(
            "/activity?ref={}&per_page=100",
            seg(&format!("refs/heads/{branch}"))
        ));
        let raw: Vec<Activity> = match self.client.get_all(&url, &what).await {
            Ok(raw) => raw,
            Err(e @ (GithubError::NotFound { .. } | GithubError::Forbidden { .. })) => {
                return Ok(BranchPushers::Unknown(e.to_string()));
            }
            Err(e) => return Err(e),
        };
        Ok(super::activity::pushers(branch, head, commits, &raw))
    }

    /// Every review of the pull request, all pages, in GitHub's order.
    pub async fn reviews(&self, number: u64) -> Result<Vec<Review>, GithubError> {
        let what = format!("listing the reviews of pull request #{number}");
        let url = self.path(&format!("/pulls/{number}/reviews?per_page=100"));
        let raw: Vec<ApiReview> = self.client.get_all(&url, &what).await?;
        Ok(raw
            .into_iter()
            .filter_map(|r| {
                let user = r.user?;
                Some(Review {
                    id: r.id,
                    bot: user.kind.as_deref() == Some("Bot"),
                    login: user.login,
                    state: ReviewState::parse(&r.state)?,
                    commit_id: r.commit_id,
                    submitted_at: r.submitted_at,
                })
            })
            .collect())
    }

    /// Every comment on the pull request's conversation, all pages.
    pub async fn comments(&self, number: u64) -> Result<Vec<Comment>, GithubError> {
        let what = format!("listing the comments of pull request #{number}");
        let url = self.path(&format!("/issues/{number}/comments?per_page=100"));
        self.client.get_all(&url, &what).await
    }

    /// `POST /repos/{o}/{r}/issues/{n}/comments`. A 422 is returned as is
    /// (the body was refused), so the caller can try a shorter one.
    pub async fn create_comment(
        &self,
        number: u64,
        body: &str,
    ) -> Result<Result<Comment, Reply>, GithubError> {
        let what = format!("commenting on pull request #{number}");
        let url = self.path(&format!("/issues/{number}/comments"));
        self.write_comment(Method::Post, &url, body, &what).await
    }

    /// `PATCH /repos/{o}/{r}/issues/comments/{id}`.
    pub async fn update_comment(
        &self,
        id: u64,
        body: &str,
    ) -> Result<Result<Comment, Reply>, GithubError> {
        let what = format!("editing comment {id}");
        let url = self.path(&format!("/issues/comments/{id}"));
        self.write_comment(Method::Patch, &url, body, &what).await
    }

    async fn write_comment(
        &self,
        method: Method,
        url: &str,
        body: &str,
        what: &str,
    ) -> Result<Result<Comment, Reply>, GithubError> {
        let payload = json!({ "body": body });
        let reply = match method {
            // A retried creation could post the comment twice.
            Method::Post => {
                self.client
                    .send_once(method, url, Some(&payload), what)
                    .await?
            }
            _ => self.client.send(method, url, Some(&payload), what).await?,
        };
        if reply.status == 422 {
            return Ok(Err(reply));
        }
        expect_ok(&reply, what)?;
        Ok(Ok(parse(&reply, what)?))
    }

    /// The latest status named `context` of a commit, with who set it
    /// (`GET /commits/{sha}/statuses`, newest first; `None` when the newest
    /// 100 hold none of that name).
    pub async fn latest_status(
        &self,
        sha: &str,
        context: &str,
    ) -> Result<Option<LatestStatus>, GithubError> {
        let what = format!("reading the statuses of {}", short(sha));
        let reply = self
            .call(
                Method::Get,
                &self.path(&format!("/commits/{}/statuses?per_page=100", seg(sha))),
                None,
                &what,
            )
            .await?;
        let listed: Vec<LatestStatus> = parse(&reply, &what)?;
        Ok(listed.into_iter().find(|s| s.context == context))
    }

    /// `POST /repos/{o}/{r}/statuses/{sha}` with context `capops`.
    pub async fn create_status(
        &self,
        sha: &str,
        context: &str,
        state: &str,
        description: &str,
        target_url: Option<&str>,
    ) -> Result<Status, GithubError> {
        let what = format!("setting the `{context}` status of {}", short(sha));
        let mut body = json!({
            "state": state,
            "context": context,
            "description": description,
        });
        if let Some(t) = target_url {
            body["target_url"] = json!(t);
        }
        let reply = self
            .call(
                Method::Post,
                &self.path(&format!("/statuses/{}", seg(sha))),
                Some(&body),
                &what,
            )
            .await?;
        parse(&reply, &what)
    }

    /// Creates (`id: None`) or updates a check run.
    pub async fn write_check_run(
        &self,
        id: Option<u64>,
        body: &serde_json::Value,
        sha: &str,
    ) -> Result<CheckRun, GithubError> {
        let what = format!("writing the verdict check run of {}", short(sha));
        let (method, url) = match id {
            None => (Method::Post, self.path("/check-runs")),
            Some(id) => (Method::Patch, self.path(&format!("/check-runs/{id}"))),
        };
        let reply = self.call(method, &url, Some(body), &what).await?;
        parse(&reply, &what)
    }
}

/// `GET /user`: the login the token acts as. `Ok(None)` when the token is
/// an installation token, which may not read it (403 "Resource not accessible
/// by integration").
pub async fn viewer(client: &Client) -> Result<Option<String>, GithubError> {
    let what = "asking GitHub whose token this is (GET /user)";
    let reply = client
        .send(Method::Get, &client.url("/user"), None, what)
        .await?;
    if matches!(reply.status, 403 | 404) {
        return Ok(None);
    }
    expect_ok(&reply, what)?;
    let user: User = parse(&reply, what)?;
    Ok(Some(user.login))
}

/// `GET /orgs/{org}/teams/{slug}/memberships/{login}`: 200 with `state:
/// active|pending`, 404 when not a member (or when the token cannot see the
/// team: docs/github.md says which permission it needs).
pub async fn membership(
    client: &Client,
    team: &str,
    login: &str,
) -> Result<Membership, GithubError> {
    let Some((org, slug)) = team
        .split_once('/')
        .filter(|(o, s)| !o.is_empty() && !s.is_empty() && !s.contains('/'))
    else {
        return Ok(Membership::Unknown(format!(
            "`{team}` is not a team of the form org/team-slug"
        )));
    };
    let what = format!("reading {login}'s membership of {team}");
    let url = client.url(&format!(
        "/orgs/{}/teams/{}/memberships/{}",
        seg(org),
        seg(slug),
        seg(login)
    ));
    let reply = client.send(Method::Get, &url, None, &what).await?;
    match reply.status {
        404 => Ok(Membership::NotMember),
        403 => Ok(Membership::Unknown(format!(
            "GitHub refused to tell (403: {}); the token needs read:org (or the Members: read permission of a GitHub App)",
            reply.message()
        ))),
        _ => {
            expect_ok(&reply, &what)?;
            let m: TeamMembership = parse(&reply, &what)?;
            Ok(match m.state.as_str() {
                "active" => Membership::Active,
                "pending" => Membership::Pending,
                other => Membership::Unknown(format!("state `{other}`")),
            })
        }
    }
}

/// The first 12 characters of a SHA.
pub fn short(sha: &str) -> &str {
    prefix(sha, 12)
}

/// The first `n` characters of `s` (a SHA an answer could make anything:
/// cut at a character, never inside one).
pub fn prefix(s: &str, n: usize) -> &str {
    s.char_indices().nth(n).map_or(s, |(i, _)| &s[..i])
}
