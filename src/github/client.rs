//! octocrab as capops' GitHub HTTP client: authentication, the API address
//! (github.com or an Enterprise server's `GITHUB_API_URL`), timeouts, bounded
//! retries and `Link` pagination.
//!
//! Requests go through octocrab's raw methods so that capops sees each
//! response's status and headers: rate limits are read from headers, which
//! octocrab's typed errors do not carry. octocrab's own retry layer is off, so
//! every wait is decided (and bounded) by [`super::retry`].

use super::GithubError;
use super::retry::{self, Headers, Next, Policy};
use octocrab::Octocrab;
use octocrab::service::middleware::retry::RetryConfig;
use std::time::Duration;

/// The longest a single request may take, connection included.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);
/// Pages followed at most (100 items each): a bound, not an expectation.
const MAX_PAGES: usize = 100;

/// A response, read whole.
#[derive(Debug)]
pub struct Reply {
    pub status: u16,
    pub body: String,
    /// The `Link` header (pagination).
    pub link: Option<String>,
}

impl Reply {
    /// GitHub's `message` field, or the start of the body.
    pub fn message(&self) -> String {
        serde_json::from_str::<serde_json::Value>(&self.body)
            .ok()
            .and_then(|v| v.get("message").and_then(|m| m.as_str()).map(String::from))
            .unwrap_or_else(|| self.body.chars().take(200).collect())
    }
}

/// An authenticated client for one API address.
pub struct Client {
    octo: Octocrab,
    /// `https://api.github.com`, `https://ghe.example.com/api/v3`, no trailing slash.
    base: String,
    policy: Policy,
    /// The token, only to scrub it from what a server answers (an error
    /// body that quotes it would otherwise reach errors, the comment and
    /// the verdict).
    secret: Vec<String>,
}

/// The largest answer read (a page of 100 comments of 65,536 characters
/// is about 7 MiB): beyond it the answer is refused, not read whole.
pub const MAX_ANSWER_BYTES: usize = 64 << 20;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Method {
    Get,
    Post,
    Patch,
}

impl Client {
    /// A client for `api_url` authenticating with `token`.
    pub fn new(api_url: &str, token: &str, policy: Policy) -> Result<Client, GithubError> {
        let base = api_url.trim_end_matches('/').to_string();
        let setup = |why: String| GithubError::Unreachable {
            what: "setting up the GitHub client".into(),
            why,
        };
        // An HTTP header carries visible ASCII only: a token with a line
        // break (a secret pasted with its newline) is refused here, without
        // showing it, rather than making the client panic.
        if token.is_empty() || !token.bytes().all(|b| b.is_ascii_graphic()) {
            return Err(setup(
                "the token is empty or holds characters an HTTP header cannot carry (a line break or a space?); it is not shown".into(),
            ));
        }
        let octo = Octocrab::builder()
            .base_uri(base.as_str())
            .map_err(|_| setup(format!("GITHUB_API_URL `{base}` is not a URL")))?
            .personal_token(token.to_string())
            .add_retry_config(RetryConfig::None)
            .set_connect_timeout(Some(Duration::from_secs(10)))
            .set_read_timeout(Some(REQUEST_TIMEOUT))
            .add_header(
                http::header::ACCEPT,
                "application/vnd.github+json".to_string(),
            )
            .build()
            .map_err(|e| setup(describe(&e)))?;
        Ok(Client {
            octo,
            base,
            policy,
            secret: vec![token.to_string()],
        })
    }

    /// The absolute URL of an API path (`/repos/...`).
    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    /// Sends one request, retrying server errors and rate limits within the
    /// policy's bounds. `what` says what capops was doing, for errors.
    pub async fn send(
        &self,
        method: Method,
        url: &str,
        body: Option<&serde_json::Value>,
        what: &str,
    ) -> Result<Reply, GithubError> {
        self.send_with(method, url, body, what, true).await
    }

