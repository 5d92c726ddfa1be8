//! What the GitHub loop's commands share: the API client and runtime, the
//! checkout check, the step outputs and how a failure is reported.

use super::Io;
use super::common::{Exit, Stop};
use crate::github::context::Settings;
use crate::github::rest::{Repo, short};
use crate::github::status;
use crate::github::{GithubError, client::Client, retry};
use std::io::Write;
use std::path::Path;

/// Appends `comment-url` and `decision-json` to the step's outputs (`GITHUB_OUTPUT`).
pub(super) fn outputs(
    io: &mut Io<'_>,
    comment_url: Option<&str>,
    json_path: Option<&Path>,
) -> std::io::Result<()> {
    use std::fs::OpenOptions;
    let json_path = json_path.map(|p| p.display().to_string());
    let json_path = json_path.as_deref();
    if let Some(output) = (io.env)("GITHUB_OUTPUT").filter(|p| !p.is_empty()) {
        let mut lines = String::new();
        for (k, v) in [("comment-url", comment_url), ("decision-json", json_path)] {
            if let Some(v) = v.filter(|v| !v.contains('\n') && !v.contains('\r')) {
                lines.push_str(&format!("{k}={v}\n"));
            }
        }
        if let Err(e) = OpenOptions::new()
            .append(true)
            .create(true)
            .open(&output)
            .and_then(|mut f| f.write_all(lines.as_bytes()))
        {
            writeln!(io.stderr, "warning: cannot write the step outputs: {e}")?;
        }
    }
    Ok(())
}

/// Says on stderr which verdict (`context`) was set on `sha`.
pub(super) fn note_published(
    p: Option<&status::Published>,
    context: &str,
    sha: &str,
    io: &mut Io<'_>,
) -> std::io::Result<()> {
    if let Some(p) = p {
        writeln!(
            io.stderr,
            "capops: `{context}` {} set on {}",
            p.kind,
            short(sha)
        )?;
    }
    Ok(())
}

/// Refuses unless the checkout is `head` (what is judged is what is read).
pub(super) fn same_head(path: &Path, head: &str) -> Result<(), GithubError> {
    let checked_out = crate::load::git::head_commit(path).map_err(|e| GithubError::NoCheckout {
        path: path.display().to_string(),
        why: e.to_string(),
    })?;
    if !checked_out.eq_ignore_ascii_case(head) {
        return Err(GithubError::HeadMismatch {
            checked_out,
            head: head.to_string(),
        });
    }
    Ok(())
}

/// The API client for the run's token.
pub(super) fn client(settings: &Settings) -> Result<Client, GithubError> {
    Client::new(
        &settings.api_url,
        settings.token().unwrap_or_default(),
        retry::Policy::default(),
    )
}

/// The repository the run is about.
pub(super) fn repo<'a>(client: &'a Client, settings: &Settings) -> Repo<'a> {
    let (owner, name) = settings.repo.clone().unwrap_or_default();
    Repo {
        client,
        owner,
        name,
    }
}

/// A runtime on this thread for the GitHub calls of one run (one, so that
/// the client's pooled connections stay alive between calls).
pub(super) fn runtime() -> std::io::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
}

/// Reports a GitHub error and stops with its exit code.
pub(super) fn fail(e: &GithubError, io: &mut Io<'_>) -> Stop {
    if let Err(w) = writeln!(io.stderr, "error[{}]: {e}\n  help: {}", e.code(), e.help()) {
        return Stop::Io(w);
    }
    Stop::Exit(if e.is_usage() {
        Exit::Invalid
    } else {
        Exit::External
    })
}
