//! Tests of the capacity arithmetic: hours, timelines, sizes, over-commitment.

use super::*;

fn h(start: i64, end: i64) -> Hours {
    Hours { start, end }
}

#[test]
fn timelines_sum_overlapping_windows() {
    let t = Timeline::build([(h(0, 10), 4.0), (h(5, 15), 3.0), (h(20, 30), 8.0)]);
    assert_eq!(t.at(-1), 0.0);
    assert_eq!(t.at(0), 4.0);
    assert_eq!(t.at(7), 7.0);
    assert_eq!(t.at(12), 3.0);
    assert_eq!(t.at(17), 0.0);
    assert_eq!(t.peak(h(0, 20)), 7.0);
    assert_eq!(t.peak(h(11, 20)), 3.0);
    assert_eq!(t.peak(h(0, 40)), 8.0);
}

#[test]
fn overcommit_counts_hours_and_shortfall() {
    let t = Timeline::build([(h(0, 10), 4.0), (h(5, 15), 3.0)]);
    let o = overcommit(&t, 5.0, h(0, 20), 0);
    assert_eq!(
        o,
        Overcommit {
            hours: 5,
            shortfall: 2.0,
            first_hour: Some(5),
            peak_hour: Some(5),
        }
    );
    // Over from hour 5, most from hour 12 (a third request then).
    let three = Timeline::build([(h(0, 10), 4.0), (h(5, 15), 3.0), (h(12, 14), 9.0)]);
    let o = overcommit(&three, 5.0, h(0, 20), 0);
    assert_eq!(
        (o.first_hour, o.peak_hour, o.shortfall),
        (Some(5), Some(12), 7.0)
    );
    assert_eq!(overcommit(&t, 7.0, h(0, 20), 0).hours, 0);
    // Open-ended commitments are counted over the horizon.
    let open = Timeline::build([(Hours::ALWAYS, 9.0)]);
    let o = overcommit(&open, 8.0, Hours::ALWAYS, 100);
    assert_eq!(o.hours, OPEN_HORIZON_HOURS);
    assert_eq!(o.shortfall, 1.0);
}

#[test]
fn fractions_cancel_exactly() {
    let third = 1.0 / 7.0 * 3.0;
    let t = Timeline::build([(h(0, 10), third), (h(0, 5), third), (h(5, 10), third)]);
    assert_eq!(t.at(10), 0.0);
}

/// A change's swing: growth in size, in time, revival, release, transfer.
#[test]
fn a_fall_in_one_group_offsets_no_rise_in_another() {
    let h = |start, end| Hours { start, end };
    let a: Vec<(Hours, f64)> = vec![(h(200, 300), -100.0)];
    let b: Vec<(Hours, f64)> = vec![(h(200, 300), 50.0)];
    let c: Vec<(Hours, f64)> = vec![(h(200, 300), 50.0)];
    // Netted together it is 0; a release in `a` pays for neither gain.
    assert_eq!(
        swing(a.iter().chain(&b).chain(&c).cloned(), 100),
        (0.0, 0.0)
    );
    assert_eq!(clipped_rise([a.as_slice(), &b, &c], 100), 100.0);
    // Gains one after the other do not add up; within a group, they net.
    let later: Vec<(Hours, f64)> = vec![(h(300, 400), 70.0)];
    assert_eq!(clipped_rise([b.as_slice(), &later], 100), 70.0);
    let moved: Vec<(Hours, f64)> = vec![(h(200, 300), 30.0), (h(200, 300), -20.0)];
    assert_eq!(clipped_rise([moved.as_slice()], 100), 10.0);
    // Only falls: no rise; the past counts for nothing.
    assert_eq!(clipped_rise([a.as_slice()], 100), 0.0);
    assert_eq!(clipped_rise([b.as_slice()], 400), 0.0);
}

#[test]
fn swing_counts_what_is_held_in_hours_not_held_before() {
    let h = |start, end| Hours { start, end };
    let now = 100;
    // 40 -> 60 GPUs over the same future window: +20.
    assert_eq!(
        swing([(h(200, 300), 60.0), (h(200, 300), -40.0)], now),
        (20.0, 0.0)
    );
    // The same 24 GPUs moved later: gains 24 in the new hours, loses 24 in the old.
    assert_eq!(
        swing([(h(300, 400), 24.0), (h(200, 300), -24.0)], now),
        (24.0, 24.0)
    );
    // An expired request revived: the past window counts for nothing.
    assert_eq!(
        swing([(h(500, 600), 34.0), (h(0, 50), -34.0)], now),
        (34.0, 0.0)
    );
    // Shortened: only a loss, from the old end back to the new one.
    assert_eq!(
        swing([(h(150, 200), 8.0), (h(150, 400), -8.0)], now),
        (0.0, 8.0)
    );
    // Open-ended, now and before: nothing changes.
    assert_eq!(
        swing([(Hours::ALWAYS, 4.0), (Hours::ALWAYS, -4.0)], now),
        (0.0, 0.0)
    );
    assert_eq!(signed((24.0, 24.0)), 24.0);
    assert_eq!(signed((0.0, 8.0)), -8.0);
    assert_eq!(signed((0.0, 0.0)), 0.0);
}
