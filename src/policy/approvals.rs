//! Which reviews satisfy which approvals: the pure heart of the pull-request gate.
//!
//! The policy says, per decision, which roles must approve and how many
//! people from each ([`Approval`]). A pull request has reviews. This module
//! decides, without any I/O, which reviews count and which role slots they
//! fill; `github/` fetches the reviews and team memberships and hands them in.
//!
//! The rules (docs/github.md explains each):
//!
//! - per reviewer, only the latest review that is not COMMENTED (or PENDING)
//!   counts: a comment after an approval does not revoke it; DISMISSED or
//!   CHANGES_REQUESTED after it does;
//! - a reviewer whose latest opinion is CHANGES_REQUESTED and who holds a
//!   role a decision needs blocks that role until they approve or their
//!   review is dismissed, whatever others approved (as GitHub's branch
//!   protection does), on any commit: a push does not lift it;
//! - an approval counts only on the head commit (`commit_id` equal to the
//!   head SHA); a push makes earlier approvals stale;
//! - the pull request's author and bot accounts never count;
//! - a reviewer holds a role when listed among its users, or as an *active*
//!   member of one of its teams (a pending invitation does not count);
//! - one person fills at most one slot per decision: "2 × director" needs two
//!   people, and someone who is both director and capacity reviewer counts
//!   once. Slots are filled by a maximum bipartite matching, so a person
//!   holding two roles is put where they are needed.

use super::{Approval, Decision, Outcome};
use std::collections::{BTreeMap, BTreeSet};

/// A review's state, as GitHub's REST API spells it (`APPROVED`, ...).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum ReviewState {
    Approved,
    ChangesRequested,
    Commented,
    Dismissed,
    Pending,
}

impl ReviewState {
    /// Parses the REST spelling, or the lower-case webhook one.
    pub fn parse(s: &str) -> Option<ReviewState> {
        Some(match s.to_ascii_uppercase().as_str() {
            "APPROVED" => ReviewState::Approved,
            "CHANGES_REQUESTED" => ReviewState::ChangesRequested,
            "COMMENTED" => ReviewState::Commented,
            "DISMISSED" => ReviewState::Dismissed,
            "PENDING" => ReviewState::Pending,
            _ => return None,
        })
    }

    /// Whether the review states an opinion that replaces the reviewer's previous one.
    fn opinionated(self) -> bool {
        matches!(
            self,
            ReviewState::Approved | ReviewState::ChangesRequested | ReviewState::Dismissed
        )
    }
}

/// One submitted review, in the order GitHub lists them (chronological).
#[derive(Clone, Debug, PartialEq)]
pub struct Review {
    pub id: u64,
    pub login: String,
    /// The account is a bot (`user.type == "Bot"`).
    pub bot: bool,
    pub state: ReviewState,
    /// The commit reviewed (null on very old reviews).
    pub commit_id: Option<String>,
    /// RFC 3339, as GitHub gives it (sorts chronologically as text).
    pub submitted_at: Option<String>,
}

/// Whether someone is a member of a team, as GitHub answered.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Membership {
    Active,
    /// Invited, not yet accepted: does not count.
    Pending,
    /// Not a member (GitHub answers 404; also when the token cannot see the team).
    NotMember,
    /// GitHub could not tell (the reason is shown): does not count.
    Unknown(String),
}

/// A reviewer whose approval may count: latest opinion APPROVED, on the head commit.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Approver {
    pub login: String,
    pub commit: String,
    pub review_id: u64,
    pub submitted_at: Option<String>,
}

