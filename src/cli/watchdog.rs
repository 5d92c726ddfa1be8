//! The watchdog that stops a policy running past its time.
//!
//! A condition or message is bounded in size before it runs, and in steps
//! as it runs, but one step can still do a great deal of work (two long
//! lists compared item by item), and minijinja cannot be interrupted. So
//! the binary keeps a thread that looks, every 100 ms, at what the
//! evaluating threads are doing ([`crate::policy::running`]): one subject's
//! evaluation still under way after the limit (10 s, or
//! `CAPOPS_POLICY_SECONDS`) ends the process with `policy-timeout` and exit
//! code 2, naming the condition or message and the subject. A gate that
//! cannot finish fails closed: nothing has been written yet (outputs,
//! comments and statuses come after the evaluation), and no decision is
//! given. Normal evaluations take microseconds.

use crate::policy::running;
use std::collections::HashMap;
use std::time::{Duration, Instant};

/// Seconds one subject's evaluation may take, unless
/// `CAPOPS_POLICY_SECONDS` says otherwise.
pub const DEFAULT_SECONDS: f64 = 10.0;

/// How often the watchdog looks.
const EVERY: Duration = Duration::from_millis(100);

/// The limit from `CAPOPS_POLICY_SECONDS` (a positive number of seconds),
/// else [`DEFAULT_SECONDS`].
pub fn limit(var: Option<&str>) -> Duration {
    let seconds = var
        .and_then(|v| v.trim().parse::<f64>().ok())
        .filter(|s| s.is_finite() && *s > 0.0 && *s <= 86_400.0)
        .unwrap_or(DEFAULT_SECONDS);
    Duration::from_secs_f64(seconds)
}

/// Starts the watchdog for the rest of the process.
pub fn start(limit: Duration) {
    running::enable();
    let spawned = std::thread::Builder::new()
        .name("policy-watchdog".into())
        .spawn(move || watch(limit));
    // Without a thread (none could be made) policies run unwatched, as
    // they did before: a hang is then the user's to stop.
    drop(spawned);
}

fn watch(limit: Duration) {
    let mut first_seen: HashMap<running::Busy, Instant> = HashMap::new();
    loop {
        std::thread::sleep(EVERY);
        let now = Instant::now();
        let busy = running::busy();
        first_seen.retain(|b, _| busy.contains(b));
        for b in busy {
            let since = *first_seen.entry(b).or_insert(now);
            if now.duration_since(since) >= limit {
                stop(&running::describe(b), limit);
            }
        }
    }
}

/// The diagnostic, written straight to standard error (the main thread
/// holds its lock while it works), and the exit.
fn stop(what: &str, limit: Duration) -> ! {
    let text = format!(
        "error[{}]: {} ran for more than {} s\n  help: a condition or message is doing far more work than a decision needs (a loop over a long list, `select('in', …)` between long lists, sorting inside a loop); simplify it in the base's policy, or raise CAPOPS_POLICY_SECONDS\n",
        crate::diag::Code::PolicyTimeout.as_str(),
        crate::output::escape::terminal(what),
        limit.as_secs_f64()
    );
    write_stderr(text.as_bytes());
    std::process::exit(crate::cli::common::Exit::Invalid.code());
}

#[cfg(unix)]
fn write_stderr(mut bytes: &[u8]) {
    while !bytes.is_empty() {
        // SAFETY: writes from a valid buffer of `bytes.len()` bytes to file
        // descriptor 2, which the process keeps open; no memory is shared.
        let n = unsafe { libc::write(2, bytes.as_ptr().cast(), bytes.len()) };
        if n <= 0 {
            return;
        }
        bytes = &bytes[n as usize..];
    }
}

#[cfg(not(unix))]
fn write_stderr(bytes: &[u8]) {
    eprint!("{}", String::from_utf8_lossy(bytes));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_limit_is_read_from_its_variable_and_checked() {
        assert_eq!(limit(None), Duration::from_secs(10));
        assert_eq!(limit(Some("2.5")), Duration::from_millis(2500));
        for bad in ["0", "-1", "NaN", "inf", "ten", "1e9"] {
            assert_eq!(limit(Some(bad)), Duration::from_secs(10), "{bad}");
        }
    }
}
