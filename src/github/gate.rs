//! The pull-request gate's GitHub reads: reviews, the team memberships that
//! decide something (asked once each per run), and the token's identity.
//! The decisions they feed are pure (`policy::approvals`).

use super::GithubError;
use super::client::Client;
use super::rest::{self, Repo};
use crate::policy::approvals::{self, DecisionApprovals, Membership, NotCounted};
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
    let (reviews, commits, pushed) = if needed {
        let reviews = repo.reviews(number).await?;
        let commits = repo.pushers(number, pr.commits).await?;
        let pushed = head_pushers(client, pr, &commits.shas).await?;
        (reviews, commits, pushed)
    } else {
        let none = rest::BranchPushers::Known(Vec::new());
        (Vec::new(), rest::PullCommits::default(), none)
    };
    let rest::PullCommits {
        logins: mut pushers,
        unlinked,
        ..
    } = commits;
    if let rest::BranchPushers::Known(logins) = &pushed {
        pushers.extend(logins.iter().cloned());
    }
    let mut reviewers = approvals::reviewers(&reviews, author, &pushers, head);
    // A commit GitHub attributes to no account could have been written and
    // pushed by any reviewer: no approval is independent of it. The same
    // when who pushed to the branch cannot be read.
    if let Some(commit) = unlinked.first() {
        let why = NotCounted::UnlinkedCommit {
            commit: commit.clone(),
        };
        reviewers = approvals::set_aside(reviewers, &why);
    }
    if let rest::BranchPushers::Unknown(why) = pushed {
        reviewers = approvals::set_aside(reviewers, &NotCounted::PushersUnknown { why });
    }
    // A change a bot opened, wrote or pushed: who set the bot going could be
    // any reviewer, so none is independent of it.
    let author_bot = pr
        .user
        .as_ref()
        .is_some_and(|u| u.kind.as_deref() == Some("Bot"))
        .then(|| author.to_string());
    if let Some(login) = author_bot.or_else(|| pushers.iter().find(|l| is_bot(l)).cloned()) {
        reviewers = approvals::set_aside(reviewers, &NotCounted::BotAuthored { login });
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

/// Who other than `author` wrote or pushed the pull request's commits: the
/// accounts its commits carry as author or committer and the actors of its
/// head branch's pushes, with a note for each commit linked to no account
/// and for pushers that cannot be read (neither is a usage puller). The
/// usage-puller fact reads it: hours appended by the puller's pull request
/// are data only when nobody else wrote or pushed any of it. Read only when
/// `author` is one of `config`'s usage pullers (empty otherwise).
pub async fn co_authors(
    client: &Client,
    repo: &Repo<'_>,
    pr: &rest::PullRequest,
    author: &str,
    config: &crate::model::ConfigSpec,
) -> Result<Vec<String>, GithubError> {
    if !crate::policy::facts::history::is_puller(config, author) {
        return Ok(Vec::new());
    }
    let commits = repo.pushers(pr.number, pr.commits).await?;
    let (mut out, unlinked) = (commits.logins, commits.unlinked);
    match head_pushers(client, pr, &commits.shas).await? {
        rest::BranchPushers::Known(logins) => out.extend(logins),
        rest::BranchPushers::Unknown(why) => out.push(format!("(pushers unknown: {why})")),
    }
    out.extend(
        unlinked
            .into_iter()
            .map(|c| format!("(commit {c}, linked to no account)")),
    );
    out.retain(|l| !l.eq_ignore_ascii_case(author));
    out.sort();
    out.dedup();
    Ok(out)
}

/// Who pushed to the pull request's head branch, read from the repository
/// it lives in (a fork's own activity for a fork's pull request). A head
/// whose repository is gone (a deleted fork) cannot say.
async fn head_pushers(
    client: &Client,
    pr: &rest::PullRequest,
    commits: &[String],
) -> Result<rest::BranchPushers, GithubError> {
    let Some(full) = pr.head.repo.as_ref().and_then(|r| r.full_name.as_deref()) else {
        return Ok(rest::BranchPushers::Unknown(
            "the pull request's head repository is gone".into(),
        ));
    };
    let Some((owner, name)) = full.split_once('/') else {
        return Ok(rest::BranchPushers::Unknown(format!(
            "the head repository `{full}` is not owner/name"
        )));
    };
    if pr.head.name.is_empty() {
        return Ok(rest::BranchPushers::Unknown(
            "the pull request names no head branch".into(),
        ));
    }
    let head = Repo {
        client,
        owner: owner.to_string(),
        name: name.to_string(),
    };
    head.branch_pushers(&pr.head.name, &pr.head.sha, commits)
        .await
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

/// A GitHub App's bot account (`name[bot]`), as logins show it.
fn is_bot(login: &str) -> bool {
    login.to_ascii_lowercase().ends_with("[bot]")
}
