//! Rolling-origin evaluation of the forecaster on a CSV of hourly series
//! (`capops forecast backtest`).
//!
//! The last `windows` × `step` hours of each series are held out: window `k`
//! is trained on everything before its cutoff and forecasts the next
//! `horizon` hours. Metrics follow the usual conventions (those of
//! statsforecast's `utilsforecast`), so the figures compare with other tools
//! evaluated on the same windows.

use super::Forecast;
use crate::model::Timestamp;
use std::collections::BTreeMap;

/// One hourly series from the CSV: values on a regular hourly grid.
#[derive(Debug, Clone)]
pub struct Series {
    pub name: String,
    /// Hour index (hours since the Unix epoch) of the first value.
    pub start_hour: i64,
    pub values: Vec<Option<f64>>,
}

/// The most tokens a value expression may have.
pub const MAX_TOKENS: usize = 512;

/// A value expression over CSV columns: `running_gpus + pending_gpus`.
#[derive(Debug, Clone)]
pub enum Expr {
    Column(String),
    Number(f64),
    Binary(Box<Expr>, char, Box<Expr>),
    Negate(Box<Expr>),
}

impl Expr {
    pub fn parse(text: &str) -> Result<Expr, String> {
        let tokens = tokenize(text)?;
        // Parsing, evaluating and dropping recurse once per level: a bound
        // on the tokens bounds the stack (15,000 `(` overflowed it).
        if tokens.len() > MAX_TOKENS {
            return Err(format!(
                "the value expression has {} parts; at most {MAX_TOKENS} are read (name the columns to add, e.g. `running_gpus + pending_gpus`)",
                tokens.len()
            ));
        }
        let mut pos = 0;
        let e = parse_sum(&tokens, &mut pos)?;
        if pos != tokens.len() {
            return Err(format!(
                "unexpected `{}` in the value expression",
                tokens[pos]
            ));
        }
        Ok(e)
    }

    pub fn columns(&self, out: &mut Vec<String>) {
        match self {
            Expr::Column(c) => out.push(c.clone()),
            Expr::Number(_) => {}
            Expr::Binary(a, _, b) => {
                a.columns(out);
                b.columns(out);
            }
            Expr::Negate(a) => a.columns(out),
        }
    }

    /// The value for a row; `None` when a column it reads is empty.
    pub fn eval(&self, cell: &dyn Fn(&str) -> Option<f64>) -> Option<f64> {
        Some(match self {
            Expr::Column(c) => cell(c)?,
            Expr::Number(n) => *n,
            Expr::Negate(a) => -a.eval(cell)?,
            Expr::Binary(a, op, b) => {
                let (x, y) = (a.eval(cell)?, b.eval(cell)?);
                match op {
                    '+' => x + y,
                    '-' => x - y,
                    '*' => x * y,
                    _ => {
                        if y == 0.0 {
                            return None;
                        }
                        x / y
                    }
                }
            }
        })
    }
}

fn tokenize(text: &str) -> Result<Vec<String>, String> {
    let mut out = Vec::new();
    let chars: Vec<char> = text.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c.is_whitespace() {
            i += 1;
        } else if "+-*/()".contains(c) {
            out.push(c.to_string());
            i += 1;
        } else if c.is_ascii_alphanumeric() || c == '_' || c == '.' {
            let start = i;
            while i < chars.len()
                && (chars[i].is_ascii_alphanumeric() || chars[i] == '_' || chars[i] == '.')
            {
                i += 1;
            }
            out.push(chars[start..i].iter().collect());
        } else {
            return Err(format!(
                "`{c}` is not allowed in the value expression (use column names, numbers, + - * / and parentheses)"
            ));
        }
    }
    if out.is_empty() {
        return Err("the value expression is empty".into());
    }
    Ok(out)
}

fn parse_sum(t: &[String], pos: &mut usize) -> Result<Expr, String> {
    let mut left = parse_product(t, pos)?;
    while *pos < t.len() && (t[*pos] == "+" || t[*pos] == "-") {
        let op = t[*pos].chars().next().unwrap_or('+');
        *pos += 1;
        let right = parse_product(t, pos)?;
        left = Expr::Binary(Box::new(left), op, Box::new(right));
    }
    Ok(left)
}

