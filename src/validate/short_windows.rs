//! Windows and terms shorter than an hour, judged from a moment on.
//!
//! Capacity is held, counted and billed by the hour, and rendered to the
//! second: a request's window or a reservation's term under an hour holds
//! nothing a quota can count, and a term of half a second renders as a
//! reservation that ends as it starts. Like the capacity invariants, this is
//! judged from `at` on: a window that ended before `at` holds nothing any
//! more and is history, so a repository that kept one from before this rule
//! still validates. The comparison is exact to the nanosecond (59 minutes
//! and 59.9 seconds is short).

use crate::diag::{Code, Diagnostic};
use crate::model::*;

/// An hour, in nanoseconds.
const HOUR_NANOS: i128 = 3_600_000_000_000;

/// Every window or term that ends after `at` and lasts less than an hour
/// (an inverted one has its own error, from validation).
pub fn check(repo: &Repo, at: Timestamp) -> Vec<Diagnostic> {
    let mut diags = Vec::new();
    let requests = repo
        .requests
        .values()
        .filter_map(|r| r.spec.window.as_ref().map(|w| (w, "the request's window")));
    let terms = repo
        .reservations
        .values()
        .map(|r| (&r.spec.term, "the reservation's term"));
    for (window, what) in requests.chain(terms) {
        if let Some(d) = short(window, what, at) {
            diags.push(d);
        }
    }
    diags
}

fn short(window: &Window, what: &str, at: Timestamp) -> Option<Diagnostic> {
    let (start, end) = (window.start.value.0, window.end.value.0);
    let length = end.as_nanosecond() - start.as_nanosecond();
    if length <= 0 || length >= HOUR_NANOS || end <= at.0 {
        return None;
    }
    Some(
        Diagnostic::new(
            Code::WindowTooShort,
            format!(
                "{what} runs from {start} to {end}, {}: less than an hour",
                length_text(length)
            ),
        )
        .at(window.end.span, "less than an hour after the start")
        .related(window.start.span, "start")
        .help("capacity is held, counted and billed by the hour: make it at least an hour long (a date alone is midnight UTC)"),
    )
}

/// A length under an hour, in minutes and seconds as written.
fn length_text(nanos: i128) -> String {
    let minutes = nanos / 60_000_000_000;
    let rest = nanos % 60_000_000_000;
    let seconds = rest as f64 / 1e9;
    match (minutes, rest) {
        (0, _) => format!("{} s", trim(seconds)),
        (m, 0) => format!("{m} min"),
        (m, _) => format!("{m} min {} s", trim(seconds)),
    }
}

/// Seconds without trailing zeros, to the nanosecond.
fn trim(seconds: f64) -> String {
    let text = format!("{seconds:.9}");
    text.trim_end_matches('0').trim_end_matches('.').to_string()
}

#[cfg(test)]
#[path = "short_windows_tests.rs"]
mod tests;
