//! Short windows: judged from `at` on, exact below the second.

use super::*;
use crate::diag::Span;

fn ts(s: &str) -> Timestamp {
    s.parse().unwrap()
}

fn window(start: &str, end: &str) -> Window {
    Window {
        start: Spanned::new(ts(start), Span::default()),
        end: Spanned::new(ts(end), Span::default()),
    }
}

fn judged(start: &str, end: &str, at: &str) -> Option<String> {
    short(&window(start, end), "the window", ts(at)).map(|d| {
        assert_eq!(d.code, Code::WindowTooShort);
        d.message
    })
}

#[test]
fn a_window_still_to_end_under_an_hour_is_refused_with_its_length() {
    let m = judged(
        "2027-03-01T00:00:00Z",
        "2027-03-01T00:30:00Z",
        "2027-01-01T00:00:00Z",
    )
    .unwrap();
    assert!(m.contains("30 min: less than an hour"), "{m}");
    let m = judged(
        "2027-03-01T00:00:00Z",
        "2027-03-01T00:00:00.5Z",
        "2027-01-01T00:00:00Z",
    )
    .unwrap();
    // The fraction is shown, not rounded to an instant that ends as it starts.
    assert!(m.contains("to 2027-03-01T00:00:00.5Z, 0.5 s:"), "{m}");
}

#[test]
fn the_comparison_is_exact_below_the_second() {
    // 59 min 59.9 s: the whole seconds differ by an hour, the instants do not.
    let m = judged(
        "2027-03-01T00:00:00.5Z",
        "2027-03-01T01:00:00.4Z",
        "2027-01-01T00:00:00Z",
    )
    .unwrap();
    assert!(m.contains("59 min 59.9 s"), "{m}");
    assert_eq!(
        judged(
            "2027-03-01T00:00:00.5Z",
            "2027-03-01T01:00:00.5Z",
            "2027-01-01T00:00:00Z"
        ),
        None,
        "exactly an hour is long enough"
    );
}

#[test]
fn a_window_that_ended_before_at_is_history() {
    let (start, end) = ("2025-03-01T00:00:00Z", "2025-03-01T00:30:00Z");
    assert_eq!(judged(start, end, "2026-01-01T00:00:00Z"), None);
    // The end is exclusive: a window ending at `at` has ended.
    assert_eq!(judged(start, end, end), None);
    // One in force at `at` is still judged.
    assert!(judged(start, end, "2025-03-01T00:10:00Z").is_some());
}

#[test]
fn an_inverted_window_is_left_to_its_own_error() {
    assert_eq!(
        judged(
            "2027-03-01T01:00:00Z",
            "2027-03-01T00:30:00Z",
            "2026-01-01T00:00:00Z"
        ),
        None
    );
}
