//! Reading usage files: rows, spans, series and the joining of files read
//! apart.

use super::*;
use crate::load::usage_join::join;
use crate::model::Usage;

#[test]
fn reads_samples_with_gaps_and_reports_bad_rows() {
    let text = "timestamp,cluster,pool,team,allocated_gpus,used_gpus\n\
                2026-11-01T00:00:00Z,c,p,t,8,4.5\n\
                2026-11-01T01:30:00Z,c,p,t,,\n\
                2026-11-01T02:00:00Z,c,p,t,eight,1\n\
                2026-02-30T02:00:00Z,c,p,t,1,1\n\
                2026-11-01T03:00:00Z,c,p,u,2,3\n";
    let mut usage = UsageRows::default();
    let mut diags = Vec::new();
    read_csv(text, FileId(0), &mut usage, &mut diags);
    assert_eq!(usage.series.len(), 2);
    assert_eq!(usage.samples.len(), 3);
    assert_eq!(usage.samples[0].used(), Some(4.5));
    assert_eq!(usage.samples[1].allocated(), None);
    assert_eq!(usage.samples[1].at().to_string(), "2026-11-01T01:00:00Z");
    let codes: Vec<_> = diags.iter().map(|d| d.code.as_str()).collect();
    assert_eq!(
        codes,
        vec![
            "usage-bad-row",
            "usage-bad-row",
            "usage-used-exceeds-allocated"
        ]
    );
    // `eight` is at line 4, column 28.
    let off = text.find("eight").unwrap() as u32;
    assert_eq!(diags[0].span().unwrap().start, off);
}

/// Rows of one hour share a parsed timestamp; a different text is
/// parsed anew, and a bad one after a good one is still refused.
#[test]
fn repeated_timestamps_read_as_their_hour_and_keys_tell_series_apart() {
    let text = "timestamp,cluster,pool,team,allocated_gpus,used_gpus\n\
                2026-11-01T05:59:59Z,c,p,t,1,1\n\
                2026-11-01T05:59:59Z,c,p,u,2,2\n\
                2026-11-01T05:59:59Z,c,pt,,3,3\n\
                2026-11-01T05:59:59+01:00,c,p,t,4,4\n\
                2126-11-01T05:59:59Z,c,p,t,5,5\n\
                2026-11-01T05:59:59Z,c,p,u,6,6\n";
    let mut usage = UsageRows::default();
    let mut diags = Vec::new();
    read_csv(text, FileId(0), &mut usage, &mut diags);
    let rows: Vec<(u32, String, Option<f64>)> = usage
        .samples
        .iter()
        .map(|s| (s.series, s.at().to_string(), s.allocated()))
        .collect();
    let h = |x: &str| x.to_string();
    assert_eq!(
        rows,
        vec![
            (0, h("2026-11-01T05:00:00Z"), Some(1.0)),
            (1, h("2026-11-01T05:00:00Z"), Some(2.0)),
            (2, h("2026-11-01T05:00:00Z"), Some(3.0)),
            (0, h("2026-11-01T04:00:00Z"), Some(4.0)),
            (1, h("2026-11-01T05:00:00Z"), Some(6.0)),
        ]
    );
    // `c,p,t` and `c,pt,` are two series, not one.
    assert_eq!(usage.series[2].pool, "pt");
    assert_eq!(usage.series[2].team, "");
    assert_eq!(diags.len(), 1, "{diags:?}");
    assert!(diags[0].message.contains("outside the years"));
    assert_ne!(key_hash("c", "p", "t"), key_hash("c", "pt", ""));
}

#[test]
fn rejects_a_wrong_header() {
    let mut usage = UsageRows::default();
    let mut diags = Vec::new();
    read_csv("time,gpus\n1,2\n", FileId(0), &mut usage, &mut diags);
    assert_eq!(diags[0].code, Code::UsageBadHeader);
    assert!(usage.samples.is_empty());
    let span = diags[0].span().unwrap();
    assert_eq!((span.start, span.end), (0, 9));
    // Blank lines before the header: the span is the header's line.
    for text in ["\n\ntime,gpus\n1,2\n", "\r\n\r\ntime,gpus\r\n1,2\r\n"] {
        let mut diags = Vec::new();
        read_csv(text, FileId(0), &mut UsageRows::default(), &mut diags);
        let span = diags[0].span().unwrap();
        let at = text.find('t').unwrap();
        assert_eq!(
            (span.start as usize, span.end as usize),
            (at, at + 9),
            "{text:?}"
        );
    }
}

/// Files read apart and joined give the series ids, first spans and
/// hours that putting their rows in place one after the other gives.
#[test]
fn joined_parts_equal_one_sequential_read() {
    let files = [
        "timestamp,cluster,pool,team,allocated_gpus,used_gpus\n\
         2026-11-01T00:00:00Z,c,p,a,8,4\n\
         2026-11-01T00:00:00Z,c,p,b,2,1\n",
        "timestamp,cluster,pool,team,allocated_gpus,used_gpus\n\
         2026-11-01T01:00:00Z,c,p,c,3,3\n\
         2026-11-01T01:00:00Z,c,p,a,8,5\n\
         2026-11-01T00:00:00Z,c,p,a,7,4\n\
         2026-11-01T02:00:00Z,d,p,b,1,\n",
    ];
    let mut sequential = UsageRows::default();
    let mut diags = Vec::new();
    for (i, text) in files.iter().enumerate() {
        read_csv(text, FileId(i as u32), &mut sequential, &mut diags);
    }
    let mut joined = Usage::default();
    let mut ids = HashMap::new();
    for (i, text) in files.iter().enumerate() {
        let mut part = UsageRows::default();
        read_csv(text, FileId(i as u32), &mut part, &mut diags);
        join(&mut joined, part, &mut ids, &mut diags);
    }
    assert!(diags.is_empty());
    assert_eq!(joined.series, sequential.series);
    assert_eq!(joined.series_spans, sequential.series_spans);
    assert_eq!(joined.series.len(), 4);
    let mut one = Usage::default();
    for (k, s) in sequential.series.iter().zip(&sequential.series_spans) {
        one.push_series(k.clone(), *s);
    }
    one.add_rows(&sequential.samples, &sequential.rows);
    assert_eq!(joined.grids, one.grids);
    let a = &joined.grids[0];
    assert_eq!(
        a.allocated.get(a.allocated.start),
        Some(7.0),
        "the later row of hour 0 stands"
    );
    assert_eq!(
        (a.conflicts, a.allocated.get(a.allocated.start + 1)),
        (1, Some(8.0))
    );
    assert_eq!(joined.row_count(), 5);
}
