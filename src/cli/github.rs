//! `capops check --github`: the pull-request loop.
//!
//! On a pull-request event (or `--repo` and `--pr`): read the pull request
//! fresh from the API, refuse unless the checkout is its head, judge the head
//! against the base commit, read every review and the team memberships that
//! matter, verify the approvals, then keep one comment up to date and set the
//! `capops` check run or status. Exit 0 exactly when nothing is denied and
//! every decision's approvals are present on the head commit.
//!
//! On a `merge_group` event the entry is judged as its pull request: the
//! queue's merge commit against the commit it lands on (the base plus the
//! entries ahead), with the pull request's approvals; the verdict goes on
//! the merge commit. On a push, a schedule or any other event the
//! repository is checked as it stands (denials fail).

use super::check::{self as ccheck, CheckArgs, FailOn};
use super::common::{Exit, Outcome, Stop, write_diagnostics, write_pretty};
use super::github_common::{client, fail, note_published, outputs, repo, runtime, same_head};
use super::{Cli, Io};
use crate::diag::{Diagnostic, Severity};
use crate::github::args::GithubArgs;
use crate::github::comment::{self, Row};
use crate::github::context::{Entry, Flags, Settings, Target};
use crate::github::rest::{self, Repo, short};
use crate::github::status::{self, Verdict};
use crate::github::{GithubError, gate, present};
use crate::output::{self as report, Format, Paths};
use crate::policy::approvals::{self, Standing};
use std::io::Write;
use std::path::Path;

/// Runs `capops check --github`.
pub fn run(cli: &Cli, check: &CheckArgs, io: &mut Io<'_>) -> Outcome {
    let path = check.path.as_path();
    let fail_on = check.fail_on;
    let args = &check.github;
    // Refused before anything is read or published.
    if let Some(why) = args
        .json_out
        .as_deref()
        .and_then(|out| super::common::refuse_output(path, out))
    {
        return Err(super::common::stop(io, Exit::Invalid, &why, None));
    }
    let flags = Flags {
        repo: args.repo.as_deref(),
        pr: args.pr,
        token_env: &args.token_env,
    };
    let settings = match Settings::read(&flags, io.env) {
        Ok(s) => s,
        Err(e) => return Err(fail(&e, io)),
    };
    // A plain or merge-time check fails on denials only: approvals belong to pull requests.
    let denials_only = if fail_on == FailOn::Never {
        FailOn::Never
    } else {
        FailOn::Denied
    };
    match settings.target.clone() {
        Target::Repository { event } => {
            writeln!(
                io.stderr,
                "capops: `{event}` event: checking the repository as it stands (denials fail; approvals are verified on pull requests)"
            )?;
            let code =
                ccheck::check_to(cli, check, None, denials_only, args.json_out.as_deref(), io)?;
            outputs(io, None, args.json_out.as_deref())?;
            Ok(code)
        }
        Target::MergeGroup {
            head_sha,
            base_sha,
            pr,
        } => {
            let Some(number) = pr else {
                return super::github_queue::without_pull_request(
                    cli, check, &settings, &head_sha, &base_sha, io,
                );
            };
            // The entry's own change, on what it lands on (the base plus the
            // entries ahead of it: the merge group's parent commit), with its
            // pull request's approvals: several pull requests that pass alone
            // can need an approval together.
            let entry = Entry { head_sha, base_sha };
            let at = check.at.unwrap_or(io.now);
            let fail_on = if fail_on == FailOn::Never {
                FailOn::Never
            } else {
                FailOn::Approval
            };
            pull_request(
                cli,
                path,
                at,
                fail_on,
                args,
                &settings,
                number,
                Some(&entry),
                io,
            )
        }
        Target::PullRequest { number } => {
            let at = check.at.unwrap_or(io.now);
            pull_request(cli, path, at, fail_on, args, &settings, number, None, io)
        }
    }
}