    /// [`Client::send`] for a request that must not be repeated once GitHub
    /// may have acted on it (creating a comment): a server error or a lost
    /// connection is reported, not retried, so no duplicate can appear. A
    /// rate-limited request was not acted on and is still retried.
    pub async fn send_once(
        &self,
        method: Method,
        url: &str,
        body: Option<&serde_json::Value>,
        what: &str,
    ) -> Result<Reply, GithubError> {
        self.send_with(method, url, body, what, false).await
    }

    async fn send_with(
        &self,
        method: Method,
        url: &str,
        body: Option<&serde_json::Value>,
        what: &str,
        repeatable: bool,
    ) -> Result<Reply, GithubError> {
        let mut attempt = 0;
        loop {
            attempt += 1;
            let sent = tokio::time::timeout(REQUEST_TIMEOUT, self.once(method, url, body)).await;
            let (status, headers, link, body_text) = match sent {
                Ok(Ok(r)) => r,
                Ok(Err(why)) => {
                    if !repeatable || attempt >= self.policy.attempts {
                        return Err(GithubError::Unreachable {
                            what: what.into(),
                            why,
                        });
                    }
                    tokio::time::sleep(retry::backoff(attempt, &self.policy)).await;
                    continue;
                }
                Err(_) => {
                    if !repeatable || attempt >= self.policy.attempts {
                        return Err(GithubError::Unreachable {
                            what: what.into(),
                            why: format!("no answer within {} s", REQUEST_TIMEOUT.as_secs()),
                        });
                    }
                    continue;
                }
            };
            // What a server says reaches errors (a body that does not
            // parse is quoted in one), the comment and the verdict: never
            // with the token in it, whatever the status. A successful
            // answer loses only the token itself: its prose (a comment
            // that says "token throughput") is what people wrote, and
            // capops compares its own comment with it.
            let body = if (200..300).contains(&status) {
                crate::output::redact::scrub_secrets(&self.secret, &body_text)
            } else {
                crate::output::redact::scrub_text(&self.secret, &body_text)
            };
            let reply = Reply { status, body, link };
            let policy = if repeatable || !(500..600).contains(&status) {
                self.policy
            } else {
                // Not repeatable: a server error is final at once.
                Policy {
                    attempts: attempt,
                    ..self.policy
                }
            };
            match retry::classify(status, &headers, &reply.body, attempt, unix_now(), &policy) {
                Next::Done => return Ok(reply),
                Next::Retry(wait) => tokio::time::sleep(wait).await,
                Next::RateLimited(detail) => {
                    return Err(GithubError::RateLimited {
                        what: what.into(),
                        detail,
                    });
                }
                Next::GiveUp => {
                    return Err(GithubError::Http {
                        what: what.into(),
                        status,
                        message: format!("{} (after {attempt} attempts)", reply.message()),
                    });
                }
            }
        }
    }

    async fn once(
        &self,
        method: Method,
        url: &str,
        body: Option<&serde_json::Value>,
    ) -> Result<(u16, Headers, Option<String>, String), String> {
        let response = match method {
            Method::Get => self.octo._get(url).await,
            Method::Post => self.octo._post(url, body).await,
            Method::Patch => self.octo._patch(url, body).await,
        }
        .map_err(|e| describe(&e))?;
        let header = |name: &str| {
            response
                .headers()
                .get(name)
                .and_then(|v| v.to_str().ok())
                .map(String::from)
        };
        let headers = Headers {
            retry_after: header("retry-after"),
            remaining: header("x-ratelimit-remaining"),
            reset: header("x-ratelimit-reset"),
        };
        let link = header("link");
        let status = response.status().as_u16();
        use http_body_util::BodyExt;
        let bytes = http_body_util::Limited::new(response.into_body(), MAX_ANSWER_BYTES)
            .collect()
            .await
            .map_err(|e| {
                if e.is::<http_body_util::LengthLimitError>() {
                    format!(
                        "the answer is larger than {} MiB, more than any GitHub answer capops asks for",
                        MAX_ANSWER_BYTES >> 20
                    )
                } else {
                    crate::output::redact::scrub_text(&self.secret, &e.to_string())
                }
            })?
            .to_bytes();
        Ok((
            status,
            headers,
            link,
            String::from_utf8_lossy(&bytes).into_owned(),
        ))
    }