/// Why a reviewer's latest opinion does not count as an approval.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case", tag = "reason")]
pub enum NotCounted {
    /// The pull request's author cannot approve their own change.
    Author,
    /// Authored, committed or pushed one of the pull request's commits:
    /// someone who wrote part of the change cannot approve it.
    Pusher,
    /// Bot accounts do not approve.
    Bot,
    /// Approved an earlier commit; the head moved since.
    StaleCommit { commit: String },
    /// The approval was dismissed.
    Dismissed,
    /// The latest opinion asks for changes.
    ChangesRequested,
    /// A commit of the pull request is by a git identity GitHub links to no
    /// account, so who wrote or pushed it cannot be told (and a reviewer could
    /// have): no approval counts until every commit is linked.
    UnlinkedCommit { commit: String },
    /// Who pushed to the pull request's branch could not be read (GitHub's
    /// repository activity): no approval counts until it can be.
    PushersUnknown { why: String },
    /// A bot account opened the pull request or wrote or pushed one of its
    /// commits: whoever set it going (a workflow dispatch, an issue form) is
    /// not known, and could be a reviewer. No approval counts.
    BotAuthored { login: String },
}

/// `reviewers` with every approval set aside for `why` (an
/// [`NotCounted::UnlinkedCommit`] or [`NotCounted::PushersUnknown`]: who
/// wrote or pushed part of the change cannot be told, and a reviewer could
/// have).
pub fn set_aside(mut reviewers: Reviewers, why: &NotCounted) -> Reviewers {
    for a in std::mem::take(&mut reviewers.approvers) {
        reviewers.not_counted.push((a.login, why.clone()));
    }
    reviewers
}

/// The reviews reduced to one opinion per person.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Reviewers {
    /// Approvals on the head commit, oldest first.
    pub approvers: Vec<Approver>,
    /// Everyone else with an opinion, and why they do not count.
    pub not_counted: Vec<(String, NotCounted)>,
    /// Reviewers (not the author, not bots) whose latest opinion asks for
    /// changes: they block every role they hold.
    pub objectors: Vec<String>,
}

/// Reduces reviews to one opinion per reviewer and keeps the approvals that
/// may count: not the author's, nor those of anyone who authored or committed
/// one of the pull request's commits (`pushers`). Logins compare without
/// case, as GitHub's do.
pub fn reviewers(
    reviews: &[Review],
    author: &str,
    pushers: &[String],
    head_sha: &str,
) -> Reviewers {
    let mut ordered: Vec<&Review> = reviews.iter().collect();
    // GitHub lists reviews chronologically; sort anyway (stable), so a
    // shuffled page cannot resurrect an old approval. A time that is
    // missing or not one fails closed: an approval whose time is unknown
    // sorts as the oldest (it overrides no opinion), any other opinion as
    // the newest (no approval overrides it).
    ordered.sort_by_key(|r| (when(r), r.id));
    let mut latest: BTreeMap<String, &Review> = BTreeMap::new();
    for r in ordered {
        if r.state.opinionated() {
            latest.insert(r.login.to_ascii_lowercase(), r);
        }
    }
    let mut out = Reviewers::default();
    let mut approvers: Vec<&Review> = Vec::new();
    for (key, r) in &latest {
        if r.state == ReviewState::ChangesRequested && !r.bot && *key != author.to_ascii_lowercase()
        {
            out.objectors.push(r.login.clone());
        }
    }
    for (key, r) in latest {
        let why = if key == author.to_ascii_lowercase() {
            Some(NotCounted::Author)
        } else if pushers.iter().any(|p| p.eq_ignore_ascii_case(&key)) {
            Some(NotCounted::Pusher)
        } else if r.bot {
            Some(NotCounted::Bot)
        } else {
            match r.state {
                ReviewState::Dismissed => Some(NotCounted::Dismissed),
                ReviewState::ChangesRequested => Some(NotCounted::ChangesRequested),
                _ if r.commit_id.as_deref() != Some(head_sha) => Some(NotCounted::StaleCommit {
                    commit: r.commit_id.clone().unwrap_or_default(),
                }),
                _ => None,
            }
        };
        match why {
            Some(w) => out.not_counted.push((r.login.clone(), w)),
            None => approvers.push(r),
        }
    }
    approvers.sort_by_key(|r| (when(r), r.id));
    out.approvers = approvers
        .into_iter()
        .map(|r| Approver {
            login: r.login.clone(),
            commit: r.commit_id.clone().unwrap_or_default(),
            review_id: r.id,
            submitted_at: r.submitted_at.clone(),
        })
        .collect();
    out
}