fn parse_product(t: &[String], pos: &mut usize) -> Result<Expr, String> {
    let mut left = parse_atom(t, pos)?;
    while *pos < t.len() && (t[*pos] == "*" || t[*pos] == "/") {
        let op = t[*pos].chars().next().unwrap_or('*');
        *pos += 1;
        let right = parse_atom(t, pos)?;
        left = Expr::Binary(Box::new(left), op, Box::new(right));
    }
    Ok(left)
}

fn parse_atom(t: &[String], pos: &mut usize) -> Result<Expr, String> {
    let Some(tok) = t.get(*pos) else {
        return Err("the value expression ends too early".into());
    };
    *pos += 1;
    match tok.as_str() {
        "(" => {
            let e = parse_sum(t, pos)?;
            if t.get(*pos).map(String::as_str) != Some(")") {
                return Err("a `(` is not closed in the value expression".into());
            }
            *pos += 1;
            Ok(e)
        }
        "-" => Ok(Expr::Negate(Box::new(parse_atom(t, pos)?))),
        ")" | "+" | "*" | "/" => Err(format!("unexpected `{tok}` in the value expression")),
        _ => match tok.parse::<f64>() {
            Ok(n) => Ok(Expr::Number(n)),
            Err(_) => Ok(Expr::Column(tok.clone())),
        },
    }
}

/// The longest span of one series the backtest reads: 20 years of hours.
pub const MAX_SPAN_HOURS: i64 = 20 * 366 * 24;

/// The most hours all series of one backtest may span together, unless the
/// CSV has more than a quarter as many rows (a dense CSV is read whole; 1,000
/// series of two rows twenty years apart took 3 GB).
pub const MAX_TOTAL_HOURS: i64 = 5_000_000;

/// The largest magnitude a value may have: squares and sums of a few
/// hundred thousand of them stay finite.
pub const MAX_VALUE: f64 = 1e15;

