//! When to retry a GitHub request, and how long to wait first.
//!
//! A pure function of the response's status, headers and body, the attempt
//! number and the current time (passed in). GitHub's rules: a primary rate
//! limit is a 403 or 429 with `x-ratelimit-remaining: 0` (wait until
//! `x-ratelimit-reset`); a secondary rate limit is a 403 or 429 with
//! `retry-after` (wait that long) or, without headers, at least a minute;
//! 5xx answers are worth a retry after a short backoff. Every wait is bounded:
//! a limit that resets later than `max_wait` is reported at once instead.

use std::time::Duration;

/// How hard to try.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Policy {
    /// Attempts per request, the first included.
    pub attempts: u32,
    /// First backoff after a 5xx or a transport error; doubled each time.
    pub backoff: Duration,
    /// The longest single wait on a rate limit.
    pub max_wait: Duration,
    /// The wait on a secondary rate limit that names no time.
    pub secondary_wait: Duration,
}

impl Default for Policy {
    fn default() -> Self {
        Policy {
            attempts: 4,
            backoff: Duration::from_secs(1),
            max_wait: Duration::from_secs(60),
            secondary_wait: Duration::from_secs(60),
        }
    }
}

/// What to do with a response.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Next {
    /// Hand the response to the caller (success or an error it handles).
    Done,
    /// Wait, then send again.
    Retry(Duration),
    /// A rate limit that will not lift within the bound (or retries ran out).
    RateLimited(String),
    /// A server error, and retries ran out.
    GiveUp,
}

/// The few headers that matter, as text.
#[derive(Clone, Debug, Default)]
pub struct Headers {
    pub retry_after: Option<String>,
    pub remaining: Option<String>,
    pub reset: Option<String>,
}

/// Decides what follows a response. `attempt` counts from 1; `now` is Unix seconds.
pub fn classify(status: u16, h: &Headers, body: &str, attempt: u32, now: u64, p: &Policy) -> Next {
    let last = attempt >= p.attempts;
    let num = |s: &Option<String>| s.as_deref().and_then(|v| v.trim().parse::<u64>().ok());
    if status == 403 || status == 429 {
        let wait = if let Some(secs) = num(&h.retry_after) {
            Some(Duration::from_secs(secs))
        } else if let Some(at) = http_date(h.retry_after.as_deref()) {
            // `Retry-After` may also be an HTTP date (RFC 9110, 10.2.3).
            Some(Duration::from_secs(at.saturating_sub(now).max(1)))
        } else if num(&h.remaining) == Some(0) {
            let reset = num(&h.reset).unwrap_or(now + 60);
            Some(Duration::from_secs(reset.saturating_sub(now).max(1)))
        } else if status == 429 || body.to_ascii_lowercase().contains("rate limit") {
            Some(p.secondary_wait)
        } else {
            // A plain 403: a permission problem, not a limit.
            None
        };
        return match wait {
            None => Next::Done,
            Some(w) if w > p.max_wait => Next::RateLimited(format!(
                "it lifts in {} s, later than capops waits ({} s)",
                w.as_secs(),
                p.max_wait.as_secs()
            )),
            Some(_) if last => {
                Next::RateLimited(format!("still limited after {} attempts", p.attempts))
            }
            Some(w) => Next::Retry(w),
        };
    }
    if (500..600).contains(&status) {
        return if last {
            Next::GiveUp
        } else {
            Next::Retry(backoff(attempt, p))
        };
    }
    Next::Done
}

/// Unix seconds of an HTTP date (`Sun, 06 Nov 1994 08:49:37 GMT`).
fn http_date(value: Option<&str>) -> Option<u64> {
    let t = jiff::fmt::rfc2822::parse(value?.trim()).ok()?;
    u64::try_from(t.timestamp().as_second()).ok()
}