/// When a review was submitted, for ordering: `(1, time)` for a time that
/// reads as one; for one that is missing or does not, `(0, _)` (before
/// every time) for an approval and `(2, _)` (after every time) for any
/// other opinion, so that an unknown time never lets an approval win.
fn when(r: &Review) -> (u8, Option<jiff::Timestamp>) {
    match r
        .submitted_at
        .as_deref()
        .and_then(|t| t.parse::<jiff::Timestamp>().ok())
    {
        Some(t) => (1, Some(t)),
        None if r.state == ReviewState::Approved => (0, None),
        None => (2, None),
    }
}

/// The (team, login) pairs whose membership decides something: an approver
/// who is not already listed as a user of every role naming the team.
pub fn membership_queries<'a>(
    required: impl IntoIterator<Item = &'a Approval>,
    reviewers: &Reviewers,
) -> BTreeSet<(String, String)> {
    let mut out = BTreeSet::new();
    for a in required {
        for team in &a.teams {
            let logins = reviewers.approvers.iter().map(|p| &p.login);
            for login in logins.chain(&reviewers.objectors) {
                if !listed(a, login) {
                    out.insert((team.clone(), login.to_ascii_lowercase()));
                }
            }
        }
    }
    out
}

fn listed(a: &Approval, login: &str) -> bool {
    a.users
        .iter()
        .any(|u| u.trim_start_matches('@').eq_ignore_ascii_case(login))
}

/// How one role of one decision stands.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RoleStatus {
    pub role: String,
    pub needed: u32,
    /// Why the policy asks (`tier director`, `rule ...`).
    pub from: String,
    /// Who fills the role's slots, and on which commit.
    pub approved_by: Vec<Approver>,
    /// Slots still open.
    pub missing: u32,
    /// Who may still approve.
    pub teams: Vec<String>,
    pub users: Vec<String>,
    /// Approvers on the head whose membership of a role team could not be
    /// counted (pending invitation, or GitHub could not tell), with the reason.
    pub uncounted_members: Vec<(String, String)>,
    /// Holders of the role whose latest review asks for changes: the role
    /// is not satisfied while there is one, however many approved.
    pub changes_requested_by: Vec<String>,
}

/// The approvals of one decision.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DecisionApprovals {
    pub roles: Vec<RoleStatus>,
}

impl DecisionApprovals {
    /// Every slot of every role is filled.
    pub fn satisfied(&self) -> bool {
        self.roles
            .iter()
            .all(|r| r.missing == 0 && r.changes_requested_by.is_empty())
    }

    pub fn missing(&self) -> u32 {
        self.roles.iter().map(|r| r.missing).sum()
    }
}