    /// Every item of a paginated list, following `Link: <...>; rel="next"`
    /// (on the same host only, so the token never travels elsewhere).
    pub async fn get_all<T: serde::de::DeserializeOwned>(
        &self,
        first: &str,
        what: &str,
    ) -> Result<Vec<T>, GithubError> {
        let mut url = first.to_string();
        let mut items = Vec::new();
        for _ in 0..MAX_PAGES {
            let reply = self.send(Method::Get, &url, None, what).await?;
            expect_ok(&reply, what)?;
            let page: Vec<T> = parse(&reply, what)?;
            items.extend(page);
            match reply.link.as_deref().and_then(next_link) {
                Some(next) if same_origin(&next, &self.base) => url = next,
                Some(next) => {
                    return Err(GithubError::BadResponse {
                        what: what.into(),
                        why: format!("the next page is on another host ({})", origin(&next)),
                    });
                }
                None => return Ok(items),
            }
        }
        Err(GithubError::BadResponse {
            what: what.into(),
            why: format!("more than {MAX_PAGES} pages"),
        })
    }
}

/// Turns 401, 403, 404 and other non-2xx answers into errors.
pub fn expect_ok(reply: &Reply, what: &str) -> Result<(), GithubError> {
    match reply.status {
        200..=299 => Ok(()),
        401 => Err(GithubError::Unauthorized { what: what.into() }),
        403 => Err(GithubError::Forbidden {
            what: what.into(),
            message: reply.message(),
        }),
        404 => Err(GithubError::NotFound { what: what.into() }),
        status => Err(GithubError::Http {
            what: what.into(),
            status,
            message: reply.message(),
        }),
    }
}

/// Reads a JSON body.
pub fn parse<T: serde::de::DeserializeOwned>(reply: &Reply, what: &str) -> Result<T, GithubError> {
    serde_json::from_str(&reply.body).map_err(|e| GithubError::BadResponse {
        what: what.into(),
        why: e.to_string(),
    })
}

