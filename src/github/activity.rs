//! Who moved a branch, read from GitHub's repository activity.
//!
//! The commits API says whose git identity a commit carries, which whoever
//! commits writes; the repository activity says which account pushed it.
//! Each entry moves a ref from `before` to `after`. The pushers of a pull
//! request's head branch are the actors of every entry that moved it, and
//! they are known only when the entries account for every commit of the
//! pull request: a chain of entries from the head back to the branch's
//! creation or to a commit outside the pull request. A gap (entries GitHub
//! no longer keeps, a renamed branch) means a commit of the pull request
//! reached the branch by a push nobody can name, so the pushers are unknown.
//! Pure: `rest` fetches the entries.

use serde::Deserialize;
use std::collections::HashSet;

/// One entry of `GET /repos/{o}/{r}/activity`: a change to a ref and who made it.
#[derive(Clone, Debug, Default, Deserialize)]
pub struct Activity {
    #[serde(default)]
    pub activity_type: String,
    #[serde(default)]
    pub actor: Option<Actor>,
    /// The commit the ref pointed at before the activity (zeros: none).
    #[serde(default)]
    pub before: String,
    /// The commit the ref points at after the activity.
    #[serde(default)]
    pub after: String,
}

/// The account that made an activity.
#[derive(Clone, Debug, Default, Deserialize)]
pub struct Actor {
    pub login: String,
    /// `User`, `Bot` or `Organization`.
    #[serde(rename = "type", default)]
    pub kind: Option<String>,
}

/// An account's login as the gate compares it: lower case, and a bot
/// account (`type: Bot`) marked `[bot]` whatever its login says (the
/// Copilot agent signs as `Copilot`), so it is known for one. GitHub logins
/// cannot hold brackets, so no person's login reads like a marked bot's.
pub fn account_key(login: &str, kind: Option<&str>) -> String {
    let login = login.to_ascii_lowercase();
    if kind == Some("Bot") && !login.ends_with("[bot]") {
        format!("{login}[bot]")
    } else {
        login
    }
}

/// What reading who pushed to a branch found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BranchPushers {
    /// The logins (lowercase, sorted, without duplicates) that moved the
    /// branch: created, pushed, force-pushed or merged into it.
    Known(Vec<String>),
    /// They could not be read; why, in words.
    Unknown(String),
}

/// The pushers of `branch` from its activity entries, given its `head` and
/// the SHAs of the pull request's commits.
pub fn pushers(
    branch: &str,
    head: &str,
    commits: &[String],
    entries: &[Activity],
) -> BranchPushers {
    if let Some(gap) = gap(head, commits, entries) {
        return BranchPushers::Unknown(format!(
            "the activity of `{branch}` does not say who pushed {}",
            gap.chars().take(12).collect::<String>()
        ));
    }
    let mut out = Vec::new();
    for a in entries {
        if a.activity_type == "branch_deletion" {
            continue;
        }
        match &a.actor {
            Some(u) => out.push(account_key(&u.login, u.kind.as_deref())),
            // A deleted account (GitHub's ghost) or one hidden from the token.
            None => {
                return BranchPushers::Unknown(format!(
                    "a {} to `{branch}` has no actor",
                    a.activity_type.replace('_', " ")
                ));
            }
        }
    }
    out.sort();
    out.dedup();
    BranchPushers::Known(out)
}