/// Fills the slots of `required` with `reviewers`' approvals.
/// `membership(team, login)` says whether `login` is in `team` (`org/slug`).
pub fn verify(
    required: &[Approval],
    reviewers: &Reviewers,
    membership: &dyn Fn(&str, &str) -> Membership,
) -> DecisionApprovals {
    let people = &reviewers.approvers;
    let mut uncounted: Vec<Vec<(String, String)>> = vec![Vec::new(); required.len()];
    // holds[role][person]
    let holds: Vec<Vec<bool>> = required
        .iter()
        .enumerate()
        .map(|(ri, a)| {
            people
                .iter()
                .map(|p| {
                    if listed(a, &p.login) {
                        return true;
                    }
                    let mut member = false;
                    for team in &a.teams {
                        match membership(team, &p.login.to_ascii_lowercase()) {
                            Membership::Active => member = true,
                            Membership::NotMember => {}
                            Membership::Pending => uncounted[ri].push((
                                p.login.clone(),
                                format!("pending (not yet accepted) member of {team}"),
                            )),
                            Membership::Unknown(why) => uncounted[ri]
                                .push((p.login.clone(), format!("membership of {team}: {why}"))),
                        }
                    }
                    member
                })
                .collect()
        })
        .collect();
    // Slots: `count` per role, but never more than there are people (the rest
    // cannot be filled anyway, and a policy's count is not an allocation size).
    let mut slots: Vec<usize> = Vec::new();
    for (ri, a) in required.iter().enumerate() {
        let n = (a.count as usize).min(people.len());
        slots.extend(std::iter::repeat_n(ri, n));
    }
    let assigned = matching(&slots, people.len(), &|ri, p| holds[ri][p]);
    let roles = required
        .iter()
        .enumerate()
        .map(|(ri, a)| {
            let approved_by: Vec<Approver> = (0..people.len())
                .filter(|&p| assigned[p].is_some_and(|s| slots[s] == ri))
                .map(|p| people[p].clone())
                .collect();
            let objecting: Vec<String> = reviewers
                .objectors
                .iter()
                // Whoever may hold the role blocks it: an active member, and
                // one whose membership GitHub could not tell (fail closed,
                // as an approval by them would not count).
                .filter(|login| {
                    listed(a, login)
                        || a.teams.iter().any(|team| {
                            matches!(
                                membership(team, &login.to_ascii_lowercase()),
                                Membership::Active | Membership::Unknown(_)
                            )
                        })
                })
                .cloned()
                .collect();
            let mut un = std::mem::take(&mut uncounted[ri]);
            un.retain(|(login, _)| !approved_by.iter().any(|x| &x.login == login));
            un.dedup();
            RoleStatus {
                role: a.role.to_string(),
                needed: a.count,
                from: a.from.clone(),
                missing: a.count.saturating_sub(approved_by.len() as u32),
                approved_by,
                teams: a.teams.clone(),
                users: a.users.clone(),
                uncounted_members: un,
                changes_requested_by: objecting,
            }
        })
        .collect();
    DecisionApprovals { roles }
}

/// Maximum bipartite matching of slots to people (Kuhn's augmenting paths).
/// Returns, per person, the slot they fill.
fn matching(
    slots: &[usize],
    people: usize,
    fits: &dyn Fn(usize, usize) -> bool,
) -> Vec<Option<usize>> {
    fn augment(
        s: usize,
        slots: &[usize],
        fits: &dyn Fn(usize, usize) -> bool,
        seen: &mut [bool],
        owner: &mut [Option<usize>],
    ) -> bool {
        for p in 0..owner.len() {
            if seen[p] || !fits(slots[s], p) {
                continue;
            }
            seen[p] = true;
            if owner[p].is_none_or(|other| augment(other, slots, fits, seen, owner)) {
                owner[p] = Some(s);
                return true;
            }
        }
        false
    }
    let mut owner = vec![None; people];
    for s in 0..slots.len() {
        let mut seen = vec![false; people];
        augment(s, slots, fits, &mut seen, &mut owner);
    }
    owner
}

/// Where a decision stands once its approvals are known.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Standing {
    /// Approved by the policy without anyone's approval.
    Automatic,
    /// Every approval it needs is present on the head commit.
    Approved,
    /// Approvals still missing.
    ApprovalsMissing,
    /// Required request fields are missing: no approval can fix that.
    FieldsMissing,
    /// The policy could not be evaluated for it.
    PolicyError,
    Denied,
}

impl Standing {
    /// Whether the decision lets the pull request through.
    pub fn passes(self) -> bool {
        matches!(self, Standing::Automatic | Standing::Approved)
    }
}

/// Combines the policy's outcome with the verified approvals.
pub fn standing(decision: &Decision, approvals: &DecisionApprovals) -> Standing {
    match decision.outcome {
        Outcome::Denied => Standing::Denied,
        Outcome::Approved => Standing::Automatic,
        Outcome::NeedsApproval if decision.error => Standing::PolicyError,
        Outcome::NeedsApproval if !decision.missing_fields.is_empty() => Standing::FieldsMissing,
        Outcome::NeedsApproval if approvals.satisfied() => Standing::Approved,
        Outcome::NeedsApproval => Standing::ApprovalsMissing,
    }
}

#[cfg(test)]
#[path = "approvals_tests.rs"]
mod tests;