/// The `rel="next"` target of a `Link` header, read as RFC 8288 writes
/// it: link values separated by commas outside `<...>` and quotes, each a
/// `<target>` and `;`-separated parameters; `rel` (any case) holds
/// space-separated relation types (any case), quoted or not.
pub fn next_link(header: &str) -> Option<String> {
    let mut values = Vec::new();
    let (mut start, mut in_target, mut in_quote, mut escaped) = (0, false, false, false);
    for (i, c) in header.char_indices() {
        match c {
            _ if escaped => escaped = false,
            '\\' if in_quote => escaped = true,
            '"' if !in_target => in_quote = !in_quote,
            '<' if !in_quote => in_target = true,
            '>' if !in_quote => in_target = false,
            ',' if !in_quote && !in_target => {
                values.push(&header[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    values.push(&header[start..]);
    values.into_iter().find_map(|value| {
        let value = value.trim();
        let target_end = value.find('>')?;
        let target = value.strip_prefix('<')?.get(..target_end - 1)?;
        let is_next = params(&value[target_end + 1..]).any(|(name, v)| {
            name.eq_ignore_ascii_case("rel")
                && v.split_ascii_whitespace()
                    .any(|r| r.eq_ignore_ascii_case("next"))
        });
        is_next.then(|| target.to_string())
    })
}

/// The `name=value` parameters after a link's target (`; rel="next"`), a
/// quoted value unquoted; `;` inside quotes does not split.
fn params(text: &str) -> impl Iterator<Item = (String, String)> + '_ {
    let mut parts = Vec::new();
    let (mut start, mut in_quote, mut escaped) = (0, false, false);
    for (i, c) in text.char_indices() {
        match c {
            _ if escaped => escaped = false,
            '\\' if in_quote => escaped = true,
            '"' => in_quote = !in_quote,
            ';' if !in_quote => {
                parts.push(&text[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&text[start..]);
    parts.into_iter().filter_map(|p| {
        let (name, value) = p.split_once('=')?;
        let value = value.trim();
        let value = value
            .strip_prefix('"')
            .and_then(|v| v.strip_suffix('"'))
            .unwrap_or(value);
        Some((name.trim().to_string(), value.replace("\\\"", "\"")))
    })
}

fn origin(url: &str) -> &str {
    let after = url.find("://").map(|i| i + 3).unwrap_or(0);
    let end = url[after..]
        .find('/')
        .map(|i| after + i)
        .unwrap_or(url.len());
    &url[..end]
}

fn same_origin(url: &str, base: &str) -> bool {
    origin(url).eq_ignore_ascii_case(origin(base))
}

/// An octocrab error as text (it never holds the token: octocrab keeps it in
/// a sensitive header value, and errors carry no headers).
fn describe(e: &octocrab::Error) -> String {
    use std::error::Error;
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        text.push_str(": ");
        text.push_str(&s.to_string());
        source = s.source();
    }
    text
}

fn unix_now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

/// A path segment, percent-encoded (team slugs come from the Config).
pub fn seg(s: &str) -> String {
    let dots_safe = s != "." && s != "..";
    let mut out = String::new();
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'~') || (b == b'.' && dots_safe)
        {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_next_link_is_found_among_the_others() {
        let h = r#"<https://api.github.com/repositories/1/pulls/2/reviews?per_page=100&page=2>; rel="next", <https://api.github.com/repositories/1/pulls/2/reviews?per_page=100&page=3>; rel="last""#;
        assert_eq!(
            next_link(h).as_deref(),
            Some("https://api.github.com/repositories/1/pulls/2/reviews?per_page=100&page=2")
        );
        let last = r#"<https://x/y?page=1>; rel="prev", <https://x/y?page=1>; rel="first""#;
        assert_eq!(next_link(last), None);
        assert_eq!(next_link(""), None);
    }

    #[test]
    fn the_next_link_is_read_in_every_spelling_rfc_8288_allows() {
        let next = Some("https://x/y?page=2&a=b,c".to_string());
        for h in [
            r#"<https://x/y?page=2&a=b,c>; rel=next"#,
            r#"<https://x/y?page=2&a=b,c>; REL="NEXT""#,
            r#"<https://x/y?page=2&a=b,c>;rel="next last""#,
            r#"<https://x/y?page=1>; rel="prev"; title="a, b; c", <https://x/y?page=2&a=b,c>; rel="next""#,
            r#"<https://x/y?page=2&a=b,c>; title="x"; rel = "prev next""#,
        ] {
            assert_eq!(next_link(h), next, "{h}");
        }
        for h in [
            r#"<https://x/y?page=2>; rel="nextpage""#,
            r#"<https://x/y?page=2>; title="rel=next""#,
            r#"<https://x/y?page=2>"#,
        ] {
            assert_eq!(next_link(h), None, "{h}");
        }
    }

    #[test]
    fn pages_stay_on_the_api_host() {
        assert!(same_origin(
            "https://ghe.example.com/api/v3/x?page=2",
            "https://ghe.example.com/api/v3"
        ));
        assert!(!same_origin(
            "https://evil.example/x",
            "https://api.github.com"
        ));
        assert!(same_origin(
            "http://127.0.0.1:4000/r?page=2",
            "http://127.0.0.1:4000"
        ));
        assert!(!same_origin(
            "http://127.0.0.1:4001/r",
            "http://127.0.0.1:4000"
        ));
    }

    #[test]
    fn path_segments_are_encoded() {
        assert_eq!(seg("acme-platform"), "acme-platform");
        assert_eq!(seg("../x?y"), "..%2Fx%3Fy");
        assert_eq!(seg("bot[bot]"), "bot%5Bbot%5D");
        assert_eq!(seg(".."), "%2E%2E");
        assert_eq!(seg("capops.dev"), "capops.dev");
    }
}
