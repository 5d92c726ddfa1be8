//! Reading usage history CSV files (`usage/*.csv`).
//!
//! Columns: `timestamp,cluster,pool,team,allocated_gpus,used_gpus`. Timestamps
//! are RFC 3339 and are read as the hour they fall in. An empty number cell is
//! a gap. Malformed rows are reported and skipped; the rest of the file is kept.

use crate::diag::{Code, Diagnostic, FileId, Span};
use crate::model::usage::USAGE_COLUMNS;
use crate::model::usage::{IntHash, UsageRows};
use crate::model::{SeriesKey, Timestamp, UsageSample};
use std::collections::HashMap;

/// Appends the rows of one CSV file to `usage`.
///
/// A file without quotes and carriage returns (what `capops usage pull`
/// writes) is split at its newlines and commas directly, which reads the
/// same rows, cells and byte offsets as the CSV reader (blank lines are
/// skipped by both; tested on random files); any other file goes through
/// the CSV reader.
pub fn read_csv(text: &str, file: FileId, usage: &mut UsageRows, diags: &mut Vec<Diagnostic>) {
    let plain = !has_quote_or_cr(text.as_bytes());
    read(text, file, usage, diags, plain);
}

fn read(text: &str, file: FileId, usage: &mut UsageRows, diags: &mut Vec<Diagnostic>, plain: bool) {
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(true)
        .flexible(true)
        .from_reader(text.as_bytes());
    let header_ok = match reader.headers() {
        Ok(h) => {
            let got: Vec<&str> = h.iter().map(str::trim).collect();
            if got != USAGE_COLUMNS {
                diags.push(
                    Diagnostic::new(
                        Code::UsageBadHeader,
                        format!(
                            "usage file header is `{}`, expected `{}`",
                            got.join(","),
                            USAGE_COLUMNS.join(",")
                        ),
                    )
                    .at(header_span(text, file), "header")
                    .help("usage files start with the header timestamp,cluster,pool,team,allocated_gpus,used_gpus"),
                );
                false
            } else {
                true
            }
        }
        Err(e) => {
            diags.push(
                Diagnostic::new(
                    Code::UsageBadHeader,
                    format!("cannot read the CSV header: {e}"),
                )
                .at(Span::file_start(file), "here"),
            );
            false
        }
    };
    if !header_ok {
        return;
    }
    let mut rows = RowReader {
        file,
        ids: HashMap::default(),
        last_at: None,
        last_series: None,
        usage,
        diags,
        budget: Budget::about("problems with its rows"),
    };
    for (i, k) in rows.usage.series.iter().enumerate() {
        rows.ids
            .entry(key_hash(&k.cluster, &k.pool, &k.team))
            .or_default()
            .push(i as u32);
    }
    // Room for every row at once (the rows vector would otherwise double
    // and copy itself a dozen times for a large file): at most a row per
    // line, and a row that is kept holds a timestamp and five commas, 16
    // bytes at least, so a file of blank lines reserves little.
    let lines = memchr::memchr_iter(b'\n', text.as_bytes()).count() + 1;
    rows.usage.samples.reserve(lines.min(text.len() / 16 + 1));
    rows.usage.rows.reserve(lines.min(text.len() / 16 + 1));
    if plain {
        // A comma ends a cell, a newline (or the end of the text) a row;
        // an empty row is a blank line, skipped.
        let start = (reader.position().byte() as usize).min(text.len());
        let bytes = text.as_bytes();
        let mut cells = [""; 6];
        let mut spans = [(0usize, 0usize); 6];
        let (mut row_start, mut from, mut n) = (start, start, 0usize);
        // Every comma and newline (a vectorized search), then the end.
        let breaks = memchr::memchr2_iter(b',', b'\n', &bytes[start..])
            .map(|k| (start + k, bytes[start + k]))
            .chain([(bytes.len(), b'\n')]);
        for (i, b) in breaks {
            if b == b'\n' && i == row_start {
                (row_start, from) = (i + 1, i + 1);
                continue;
            }
            if n < 6 {
                // Commas and newlines are one byte: `from..i` are whole characters.
                cells[n] = &text[from..i];
                spans[n] = (from, i);
            }
            n += 1;
            from = i + 1;
            if b == b'\n' {
                if n == USAGE_COLUMNS.len() {
                    rows.row(&cells, |i| Span::new(file, spans[i].0, spans[i].1));
                } else {
                    rows.wrong_count(n, row_start);
                }
                (row_start, n) = (i + 1, 0);
            }
        }
        rows.finish();
        return;
    }
    let mut record = csv::StringRecord::new();
    loop {
        match reader.read_record(&mut record) {
            Ok(false) => break,
            Ok(true) => {}
            Err(e) => {
                let offset = e.position().map(|p| p.byte() as usize).unwrap_or(0);
                rows.push(
                    Diagnostic::new(Code::UsageBadRow, format!("malformed CSV: {e}"))
                        .at(Span::new(file, offset, offset), "here"),
                );
                break;
            }
        }
        // The reader's position is where it started looking for the record,
        // before the blank lines it skipped.
        let from = record.position().map(|p| p.byte() as usize).unwrap_or(0);
        let row_start = from
            + text
                .get(from..)
                .map_or(0, |t| t.len() - t.trim_start_matches(['\r', '\n']).len());
        // Usage cells are plain values: a line break inside one is a quoted
        // cell over several lines, or a quote that was opened and not
        // closed, which swallowed the lines after it.
        if record.iter().any(|c| c.contains('\n')) {
            let lines = record
                .iter()
                .map(|c| c.matches('\n').count())
                .sum::<usize>();
            let end = (reader.position().byte() as usize).clamp(row_start, text.len());
            let raw = text.get(row_start..end).unwrap_or("");
            let (open, closed) = open_quote(raw);
            let quote = row_start + open;
            let (message, help) = if closed {
                (
                    format!(
                        "a quoted cell holds a line break: it spans {} lines of the file",
                        lines + 1
                    ),
                    "write each row on one line: usage cells are plain values",
                )
            } else {
                (
                    format!(
                        "a quote in this row is not closed: the {lines} line{} after it were read as one cell",
                        if lines == 1 { "" } else { "s" }
                    ),
                    "close the quote, or remove it: usage cells are plain values",
                )
            };
            rows.push(
                Diagnostic::new(Code::UsageBadRow, message)
                    .at(Span::new(file, quote, quote + 1), "this quote")
                    .help(help),
            );
            continue;
        }
        if record.len() != USAGE_COLUMNS.len() {
            rows.wrong_count(record.len(), row_start);
            continue;
        }
        let cells: [&str; 6] = std::array::from_fn(|i| &record[i]);
        rows.row(&cells, |i| match record.range(i) {
            Some(r) => Span::new(file, row_start + r.start + i, row_start + r.end + i),
            None => Span::new(file, row_start, row_start),
        });
    }
    rows.finish();
}