#[allow(clippy::too_many_arguments)]
fn pull_request(
    cli: &Cli,
    path: &Path,
    at: crate::model::Timestamp,
    fail_on: FailOn,
    args: &GithubArgs,
    settings: &Settings,
    number: u64,
    entry: Option<&Entry>,
    io: &mut Io<'_>,
) -> Outcome {
    let rt = runtime()?;
    // octocrab's client spawns its buffer task on the runtime it is built in.
    let _entered = rt.enter();
    let client = match client(settings) {
        Ok(c) => c,
        Err(e) => return Err(fail(&e, io)),
    };
    let repo = repo(&client, settings);
    // What cannot be judged leaves a failing verdict on the commit checked
    // out (the one the event was about), so no earlier green of it stands:
    // the pull request could point at it again.
    let checked_out = crate::load::git::head_commit(path).ok();
    // Before the base is known: every governed branch's verdict.
    let every = rest::contexts(&args.base_branch);
    let refuse_checked_out = |e: &GithubError, io: &mut Io<'_>| match &checked_out {
        Some(sha) => refuse(&repo, &rt, sha, &every, args, settings, e, exit_of(e), io),
        None => Err(fail(e, io)),
    };
    let pr = match rt.block_on(repo.pull(number)) {
        Ok(p) => p,
        Err(e) => return refuse_checked_out(&e, io),
    };
    // Approvals count on the pull request's head; the verdict goes on the
    // commit judged (the queue's merge commit for a queue entry).
    let head = pr.head.sha.clone();
    let judged = entry.map_or(head.clone(), |e| e.head_sha.clone());
    if let Err(e) = same_head(path, &judged) {
        return refuse_checked_out(&e, io);
    }
    let author = pr
        .user
        .as_ref()
        .map(|u| u.login.clone())
        .unwrap_or_default();
    // Only pull requests into a governed branch are judged (a branch of the
    // contributor's own would choose what judges it), and against that
    // branch as it stands now.
    if let Err(e) = governed(&pr, &args.base_branch) {
        return refuse_checked_out(&e, io);
    }
    // A closed pull request writes nothing: its head's verdict may be
    // another open pull request's.
    if pr.state == "closed" {
        return Err(fail(&GithubError::Closed { number }, io));
    }
    // The verdict for pull requests into this base.
    let context = rest::context_for(&args.base_branch, &pr.base.name);
    let ours = std::slice::from_ref(&context);
    let refuse_here = |e: &GithubError, code: Exit, io: &mut Io<'_>| {
        refuse(&repo, &rt, &judged, ours, args, settings, e, code, io)
    };
    let landing = entry.map(|e| super::github_queue::landing(path, &e.head_sha, &e.base_sha));
    let base_sha = match (landing, rt.block_on(repo.branch_tip(&pr.base.name))) {
        (Some(Ok(landing)), _) => landing,
        (Some(Err(e)), _) => {
            let code = match e {
                GithubError::QueueShape { .. } => Exit::Gate,
                _ => exit_of(&e),
            };
            return refuse_here(&e, code, io);
        }
        (None, Ok(tip)) => match current_base(path, &pr, &tip) {
            Ok(b) => b,
            Err(e) => {
                // A shallow checkout is the workflow's to fix (2); a branch
                // behind its base is the pull request's (1).
                let code = if e.is_usage() {
                    Exit::Invalid
                } else {
                    Exit::Gate
                };
                return refuse_here(&e, code, io);
            }
        },
        (None, Err(e)) => {
            return refuse_here(&e, Exit::External, io);
        }
    };
    let against = if entry.is_some() {
        "what it lands on"
    } else {
        "as it stands"
    };
    writeln!(
        io.stderr,
        "capops: pull request #{number} by {author}: judging {} against {} {against} ({})",
        short(&judged),
        pr.base.name,
        short(&base_sha)
    )?;
    let mut loaded = match ccheck::load(cli, path, Some(&base_sha), at, io) {
        Ok(l) => l,
        Err(Stop::Io(e)) => return Err(Stop::Io(e)),
        Err(Stop::Exit(code)) => {
            // Leave no stale green behind: say on the head that it could not be judged.
            let verdict = Verdict {
                success: false,
                description: if code == Exit::Invalid {
                    "the repository does not validate (see the job log)".into()
                } else {
                    "git failed; the change could not be judged (see the job log)".into()
                },
                summary: String::new(),
                annotations: Vec::new(),
                details_url: settings.run_url.clone(),
            };
            if let Err(e) = rt.block_on(status::publish(
                &repo,
                &judged,
                &context,
                args.status,
                &verdict,
            )) {
                return Err(fail(&e, io));
            }
            return Ok(code);
        }
    };
    // Shown as `main` (its commit beside it), not as the SHA it was read at.
    if let Some(b) = loaded.base.as_mut().filter(|_| !pr.base.name.is_empty()) {
        b.rev = pr.base.name.clone();
    }
    let analysis = crate::cost::Analysis::new(loaded.world(), at);
    // Appended usage hours are data when a puller opened the pull request
    // and nobody else wrote or pushed any of it (read only then).
    let config = loaded.world().config_spec();
    let co_authors = match rt.block_on(gate::co_authors(&client, &repo, &pr, &author, &config)) {
        Ok(c) => c,
        Err(e) => {
            return refuse_here(&e, exit_of(&e), io);
        }
    };
    let result = ccheck::evaluate(
        &loaded,
        at,
        true,
        &analysis,
        Some(&author).filter(|a| !a.is_empty()).map(|a| a.as_str()),
        &co_authors,
    );

    // Reviews, then only the memberships that decide something (cached per run).
    let verified = rt.block_on(gate::verify(&client, &repo, &result, &pr, &author, &head));
    let (reviewers, approvals) = match verified {
        Ok(v) => v,
        Err(e) => {
            return refuse_here(&e, exit_of(&e), io);
        }
    };
    let standings: Vec<Standing> = result
        .evaluated
        .iter()
        .zip(&approvals)
        .map(|(e, a)| approvals::standing(&e.decision, a))
        .collect();

    let policy_broken = result
        .diagnostics
        .iter()
        .any(|d| d.severity == Severity::Error);
    let gate = match fail_on {
        FailOn::Denied => standings.contains(&Standing::Denied),
        FailOn::Approval => standings.iter().any(|s| !s.passes()),
        FailOn::Never => false,
    };
    let code = if policy_broken {
        Exit::Invalid
    } else if gate {
        Exit::Gate
    } else {
        Exit::Ok
    };
    let success = !policy_broken && standings.iter().all(|s| s.passes());

    let paths = Paths::new(path);
    let sources = &loaded.head.sources;
    let ctx = ccheck::context(&loaded, &result, at, Some(&analysis));
    let rows: Vec<Row<'_>> = result
        .evaluated
        .iter()
        .zip(&approvals)
        .zip(&standings)
        .map(|((e, a), s)| Row {
            kind: e.subject.as_str(),
            name: &e.name,
            standing: *s,
            approvals: a,
        })
        .collect();
    let verdict_text = comment::verdict(&standings);
    let lead = report::markdown::Lead {
        verdict: Some(verdict_text.clone()),
        sections: comment::approvals_section(&rows, &head, &reviewers.not_counted),
    };
    let mut links = report::markdown::Links::from_env(io.env);
    if let (Some(server), Some((o, n))) = ((io.env)("GITHUB_SERVER_URL"), &settings.repo) {
        links.blob_base = Some(format!(
            "{}/{o}/{n}/blob/{head}/",
            server.trim_end_matches('/')
        ));
    }
    let body = report::markdown::comment_with(&result, &ctx, sources, &paths, &links, &lead);

    // The comment, then the status (which links to it).
    let mut github_failed = None;
    // A queue entry's pull request keeps the comment of its own check.
    let written = if args.comment == comment::Mode::Never || entry.is_some() {
        None
    } else {
        let me = match &args.comment_author {
            Some(login) => Ok(login.clone()),
            None => rt.block_on(gate::identity(&client, report::github::in_actions(io.env))),
        };
        let outcome = match me {
            Ok(me) => rt.block_on(comment::upsert(
                &repo,
                number,
                &me,
                &body,
                args.comment,
                !result.evaluated.is_empty(),
            )),
            Err(e) => Err(e),
        };
        match outcome {
            Ok(w) => Some(w),
            Err(e) => {
                github_failed = Some(e);
                None
            }
        }
    };
    let comment_url = written.as_ref().and_then(|w| w.url.clone());
    let verdict = Verdict {
        success,
        description: present::description(&result, &standings, &approvals, policy_broken),
        summary: body.replacen(report::markdown::MARKER, "", 1),
        annotations: present::annotations(
            &result,
            &loaded.head.diagnostics,
            &standings,
            sources,
            &paths,
        ),
        details_url: comment_url.clone().or_else(|| settings.run_url.clone()),
    };
    let published = match rt.block_on(status::publish(
        &repo,
        &judged,
        &context,
        args.status,
        &verdict,
    )) {
        Ok(p) => p,
        Err(e) => {
            github_failed.get_or_insert(e);
            None
        }
    };

    // What the run says: diagnostics, the result, the comment and status.
    let mut diagnostics: Vec<Diagnostic> = loaded.head.diagnostics.clone();
    diagnostics.extend(result.diagnostics.iter().cloned());
    write_diagnostics(cli, &diagnostics, sources, &paths, io)?;
    let check_json = report::check::json(&result, &ctx, &diagnostics, code.code(), sources, &paths);
    let mut json =
        serde_json::to_value(report::json::Envelope::new("check", &check_json)).unwrap_or_default();
    json["github"] = present::json(&present::Summary {
        number,
        author: &author,
        head: &head,
        base: &base_sha,
        success,
        reviewers: &reviewers,
        rows: &rows,
        comment: written.as_ref(),
        status: published.as_ref(),
    });
    match cli.format {
        Format::Human | Format::Html => {
            if report::github::in_actions(io.env) {
                for line in report::check::annotations(&result, sources, &paths) {
                    writeln!(io.stdout, "{line}")?;
                }
            }
            io.stdout
                .write_all(report::check::human(&result, &ctx, sources, &paths).as_bytes())?;
            io.stdout
                .write_all(present::human_approvals(&rows, &head, &verdict_text).as_bytes())?;
        }
        Format::Json => write_pretty(io, &json)?,
        Format::Sarif => write_pretty(
            io,
            &report::check::sarif(&result, &diagnostics, sources, &paths),
        )?,
        Format::Markdown => io.stdout.write_all(body.as_bytes())?,
    }
    if let Some(w) = &written {
        match &w.url {
            Some(u) => writeln!(io.stderr, "capops: comment {}: {u}", w.action)?,
            None => writeln!(io.stderr, "capops: comment {}", w.action)?,
        }
    }
    note_published(published.as_ref(), &context, &judged, io)?;
    let mut json_path = None;
    if let Some(p) = &args.json_out {
        let text = serde_json::to_string_pretty(&json).unwrap_or_default() + "\n";
        if let Err(e) = super::common::write_atomically(p, text.as_bytes()) {
            writeln!(io.stderr, "error: cannot write {}: {e}", p.display())?;
            return Ok(Exit::External);
        }
        json_path = Some(p.display().to_string());
    }
    actions_files(io, &body, comment_url.as_deref(), json_path.as_deref())?;
    if let Some(e) = github_failed {
        return Err(fail(&e, io));
    }
    Ok(code)
}

