//! Joining one usage file's rows into the repository's usage: series
//! renumbered into the shared ids, and a series whose rows would span more
//! hours than its rows allow refused at its farthest row.

use crate::diag::{Code, Diagnostic, Span};
use crate::model::usage::UsageRows;
use crate::model::{SeriesKey, Usage};
use std::collections::HashMap;

/// Puts `part` (one file's rows) in place in `usage`, renumbering its
/// series: a series already known keeps its id, a new one gets the next.
/// `ids` is kept by the caller across parts. A series whose rows would
/// span more hours than it has rows allow (`model::usage::max_span_hours`)
/// is reported at its first row in this file, and those rows are not read.
pub fn join(
    usage: &mut Usage,
    part: UsageRows,
    ids: &mut HashMap<SeriesKey, u32>,
    diags: &mut Vec<Diagnostic>,
) {
    let mut map = Vec::with_capacity(part.series.len());
    let mut first_here: HashMap<u32, Span> = HashMap::new();
    let peaks = part.peaks;
    for (i, (key, span)) in part.series.into_iter().zip(part.series_spans).enumerate() {
        let id = match ids.get(&key) {
            Some(&id) => id,
            None => {
                let id = usage.push_series(key.clone(), span);
                ids.insert(key, id);
                id
            }
        };
        if let (Some(&peak), Some(slot)) = (peaks.get(i), usage.peaks.get_mut(id as usize))
            && peak.0 > slot.0
        {
            *slot = peak;
        }
        first_here.insert(id, span);
        map.push(id);
    }
    let mut samples = part.samples;
    for s in &mut samples {
        *s = s.with_series(map[s.series as usize]);
    }
    for r in usage.add_rows(&samples, &part.rows) {
        let key = &usage.series[r.series as usize];
        let first = first_here
            .get(&r.series)
            .copied()
            .unwrap_or(usage.series_spans[r.series as usize]);
        // The row farthest from the rest: here, or in a file read before.
        let far = r.farthest.and_then(|i| part.rows.get(i).copied());
        let when = crate::model::Timestamp::from_second(r.farthest_hour * 3600)
            .map(|t| {
                let file = if r.farthest.is_some() {
                    ""
                } else {
                    ", in a usage file read before this one"
                };
                format!(" (the row farthest from the rest is for {t}{file})")
            })
            .unwrap_or_default();
        let mut d = if r.over_budget {
            Diagnostic::new(
                Code::UsageBadRow,
                format!(
                    "usage of {}/{}/{} would span {} days with {} rows: capops holds usage hour by hour, and all series together may hold at most {} hours beyond a day per row (the 31 days a series with few rows may span), which the series read before have taken; this file's rows of the series were not read",
                    key.cluster,
                    key.pool,
                    key.team,
                    (r.hours + 23) / 24,
                    r.rows,
                    crate::model::usage::SPARSE_HOURS_BUDGET
                ),
            )
            .help("give sparse series a row at least once a day (a row of zeros where nothing was held), or drop series of a few scattered rows")
        } else {
            Diagnostic::new(
                Code::UsageBadRow,
                format!(
                    "usage of {}/{}/{} would span {} days with {} rows{when}: capops holds usage hour by hour, and a series may span at most a day per row (31 days at least); this file's rows of the series were not read",
                    key.cluster,
                    key.pool,
                    key.team,
                    (r.hours + 23) / 24,
                    r.rows
                ),
            )
            .help("check the series' timestamps (a mistyped year puts a row decades away from the rest)")
        };
        d = match far {
            Some(row) => d
                .at(row, "farthest from the rest")
                .related(first, "the series' first row in this file"),
            None => d.at(first, "series in this file"),
        };
        diags.push(d);
    }
}