/// In a record's raw text, where the quoted cell that holds the first line
/// break opens, and whether every quoted cell closes: a `"` opens a quoted
/// cell only at the start of a cell (elsewhere it is a character of the
/// cell), and `""` inside one is a quote.
fn open_quote(raw: &str) -> (usize, bool) {
    let (mut quoted, mut cell_start, mut opened, mut first) = (false, true, 0, None);
    let mut bytes = raw.bytes().enumerate().peekable();
    while let Some((i, b)) = bytes.next() {
        if quoted {
            match b {
                b'"' if bytes.peek().is_some_and(|(_, n)| *n == b'"') => {
                    bytes.next();
                }
                b'"' => quoted = false,
                b'\n' => {
                    first.get_or_insert(opened);
                }
                _ => {}
            }
            continue;
        }
        match b {
            b'"' if cell_start => {
                quoted = true;
                opened = i;
            }
            b',' => cell_start = true,
            _ => cell_start = false,
        }
    }
    (first.unwrap_or(opened), !quoted)
}

/// What reading rows keeps from one row to the next.
struct RowReader<'u> {
    file: FileId,
    /// Series ids by the hash of their key, so that a row finds its series
    /// without allocating the key's three texts.
    ids: HashMap<u64, Vec<u32>, IntHash>,
    /// Rows of one hour come together (as `usage pull` writes them): the
    /// last timestamp read is parsed once.
    last_at: Option<(String, Timestamp)>,
    /// The series of the last row read.
    last_series: Option<u32>,
    usage: &'u mut UsageRows,
    diags: &'u mut Vec<Diagnostic>,
    /// What is left of [`DESCRIBED_PER_FILE`] for this file's rows.
    budget: Budget,
}

use super::described::Budget;
/// The most row problems described for one usage file (as for a YAML
/// file's shape problems).
pub use super::described::DESCRIBED_PER_FILE;