/// Appends to the job summary and the step's outputs, inside GitHub Actions.
fn actions_files(
    io: &mut Io<'_>,
    body: &str,
    comment_url: Option<&str>,
    json_path: Option<&str>,
) -> std::io::Result<()> {
    use std::fs::OpenOptions;
    if let Some(summary) = (io.env)("GITHUB_STEP_SUMMARY").filter(|p| !p.is_empty()) {
        let text = body.replacen(report::markdown::MARKER, "", 1);
        if let Err(e) = OpenOptions::new()
            .append(true)
            .create(true)
            .open(&summary)
            .and_then(|mut f| f.write_all(text.as_bytes()))
        {
            writeln!(io.stderr, "warning: cannot write the job summary: {e}")?;
        }
    }
    let json_path = json_path.map(Path::new);
    outputs(io, comment_url, json_path)
}

/// Refuses unless the working tree holding `path` is at `head`.
/// Refuses a pull request into a branch capops does not govern: the
/// `--base-branch` list, else the repository's default branch.
fn governed(pr: &rest::PullRequest, listed: &[String]) -> Result<(), GithubError> {
    let allowed: Vec<String> = if listed.is_empty() {
        pr.base
            .repo
            .as_ref()
            .and_then(|r| r.default_branch.clone())
            .into_iter()
            .collect()
    } else {
        listed.to_vec()
    };
    if allowed.contains(&pr.base.name) {
        return Ok(());
    }
    Err(GithubError::BaseNotJudged {
        number: pr.number,
        base: pr.base.name.clone(),
        allowed: if allowed.is_empty() {
            "the default branch (which GitHub did not name)".into()
        } else {
            allowed
                .iter()
                .map(|b| format!("`{b}`"))
                .collect::<Vec<_>>()
                .join(", ")
        },
    })
}

