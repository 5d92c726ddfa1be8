//! The GitHub edge: the pull-request loop of `capops check --github`.
//!
//! Everything here talks to GitHub or reads the GitHub Actions environment;
//! the decisions it acts on are made elsewhere, by pure functions:
//! which reviews satisfy which roles (`policy::approvals`), which comment to
//! edit ([`comment::plan`]), whether and how long to wait on a rate limit
//! ([`retry::classify`]), what an event payload says ([`context::parse_event`]).
//!
//! - [`context`]: the event, repository, API address and token;
//! - [`client`]: octocrab as the HTTP client, with bounded retries, rate-limit
//!   waits and `Link` pagination (it sees raw responses: octocrab's typed
//!   errors drop the headers the rate limits are read from);
//! - [`rest`]: the endpoints capops calls and the few fields it reads;
//! - [`comment`]: the single comment, found by marker and author, kept up to date;
//! - [`status`]: the `capops` commit status or check run;
//! - [`gate`]: reviews, memberships and identity, read for the gate;
//! - [`present`]: the verdict's description, annotations and log lines.
//!
//! The token is held by octocrab as a secret header value; no message,
//! error or output of this module contains it.

// An edge: it reads the network, the event file and the environment (see clippy.toml).
#![allow(clippy::disallowed_methods, clippy::disallowed_types)]

pub mod activity;
pub mod args;
pub mod client;
pub mod comment;
pub mod context;
pub mod gate;
pub mod present;
pub mod rest;
pub mod retry;
pub mod status;

/// Why the pull-request loop could not run. Each has a stable code
/// (docs/github.md, docs/codes.md) and maps to an exit code.
#[derive(Debug, thiserror::Error)]
pub enum GithubError {
    #[error(
        "the environment variable {var} holds no GitHub token (it is unset or empty, or holds spaces, line breaks or other characters no token has)"
    )]
    NoToken { var: String },
    #[error("{0}")]
    NoPullRequest(String),
    #[error("the event payload {path} cannot be read: {why}")]
    BadEvent { path: String, why: String },
    #[error("`{0}` is not a repository name of the form owner/name")]
    BadRepository(String),
    #[error(
        "the checked-out commit {checked_out} is not the pull request's head {head}; capops judges the head commit only"
    )]
    HeadMismatch { checked_out: String, head: String },
    #[error("cannot tell which commit is checked out at {path}: {why}")]
    NoCheckout { path: String, why: String },
    #[error("GitHub rejected the token (401) while {what}")]
    Unauthorized { what: String },
    #[error("GitHub refused (403) {what}: {message}")]
    Forbidden { what: String, message: String },
    #[error("GitHub found nothing (404) while {what}")]
    NotFound { what: String },
    #[error("GitHub's rate limit was hit while {what}; {detail}")]
    RateLimited { what: String, detail: String },
    #[error("GitHub answered {status} while {what}: {message}")]
    Http {
        what: String,
        status: u16,
        message: String,
    },
    #[error("GitHub could not be reached while {what}: {why}")]
    Unreachable { what: String, why: String },
    #[error("GitHub's answer could not be read while {what}: {why}")]
    BadResponse { what: String, why: String },
    #[error("cannot tell which account the token belongs to")]
    UnknownIdentity,
    #[error(
        "pull request #{number} targets `{base}`; capops judges pull requests into {allowed} only"
    )]
    BaseNotJudged {
        number: u64,
        base: String,
        allowed: String,
    },
    #[error("pull request #{number} is closed: there is nothing to judge")]
    Closed { number: u64 },
    #[error(
        "the head of pull request #{number} does not contain `{branch}` as it stands ({tip}; the pull request's base {base}): judged against the tip, the head would read as undoing what was merged since, and judged against an older base, by policy, roles and prices that are no longer the branch's"
    )]
    BaseOutOfDate {
        number: u64,
        branch: String,
        base: String,
        tip: String,
    },
    #[error(
        "the head of pull request #{number} does not contain `{branch}` as it stands ({tip}) as far as this shallow clone has its history: whether it does cannot be told, so nothing is judged"
    )]
    ShallowCheckout {
        number: u64,
        branch: String,
        tip: String,
    },
    #[error(
        "pull request #{number} has {commits} commits; GitHub lists {max} at most, so who pushed the others cannot be read and their approvals cannot be checked",
        max = rest::MAX_PULL_COMMITS
    )]
    TooManyCommits { number: u64, commits: u64 },
    #[error("the merge-queue entry {head} cannot be told apart from what it lands on: {why}")]
    QueueShape { head: String, why: String },
}

