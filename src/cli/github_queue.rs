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
use crate::github::rest::{self, short};
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
    // Which branch it merges into is not known here: every governed
    // branch's verdict.
    let rt = runtime()?;
    let _entered = rt.enter();
    let client = match client(settings) {
        Ok(c) => c,
        Err(e) => return Err(fail(&e, io)),
    };
    let repo = repo(&client, settings);
    for context in rest::contexts(&args.base_branch) {
        match rt.block_on(status::publish(
            &repo,
            head_sha,
            &context,
            args.status,
            &verdict,
        )) {
            Ok(p) => note_published(p.as_ref(), &context, head_sha, io)?,
            Err(e) => return Err(fail(&e, io)),
        }
    }
    Ok(code)
}

/// The commit a queue entry lands on: the merge group's parent commit
/// (`merge_group.base_sha`: the base branch's tip, or the entry ahead of it
/// in the queue), whatever the queue's merge method (a merge commit, a
/// squash, rebased commits). It must be an ancestor of the entry, else the
/// entry is refused: judged on too few commits it would pass what it does
/// not show.
pub(super) fn landing(path: &Path, head: &str, base_sha: &str) -> Result<String, GithubError> {
    let err = |why: String| GithubError::QueueShape {
        head: short(head).to_string(),
        why,
    };
    if base_sha.eq_ignore_ascii_case(head) {
        return Err(err("its parent commit is the entry itself".into()));
    }
    match crate::load::git::head_contains(path, base_sha) {
        Ok(true) => Ok(base_sha.to_string()),
        Ok(false) => Err(err(format!(
            "its parent commit {} (`merge_group.base_sha`) is not in its history",
            short(base_sha)
        ))),
        Err(e) => Err(err(e.to_string())),
    }
}