/// The base to judge against: the branch's tip now, which the head must
/// contain. The head is compared with the tip's tree, so a head cut from an
/// older commit would read as reverting every change merged since (a
/// release that offsets the pull request's own growth), whatever the pull
/// request's `base.sha` says: it is the tip when the event fired, not the
/// commit the branch was cut from. Such a pull request is refused until it
/// is brought up to date.
fn current_base(path: &Path, pr: &rest::PullRequest, tip: &str) -> Result<String, GithubError> {
    if crate::load::git::head_contains(path, tip).unwrap_or(false) {
        return Ok(tip.to_string());
    }
    if crate::load::git::is_shallow(path) {
        return Err(GithubError::ShallowCheckout {
            number: pr.number,
            branch: pr.base.name.clone(),
            tip: short(tip).to_string(),
        });
    }
    Err(GithubError::BaseOutOfDate {
        number: pr.number,
        branch: pr.base.name.clone(),
        base: short(&pr.base.sha).to_string(),
        tip: short(tip).to_string(),
    })
}

/// Says on the head that the pull request could not be judged (so no
/// earlier green verdict stands), then stops with `code`.
#[allow(clippy::too_many_arguments)]
fn refuse(
    repo: &Repo<'_>,
    rt: &tokio::runtime::Runtime,
    head: &str,
    contexts: &[String],
    args: &GithubArgs,
    settings: &Settings,
    e: &GithubError,
    code: Exit,
    io: &mut Io<'_>,
) -> Outcome {
    writeln!(io.stderr, "error[{}]: {e}\n  help: {}", e.code(), e.help())?;
    let verdict = Verdict {
        success: false,
        description: format!("not judged: {} (see the job log)", e.code()),
        summary: format!(
            "capops could not judge this pull request: {e}\n\n{}",
            e.help()
        ),
        annotations: Vec::new(),
        details_url: settings.run_url.clone(),
    };
    for context in contexts {
        if let Err(p) = rt.block_on(status::publish(repo, head, context, args.status, &verdict)) {
            writeln!(
                io.stderr,
                "error[{}]: {p} (the failing verdict could not be set either)",
                p.code()
            )?;
        }
    }
    Err(Stop::Exit(code))
}

/// The exit code of a GitHub read that failed: a refusal of the request
/// itself is the user's to fix (2), the rest is GitHub's (3).
fn exit_of(e: &GithubError) -> Exit {
    if e.is_usage() {
        Exit::Invalid
    } else {
        Exit::External
    }
}