/// The first commit, walking back from `head`, that no entry put on the
/// branch; `None` when some chain of entries leads from `head` to the
/// branch's creation or to a commit outside the pull request.
fn gap(head: &str, commits: &[String], entries: &[Activity]) -> Option<String> {
    let key = |s: &str| s.to_ascii_lowercase();
    let ours: HashSet<String> = commits.iter().map(|c| key(c)).collect();
    let outside =
        |sha: &str| sha.is_empty() || sha.bytes().all(|b| b == b'0') || !ours.contains(&key(sha));
    let mut seen: HashSet<String> = HashSet::new();
    let mut frontier = vec![key(head)];
    let mut first_gap = None;
    while let Some(cur) = frontier.pop() {
        if !seen.insert(cur.clone()) {
            continue;
        }
        let into: Vec<&Activity> = entries
            .iter()
            .filter(|a| a.activity_type != "branch_deletion" && key(&a.after) == cur)
            .collect();
        if into.is_empty() {
            first_gap.get_or_insert(cur);
            continue;
        }
        for a in into {
            if outside(&a.before) {
                return None;
            }
            frontier.push(key(&a.before));
        }
    }
    Some(first_gap.unwrap_or_else(|| key(head)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(kind: &str, before: &str, after: &str, actor: &str) -> Activity {
        Activity {
            activity_type: kind.into(),
            actor: Some(Actor {
                login: actor.into(),
                kind: actor.ends_with("[bot]").then(|| "Bot".to_string()),
            }),
            before: before.into(),
            after: after.into(),
        }
    }

    const ZERO: &str = "0000000000000000000000000000000000000000";

    #[test]
    fn a_chain_to_the_branch_creation_names_every_pusher() {
        let entries = [
            entry("branch_creation", ZERO, "a1", "alice"),
            entry("push", "a1", "b2", "Bob"),
        ];
        let got = pushers("f", "b2", &["a1".into(), "b2".into()], &entries);
        assert_eq!(
            got,
            BranchPushers::Known(vec!["alice".into(), "bob".into()])
        );
    }

    #[test]
    fn a_chain_to_a_commit_outside_the_pull_request_is_whole() {
        // The branch was created long ago at the base's commit `m0`; only
        // the push of the pull request's commits is kept.
        let entries = [entry("push", "m0", "b2", "alice")];
        let got = pushers("f", "b2", &["a1".into(), "b2".into()], &entries);
        assert_eq!(got, BranchPushers::Known(vec!["alice".into()]));
    }

    #[test]
    fn a_commit_no_entry_put_there_makes_the_pushers_unknown() {
        // a1 was pushed by someone whose push GitHub no longer lists.
        let entries = [entry("push", "a1", "b2", "alice")];
        let got = pushers("f", "b2", &["a1".into(), "b2".into()], &entries);
        assert!(
            matches!(&got, BranchPushers::Unknown(w) if w.contains("a1")),
            "{got:?}"
        );
        // Not reaching the head at all: the same.
        let got = pushers("f", "c3", &["c3".into()], &entries);
        assert!(matches!(got, BranchPushers::Unknown(_)), "{got:?}");
    }

    #[test]
    fn a_bot_is_known_by_its_type_whatever_its_login() {
        assert_eq!(account_key("Copilot", Some("Bot")), "copilot[bot]");
        assert_eq!(account_key("renovate[bot]", Some("Bot")), "renovate[bot]");
        assert_eq!(account_key("Alice", Some("User")), "alice");
        let mut push = entry("push", ZERO, "b2", "Copilot");
        push.actor.as_mut().unwrap().kind = Some("Bot".into());
        let got = pushers("f", "b2", &["b2".into()], &[push]);
        assert_eq!(got, BranchPushers::Known(vec!["copilot[bot]".into()]));
    }

    #[test]
    fn a_force_push_back_and_forth_ends() {
        let entries = [
            entry("branch_creation", ZERO, "a1", "alice"),
            entry("force_push", "a1", "b2", "bob"),
            entry("force_push", "b2", "a1", "carol"),
            entry("force_push", "a1", "b2", "dave"),
        ];
        let got = pushers("f", "b2", &["a1".into(), "b2".into()], &entries);
        assert_eq!(
            got,
            BranchPushers::Known(vec![
                "alice".into(),
                "bob".into(),
                "carol".into(),
                "dave".into()
            ])
        );
        // A cycle with no way out is a gap.
        let entries = [
            entry("force_push", "a1", "b2", "bob"),
            entry("force_push", "b2", "a1", "carol"),
        ];
        let got = pushers("f", "b2", &["a1".into(), "b2".into()], &entries);
        assert!(matches!(got, BranchPushers::Unknown(_)), "{got:?}");
    }
}
