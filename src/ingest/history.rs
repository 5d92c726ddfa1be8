//! The committed usage history and how pulled rows join it.
//!
//! Pulled rows go to one file per cluster and month,
//! `usage/<cluster>.<YYYY-MM>.csv`, so files stay bounded (capops reads files
//! up to 16 MiB; GitHub refuses files over 100 MB) and a daily pull request
//! touches the current month's file. Without `--rewrite-from` rows are
//! appended after the bytes already there, so a committed row is never
//! touched (not even reformatted) and the diff of a pull only adds lines. With
//! `--rewrite-from T` the cluster's rows at or after T are dropped from its
//! monthly files from T's month on and the pulled ones take their place;
//! every other line stays as it was. New rows are sorted by hour, pool and
//! team, with two decimals; an empty cell is a gap.

use super::rows::Row;
use crate::model::Timestamp;
use crate::model::usage::USAGE_COLUMNS;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write;

/// One usage CSV file of the repository: its repository-relative path and text.
#[derive(Clone, Copy, Debug)]
pub struct UsageFile<'a> {
    pub path: &'a str,
    pub text: &'a str,
}

/// `(year, month)` of an hour, in UTC.
fn month(hour: i64) -> (i16, i8) {
    Timestamp::from_second(hour * 3600)
        .map(|t| {
            let d = t.date();
            (d.year(), d.month())
        })
        .unwrap_or((1970, 1))
}

/// The file of a cluster's rows for the month of `hour`: `usage/<cluster>.<YYYY-MM>.csv`.
pub fn file_for(cluster: &str, hour: i64) -> String {
    let (y, m) = month(hour);
    format!("usage/{cluster}.{y:04}-{m:02}.csv")
}

/// The month of one of `cluster`'s monthly files, if `path` is one.
fn month_of_file(path: &str, cluster: &str) -> Option<(i16, i8)> {
    let rest = path
        .strip_prefix("usage/")?
        .strip_prefix(cluster)?
        .strip_prefix('.')?
        .strip_suffix(".csv")?;
    let (y, m) = rest.split_once('-')?;
    if y.len() != 4 || m.len() != 2 {
        return None;
    }
    Some((y.parse().ok()?, m.parse().ok()?))
}

/// The files a pull writes for a cluster, with the rows each gets. Under
/// `--rewrite-from`, the cluster's monthly files from that month on are
/// included even without new rows: their rows from that hour on go.
pub fn targets(
    files: &[UsageFile<'_>],
    cluster: &str,
    rows: &[Row],
    rewrite_from: Option<i64>,
) -> BTreeMap<String, Vec<Row>> {
    let mut out: BTreeMap<String, Vec<Row>> = BTreeMap::new();
    for r in rows {
        out.entry(file_for(cluster, r.hour))
            .or_default()
            .push(r.clone());
    }
    if let Some(from) = rewrite_from {
        let first = month(from);
        for f in files {
            if month_of_file(f.path, cluster).is_some_and(|m| m >= first) {
                out.entry(f.path.to_string()).or_default();
            }
        }
    }
    out
}

/// One data row as committed: where it is and what it says.
pub(crate) struct Record<'a> {
    /// Byte range of the row, its line end included.
    pub bytes: (usize, usize),
    pub hour: Option<i64>,
    pub cluster: &'a str,
    pub pool: &'a str,
    pub team: &'a str,
    pub allocated: Option<f64>,
    pub used: Option<f64>,
}

/// The data rows of a usage file (rows that do not parse have `hour: None`),
/// and where the first one starts.
pub(crate) fn records(text: &str) -> (usize, Vec<Record<'_>>) {
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(true)
        .flexible(true)
        .from_reader(text.as_bytes());
    let mut starts = Vec::new();
    let mut record = csv::StringRecord::new();
    while let Ok(true) = reader.read_record(&mut record) {
        if let Some(p) = record.position() {
            starts.push(p.byte() as usize);
        }
    }
    let header_end = starts.first().copied().unwrap_or(text.len());
    let mut out = Vec::with_capacity(starts.len());
    for (k, &s) in starts.iter().enumerate() {
        let e = starts.get(k + 1).copied().unwrap_or(text.len());
        let line = text[s..e].trim_end_matches(['\n', '\r']);
        let mut cells = cells_of(line).into_iter();
        let mut cell = || cells.next().unwrap_or("");
        // A number or time read as the csv reader reads it: quotes anywhere
        // in the cell are not part of it (`"3"6` is 36).
        fn bare(c: &str) -> std::borrow::Cow<'_, str> {
            if c.contains('"') {
                c.replace('"', "").trim().to_string().into()
            } else {
                c.into()
            }
        }
        let hour = bare(cell())
            .parse::<Timestamp>()
            .ok()
            .map(|t| t.hour_index());
        let (cluster, pool, team) = (cell(), cell(), cell());
        let allocated = bare(cell()).parse::<f64>().ok();
        let used = bare(cell()).parse::<f64>().ok();
        out.push(Record {
            bytes: (s, e),
            hour,
            cluster,
            pool,
            team,
            allocated,
            used,
        });
    }
    (header_end, out)
}

