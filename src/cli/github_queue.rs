//! Merge-queue entries. An entry GitHub names (its branch
//! `gh-readonly-queue/<base>/pr-<number>-<sha>`) is judged as its pull
//! request on what it lands on (`github::run`, `context::Entry`). One whose pull
//! request cannot be told from the queue's branch name: without the pull
//! request its approvals cannot be read, so the
//! merge commit is judged against the queue's base and fails on anything
//! that needs an approval, as well as on denials: a queue must never pass
//! what nobody was asked to approve.

use super::check::{self as ccheck, CheckArgs, FailOn};
use super::common::{Exit, Outcome, Stop};
use super::github_common::{client, fail, note_published, outputs, repo, runtime, same_head};
use super::{Cli, Io};
use crate::github::GithubError;
use crate::github::context::Settings;
use crate::github::rest::{Stamp, short};
use crate::github::status::{self, Verdict};
use std::path::Path;

/// Judges the merge commit `head_sha` against `base_sha`; approvals fail.
pub fn without_pull_request(
    cli: &Cli,
    check: &CheckArgs,
    settings: &Settings,
    head_sha: &str,
    base_sha: &str,
    io: &mut Io<'_>,
) -> Outcome {
    let args = &check.github;
    if let Err(e) = same_head(check.path.as_path(), head_sha) {
        return Err(fail(&e, io));
    }
    writeln!(
        io.stderr,
        "capops: merge queue: judging {} against its base {} (its pull request is not named by the queue's branch, so approvals cannot be read: anything that needs one fails)",
        short(head_sha),
        short(base_sha)
    )?;
    // The verdict says whether everything passes, whatever --fail-on says
    // about the exit code.
    let judged = match ccheck::check_to(
        cli,
        check,
        Some(base_sha),
        FailOn::Approval,
        args.json_out.as_deref(),
        io,
    ) {
        Ok(code) | Err(Stop::Exit(code)) => code,
        Err(e) => return Err(e),
    };
    let code = if check.fail_on == FailOn::Never && judged == Exit::Gate {
        Exit::Ok
    } else {
        judged
    };
    outputs(io, None, args.json_out.as_deref())?;
    let verdict = Verdict {
        success: judged == Exit::Ok,
        description: match judged {
            Exit::Ok => "merge group: nothing denied or awaiting approval".into(),
            Exit::Gate => {
                "merge group: something is denied or needs an approval (see the job log)".into()
            }
            _ => "merge group: the check could not run (see the job log)".into(),
        },
        summary: String::new(),
        annotations: Vec::new(),
        details_url: settings.run_url.clone(),
    };
    let published = runtime()?.block_on(async {
        let client = client(settings)?;
        let repo = repo(&client, settings);
        status::publish(&repo, head_sha, args.status, &verdict).await
    });
    match published {
        Ok(p) => {
            note_published(p.as_ref(), head_sha, io)?;
            Ok(code)
        }
        Err(e) => Err(fail(&e, io)),
    }
}

/// The commit a queue entry lands on (the base plus the entries ahead),
/// from how the queue built it. A merge commit: its first parent, when its
/// second is the pull request's head. One parent: a squash, landing on that
/// parent; or the pull request's commits rebased, each replayed with its
/// message and author time, landing as many commits back. Any other shape,
/// or one only partly like a rebase, is refused: judged on too few commits
/// the entry would pass what it does not show.
pub(super) fn landing(
    path: &Path,
    head: &str,
    pr_head: &str,
    stamps: impl FnOnce() -> Result<Vec<Stamp>, GithubError>,
) -> Result<String, GithubError> {
    let err = |why: String| GithubError::QueueShape {
        head: short(head).to_string(),
        why,
    };
    let shape = |sha: &str| {
        crate::load::git::shape(path, sha)
            .ok()
            .flatten()
            .ok_or_else(|| err(format!("commit {} is not in the checkout", short(sha))))
    };
    let top = shape(head)?;
    let first = match top.parents.as_slice() {
        [first, second] if second.eq_ignore_ascii_case(pr_head) => return Ok(first.clone()),
        [_, second] => {
            return Err(err(format!(
                "a merge commit whose second parent {} is not the pull request's head {}",
                short(second),
                short(pr_head)
            )));
        }
        [first] => first.clone(),
        _ => return Err(err("a commit with no parent or more than two".into())),
    };
    let stamps = stamps()?;
    let replayed = |s: &crate::load::git::Shape, st: &Stamp| {
        (
            s.message == st.message,
            st.author_time == Some(s.author_time),
        )
    };
    match stamps.last().map(|last| replayed(&top, last)) {
        // One commit, or a squash (neither its message nor its time).
        None | Some((false, false)) => return Ok(first),
        _ if stamps.len() == 1 => return Ok(first),
        Some((true, true)) => {}
        Some(_) => {
            return Err(err(
                "its message or its author time, but not both, are those of the pull request's last commit".into(),
            ));
        }
    }
    // Rebased: one commit back per commit of the pull request, each its replay.
    let mut at = top;
    for (i, st) in stamps.iter().rev().enumerate() {
        if replayed(&at, st) != (true, true) {
            return Err(err(format!(
                "commit {} of the {} rebased is not a replay of the pull request's",
                stamps.len() - i,
                stamps.len()
            )));
        }
        let [parent] = at.parents.as_slice() else {
            return Err(err("a rebased commit with more than one parent".into()));
        };
        if i + 1 == stamps.len() {
            return Ok(parent.clone());
        }
        at = shape(&parent.clone())?;
    }
    Ok(first)
}
