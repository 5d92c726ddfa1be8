//! What a run of `capops check --github` is about: the event (from
//! `GITHUB_EVENT_NAME` and the payload at `GITHUB_EVENT_PATH`, or from
//! `--repo` and `--pr`), the repository, the API address and the token.
//!
//! [`parse_event`] is pure (payload text in, event out); [`Settings::read`]
//! takes the environment as a function, so tests hand in their own.

use super::GithubError;

/// What to judge.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Target {
    /// A pull request: its head against its base, with its approvals.
    PullRequest { number: u64 },
    /// A merge queue's merge commit against the queue's base.
    MergeGroup {
        head_sha: String,
        base_sha: String,
        /// The pull request the queue entry is for, from its branch's name.
        pr: Option<u64>,
    },
    /// A push, a schedule or anything else: the repository as it stands.
    Repository { event: String },
}

/// A merge queue entry: the queue's commit (checked out, and where the
/// verdict goes) and the merge group's parent commit, which it lands on
/// (`cli::github_queue::landing`).
pub struct Entry {
    pub head_sha: String,
    pub base_sha: String,
}

/// Reads an event payload. Pull-request events give the number (head and base
/// are read fresh from the API later); `merge_group` gives its two commits.
pub fn parse_event(name: &str, payload: &str) -> Result<Target, String> {
    let pr_events = [
        "pull_request",
        "pull_request_target",
        "pull_request_review",
        "pull_request_review_comment",
    ];
    if pr_events.contains(&name) {
        let v: serde_json::Value =
            serde_json::from_str(payload).map_err(|e| format!("not JSON ({e})"))?;
        let number = v
            .pointer("/pull_request/number")
            .or_else(|| v.get("number"))
            .and_then(|n| n.as_u64())
            .ok_or("a pull-request event without `pull_request.number`")?;
        return Ok(Target::PullRequest { number });
    }
    if name == "merge_group" {
        let v: serde_json::Value =
            serde_json::from_str(payload).map_err(|e| format!("not JSON ({e})"))?;
        let sha = |key: &str| {
            v.pointer(&format!("/merge_group/{key}"))
                .and_then(|s| s.as_str())
                .filter(|s| is_sha(s))
                .map(String::from)
                .ok_or(format!("a merge_group event without `merge_group.{key}`"))
        };
        // The queue's branch names the pull request the entry is for:
        // `refs/heads/gh-readonly-queue/<base>/pr-<number>-<sha>`.
        let pr = v
            .pointer("/merge_group/head_ref")
            .and_then(|s| s.as_str())
            .and_then(|r| r.rsplit('/').next())
            .and_then(|last| last.strip_prefix("pr-"))
            .and_then(|rest| rest.split('-').next())
            .and_then(|n| n.parse::<u64>().ok());
        return Ok(Target::MergeGroup {
            head_sha: sha("head_sha")?,
            base_sha: sha("base_sha")?,
            pr,
        });
    }
    Ok(Target::Repository {
        event: name.to_string(),
    })
}

/// A full hexadecimal commit id.
pub fn is_sha(s: &str) -> bool {
    (s.len() == 40 || s.len() == 64) && s.bytes().all(|b| b.is_ascii_hexdigit())
}

/// `owner/name`.
pub fn split_repository(s: &str) -> Result<(String, String), GithubError> {
    let ok = |p: &str| {
        !p.is_empty()
            && p != "."
            && p != ".."
            && p.bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
    };
    match s.split_once('/') {
        Some((o, n)) if ok(o) && ok(n) => Ok((o.to_string(), n.to_string())),
        _ => Err(GithubError::BadRepository(s.to_string())),
    }
}

/// Everything a run needs from its environment and flags.
#[derive(Clone)]
pub struct Settings {
    pub target: Target,
    /// `owner`, `name` (absent for a repository check outside Actions).
    pub repo: Option<(String, String)>,
    /// `https://api.github.com` unless `GITHUB_API_URL` says otherwise.
    pub api_url: String,
    /// The link to this workflow run, for the status's details.
    pub run_url: Option<String>,
    /// Present when the target needs the API.
    token: Option<String>,
    pub token_var: String,
}

