//! Tests of the approved future of a pool: what requests add to and take
//! away from the measured demand, and what a change to them moves.

use super::*;

fn req(team: &str, start: i64, end: i64, gpus: f64) -> PoolRequest {
    PoolRequest {
        name: format!("{team}-{start}"),
        team: team.into(),
        hours: Hours { start, end },
        gpus,
        preemptible: false,
        class: WorkloadClass::Training,
        base: None,
        measured_team: None,
    }
}

/// A team that held `gpus` every hour up to `e`.
fn flat(gpus: f64, e: i64) -> Held {
    Held::of([&Hourly::new(0, (0..e).map(|_| Some(gpus)))], e)
}

#[test]
fn new_requests_add_running_ones_end_and_none_counts_twice() {
    // Measurements end at hour 1000 (e = 1000). Team a held 40 GPUs then.
    let e = 1000;
    let rs = [
        // Running since hour 50, ends at 1020: in the measured level; -16 from 1020.
        req("a", 50, 1020, 16.0),
        // Merged, starts at 1030 for 20 hours: +256 over [1030, 1050).
        req("a", 1030, 1050, 256.0),
        // Ended before the forecast: changes nothing.
        req("a", 10, 990, 8.0),
        // Open-ended and running: already measured, never ends.
        req("a", 0, i64::MAX, 4.0),
        // Team b has no usage in the pool: its running request counts from e.
        req("b", 80, 1010, 5.0),
    ];
    let held = |t: &str| (t == "a").then(|| flat(40.0, e));
    let ap = Approved::new(&rs, e, held);
    // One that ends as the measurements end (at e) leaves at e: no hour
    // measured shows it gone.
    let mut at_e = rs.to_vec();
    at_e.push(req("a", 10, 1000, 8.0));
    assert_eq!(Approved::new(&at_e, e, held).at(1000), 5.0 - 8.0);
    assert_eq!(ap.at(1000), 5.0); // b's request only
    assert_eq!(ap.at(1010), 0.0); // b's request has ended
    assert_eq!(ap.at(1020), -16.0); // a's running request has ended
    assert_eq!(ap.at(1035), 256.0 - 16.0);
    assert_eq!(ap.at(1050), -16.0);
}

#[test]
fn a_change_to_a_running_request_moves_the_measured_level_by_its_difference() {
    // Measurements end at 1000; team a held 64 GPUs, its running request
    // in the base is 64 to hour 2000.
    let e = 1000;
    let held = |_: &str| Some(flat(64.0, e));
    let base = Some((
        Hours {
            start: 0,
            end: 2000,
        },
        64.0,
    ));
    // Grown to 96: 32 more from e, all 96 gone at its end.
    let grown = [PoolRequest {
        base,
        ..req("a", 0, 2000, 96.0)
    }];
    let ap = Approved::new(&grown, e, held);
    assert_eq!(ap.at(1000), 32.0);
    assert_eq!(ap.at(1999), 32.0);
    assert_eq!(ap.at(2000), -64.0);
    // Shrunk to 8: 56 leave at e, the other 8 at its end.
    let shrunk = [PoolRequest {
        base,
        ..req("a", 0, 2000, 8.0)
    }];
    let ap = Approved::new(&shrunk, e, held);
    assert_eq!(ap.at(1000), -56.0);
    assert_eq!(ap.at(2000), -64.0);
    // Shortened to end at 1500: the same 64 leave then.
    let shortened = [PoolRequest {
        base,
        ..req("a", 0, 1500, 64.0)
    }];
    let ap = Approved::new(&shortened, e, held);
    assert_eq!(ap.at(1499), 0.0);
    assert_eq!(ap.at(1500), -64.0);
    // Removed (a request of no GPUs with its base version): all 64 leave at e.
    let removed = [PoolRequest {
        base,
        ..req("a", 0, 2000, 0.0)
    }];
    let ap = Approved::new(&removed, e, held);
    assert_eq!(ap.at(1000), -64.0);
    // Postponed to start at 1200: the measured 64 leave at e and come
    // back over its new window.
    let postponed = [PoolRequest {
        base,
        ..req("a", 1200, 2000, 64.0)
    }];
    let ap = Approved::new(&postponed, e, held);
    assert_eq!(ap.at(1100), -64.0);
    assert_eq!(ap.at(1200), 0.0);
    assert_eq!(ap.at(2000), -64.0);
    // A shrink takes away only what the team held beyond what its
    // requests still allow: held 20, the request now 8: 12 leave.
    let ap = Approved::new(&shrunk, e, |_| Some(flat(20.0, e)));
    assert_eq!(ap.at(1000), -12.0);
    // Trimmed to 24 while the team held 16 of its 32: nothing leaves.
    let trimmed = [PoolRequest {
        base: Some((
            Hours {
                start: 0,
                end: 2000,
            },
            32.0,
        )),
        ..req("a", 0, 2000, 24.0)
    }];
    let ap = Approved::new(&trimmed, e, |_| Some(flat(16.0, e)));
    assert_eq!(ap.at(1000), 0.0);
    assert_eq!(ap.at(2000), -16.0);
    // Postponed a day, the team holding 150 of 280: 150 leave at e and
    // come back (the level measured, not the 280 asked for).
    let big = Some((
        Hours {
            start: 0,
            end: 2000,
        },
        280.0,
    ));
    let postponed = [PoolRequest {
        base: big,
        ..req("a", 1024, 2000, 280.0)
    }];
    let ap = Approved::new(&postponed, e, |_| Some(flat(150.0, e)));
    assert_eq!(ap.at(1000), -150.0);
    assert_eq!(ap.at(1024), 0.0);
    // Renamed: the base version gone, the same request added under
    // another name: nothing changes.
    let renamed = [
        PoolRequest {
            base: big,
            ..req("a", 0, 2000, 0.0)
        },
        PoolRequest {
            name: "a-new".into(),
            base: Some((
                Hours {
                    start: 0,
                    end: 2000,
                },
                0.0,
            )),
            ..req("a", 0, 2000, 280.0)
        },
    ];
    let ap = Approved::new(&renamed, e, |_| Some(flat(150.0, e)));
    assert_eq!(ap.at(1000), 0.0);
    assert_eq!(ap.at(2000), -150.0);
}

