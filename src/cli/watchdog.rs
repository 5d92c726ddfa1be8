//! The watchdog that stops a policy running past its time.
//!
//! A condition or message is bounded in size before it runs, and in steps
//! as it runs, but one step can still do a great deal of work (two long
//! lists compared item by item), and minijinja cannot be interrupted. So
//! the binary keeps a thread that looks, every 100 ms, at what the
//! evaluating threads are doing ([`crate::policy::running`]): one subject's
//! evaluation still under way after the limit (10 s, or
//! `CAPOPS_POLICY_SECONDS`) ends the process with `policy-timeout` and exit
//! code 2, naming the condition or message and the subject; so does a run
//! whose evaluations together take [`RUN_TIMES`] times that. A gate that
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

/// The limit from `CAPOPS_POLICY_SECONDS` (a positive number of seconds,
/// at most a day), else [`DEFAULT_SECONDS`]. Any other value is refused
/// with the reason: a limit the user set and capops ignored would be a
/// gate that silently runs under other terms than asked.
pub fn limit(var: Option<&str>) -> Result<Duration, String> {
    let Some(var) = var else {
        return Ok(Duration::from_secs_f64(DEFAULT_SECONDS));
    };
    match var.trim().parse::<f64>() {
        Ok(s) if s.is_finite() && s > 0.0 && s <= 86_400.0 => Ok(Duration::from_secs_f64(s)),
        _ => Err(format!(
            "error: CAPOPS_POLICY_SECONDS is `{}`, not a number of seconds\n  help: set it to a positive number of seconds of at most 86400 (a day), such as 30, or unset it for the default of {DEFAULT_SECONDS} s\n",
            crate::output::escape::terminal(var)
        )),
    }
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

/// How many times one subject's limit all of a run's evaluations together
/// may take: many subjects each just under the limit would otherwise hold
/// a gate for hours.
pub const RUN_TIMES: u32 = 30;

fn watch(limit: Duration) {
    let mut clock = Clock::new(limit);
    loop {
        std::thread::sleep(EVERY);
        match clock.tick(Instant::now(), &running::busy()) {
            None => {}
            Some(Over::Subject(b)) => stop(&running::describe(b), limit),
            Some(Over::Run(b)) => {
                let what = format!(
                    "the policy's evaluations together (the last at {})",
                    running::describe(b)
                );
                stop(&what, limit * RUN_TIMES);
            }
        }
    }
}

/// Which limit an evaluation went past.
#[derive(Debug, PartialEq, Eq)]
enum Over {
    /// This evaluation ran past one subject's limit.
    Subject(running::Busy),
    /// The run's evaluations together ran past the run's; this one was
    /// under way when they did.
    Run(running::Busy),
}

/// The watchdog's reckoning, the clock passed in.
struct Clock {
    limit: Duration,
    first_seen: HashMap<running::Busy, Instant>,
    /// Time during which some evaluation was under way, counted in ticks:
    /// a tick that finds one busy counts whole, so this over-counts by at
    /// most a tick per evaluation and never under-counts a long one.
    run_busy: Duration,
}

impl Clock {
    fn new(limit: Duration) -> Clock {
        Clock {
            limit,
            first_seen: HashMap::new(),
            run_busy: Duration::ZERO,
        }
    }

    /// One look, at `now`, at the evaluations under way.
    fn tick(&mut self, now: Instant, busy: &[running::Busy]) -> Option<Over> {
        self.first_seen.retain(|b, _| busy.contains(b));
        if !busy.is_empty() {
            self.run_busy += EVERY;
        }
        for &b in busy {
            let since = *self.first_seen.entry(b).or_insert(now);
            if now.duration_since(since) >= self.limit {
                return Some(Over::Subject(b));
            }
        }
        match busy.first() {
            Some(&b) if self.run_busy >= self.limit * RUN_TIMES => Some(Over::Run(b)),
            _ => None,
        }
    }
}

/// The diagnostic, written straight to standard error (the main thread
/// holds its lock while it works), and the exit.
fn stop(what: &str, limit: Duration) -> ! {
    let text = format!(
        "error[{}]: {} ran for more than {} s\n  help: a condition or message is doing far more work than a decision needs (a loop over a long list, `select('in', …)` between long lists, sorting inside a loop); simplify it in the base's policy, or raise CAPOPS_POLICY_SECONDS (one subject's limit; a whole run may take {RUN_TIMES} times it)\n",
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
        assert_eq!(limit(None), Ok(Duration::from_secs(10)));
        assert_eq!(limit(Some("2.5")), Ok(Duration::from_millis(2500)));
        assert_eq!(limit(Some(" 86400 ")), Ok(Duration::from_secs(86_400)));
        for bad in ["0", "-1", "NaN", "inf", "ten", "1e9", "86401", ""] {
            let e = limit(Some(bad)).unwrap_err();
            assert!(e.contains("CAPOPS_POLICY_SECONDS"), "{bad}: {e}");
        }
    }

    fn busy(slot: usize, generation: u64) -> running::Busy {
        running::Busy { slot, generation }
    }

    #[test]
    fn one_evaluation_past_its_limit_is_stopped() {
        let mut clock = Clock::new(Duration::from_secs(1));
        let t0 = Instant::now();
        let b = busy(0, 1);
        assert_eq!(clock.tick(t0, &[b]), None);
        assert_eq!(clock.tick(t0 + Duration::from_millis(900), &[b]), None);
        assert_eq!(
            clock.tick(t0 + Duration::from_millis(1000), &[b]),
            Some(Over::Subject(b))
        );
    }

    #[test]
    fn many_evaluations_each_under_the_limit_are_stopped_together() {
        // Each evaluation is seen once (each under a tick), so none is near
        // one subject's limit of 1 s; 30 s of them together are stopped.
        let mut clock = Clock::new(Duration::from_secs(1));
        let t0 = Instant::now();
        let ticks = (RUN_TIMES as u64 * 1000) / EVERY.as_millis() as u64;
        for i in 0..ticks - 1 {
            let now = t0 + EVERY * i as u32;
            assert_eq!(clock.tick(now, &[busy(0, 2 * i + 1)]), None, "tick {i}");
            // Idle ticks between them do not count.
            assert_eq!(clock.tick(now, &[]), None);
        }
        let last = busy(0, 2 * ticks + 1);
        assert_eq!(
            clock.tick(t0 + EVERY * ticks as u32, &[last]),
            Some(Over::Run(last))
        );
    }
}