impl GithubError {
    /// The stable code shown as `error[code]`.
    pub fn code(&self) -> &'static str {
        match self {
            GithubError::NoToken { .. } => "github-no-token",
            GithubError::NoPullRequest(_) => "github-no-pull-request",
            GithubError::BadEvent { .. } => "github-bad-event",
            GithubError::BadRepository(_) => "github-bad-repository",
            GithubError::HeadMismatch { .. } => "github-head-mismatch",
            GithubError::NoCheckout { .. } => "github-no-checkout",
            GithubError::Unauthorized { .. } => "github-unauthorized",
            GithubError::Forbidden { .. } => "github-forbidden",
            GithubError::NotFound { .. } => "github-not-found",
            GithubError::RateLimited { .. } => "github-rate-limited",
            GithubError::Http { .. } => "github-http-error",
            GithubError::Unreachable { .. } => "github-unreachable",
            GithubError::BadResponse { .. } => "github-bad-response",
            GithubError::UnknownIdentity => "github-unknown-identity",
            GithubError::BaseNotJudged { .. } => "github-base-not-judged",
            GithubError::Closed { .. } => "github-pull-request-closed",
            GithubError::BaseOutOfDate { .. } => "github-base-out-of-date",
            GithubError::TooManyCommits { .. } => "github-too-many-commits",
            GithubError::ShallowCheckout { .. } => "github-shallow-checkout",
            GithubError::QueueShape { .. } => "github-queue-entry-unknown",
        }
    }

    /// Invalid input or usage (exit 2), or GitHub failed (exit 3).
    pub fn is_usage(&self) -> bool {
        matches!(
            self,
            GithubError::NoToken { .. }
                | GithubError::NoPullRequest(_)
                | GithubError::BadEvent { .. }
                | GithubError::BadRepository(_)
                | GithubError::HeadMismatch { .. }
                | GithubError::NoCheckout { .. }
                | GithubError::BaseNotJudged { .. }
                | GithubError::Closed { .. }
                | GithubError::TooManyCommits { .. }
                | GithubError::ShallowCheckout { .. }
        )
    }

    /// What to do about it.
    pub fn help(&self) -> String {
        match self {
            GithubError::NoToken { var } => format!(
                "pass the token in {var} (in a workflow: `env: {var}: ${{{{ secrets.GITHUB_TOKEN }}}}`), or name another variable with --token-env"
            ),
            GithubError::NoPullRequest(_) => "run inside a pull_request, pull_request_review or merge_group workflow, or pass --repo OWNER/NAME --pr NUMBER".into(),
            GithubError::BadEvent { .. } => "GITHUB_EVENT_PATH must name the event payload GitHub Actions wrote; outside Actions pass --repo and --pr".into(),
            GithubError::BadRepository(_) => "pass --repo OWNER/NAME, or run inside GitHub Actions (GITHUB_REPOSITORY)".into(),
            GithubError::HeadMismatch { .. } => "check out the head commit (actions/checkout with `ref: ${{ github.event.pull_request.head.sha }}` and `fetch-depth: 0`); if the pull request moved since the event, the run for the newer push judges it".into(),
            GithubError::NoCheckout { .. } => "run capops inside a git checkout of the pull request's head".into(),
            GithubError::Unauthorized { .. } => "the token is missing, expired or revoked; pass a valid one (or GITHUB_API_URL redirects to another address, where the token is not sent: set it to that address)".into(),
            GithubError::Forbidden { .. } => "give the token the permissions docs/github.md lists (contents: read, pull-requests: write, statuses: write or checks: write; read:org or Members: read for team roles); a fork's pull request gets a read-only token".into(),
            GithubError::NotFound { .. } => "check --repo and --pr, and that the token can see the repository".into(),
            GithubError::RateLimited { .. } => "run it again after the reset time, or use a token with a larger rate limit (a GitHub App installation token)".into(),
            GithubError::Http { .. } | GithubError::Unreachable { .. } | GithubError::BadResponse { .. } => "GitHub (or GITHUB_API_URL) failed; run it again, and check githubstatus.com or the Enterprise server".into(),
            GithubError::UnknownIdentity => "pass --comment-author LOGIN (the account or `app-slug[bot]` the token posts as), so capops edits only its own comment".into(),
            GithubError::Closed { .. } => "nothing to do: a closed pull request keeps the verdict it had; reopen it to have it judged again (its head commit's verdict may be another pull request's)".into(),
            GithubError::BaseNotJudged { .. } => "retarget the pull request to the branch capops governs; a branch of its own would let the pull request choose what judges it. To govern more branches, list each with --base-branch in the workflow (each then requires its own `capops/<branch>` check)".into(),
            GithubError::BaseOutOfDate { branch, .. } => format!("merge `{branch}` into the pull request's branch (or rebase it); the push runs capops again against the branch as it stands. Branch protection's \"require branches to be up to date\" or a merge queue does this for you"),
            GithubError::ShallowCheckout { .. } => "check out the whole history (`actions/checkout` with `fetch-depth: 0`), so the base branch's tip and the head can be joined".into(),
            GithubError::TooManyCommits { .. } => "squash the pull request's commits (or split it) so GitHub lists all of them".into(),
            GithubError::QueueShape { .. } => "check out the merge group's commit with `fetch-depth: 0` (so its parent commit is there); the entry is judged again when the queue rebuilds it".into(),
        }
    }
}