#[test]
fn an_ending_request_never_takes_away_more_than_its_team_held() {
    // Team a asked for 64 GPUs but held only 10 before the measurements ended.
    let rs = [req("a", 0, 2000, 64.0)];
    let ap = Approved::new(&rs, 1000, |_| Some(flat(10.0, 1000)));
    assert_eq!(ap.at(1500), 0.0);
    assert_eq!(ap.at(2000), -10.0);
}

#[test]
fn a_weekday_team_gives_back_its_daytime_gpus_though_the_measurements_end_at_night() {
    // Team wk holds 40 GPUs from 8:00 to 20:00 on weekdays and nothing
    // otherwise; the measurements end on a Sunday at midnight, when it
    // held 0 for two days. Its only request ends a week later: from then
    // on it takes away 40 at weekday noons and nothing at night. (The
    // mean of the last 24 hours, 0, took away nothing ever.)
    // Hour 0 of the epoch is a Thursday at 00:00; hour 96 a Monday.
    let monday = 96;
    let e = monday + 5 * 168;
    let held_at = |h: i64| {
        let day = (h - monday).rem_euclid(168) / 24;
        let hour = h.rem_euclid(24);
        if day < 5 && (8..20).contains(&hour) {
            40.0
        } else {
            0.0
        }
    };
    let series = Hourly::new(0, (0..e).map(|h| Some(held_at(h))));
    let rs = [req("wk", 0, e + 168, 40.0)];
    let ap = Approved::new(&rs, e, |_| Some(Held::of([&series], e)));
    // Before the request ends: nothing changes.
    assert_eq!(ap.at(e + 12), 0.0);
    // After: the Monday after at noon, and at 3:00.
    let next_monday = e + 168;
    assert_eq!(ap.at(next_monday + 12), -40.0);
    assert_eq!(ap.at(next_monday + 3), 0.0);
    assert_eq!(ap.at(next_monday + 5 * 24 + 12), 0.0, "a Saturday");
}

#[test]
fn a_request_started_just_before_the_measurements_ended_counts_what_they_missed() {
    // Team a held 158 GPUs; a 256-GPU request started two hours before
    // the end, and the measurements have not picked it up: it adds its
    // 256 from e and, when it ends, takes them away again.
    let e = 1000;
    let series = Hourly::new(0, (0..e).map(|_| Some(158.0)));
    let rs = [req("a", e - 2, e + 100, 256.0)];
    let ap = Approved::new(&rs, e, |_| Some(Held::of([&series], e)));
    assert_eq!(ap.at(e), 256.0);
    assert_eq!(ap.at(e + 100), 0.0);
    // Picked up (the team rose to 414 after the start): measured, so it
    // adds nothing and gives its 256 back at its end.
    let series = Hourly::new(
        0,
        (0..e).map(|h| Some(if h >= e - 2 { 414.0 } else { 158.0 })),
    );
    let ap = Approved::new(&rs, e, |_| Some(Held::of([&series], e)));
    assert_eq!(ap.at(e), 0.0);
    assert_eq!(ap.at(e + 100), -256.0);
    // Half picked up: half each way.
    let series = Hourly::new(
        0,
        (0..e).map(|h| Some(if h >= e - 2 { 286.0 } else { 158.0 })),
    );
    let ap = Approved::new(&rs, e, |_| Some(Held::of([&series], e)));
    assert_eq!(ap.at(e), 128.0);
    // Two 100-GPU requests starting together, and the team rose by 100:
    // one rise, shared, so 100 is still to come.
    let series = Hourly::new(
        0,
        (0..e).map(|h| Some(if h >= e - 2 { 258.0 } else { 158.0 })),
    );
    let rs = [req("a", e - 2, e + 100, 100.0), req("b", 0, 1, 0.0), {
        let mut r = req("a", e - 2, e + 100, 100.0);
        r.name = "a-second".into();
        r
    }];
    let ap = Approved::new(&rs, e, |_| Some(Held::of([&series], e)));
    assert_eq!(ap.at(e), 100.0);
}