/// Reads a CSV of hourly samples into series on a regular grid (missing hours and empty cells are gaps).
pub fn read_csv(
    text: &str,
    time_column: &str,
    series_column: Option<&str>,
    expr: &Expr,
) -> Result<Vec<Series>, String> {
    let mut reader = csv::ReaderBuilder::new()
        .flexible(false)
        .from_reader(text.as_bytes());
    let headers: Vec<String> = reader
        .headers()
        .map_err(|e| format!("cannot read the CSV header: {e}"))?
        .iter()
        .map(|h| h.trim().to_string())
        .collect();
    let index = |name: &str| -> Result<usize, String> {
        let i = headers.iter().position(|h| h == name).ok_or_else(|| {
            format!(
                "the CSV has no column `{name}` (columns: {})",
                headers.join(", ")
            )
        })?;
        // A name the header gives twice: which column is meant is not known.
        if let Some(j) = headers[i + 1..].iter().position(|h| h == name) {
            return Err(format!(
                "the CSV's header names column `{name}` twice (columns {} and {}): rename one",
                i + 1,
                i + j + 2
            ));
        }
        Ok(i)
    };
    let time_i = index(time_column)?;
    let series_i = match series_column {
        Some(c) => match index(c) {
            Ok(i) => Some(i),
            // The default column may be absent (one series), never twice.
            Err(_) if c == "series" && !headers.iter().any(|h| h == c) => None,
            Err(e) => return Err(e),
        },
        None => None,
    };
    let mut cols = Vec::new();
    expr.columns(&mut cols);
    let col_index: Vec<(String, usize)> = cols
        .iter()
        .map(|c| index(c).map(|i| (c.clone(), i)))
        .collect::<Result<_, _>>()?;
    // Per series, each hour's value and the row it came from.
    let mut samples: BTreeMap<String, BTreeMap<i64, (Option<f64>, usize)>> = BTreeMap::new();
    let mut rows: i64 = 0;
    for (row, record) in reader.records().enumerate() {
        rows += 1;
        let record = record.map_err(|e| format!("row {}: {e}", row + 2))?;
        let ts: Timestamp = record
            .get(time_i)
            .unwrap_or("")
            .trim()
            .parse()
            .map_err(|e| format!("row {}: {e}", row + 2))?;
        let name = series_i
            .and_then(|i| record.get(i))
            .unwrap_or("series")
            .to_string();
        let bad = std::cell::RefCell::new(None);
        let value = expr.eval(&|c: &str| {
            let i = col_index.iter().find(|(n, _)| n == c)?.1;
            let cell = record.get(i)?.trim();
            if cell.is_empty() {
                return None;
            }
            match cell.parse::<f64>() {
                Ok(v) if v.is_finite() => Some(v),
                _ => {
                    *bad.borrow_mut() = Some(format!(
                        "row {}: `{cell}` in `{c}` is not a number",
                        row + 2
                    ));
                    None
                }
            }
        });
        if let Some(e) = bad.into_inner() {
            return Err(e);
        }
        if let Some(v) = value.filter(|v| !v.is_finite() || v.abs() > MAX_VALUE) {
            return Err(format!(
                "row {}: the value (`--value`) evaluates to {v} there, not a number within ±{MAX_VALUE:e} (past it the metrics' sums overflow)",
                row + 2
            ));
        }
        let hour = ts.hour_index();
        let series = samples.entry(name).or_default();
        match series.get(&hour) {
            // The same hour again: the same value is a repeated row; another
            // value would be one of them silently dropped.
            Some(&(earlier, first_row)) if earlier != value => {
                let shown =
                    |v: Option<f64>| v.map_or_else(|| "empty".to_string(), |v| v.to_string());
                return Err(format!(
                    "row {}: series `{}` has the hour of {ts} already, at row {first_row}, with another value ({} there, {} here): one hour, one value (sum or average samples within an hour first)",
                    row + 2,
                    crate::diag::clip(series_i.and_then(|i| record.get(i)).unwrap_or("series")),
                    shown(earlier),
                    shown(value)
                ));
            }
            Some(_) => {}
            None => {
                series.insert(hour, (value, row + 2));
            }
        }
    }
    // A series is hourly over its whole span: a mistyped year (0001 for
    // 2021) would make it millions of empty hours long.
    let mut total: i64 = 0;
    for (name, by_hour) in &samples {
        let (Some(first), Some(last)) = (by_hour.keys().next(), by_hour.keys().last()) else {
            continue;
        };
        if last - first > MAX_SPAN_HOURS {
            let ts = |h: i64| {
                Timestamp::from_second(h * 3600).map_or_else(|| h.to_string(), |t| t.to_string())
            };
            return Err(format!(
                "series `{name}` runs from {} to {}, more than {} years of hours: a mistyped date? (the backtest reads at most {} years)",
                ts(*first),
                ts(*last),
                MAX_SPAN_HOURS / (24 * 366),
                MAX_SPAN_HOURS / (24 * 366)
            ));
        }
        total = total.saturating_add(last - first + 1);
        let most = MAX_TOTAL_HOURS.max(rows.saturating_mul(4));
        if total > most {
            return Err(format!(
                "the series run to more than {most} hours together, over four times the CSV's {rows} rows (series `{}`, number {} of {}, reaches past it): check the dates of series that span years with few rows, or split the CSV",
                crate::diag::clip(name),
                samples.keys().position(|n| n == name).unwrap_or(0) + 1,
                samples.len()
            ));
        }
    }
    Ok(samples
        .into_iter()
        .map(|(name, by_hour)| {
            let start = *by_hour.keys().next().expect("at least one row");
            let end = *by_hour.keys().last().expect("at least one row");
            let values = (start..=end)
                .map(|h| by_hour.get(&h).and_then(|(v, _)| *v))
                .collect();
            Series {
                name,
                start_hour: start,
                values,
            }
        })
        .collect())
}

/// One evaluation window of one series.
#[derive(Debug, Clone)]
pub struct Window {
    /// Hour index of the last training hour (the cutoff).
    pub cutoff_hour: i64,
    pub forecast: Forecast,
    pub metrics: Metrics,
}