/// The backoff before attempt `attempt + 1`: 1 s, 2 s, 4 s, ... (with the default policy).
pub fn backoff(attempt: u32, p: &Policy) -> Duration {
    p.backoff
        .saturating_mul(1u32 << attempt.saturating_sub(1).min(10))
        .min(p.max_wait)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn h(retry_after: Option<&str>, remaining: Option<&str>, reset: Option<&str>) -> Headers {
        Headers {
            retry_after: retry_after.map(Into::into),
            remaining: remaining.map(Into::into),
            reset: reset.map(Into::into),
        }
    }

    const NOW: u64 = 1_800_000_000;

    #[test]
    fn retry_after_as_a_date_is_a_time_to_wait_for() {
        let p = Policy::default();
        // NOW is 2027-01-15T08:00:00Z: ten seconds later, then an hour.
        let soon = h(Some("Fri, 15 Jan 2027 08:00:10 GMT"), None, None);
        assert_eq!(
            classify(429, &soon, "", 1, NOW, &p),
            Next::Retry(Duration::from_secs(10))
        );
        let later = h(Some("Fri, 15 Jan 2027 09:00:00 GMT"), None, None);
        assert!(matches!(
            classify(429, &later, "", 1, NOW, &p),
            Next::RateLimited(d) if d.contains("3600 s")
        ));
    }

    #[test]
    fn success_and_client_errors_are_handed_back() {
        let p = Policy::default();
        for status in [200, 201, 204, 304, 404, 422, 401] {
            assert_eq!(
                classify(status, &h(None, None, None), "", 1, NOW, &p),
                Next::Done
            );
        }
    }

    #[test]
    fn a_primary_rate_limit_waits_until_the_reset() {
        let p = Policy::default();
        let reset = (NOW + 7).to_string();
        let next = classify(
            403,
            &h(None, Some("0"), Some(&reset)),
            "API rate limit exceeded",
            1,
            NOW,
            &p,
        );
        assert_eq!(next, Next::Retry(Duration::from_secs(7)));
        // A reset already past still waits a second.
        let next = classify(429, &h(None, Some("0"), Some("1")), "", 1, NOW, &p);
        assert_eq!(next, Next::Retry(Duration::from_secs(1)));
    }

    #[test]
    fn a_reset_beyond_the_bound_is_reported_at_once() {
        let p = Policy::default();
        let reset = (NOW + 3_000).to_string();
        match classify(403, &h(None, Some("0"), Some(&reset)), "", 1, NOW, &p) {
            Next::RateLimited(why) => assert!(why.contains("3000 s"), "{why}"),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn retry_after_and_secondary_limits() {
        let p = Policy::default();
        assert_eq!(
            classify(429, &h(Some("2"), None, None), "", 1, NOW, &p),
            Next::Retry(Duration::from_secs(2))
        );
        assert_eq!(
            classify(
                403,
                &h(None, Some("12"), None),
                "You have exceeded a secondary rate limit",
                1,
                NOW,
                &p
            ),
            Next::Retry(Duration::from_secs(60))
        );
        assert_eq!(
            classify(429, &h(None, None, None), "", 2, NOW, &p),
            Next::Retry(Duration::from_secs(60))
        );
    }

    #[test]
    fn a_plain_forbidden_is_not_a_rate_limit() {
        let p = Policy::default();
        assert_eq!(
            classify(
                403,
                &h(None, Some("4999"), Some("1")),
                "Resource not accessible by integration",
                1,
                NOW,
                &p
            ),
            Next::Done
        );
    }

    #[test]
    fn server_errors_back_off_and_give_up_after_the_last_attempt() {
        let p = Policy::default();
        assert_eq!(
            classify(502, &Headers::default(), "", 1, NOW, &p),
            Next::Retry(Duration::from_secs(1))
        );
        assert_eq!(
            classify(500, &Headers::default(), "", 2, NOW, &p),
            Next::Retry(Duration::from_secs(2))
        );
        assert_eq!(
            classify(503, &Headers::default(), "", 3, NOW, &p),
            Next::Retry(Duration::from_secs(4))
        );
        assert_eq!(
            classify(503, &Headers::default(), "", 4, NOW, &p),
            Next::GiveUp
        );
        assert!(matches!(
            classify(429, &h(Some("1"), None, None), "", 4, NOW, &p),
            Next::RateLimited(_)
        ));
    }
}
