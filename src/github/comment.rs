//! The one pull-request comment: what it says about approvals, which earlier
//! comment it replaces, and writing it.
//!
//! capops' comment starts with a hidden marker line. On each run capops looks
//! for a comment whose first line is exactly that marker **and** whose author
//! is the account of the token; it edits that one (the newest if there are
//! several), creates one if there is none, and never touches a comment by
//! anyone else, even one carrying the marker. [`plan`] makes that choice
//! without I/O; [`upsert`] carries it out.

use super::GithubError;
use super::rest::{Comment, Repo};
use crate::output::escape::{cell_code, escape};
use crate::output::markdown::{COMMENT_LIMIT, MARKER};
use crate::policy::approvals::{DecisionApprovals, Standing};

/// When to write the comment.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Mode {
    /// Never comment.
    Never,
    /// Create or edit the comment on every run.
    Always,
    /// Edit only when what it says changed; create one only when something
    /// was judged or capops commented before (default).
    OnChange,
}

/// What to do with the comment.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Action {
    Create,
    Update {
        id: u64,
        url: String,
    },
    /// Ours, and it already says this.
    Keep {
        id: u64,
        url: String,
    },
    /// Nothing to write (mode `never`, or nothing judged and no earlier comment).
    Skip,
}

/// Whether a comment is capops' own: the marker as its whole first line, by `me`.
pub fn is_ours(c: &Comment, me: &str) -> bool {
    let by_me = c
        .user
        .as_ref()
        .is_some_and(|u| u.login.eq_ignore_ascii_case(me));
    let marked = c
        .body
        .as_deref()
        .and_then(|b| b.lines().next())
        .is_some_and(|l| l.trim_end() == MARKER);
    by_me && marked
}

/// Chooses the action. `comments` are in GitHub's (chronological) order.
pub fn plan(
    comments: &[Comment],
    me: &str,
    body: &str,
    mode: Mode,
    judged_anything: bool,
) -> Action {
    if mode == Mode::Never {
        return Action::Skip;
    }
    let Some(ours) = comments.iter().rev().find(|c| is_ours(c, me)) else {
        return if mode == Mode::OnChange && !judged_anything {
            Action::Skip
        } else {
            Action::Create
        };
    };
    let (id, url) = (ours.id, ours.html_url.clone());
    let old = ours.body.as_deref().unwrap_or("");
    if mode == Mode::OnChange && normalized(old) == normalized(body) {
        Action::Keep { id, url }
    } else {
        Action::Update { id, url }
    }
}