/// The cells of a row, trimmed, a quoted cell without its quotes (as the
/// usage loader reads it: `"2026-11-22T00:00:00Z",gpu,…` is the same row as
/// the one without quotes). A comma inside quotes is part of its cell; a
/// doubled quote inside one is left doubled (no name or number holds one).
fn cells_of(line: &str) -> Vec<&str> {
    fn unquote(c: &str) -> &str {
        let c = c.trim();
        c.strip_prefix('"')
            .and_then(|c| c.strip_suffix('"'))
            .map_or(c, str::trim)
    }
    if !line.contains('"') {
        return line.split(',').map(str::trim).collect();
    }
    let mut out = Vec::new();
    let (mut start, mut quoted) = (0, false);
    for (i, b) in line.bytes().enumerate() {
        match b {
            b'"' => quoted = !quoted,
            b',' if !quoted => {
                out.push(unquote(&line[start..i]));
                start = i + 1;
            }
            _ => {}
        }
    }
    out.push(unquote(&line[start..]));
    out
}

/// What the committed history holds for one cluster (rows before `before`, if given).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Committed {
    /// The last hour of any row of the cluster, gaps included.
    pub last_hour: Option<i64>,
    /// `(pool, team)` series whose last row had GPUs allocated.
    pub active: BTreeSet<(String, String)>,
}

/// Reads the committed history of every cluster from every usage file, in one pass.
pub fn committed(files: &[UsageFile<'_>], before: Option<i64>) -> BTreeMap<String, Committed> {
    type Last<'a> = BTreeMap<(&'a str, &'a str), (i64, Option<f64>)>;
    let mut state: BTreeMap<&str, (Option<i64>, Last<'_>)> = BTreeMap::new();
    for f in files {
        let (_, recs) = records(f.text);
        for r in recs {
            let Some(h) = r.hour else { continue };
            if before.is_some_and(|b| h >= b) {
                continue;
            }
            let (last_hour, last) = state.entry(r.cluster).or_default();
            *last_hour = Some(last_hour.map_or(h, |x| x.max(h)));
            let slot = last.entry((r.pool, r.team)).or_insert((h, r.allocated));
            if h >= slot.0 {
                *slot = (h, r.allocated);
            }
        }
    }
    state
        .into_iter()
        .map(|(cluster, (last_hour, last))| {
            let active = last
                .into_iter()
                .filter(|(_, (_, a))| a.is_some_and(|a| a > 0.0))
                .map(|((p, t), _)| (p.to_string(), t.to_string()))
                .collect();
            (cluster.to_string(), Committed { last_hour, active })
        })
        .collect()
}

/// Files other than the cluster's monthly files from `from`'s month on that
/// hold rows of `cluster` at or after `from`: `--rewrite-from` cannot rewrite them.
pub fn rewrite_conflicts(files: &[UsageFile<'_>], cluster: &str, from: i64) -> Vec<String> {
    let first = month(from);
    files
        .iter()
        .filter(|f| month_of_file(f.path, cluster).is_none_or(|m| m < first))
        .filter(|f| {
            records(f.text)
                .1
                .iter()
                .any(|r| r.cluster == cluster && r.hour.is_some_and(|h| h >= from))
        })
        .map(|f| f.path.to_string())
        .collect()
}

/// The result of merging pulled rows into a file.
#[derive(Clone, Debug, PartialEq)]
pub struct Merged {
    pub text: String,
    /// Committed rows dropped by `--rewrite-from`.
    pub removed: usize,
    pub added: usize,
}

/// Joins `rows` (of `cluster`) to a file's text (None: the file does not exist yet).
pub fn merge(
    existing: Option<&str>,
    cluster: &str,
    rows: &[Row],
    rewrite_from: Option<i64>,
) -> Merged {
    let mut removed = 0;
    let mut text = match existing {
        None | Some("") => format!("{}\n", USAGE_COLUMNS.join(",")),
        Some(old) => match rewrite_from {
            None => old.to_string(),
            Some(from) => {
                let (header_end, recs) = records(old);
                let mut kept = String::with_capacity(old.len());
                kept.push_str(&old[..header_end]);
                for r in &recs {
                    if r.cluster == cluster && r.hour.is_some_and(|h| h >= from) {
                        removed += 1;
                        continue;
                    }
                    let line = &old[r.bytes.0..r.bytes.1];
                    kept.push_str(line);
                    if !line.ends_with('\n') {
                        kept.push('\n');
                    }
                }
                kept
            }
        },
    };
    if !text.ends_with('\n') {
        text.push('\n');
    }
    let mut sorted: Vec<&Row> = rows.iter().collect();
    sorted.sort_by(|a, b| (a.hour, &a.pool, &a.team).cmp(&(b.hour, &b.pool, &b.team)));
    for r in &sorted {
        write_row(&mut text, cluster, r);
    }
    Merged {
        text,
        removed,
        added: sorted.len(),
    }
}

/// One CSV line: RFC 3339 hour, names, two decimals or empty for a gap.
pub fn write_row(out: &mut String, cluster: &str, r: &Row) {
    let at = Timestamp::from_second(r.hour * 3600)
        .map(|t| t.to_string())
        .unwrap_or_default();
    let cell = |v: Option<f64>| v.map(|v| format!("{v:.2}")).unwrap_or_default();
    let _ = writeln!(
        out,
        "{at},{cluster},{},{},{},{}",
        r.pool,
        r.team,
        cell(r.allocated),
        cell(r.used)
    );
}