impl std::fmt::Debug for Settings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Settings")
            .field("target", &self.target)
            .field("repo", &self.repo)
            .field("api_url", &self.api_url)
            .field("token", &self.token.as_ref().map(|_| "<hidden>"))
            .finish()
    }
}

/// The flags that choose the target.
pub struct Flags<'a> {
    pub repo: Option<&'a str>,
    pub pr: Option<u64>,
    pub token_env: &'a str,
}

impl Settings {
    pub fn read(
        flags: &Flags<'_>,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Settings, GithubError> {
        let non_empty = |k: &str| env(k).filter(|v| !v.trim().is_empty());
        let target = match flags.pr {
            Some(number) => Target::PullRequest { number },
            None => match non_empty("GITHUB_EVENT_NAME") {
                None => {
                    return Err(GithubError::NoPullRequest(
                        "no pull request to judge: GITHUB_EVENT_NAME is not set and --pr is not given".into(),
                    ));
                }
                Some(name) => {
                    let needs_payload = name.starts_with("pull_request") || name == "merge_group";
                    if needs_payload {
                        let path = non_empty("GITHUB_EVENT_PATH").ok_or_else(|| {
                            GithubError::BadEvent {
                                path: "(GITHUB_EVENT_PATH unset)".into(),
                                why: format!("a {name} event needs its payload"),
                            }
                        })?;
                        let text = read_payload(&path)?;
                        parse_event(&name, &text)
                            .map_err(|why| GithubError::BadEvent { path, why })?
                    } else {
                        Target::Repository { event: name }
                    }
                }
            },
        };
        let repo = match flags
            .repo
            .map(String::from)
            .or_else(|| non_empty("GITHUB_REPOSITORY"))
        {
            Some(r) => Some(split_repository(r.trim())?),
            None => None,
        };
        let api_url =
            non_empty("GITHUB_API_URL").unwrap_or_else(|| "https://api.github.com".into());
        let run_url = match (
            non_empty("GITHUB_SERVER_URL"),
            non_empty("GITHUB_REPOSITORY"),
            non_empty("GITHUB_RUN_ID"),
        ) {
            (Some(s), Some(r), Some(id)) => {
                Some(format!("{}/{r}/actions/runs/{id}", s.trim_end_matches('/')))
            }
            _ => None,
        };
        let needs_api = !matches!(target, Target::Repository { .. });
        if needs_api && repo.is_none() {
            return Err(GithubError::BadRepository(String::new()));
        }
        // A value with a space, a line break or a control character inside
        // is no token (GitHub's are visible ASCII), and could not be sent.
        let token = non_empty(flags.token_env)
            .map(|t| t.trim().to_string())
            .filter(|t| t.chars().all(|c| c.is_ascii_graphic()));
        if needs_api && token.is_none() {
            return Err(GithubError::NoToken {
                var: flags.token_env.to_string(),
            });
        }
        Ok(Settings {
            target,
            repo,
            api_url,
            run_url,
            token,
            token_var: flags.token_env.to_string(),
        })
    }

    /// The token (only for building the client; never shown).
    pub fn token(&self) -> Option<&str> {
        self.token.as_deref()
    }
}

