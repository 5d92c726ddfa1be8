//! The flags of the pull-request loop, as `capops check` takes them.

use super::{comment, status};
use std::path::PathBuf;

/// The flags of the pull-request loop (on `capops check`).
#[derive(Debug, Clone, clap::Args)]
pub struct GithubArgs {
    /// Run as the pull-request gate on GitHub: judge the pull request against its
    /// base, verify its approvals, comment and set the `capops` status.
    #[arg(long, conflicts_with = "base")]
    pub github: bool,
    /// The repository (owner/name); default GITHUB_REPOSITORY.
    #[arg(long, value_name = "OWNER/NAME", requires = "github")]
    pub repo: Option<String>,
    /// The pull request; default the one of the GitHub Actions event.
    #[arg(long, value_name = "NUMBER", requires = "github", value_parser = clap::value_parser!(u64).range(1..))]
    pub pr: Option<u64>,
    /// The environment variable holding the GitHub token.
    #[arg(
        long,
        value_name = "VAR",
        default_value = "GITHUB_TOKEN",
        requires = "github",
        value_parser = env_name
    )]
    pub token_env: String,
    /// When to write the pull-request comment.
    #[arg(long, value_enum, default_value_t = comment::Mode::OnChange, requires = "github")]
    pub comment: comment::Mode,
    /// How to report the verdict on the head commit.
    #[arg(long, value_enum, default_value_t = status::Mode::Auto, requires = "github")]
    pub status: status::Mode,
    /// The login the token posts as (default: asked from GitHub; `github-actions[bot]`
    /// for the Actions token). Only comments by this login are ever edited.
    #[arg(long, value_name = "LOGIN", requires = "github", value_parser = login)]
    pub comment_author: Option<String>,
    /// A branch whose pull requests capops judges (repeat for several; default the
    /// repository's default branch). A pull request into any other branch is
    /// refused: a branch of the contributor's own would choose what judges it.
    #[arg(long, value_name = "BRANCH", requires = "github", value_parser = branch)]
    pub base_branch: Vec<String>,
    /// Also write the JSON result to this file.
    #[arg(long, value_name = "FILE", requires = "github")]
    pub json_out: Option<PathBuf>,
}

impl GithubArgs {
    /// A flag of the pull-request loop given without `--github` (clap's
    /// `requires` does not hold them to it beside `--base`): it would be
    /// ignored, so it is refused: what to say.
    pub fn stray_flag(&self) -> Option<String> {
        if self.github {
            return None;
        }
        [
            ("--json-out", self.json_out.is_some()),
            ("--pr", self.pr.is_some()),
            ("--repo", self.repo.is_some()),
            ("--comment-author", self.comment_author.is_some()),
            ("--base-branch", !self.base_branch.is_empty()),
        ]
        .into_iter()
        .find_map(|(flag, given)| given.then_some(flag))
        .map(|flag| {
            format!("{flag} is a flag of the pull-request loop: it needs --github (add it to run as the pull-request gate, or drop {flag})")
        })
    }
}

/// `--token-env`: the name of an environment variable (letters, digits and
/// `_`, not starting with a digit).
fn env_name(s: &str) -> Result<String, String> {
    let ok = s.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
        && s.bytes().next().is_some_and(|b| !b.is_ascii_digit());
    ok.then(|| s.to_string())
        .ok_or_else(|| "write the name of an environment variable (`GITHUB_TOKEN`)".into())
}

/// `--comment-author` and `check --author`: a GitHub login or `app-slug[bot]`.
pub fn login(s: &str) -> Result<String, String> {
    if crate::validate::names::is_github_actor(s) {
        Ok(s.trim_start_matches('@').to_string())
    } else {
        Err("write a GitHub login (`alice`) or a GitHub App's account (`app-slug[bot]`)".into())
    }
}

/// `--base-branch`: a branch name git accepts (not empty, no spaces or
/// control characters, none of `~^:?*[\`, no `..`, not starting with `-`).
fn branch(s: &str) -> Result<String, String> {
    let bad = s.is_empty()
        || s.starts_with('-')
        || s.starts_with('/')
        || s.ends_with('/')
        || s.ends_with('.')
        || s.contains("..")
        || s.contains("@{")
        || s.chars()
            .any(|c| c.is_whitespace() || c.is_control() || "~^:?*[\\".contains(c));
    (!bad)
        .then(|| s.to_string())
        .ok_or_else(|| format!("`{s}` is not a branch name git accepts"))
}