/// The comment without the evaluation time, which changes on every run.
fn normalized(body: &str) -> String {
    body.replace("\r\n", "\n")
        .lines()
        .map(|l| match l.find("evaluated at ") {
            Some(i) => {
                let rest = &l[i + "evaluated at ".len()..];
                let end = rest.find(' ').unwrap_or(rest.len());
                format!("{}{}", &l[..i], &rest[end..])
            }
            None => l.to_string(),
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// What [`upsert`] did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Written {
    pub action: &'static str,
    pub url: Option<String>,
}

/// Carries out [`plan`]: lists the comments, then creates, edits or keeps.
/// A body GitHub refuses (422, too long for its limit) is replaced by the
/// compact form once.
pub async fn upsert(
    repo: &Repo<'_>,
    number: u64,
    me: &str,
    body: &str,
    mode: Mode,
    judged_anything: bool,
) -> Result<Written, GithubError> {
    if mode == Mode::Never {
        return Ok(Written {
            action: "skipped",
            url: None,
        });
    }
    let comments = repo.comments(number).await?;
    let action = plan(&comments, me, body, mode, judged_anything);
    let (done, id) = match &action {
        Action::Skip => {
            return Ok(Written {
                action: "skipped",
                url: None,
            });
        }
        Action::Keep { url, .. } => {
            return Ok(Written {
                action: "unchanged",
                url: Some(url.clone()),
            });
        }
        Action::Create => ("created", None),
        Action::Update { id, .. } => ("updated", Some(*id)),
    };
    let comment = match write(repo, number, id, body).await? {
        Ok(c) => c,
        Err(_refused) => match write(repo, number, id, &compact(body)).await? {
            Ok(c) => c,
            Err(reply) => {
                return Err(GithubError::Http {
                    what: format!("writing the comment on pull request #{number}"),
                    status: reply.status,
                    message: reply.message(),
                });
            }
        },
    };
    Ok(Written {
        action: done,
        url: Some(comment.html_url),
    })
}

async fn write(
    repo: &Repo<'_>,
    number: u64,
    id: Option<u64>,
    text: &str,
) -> Result<Result<Comment, super::client::Reply>, GithubError> {
    match id {
        Some(id) => repo.update_comment(id, text).await,
        None => repo.create_comment(number, text).await,
    }
}

/// The comment cut to its lead (title, totals, approvals), for when GitHub
/// refuses the full one, well under the limit.
pub fn compact(body: &str) -> String {
    // The lead: totals, policy line and approvals, before the folded effects
    // and the table.
    let end = ["<details><summary>Effect on clusters", "\n| | Document |"]
        .iter()
        .filter_map(|m| body.find(m))
        .min()
        .unwrap_or(body.len());
    let lead = body[..end].trim_end();
    let note = "\n\n_GitHub refused the full comment; the effects, the table and details are in the job summary and `capops check --format json`._\n";
    let room = COMMENT_LIMIT / 2;
    let mut cut: String = lead.chars().take(room).collect();
    if cut.len() < lead.len()
        && let Some(i) = cut.rfind('\n')
    {
        cut.truncate(i);
    }
    cut.push_str(note);
    cut
}

/// One decision's line in the approvals section.
pub struct Row<'a> {
    pub kind: &'a str,
    pub name: &'a str,
    pub standing: Standing,
    pub approvals: &'a DecisionApprovals,
}

/// Rows shown at most; the JSON output has them all.
const MAX_ROWS: usize = 200;

/// The approvals section: per decision that needs approvals, each role, who
/// approved (on which commit) and what is missing.
pub fn approvals_section(
    rows: &[Row<'_>],
    head_sha: &str,
    not_counted: &[(String, crate::policy::approvals::NotCounted)],
) -> String {
    let needing: Vec<&Row<'_>> = rows
        .iter()
        .filter(|r| !r.approvals.roles.is_empty())
        .collect();
    if needing.is_empty() {
        return String::new();
    }
    let short = super::rest::prefix(head_sha, 7);
    let mut out = format!(
        "**Approvals** (counted on the head commit `{short}` only; the author's own review never counts)\n\n| | Decision | Role | Approved by | Missing |\n|---|---|---|---|---|\n"
    );
    let mut shown = 0;
    for r in &needing {
        for role in &r.approvals.roles {
            if shown == MAX_ROWS {
                break;
            }
            shown += 1;
            let blocked = !role.changes_requested_by.is_empty();
            let mark = match (r.standing, role.missing) {
                (Standing::Denied, _) => "❌",
                (_, 0) if !blocked => "✅",
                _ => "🟡",
            };
            let by = if role.approved_by.is_empty() {
                "–".to_string()
            } else {
                role.approved_by
                    .iter()
                    .map(|a| {
                        format!(
                            "{} on `{}`",
                            escape(&a.login),
                            super::rest::prefix(&a.commit, 7)
                        )
                    })
                    .collect::<Vec<_>>()
                    .join(", ")
            };
            let objection = role
                .changes_requested_by
                .iter()
                .map(|l| format!("changes requested by {}", escape(l)))
                .collect::<Vec<_>>()
                .join("; ");
            let missing = if role.missing == 0 {
                if blocked {
                    objection
                } else {
                    "–".to_string()
                }
            } else {
                let who: Vec<String> = role
                    .teams
                    .iter()
                    .chain(role.users.iter())
                    .map(|w| escape(w.trim_start_matches('@')))
                    .collect();
                let mut text = format!(
                    "{} more from {}",
                    role.missing,
                    if who.is_empty() {
                        "nobody (no team or user holds this role)".to_string()
                    } else {
                        who.join(", ")
                    }
                );
                for (login, why) in &role.uncounted_members {
                    text.push_str(&format!("; {} not counted: {}", escape(login), escape(why)));
                }
                if blocked {
                    text.push_str(&format!("; {objection}"));
                }
                text
            };
            out.push_str(&format!(
                "| {mark} | {} | {} × {} | {by} | {missing} |\n",
                cell_code(&format!("{}/{}", r.kind, r.name)),
                role.needed,
                escape(&role.role),
            ));
        }
    }
    let total: usize = needing.iter().map(|r| r.approvals.roles.len()).sum();
    if total > shown {
        out.push_str(&format!(
            "\n… and {} more (see `capops check --github --format json`)\n",
            total - shown
        ));
    }
    if !not_counted.is_empty() {
        let list: Vec<String> = not_counted
            .iter()
            .take(MAX_ROWS)
            .map(|(login, why)| format!("{} ({})", escape(login), escape(&why_text(why))))
            .collect();
        out.push_str(&format!("\nNot counted: {}.\n", list.join("; ")));
    }
    out.push('\n');
    out
}

/// Why a review does not count, in words.
fn why_text(why: &crate::policy::approvals::NotCounted) -> String {
    use crate::policy::approvals::NotCounted as N;
    match why {
        N::Author => "the author".into(),
        N::Pusher => "wrote, committed or pushed a commit of this pull request".into(),
        N::Bot => "a bot".into(),
        N::StaleCommit { commit } => format!(
            "approved an earlier commit, `{}`",
            super::rest::prefix(commit, 7)
        ),
        N::Dismissed => "review dismissed".into(),
        N::ChangesRequested => "requested changes".into(),
        N::UnlinkedCommit { commit } => format!(
            "commit `{commit}` is linked to no GitHub account, so who wrote it cannot be told"
        ),
        N::PushersUnknown { why } => format!("who pushed cannot be told: {why}"),
        N::BotAuthored { login } => format!("{login} opened, wrote or pushed the change"),
    }
}

/// The comment's title verdict, once approvals are known.
pub fn verdict(standings: &[Standing]) -> String {
    let count = |s: Standing| standings.iter().filter(|&&x| x == s).count();
    let denied = count(Standing::Denied);
    let missing = count(Standing::ApprovalsMissing);
    let fields = count(Standing::FieldsMissing);
    let broken = count(Standing::PolicyError);
    if denied > 0 {
        format!("❌ {denied} denied")
    } else if broken > 0 {
        format!("❌ the policy failed on {broken}")
    } else if missing + fields > 0 {
        let mut parts = Vec::new();
        if missing > 0 {
            parts.push(format!("{missing} awaiting approval"));
        }
        if fields > 0 {
            parts.push(format!("{fields} missing required fields"));
        }
        format!("🟡 {}", parts.join(", "))
    } else if count(Standing::Approved) > 0 {
        "✅ approved: every approval present on the head commit".into()
    } else {
        "✅ approved automatically".into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_commit_id_is_shortened_by_characters() {
        // An answer can make a SHA anything: cutting it never panics.
        assert_eq!(
            crate::github::rest::prefix("0123456789abcdef", 7),
            "0123456"
        );
        assert_eq!(crate::github::rest::prefix("ééééééééé", 7), "ééééééé");
        assert_eq!(crate::github::rest::short("abc"), "abc");
    }
    use crate::github::rest::User;

    fn comment(id: u64, login: &str, body: &str) -> Comment {
        Comment {
            id,
            user: Some(User {
                login: login.into(),
                kind: None,
            }),
            body: Some(body.into()),
            html_url: format!("https://github.com/o/r/pull/1#issuecomment-{id}"),
        }
    }

    fn ours(rest: &str) -> String {
        format!("{MARKER}\n{rest}")
    }

    #[test]
    fn the_own_marked_comment_is_edited_never_anyone_elses() {
        let body = ours("new");
        let comments = [
            comment(1, "mallory", &ours("old")),
            comment(2, "capops-bot", "no marker here"),
            comment(3, "capops-bot", &format!("> {MARKER}\nquoted")),
        ];
        assert_eq!(
            plan(&comments, "capops-bot", &body, Mode::OnChange, true),
            Action::Create
        );
        let mut with_ours = comments.to_vec();
        with_ours.push(comment(4, "Capops-Bot", &ours("old")));
        with_ours.push(comment(5, "someone", "later chatter"));
        match plan(&with_ours, "capops-bot", &body, Mode::OnChange, true) {
            Action::Update { id, .. } => assert_eq!(id, 4),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn the_newest_of_several_own_comments_is_edited() {
        let comments = [comment(1, "me", &ours("a")), comment(9, "me", &ours("b"))];
        assert!(matches!(
            plan(&comments, "me", &ours("c"), Mode::Always, true),
            Action::Update { id: 9, .. }
        ));
    }

    #[test]
    fn modes() {
        let same = ours("### check · evaluated at 2026-11-23T10:00:00Z · 1 approved");
        let later = ours("### check · evaluated at 2026-11-23T11:00:00Z · 1 approved");
        let comments = [comment(1, "me", &same)];
        assert!(matches!(
            plan(&comments, "me", &later, Mode::OnChange, true),
            Action::Keep { id: 1, .. }
        ));
        assert!(matches!(
            plan(&comments, "me", &later, Mode::Always, true),
            Action::Update { id: 1, .. }
        ));
        assert!(matches!(
            plan(&comments, "me", &ours("other"), Mode::OnChange, true),
            Action::Update { .. }
        ));
        assert_eq!(
            plan(&comments, "me", &later, Mode::Never, true),
            Action::Skip
        );
        assert_eq!(plan(&[], "me", &later, Mode::OnChange, false), Action::Skip);
        assert_eq!(plan(&[], "me", &later, Mode::Always, false), Action::Create);
        // With an earlier comment, a run that judged nothing still updates it.
        assert!(matches!(
            plan(&comments, "me", &ours("nothing now"), Mode::OnChange, false),
            Action::Update { .. }
        ));
    }

    #[test]
    fn user_text_cannot_inject_markdown_or_mentions() {
        let e = escape("x | y <img src=a> [link](http://e) @org/team **b**\n# h");
        assert!(!e.contains("<img"));
        assert!(!e.replace("\\|", "").contains('|'), "{e}");
        assert!(!e.contains("[link]("));
        assert!(!e.contains("@org"));
        assert!(!e.contains('\n'));
        assert!(e.contains("\\*\\*b\\*\\*"));
    }

    #[test]
    fn the_compact_form_keeps_the_lead_and_fits() {
        let table = "| x |\n".repeat(20_000);
        let body = ours(&format!(
            "### title\n\n**Approvals**\n\n| | Decision | Role |\n\n| | Document | Change |\n{table}"
        ));
        let c = compact(&body);
        assert!(c.starts_with(MARKER));
        assert!(c.contains("**Approvals**"));
        assert!(!c.contains("| x |"));
        assert!(c.len() < COMMENT_LIMIT);
        let huge = ours(&"long line of approvals\n".repeat(10_000));
        assert!(compact(&huge).len() <= COMMENT_LIMIT / 2 + 200);
    }

    #[test]
    fn verdicts() {
        assert_eq!(verdict(&[Standing::Automatic]), "✅ approved automatically");
        assert!(
            verdict(&[Standing::Approved, Standing::Automatic]).contains("every approval present")
        );
        assert_eq!(
            verdict(&[Standing::Approved, Standing::ApprovalsMissing]),
            "🟡 1 awaiting approval"
        );
        assert_eq!(
            verdict(&[Standing::Denied, Standing::ApprovalsMissing]),
            "❌ 1 denied"
        );
    }
}