/// Reads the payload file, at most 25 MiB (GitHub caps webhook payloads there).
fn read_payload(path: &str) -> Result<String, GithubError> {
    use std::io::Read;
    let bad = |why: String| GithubError::BadEvent {
        path: path.to_string(),
        why,
    };
    let file = std::fs::File::open(path).map_err(|e| bad(e.to_string()))?;
    let mut text = String::new();
    file.take(25 << 20)
        .read_to_string(&mut text)
        .map_err(|e| bad(e.to_string()))?;
    Ok(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pull_request_events_give_the_number() {
        let payload =
            r#"{"action":"synchronize","number":7,"pull_request":{"number":7,"head":{"sha":"x"}}}"#;
        for name in ["pull_request", "pull_request_target", "pull_request_review"] {
            assert_eq!(
                parse_event(name, payload),
                Ok(Target::PullRequest { number: 7 })
            );
        }
        assert!(
            parse_event("pull_request", "{}")
                .unwrap_err()
                .contains("pull_request.number")
        );
        assert!(
            parse_event("pull_request", "not json")
                .unwrap_err()
                .contains("not JSON")
        );
    }

    #[test]
    fn merge_groups_give_their_commits() {
        let head = "a".repeat(40);
        let base = "b".repeat(40);
        let payload = format!(
            r#"{{"action":"checks_requested","merge_group":{{"head_sha":"{head}","base_sha":"{base}","head_ref":"refs/heads/gh-readonly-queue/main/pr-7-x"}}}}"#
        );
        assert_eq!(
            parse_event("merge_group", &payload),
            Ok(Target::MergeGroup {
                head_sha: head.clone(),
                base_sha: base.clone(),
                pr: Some(7),
            })
        );
        let no_ref = format!(
            r#"{{"merge_group":{{"head_sha":"{head}","base_sha":"{base}","head_ref":"refs/heads/elsewhere"}}}}"#
        );
        assert_eq!(
            parse_event("merge_group", &no_ref),
            Ok(Target::MergeGroup {
                head_sha: head,
                base_sha: base,
                pr: None,
            })
        );
        assert!(
            parse_event(
                "merge_group",
                r#"{"merge_group":{"head_sha":"--upload-pack=x"}}"#
            )
            .is_err()
        );
    }

    #[test]
    fn other_events_check_the_repository() {
        for name in ["push", "schedule", "workflow_dispatch"] {
            assert_eq!(
                parse_event(name, ""),
                Ok(Target::Repository { event: name.into() })
            );
        }
    }

    #[test]
    fn repository_names_are_checked() {
        assert_eq!(
            split_repository("acme/capacity").unwrap(),
            ("acme".into(), "capacity".into())
        );
        assert!(split_repository("acme").is_err());
        assert!(split_repository("acme/../x").is_err());
        assert!(split_repository("../x").is_err());
        assert!(split_repository("a b/c").is_err());
    }

    #[test]
    fn settings_need_a_token_for_pull_requests_but_not_for_pushes() {
        let flags = Flags {
            repo: Some("acme/cap"),
            pr: Some(3),
            token_env: "GITHUB_TOKEN",
        };
        let none = |_: &str| None;
        assert!(matches!(
            Settings::read(&flags, &none),
            Err(GithubError::NoToken { .. })
        ));
        // A value with a line break inside is no token (it could not be
        // sent in a header): a usage error, not GitHub unreachable.
        let broken = |k: &str| (k == "GITHUB_TOKEN").then(|| "ghp_a\nb".to_string());
        let e = Settings::read(&flags, &broken).unwrap_err();
        assert!(matches!(e, GithubError::NoToken { .. }));
        assert!(!e.to_string().contains("ghp_a"), "{e}");
        // Around it, whitespace is trimmed as before.
        let padded = |k: &str| (k == "GITHUB_TOKEN").then(|| " ghp_ok\n".to_string());
        assert!(Settings::read(&flags, &padded).is_ok());
        let env = |k: &str| match k {
            "GITHUB_TOKEN" => Some("ghp_secret".to_string()),
            "GITHUB_API_URL" => Some("https://ghe.example.com/api/v3".to_string()),
            _ => None,
        };
        let s = Settings::read(&flags, &env).unwrap();
        assert_eq!(s.api_url, "https://ghe.example.com/api/v3");
        assert_eq!(s.target, Target::PullRequest { number: 3 });
        assert!(!format!("{s:?}").contains("ghp_secret"));
        let push = |k: &str| (k == "GITHUB_EVENT_NAME").then(|| "push".to_string());
        let flags = Flags {
            repo: None,
            pr: None,
            token_env: "GITHUB_TOKEN",
        };
        let s = Settings::read(&flags, &push).unwrap();
        assert_eq!(
            s.target,
            Target::Repository {
                event: "push".into()
            }
        );
        assert!(matches!(
            Settings::read(&flags, &none),
            Err(GithubError::NoPullRequest(_))
        ));
    }
}