impl RowReader<'_> {
    /// Reports a problem while the file's budget lasts; counts it after.
    fn push(&mut self, d: Diagnostic) {
        self.budget.push(d, self.diags);
    }

    /// The diagnostics that count the problems not described, if any.
    fn finish(self) {
        self.diags.extend(self.budget.finish());
    }

    fn wrong_count(&mut self, n: usize, row_start: usize) {
        self.push(
            Diagnostic::new(
                Code::UsageBadRow,
                format!("row has {n} cells, expected {}", USAGE_COLUMNS.len()),
            )
            .at(Span::new(self.file, row_start, row_start), "this row")
            .help("each row is timestamp,cluster,pool,team,allocated_gpus,used_gpus; leave a cell empty for a gap"),
        );
    }

    /// Reads one row of six cells; `span(i)` is where cell `i` is.
    fn row(&mut self, cells: &[&str; 6], span: impl Fn(usize) -> Span) {
        let text_at = trim(cells[0]);
        let cached = self
            .last_at
            .as_ref()
            .filter(|(t, _)| t == text_at)
            .map(|(_, at)| *at);
        let at = match cached
            .map(Ok)
            .unwrap_or_else(|| text_at.parse::<Timestamp>())
        {
            // Only a timestamp in range is kept for the next rows.
            Ok(t) if cached.is_some() => t,
            Ok(t) if !crate::model::types::YEARS.contains(&t.date().year()) => {
                self.push(
                    Diagnostic::new(
                        Code::UsageBadRow,
                        format!("`{}` is outside the years capops reads", cells[0].trim()),
                    )
                    .at(span(0), "year out of range")
                    .help("timestamps fall between 2000 and 2099"),
                );
                return;
            }
            Ok(t) => {
                let at = Timestamp::from_second(t.hour_index() * 3600).unwrap_or(t);
                self.last_at = Some((text_at.to_string(), at));
                at
            }
            Err(m) => {
                self.push(
                    Diagnostic::new(Code::UsageBadRow, format!("bad timestamp: {m}"))
                        .at(span(0), "not an RFC 3339 time")
                        .help("write timestamps as 2026-11-01T13:00:00Z"),
                );
                return;
            }
        };
        let mut values = [None, None];
        let mut bad = false;
        for (slot, col) in [(0usize, 4usize), (1, 5)] {
            let cell = trim(cells[col]);
            if cell.is_empty() {
                continue;
            }
            match parse_count(cell) {
                Ok(v)
                    if v.is_finite()
                        && (0.0..=crate::model::types::MAX_COUNT as f64).contains(&v) =>
                {
                    values[slot] = Some(v)
                }
                parsed => {
                    let max = crate::model::types::MAX_COUNT;
                    let message = match parsed {
                        Ok(v) if v.is_finite() => format!(
                            "`{cell}` in {} is outside the GPUs a row can hold (0 to {max})",
                            USAGE_COLUMNS[col]
                        ),
                        _ => format!("`{cell}` in {} is not a number of GPUs", USAGE_COLUMNS[col]),
                    };
                    self.push(
                        Diagnostic::new(Code::UsageBadRow, message)
                            .at(span(col), format!("expected a number from 0 to {max}"))
                            .help("write the GPUs held in that hour (a number from 0 up), or leave the cell empty to mark a gap in the data"),
                    );
                    bad = true;
                }
            }
        }
        if bad {
            return;
        }
        if let (Some(a), Some(u)) = (values[0], values[1])
            && u > a + 1e-9
        {
            self.push(
                Diagnostic::new(
                    Code::UsageUsedExceedsAllocated,
                    format!("{u} GPUs used but only {a} allocated"),
                )
                .at(span(5), "more than allocated")
                .help("a pod can only use GPUs allocated to it: check the collector's queries (capops counts use up to the allocation)"),
            );
        }
        let (cluster, pool, team) = (trim(cells[1]), trim(cells[2]), trim(cells[3]));
        let is = |id: u32| {
            let k = &self.usage.series[id as usize];
            k.cluster == cluster && k.pool == pool && k.team == team
        };
        // Each hour lists the file's series in the same order (as `usage
        // pull` writes them): the series after the last row's is tried
        // first, then the key's hash. Keys are unique, so either way it
        // is the one series with this key.
        let count = self.usage.series.len() as u32;
        let next = self
            .last_series
            .map(|id| (id + 1) % count)
            .filter(|&id| is(id));
        let hash = || key_hash(cluster, pool, team);
        let known = next.or_else(|| {
            self.ids
                .get(&hash())
                .and_then(|c| c.iter().copied().find(|&id| is(id)))
        });
        let series = match known {
            Some(id) => id,
            None => {
                let id = self.usage.series.len() as u32;
                self.usage.series.push(SeriesKey {
                    cluster: cluster.to_string(),
                    pool: pool.to_string(),
                    team: team.to_string(),
                });
                // The row's key: its cluster, pool and team cells.
                let (first, last) = (span(1), span(3));
                self.usage.series_spans.push(Span {
                    end: last.end.max(first.start),
                    ..first
                });
                self.usage.peaks.push((f64::NEG_INFINITY, first));
                self.ids.entry(hash()).or_default().push(id);
                id
            }
        };
        self.last_series = Some(series);
        let most = values[0].unwrap_or(0.0).max(values[1].unwrap_or(0.0));
        if let Some(peak) = self.usage.peaks.get_mut(series as usize)
            && most > peak.0
        {
            let (first, last) = (span(0), span(5));
            *peak = (
                most,
                Span {
                    end: last.end.max(first.start),
                    ..first
                },
            );
        }
        self.usage
            .samples
            .push(UsageSample::new(series, at, values[0], values[1]));
        let (first, last) = (span(0), span(5));
        self.usage.rows.push(Span {
            end: last.end.max(first.start),
            ..first
        });
    }
}

