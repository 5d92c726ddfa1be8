//! The result on the commit: a `capops` check run (with the summary and
//! per-line annotations) when the token may write checks, otherwise a
//! `capops` commit status. Either can be made a required status check.
//!
//! Each run creates a new check run (as a re-run of a workflow job does): the
//! newest run of a name is the one GitHub shows and requires. Updating an
//! older run in place would keep its stale annotations, which GitHub appends.

use super::GithubError;
use super::rest::{self, LatestStatus, Repo};
use serde_json::json;

/// How to report the result on the commit.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Mode {
    /// A check run, or a commit status when the token may not write checks (default).
    Auto,
    /// A check run only.
    CheckRun,
    /// A commit status only.
    Status,
    /// Nothing on the commit.
    None,
}

/// A line-level finding for a check run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Annotation {
    pub path: String,
    pub line: u32,
    /// `notice`, `warning` or `failure`.
    pub level: &'static str,
    pub title: String,
    pub message: String,
}

/// The verdict to publish.
#[derive(Clone, Debug)]
pub struct Verdict {
    pub success: bool,
    /// One line, at most 140 characters (a status's description limit).
    pub description: String,
    /// Markdown for the check run's page.
    pub summary: String,
    pub annotations: Vec<Annotation>,
    /// Where "Details" leads.
    pub details_url: Option<String>,
}

/// What was published.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Published {
    /// `check run` or `commit status`.
    pub kind: &'static str,
    pub url: Option<String>,
}

/// GitHub's limits: 140 characters of status description, 65,535 of check summary,
/// 50 annotations per request.
const DESCRIPTION_LIMIT: usize = 140;
const SUMMARY_LIMIT: usize = 65_535;
const ANNOTATIONS_PER_REQUEST: usize = 50;
/// Annotations sent at most (the rest are in the summary's tables).
const MAX_ANNOTATIONS: usize = 500;

/// Cuts text to `limit` characters, marking the cut.
pub fn cut(text: &str, limit: usize) -> String {
    if text.chars().count() <= limit {
        return text.to_string();
    }
    let mut s: String = text.chars().take(limit.saturating_sub(1)).collect();
    s.push('…');
    s
}

/// Publishes `verdict` on commit `sha`.
pub async fn publish(
    repo: &Repo<'_>,
    sha: &str,
    context: &str,
    mode: Mode,
    verdict: &Verdict,
) -> Result<Option<Published>, GithubError> {
    match mode {
        Mode::None => Ok(None),
        Mode::Status => status(repo, sha, context, verdict).await.map(Some),
        Mode::CheckRun => check_run(repo, sha, context, verdict).await.map(Some),
        Mode::Auto => match check_run(repo, sha, context, verdict).await {
            Err(GithubError::Forbidden { .. }) => {
                status(repo, sha, context, verdict).await.map(Some)
            }
            other => other.map(Some),
        },
    }
}

async fn status(
    repo: &Repo<'_>,
    sha: &str,
    context: &str,
    v: &Verdict,
) -> Result<Published, GithubError> {
    let state = if v.success { "success" } else { "failure" };
    let description = cut(&v.description, DESCRIPTION_LIMIT);
    // GitHub keeps at most 1,000 statuses of one context on a commit and
    // refuses more: a verdict that is already the latest is not written
    // again, so runs that change nothing (a comment, an edited title)
    // cannot spend the budget and leave the next, different verdict unwritable.
    // Only one this token set counts as already written: anyone who may
    // write statuses may set an identical one, which branch protection
    // pinned to capops' app would not read. Who the token is, is asked
    // only when there is something to skip.
    let same = |l: &LatestStatus| {
        l.state == state
            && l.description.as_deref() == Some(description.as_str())
            && l.target_url == v.details_url
    };
    let latest = repo.latest_status(sha, context).await.ok().flatten();
    let mine = match latest.as_ref().filter(|l| same(l)) {
        Some(l) => {
            let me = rest::viewer(repo.client).await.ok().flatten();
            l.creator
                .as_ref()
                .zip(me)
                .is_some_and(|(c, me)| c.login.eq_ignore_ascii_case(&me))
        }
        None => false,
    };
    if !mine {
        repo.create_status(sha, context, state, &description, v.details_url.as_deref())
            .await?;
    }
    Ok(Published {
        kind: "commit status",
        url: v.details_url.clone(),
    })
}

async fn check_run(
    repo: &Repo<'_>,
    sha: &str,
    context: &str,
    v: &Verdict,
) -> Result<Published, GithubError> {
    let annotations: Vec<serde_json::Value> = v
        .annotations
        .iter()
        .take(MAX_ANNOTATIONS)
        .map(|a| {
            json!({
                "path": a.path,
                "start_line": a.line,
                "end_line": a.line,
                "annotation_level": a.level,
                "title": cut(&a.title, 255),
                "message": cut(&a.message, 4_000),
            })
        })
        .collect();
    let mut batches = annotations.chunks(ANNOTATIONS_PER_REQUEST);
    let output = |batch: Option<&[serde_json::Value]>| {
        json!({
            "title": cut(&v.description, 255),
            "summary": cut(&v.summary, SUMMARY_LIMIT),
            "annotations": batch.unwrap_or(&[]),
        })
    };
    let mut body = json!({
        "name": context,
        "head_sha": sha,
        "status": "completed",
        "conclusion": if v.success { "success" } else { "failure" },
        "output": output(batches.next()),
    });
    if let Some(u) = &v.details_url {
        body["details_url"] = json!(u);
    }
    let run = repo.write_check_run(None, &body, sha).await?;
    // Further annotations are appended by updates of 50 each.
    for batch in batches {
        repo.write_check_run(Some(run.id), &json!({ "output": output(Some(batch)) }), sha)
            .await?;
    }
    Ok(Published {
        kind: "check run",
        url: run.html_url,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn descriptions_are_cut_to_the_limit() {
        assert_eq!(cut("short", 140), "short");
        let long = "x".repeat(300);
        let c = cut(&long, DESCRIPTION_LIMIT);
        assert_eq!(c.chars().count(), 140);
        assert!(c.ends_with('…'));
    }
}