#[test]
fn a_pool_without_history_is_what_its_requests_hold() {
    let rs = [req("a", 0, 10, 8.0), req("b", 5, 20, 4.0)];
    let t = held(&rs);
    assert_eq!(
        (t.at(0), t.at(7), t.at(15), t.at(20)),
        (8.0, 12.0, 4.0, 0.0)
    );
}

#[test]
fn a_future_request_shrunk_leaves_in_full_and_a_handoff_in_the_pool_moves_nothing() {
    let e = 1000;
    let held = |t: &str| (t == "a").then(|| flat(150.0, e));
    // Team a holds 150 of a running 280 and has a 256-GPU request from
    // 1500. Shrinking that one to 8: the 248 it gives up were never
    // measured, so they leave in full (the running request's unused room
    // does not keep them).
    let running = req("a", 0, 3000, 280.0);
    let future = PoolRequest {
        base: Some((
            Hours {
                start: 1500,
                end: 2000,
            },
            256.0,
        )),
        ..req("a", 1500, 2000, 8.0)
    };
    let ap = Approved::new(&[running.clone(), future], e, held);
    assert_eq!(ap.at(1600), 8.0);
    // The running request handed to team b in the same pool: the same work,
    // still measured under a: nothing moves.
    let handed = PoolRequest {
        team: "b".into(),
        measured_team: Some("a".into()),
        ..running.clone()
    };
    let ap = Approved::new(&[handed], e, held);
    assert_eq!(ap.at(1000), 0.0);
    assert_eq!(ap.at(3000), -150.0);
}

#[test]
fn work_counted_in_full_never_also_holds_up_the_measured_level() {
    // Team a held 150 GPUs under a running 280-GPU request to hour 5000.
    let e = 1000;
    let held = |_: &str| Some(flat(150.0, e));
    let running = Hours {
        start: 0,
        end: 5000,
    };
    let gone = |name: &str| PoolRequest {
        name: name.into(),
        gpus: 0.0,
        base: Some((running, 280.0)),
        ..req("a", 0, 5000, 0.0)
    };
    let new = |name: &str, start: i64, gpus: f64| PoolRequest {
        name: name.into(),
        base: Some((Hours { start, end: 5000 }, 0.0)),
        ..req("a", start, 5000, gpus)
    };
    // Re-filed from today under a new name at 200: netted with the running
    // work it replaces (as a trim to 200 would be), not 150 + 200.
    let refiled = [gone("base"), new("v2", e, 200.0)];
    assert_eq!(Approved::new(&refiled, e, held).at(1500), 0.0);
    // Re-filed at 100: 50 of the measured 150 leave (as a trim to 100).
    let smaller = [gone("base"), new("v2", e, 100.0)];
    assert_eq!(Approved::new(&smaller, e, held).at(1500), -50.0);
    // Removed, beside an untouched future request of 200 from hour 2000:
    // the measured 150 leave at e, and the future request adds its 200 in
    // full; it does not hold the measured level up as well.
    let mut later = req("a", 2000, 3000, 200.0);
    later.name = "later".into();
    let removed = [gone("base"), later];
    let ap = Approved::new(&removed, e, held);
    assert_eq!(ap.at(1500), -150.0);
    assert_eq!(ap.at(2500), 200.0 - 150.0);
    // A new run dated back an hour beside a running request trimmed to
    // 152 (still above what the team held): new work, counted in full.
    let trimmed = PoolRequest {
        base: Some((running, 280.0)),
        ..req("a", 0, 5000, 152.0)
    };
    let beside = [trimmed.clone(), new("run", e - 1, 128.0)];
    assert_eq!(Approved::new(&beside, e, held).at(1500), 128.0);
    // Deleting a 1-GPU running request beside the trim nets only 1 GPU of
    // a new 128-GPU run: the other 127 are new work.
    let tiny = PoolRequest {
        name: "tiny".into(),
        gpus: 0.0,
        base: Some((running, 1.0)),
        ..req("a", 0, 5000, 0.0)
    };
    let with_tiny = [trimmed, tiny, new("run", 2000, 128.0)];
    let ap = Approved::new(&with_tiny, e, held);
    assert_eq!(ap.at(1500), 0.0);
    assert_eq!(ap.at(2500), 127.0);
}