/// The header line: the first line that is not blank (the CSV reader
/// skips blank lines before it), without its line break.
fn header_span(text: &str, file: FileId) -> Span {
    let start = text.len() - text.trim_start_matches(['\r', '\n']).len();
    let end = text[start..]
        .find(['\r', '\n'])
        .map_or(text.len(), |e| start + e);
    Span::new(file, start, end)
}

/// Whether `bytes` hold a `"` or a carriage return (a vectorized search).
fn has_quote_or_cr(bytes: &[u8]) -> bool {
    memchr::memchr2(b'"', b'\r', bytes).is_some()
}

/// `str::trim`, without looking for Unicode white space in a cell that
/// starts and ends with a printable ASCII character (nearly all of them).
fn trim(cell: &str) -> &str {
    let plain = |b: Option<&u8>| b.is_some_and(|b| b.is_ascii_graphic());
    let bytes = cell.as_bytes();
    if plain(bytes.first()) && plain(bytes.last()) {
        cell
    } else {
        cell.trim()
    }
}

/// `cell.parse::<f64>()`, with a shortcut for plain decimals (`12`,
/// `3.25`): at most 15 digits in all, so the digits are an exact integer
/// and the power of ten is exact, and one division rounds the quotient
/// correctly, the same value the standard parser gives (Clinger's fast
/// path). Anything else goes to the standard parser.
fn parse_count(cell: &str) -> Result<f64, std::num::ParseFloatError> {
    const POW10: [f64; 16] = [
        1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
    ];
    let bytes = cell.as_bytes();
    let (mut n, mut digits, mut dot) = (0u64, 0usize, None);
    for (i, &b) in bytes.iter().enumerate() {
        match b {
            b'0'..=b'9' if digits < 15 => {
                n = n * 10 + u64::from(b - b'0');
                digits += 1;
            }
            // A digit before the point and one after it.
            b'.' if dot.is_none() && i > 0 && i + 1 < bytes.len() => dot = Some(i),
            _ => return cell.parse(),
        }
    }
    if digits == 0 {
        return cell.parse();
    }
    let frac = dot.map_or(0, |at| bytes.len() - at - 1);
    Ok(n as f64 / POW10[frac])
}

/// A hash of a series key's three texts, eight bytes at a time, each
/// word mixed in by a folded multiply (the 128-bit product's halves
/// xored, as foldhash and aHash do) and each text led by its length so
/// that `a,bc` and `ab,c` differ. Not a defence against chosen
/// collisions, which only make rows of a file compare more keys.
fn key_hash(cluster: &str, pool: &str, team: &str) -> u64 {
    const K: u64 = 0x517c_c1b7_2722_0a95;
    let mut h: u64 = 0x243f_6a88_85a3_08d3;
    let mut add = |word: u64| {
        let p = u128::from(h ^ word) * u128::from(K);
        h = (p as u64) ^ ((p >> 64) as u64);
    };
    for part in [cluster, pool, team] {
        let bytes = part.as_bytes();
        add(bytes.len() as u64);
        let mut words = bytes.chunks_exact(8);
        for w in &mut words {
            add(u64::from_le_bytes([
                w[0], w[1], w[2], w[3], w[4], w[5], w[6], w[7],
            ]));
        }
        let rest = words.remainder();
        if !rest.is_empty() {
            let mut word = [0u8; 8];
            word[..rest.len()].copy_from_slice(rest);
            add(u64::from_le_bytes(word));
        }
    }
    h
}

#[cfg(test)]
#[path = "usage_tests.rs"]
mod tests;

#[cfg(test)]
#[path = "usage_plain_tests.rs"]
mod plain_tests;