/// Accuracy of one window, or averaged over windows.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Metrics {
    pub mase: f64,
    pub smape: f64,
    pub coverage: f64,
    pub pinball10: f64,
    pub pinball50: f64,
    pub pinball90: f64,
}

/// Metrics of a forecast against the actuals, scaled by the training data's
/// seasonal-naive (24 h) mean absolute error.
pub fn metrics(train: &[Option<f64>], actual: &[Option<f64>], f: &Forecast) -> Metrics {
    let diffs: Vec<f64> = (24..train.len())
        .filter_map(|i| Some((train[i]? - train[i - 24]?).abs()))
        .collect();
    let scale = if diffs.is_empty() {
        f64::NAN
    } else {
        diffs.iter().sum::<f64>() / diffs.len() as f64
    };
    let mut m = Metrics::default();
    let mut n = 0.0;
    let pin = |q: f64, y: f64, p: f64| (q * (y - p)).max((q - 1.0) * (y - p));
    for (j, y) in actual.iter().enumerate() {
        let Some(y) = *y else { continue };
        let (lo, mid, hi) = (f.p10[j], f.p50[j], f.p90[j]);
        n += 1.0;
        m.mase += (y - mid).abs();
        m.smape += if y.abs() + mid.abs() == 0.0 {
            0.0
        } else {
            (y - mid).abs() / (y.abs() + mid.abs())
        };
        m.coverage += f64::from(u8::from(lo <= y && y <= hi));
        m.pinball10 += pin(0.1, y, lo);
        m.pinball50 += pin(0.5, y, mid);
        m.pinball90 += pin(0.9, y, hi);
    }
    if n == 0.0 {
        return Metrics {
            mase: f64::NAN,
            smape: f64::NAN,
            coverage: f64::NAN,
            pinball10: f64::NAN,
            pinball50: f64::NAN,
            pinball90: f64::NAN,
        };
    }
    Metrics {
        mase: m.mase / n / scale,
        smape: m.smape / n,
        coverage: m.coverage / n,
        pinball10: m.pinball10 / n / scale,
        pinball50: m.pinball50 / n / scale,
        pinball90: m.pinball90 / n / scale,
    }
}

/// The mean of window metrics (NaN windows left out).
pub fn mean(ms: &[Metrics]) -> Metrics {
    let avg = |f: fn(&Metrics) -> f64| {
        let v: Vec<f64> = ms.iter().map(f).filter(|x| x.is_finite()).collect();
        if v.is_empty() {
            f64::NAN
        } else {
            v.iter().sum::<f64>() / v.len() as f64
        }
    };
    Metrics {
        mase: avg(|m| m.mase),
        smape: avg(|m| m.smape),
        coverage: avg(|m| m.coverage),
        pinball10: avg(|m| m.pinball10),
        pinball50: avg(|m| m.pinball50),
        pinball90: avg(|m| m.pinball90),
    }
}

/// Runs the rolling-origin evaluation of one series.
pub fn evaluate(
    series: &Series,
    horizon: usize,
    windows: usize,
    step: usize,
) -> Result<Vec<Window>, String> {
    let n = series.values.len();
    let needed = step
        .checked_mul(windows.saturating_sub(1))
        .and_then(|s| s.checked_add(horizon));
    if needed.is_none_or(|needed| n <= needed) {
        let needed = needed.map_or(String::new(), |n| format!("the {} ", n + 1));
        return Err(format!(
            "series `{}` has {n} hours, fewer than {needed}needed for {windows} windows of {horizon} h, {step} h apart, and one hour of history",
            series.name,
        ));
    }
    let mut out = Vec::with_capacity(windows);
    for k in (1..=windows).rev() {
        // The held-out hours start at `first`; the last window ends at the series' end.
        let first = n - horizon - (k - 1) * step;
        let train = &series.values[..first];
        let actual = &series.values[first..first + horizon];
        let forecast = super::hourly(train, horizon);
        let metrics = metrics(train, actual, &forecast);
        out.push(Window {
            cutoff_hour: series.start_hour + first as i64 - 1,
            forecast,
            metrics,
        });
    }
    Ok(out)
}

#[cfg(test)]
#[path = "backtest_tests.rs"]
mod tests;
