//! The pull-request gate's GitHub reads: reviews, the team memberships that
//! decide something (asked once each per run), and the token's identity.
//! The decisions they feed are pure (`policy::approvals`).

use super::GithubError;
use super::client::Client;
use super::rest::{self, Repo};
use crate::policy::approvals::{self, DecisionApprovals, Membership};
use crate::policy::{CheckResult, Outcome};
use std::collections::BTreeMap;

/// Reviews, memberships and the verified approvals of every decision.
pub async fn verify(
    client: &Client,
    repo: &Repo<'_>,
    result: &CheckResult,
    pr: &rest::PullRequest,
    author: &str,
    head: &str,
) -> Result<(approvals::Reviewers, Vec<DecisionApprovals>), GithubError> {
    let number = pr.number;
    let needed = result
        .evaluated
        .iter()
        .any(|e| e.decision.outcome == Outcome::NeedsApproval && !e.decision.approvals.is_empty());
    let (reviews, (pushers, unlinked)) = if needed {
        (
            repo.reviews(number).await?,
            repo.pushers(number, pr.commits).await?,
        )
    } else {
        (Vec::new(), (Vec::new(), Vec::new()))
    };
    let mut reviewers = approvals::reviewers(&reviews, author, &pushers, head);
    // A commit GitHub attributes to no account could have been written and
    // pushed by any reviewer: no approval is independent of it.
    if let Some(commit) = unlinked.first() {
        reviewers = approvals::unattributed(reviewers, commit);
    }
    let required = result
        .evaluated
        .iter()
        .filter(|e| e.decision.outcome == Outcome::NeedsApproval)
        .flat_map(|e| e.decision.approvals.iter());
    let mut cache: BTreeMap<(String, String), Membership> = BTreeMap::new();
    for (team, login) in approvals::membership_queries(required, &reviewers) {
        let m = rest::membership(client, &team, &login).await?;
        cache.insert((team, login), m);
    }
    let lookup = |team: &str, login: &str| {
        cache
            .get(&(team.to_string(), login.to_ascii_lowercase()))
            .cloned()
            .unwrap_or(Membership::NotMember)
    };
    let verified = result
        .evaluated
        .iter()
        .map(|e| match e.decision.outcome {
            Outcome::NeedsApproval => approvals::verify(&e.decision.approvals, &reviewers, &lookup),
            _ => DecisionApprovals::default(),
        })
        .collect();
    Ok((reviewers, verified))
}

/// The login the token posts as.
/// `in_actions`: running inside GitHub Actions, where an installation
/// token that may not read `/user` is the Actions token.
pub async fn identity(client: &Client, in_actions: bool) -> Result<String, GithubError> {
    if let Some(login) = rest::viewer(client).await? {
        return Ok(login);
    }
    // Installation tokens may not read /user; in Actions that is the Actions token.
    if in_actions {
        return Ok("github-actions[bot]".into());
    }
    Err(GithubError::UnknownIdentity)
}
