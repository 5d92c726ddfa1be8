//! Hourly series on a grid of hours since the Unix epoch, kept small.
//!
//! Usage history is tens of millions of hours; a series of them is a
//! [`Hourly`]: a start hour and a column of numbers, one per hour, where a
//! gap is a gap (not a zero). A column counts in whole multiples of a power
//! of ten while every value given is exactly one (4 bytes an hour), and
//! falls back to plain `f64` otherwise: what is read back is always bit for
//! bit what was put in.

/// Powers of ten a [`Column`] can count in (`10^-exp` of a GPU).
const SCALES: [f64; 4] = [1.0, 10.0, 100.0, 1000.0];
/// A gap, in a column of whole numbers.
const GAP: i32 = i32::MIN;

/// A column of hourly numbers. Usage files hold GPUs with a few decimals
/// (`usage pull` writes two), so a column holds whole multiples of
/// `10^-exp` (exp 0 to 3) as 32-bit integers (4 bytes an hour) while every
/// value it is given is one exactly (the value read back is bit for bit the
/// one given: a correctly rounded quotient of the integer and the power of
/// ten is the number the decimal text parsed to); the first value that is
/// not makes it a column of `f64` (NaN: a gap), and nothing is rounded.
#[derive(Clone, Debug)]
enum Column {
    Scaled { exp: u8, values: Vec<i32> },
    Float(Vec<f64>),
}

impl Default for Column {
    fn default() -> Self {
        Column::Scaled {
            exp: 0,
            values: Vec::new(),
        }
    }
}

/// `x` as a whole number of `10^-exp`, when it is exactly one.
fn encode(x: f64, exp: u8) -> Option<i32> {
    let scale = SCALES[exp as usize];
    let n = (x * scale).round();
    (n.abs() < f64::from(i32::MAX) && n / scale == x).then_some(n as i32)
}

impl Column {
    fn len(&self) -> usize {
        match self {
            Column::Scaled { values, .. } => values.len(),
            Column::Float(values) => values.len(),
        }
    }

    fn get(&self, i: usize) -> Option<f64> {
        match self {
            Column::Scaled { exp, values } => values
                .get(i)
                .filter(|&&v| v != GAP)
                .map(|&v| f64::from(v) / SCALES[*exp as usize]),
            Column::Float(values) => values.get(i).copied().filter(|v| !v.is_nan()),
        }
    }

    fn is_gap(&self, i: usize) -> bool {
        match self {
            Column::Scaled { values, .. } => values[i] == GAP,
            Column::Float(values) => values[i].is_nan(),
        }
    }

    fn set(&mut self, i: usize, v: Option<f64>) {
        if let Column::Scaled { exp, values } = self {
            let Some(x) = v else {
                values[i] = GAP;
                return;
            };
            if let Some(n) = encode(x, *exp) {
                values[i] = n;
                return;
            }
            // A finer power of ten that holds `x` and every value so far
            // (each scales up exactly), or plain floats.
            let finer = (*exp + 1..SCALES.len() as u8).find(|&e| {
                let up = 10i64.pow(u32::from(e - *exp));
                encode(x, e).is_some()
                    && values
                        .iter()
                        .all(|&v| v == GAP || (i64::from(v) * up).abs() < i64::from(i32::MAX))
            });
            *self = match finer {
                Some(e) => {
                    let up = 10i32.pow(u32::from(e - *exp));
                    let values = values
                        .iter()
                        .map(|&v| if v == GAP { GAP } else { v * up })
                        .collect();
                    Column::Scaled { exp: e, values }
                }
                None => Column::Float(
                    (0..values.len())
                        .map(|j| self.get(j).unwrap_or(f64::NAN))
                        .collect(),
                ),
            };
        }
        match self {
            Column::Scaled { exp, values } => {
                values[i] = v.and_then(|x| encode(x, *exp)).unwrap_or(GAP);
            }
            Column::Float(values) => values[i] = v.unwrap_or(f64::NAN),
        }
    }

    /// `front` gaps before the values and gaps up to `len` after them.
    fn grow(&mut self, front: usize, len: usize) {
        fn grow<T: Copy>(values: &mut Vec<T>, front: usize, len: usize, gap: T) {
            if front > 0 {
                let mut grown = Vec::with_capacity(len.max(values.len() + front));
                grown.resize(front, gap);
                grown.extend_from_slice(values);
                *values = grown;
            }
            if len > values.len() {
                // Exactly: a series read file by file grows a few times, and
                // a doubled capacity would hold up to twice its hours.
                values.reserve_exact(len - values.len());
                values.resize(len, gap);
            }
        }
        match self {
            Column::Scaled { values, .. } => grow(values, front, len, GAP),
            Column::Float(values) => grow(values, front, len, f64::NAN),
        }
    }
}

/// An hourly series on a regular grid of hours since the Unix epoch.
#[derive(Clone, Debug, Default)]
pub struct Hourly {
    /// Hour index of the first value.
    pub start: i64,
    values: Column,
}

impl PartialEq for Hourly {
    /// The same hours and values; gaps are equal to gaps.
    fn eq(&self, other: &Self) -> bool {
        self.start == other.start && self.values().eq(other.values())
    }
}

/// One UTC day of an hourly series, rolled up ([`Hourly::days`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Day {
    /// Days since the Unix epoch.
    pub day: i64,
    /// The sum of the values measured that day, and how many hours had one.
    pub sum: f64,
    pub hours: u32,
    /// The largest value measured that day.
    pub max: f64,
}

impl Day {
    /// The mean over the hours measured.
    pub fn mean(&self) -> f64 {
        self.sum / f64::from(self.hours.max(1))
    }
}

impl Hourly {
    /// A series from `start` (`None` is a gap).
    pub fn new(start: i64, values: impl IntoIterator<Item = Option<f64>>) -> Hourly {
        Hourly {
            start,
            values: Column::Float(values.into_iter().map(|v| v.unwrap_or(f64::NAN)).collect()),
        }
    }

    /// `len` gaps from `start`.
    pub fn gaps(start: i64, len: usize) -> Hourly {
        Hourly {
            start,
            values: Column::Scaled {
                exp: 0,
                values: vec![GAP; len],
            },
        }
    }

    /// Hours on the grid, gaps included.
    pub fn hours(&self) -> usize {
        self.values.len()
    }

    /// The hour after the last value.
    pub fn end(&self) -> i64 {
        self.start + self.values.len() as i64
    }

    pub fn get(&self, hour: i64) -> Option<f64> {
        let i = usize::try_from(hour - self.start).ok()?;
        self.value(i)
    }

    /// The `i`-th value from the start (None: a gap or past the end).
    pub fn value(&self, i: usize) -> Option<f64> {
        self.values.get(i)
    }

    /// Every value from the start (None: a gap).
    pub fn values(&self) -> impl ExactSizeIterator<Item = Option<f64>> + '_ {
        (0..self.values.len()).map(|i| self.values.get(i))
    }

    /// The first `n` values (None: a gap), for the forecaster.
    pub fn head(&self, n: usize) -> Vec<Option<f64>> {
        self.values().take(n).collect()
    }

    /// The series rolled up to UTC days: each day with a value, what was
    /// measured in it.
    pub fn days(&self) -> Vec<Day> {
        let mut out: Vec<Day> = Vec::new();
        for (i, v) in self.values().enumerate() {
            let Some(v) = v else { continue };
            let day = (self.start + i as i64).div_euclid(24);
            match out.last_mut() {
                Some(d) if d.day == day => {
                    d.sum += v;
                    d.hours += 1;
                    d.max = d.max.max(v);
                }
                _ => out.push(Day {
                    day,
                    sum: v,
                    hours: 1,
                    max: v,
                }),
            }
        }
        out
    }

    /// Sets the `i`-th value (None: a gap); the grid must reach it.
    pub fn set(&mut self, i: usize, v: Option<f64>) {
        self.values.set(i, v);
    }

    /// Grows the grid to cover `[from, to)` (gaps where nothing was).
    pub fn cover(&mut self, from: i64, to: i64) {
        if self.values.len() == 0 {
            self.start = from;
            self.values.grow(0, (to - from).max(0) as usize);
            return;
        }
        let (start, end) = (self.start.min(from), self.end().max(to));
        let front = (self.start - start) as usize;
        self.start = start;
        self.values.grow(front, (end - start) as usize);
    }

    /// Whether the series has no value at all.
    pub fn is_empty(&self) -> bool {
        (0..self.values.len()).all(|i| self.values.is_gap(i))
    }

    /// The hour of the last value (not a gap).
    pub fn last_observed(&self) -> Option<i64> {
        (0..self.values.len())
            .rposition(|i| !self.values.is_gap(i))
            .map(|i| self.start + i as i64)
    }

    /// The first `n` hours of the series (fewer when it is shorter).
    pub fn first(&self, n: usize) -> Hourly {
        if n == 0 {
            return Hourly::default();
        }
        Hourly::new(
            self.start,
            (0..n.min(self.values.len())).map(|j| self.values.get(j)),
        )
    }

    /// The hour of the first value (not a gap).
    pub fn first_observed(&self) -> Option<i64> {
        (0..self.values.len())
            .position(|i| !self.values.is_gap(i))
            .map(|i| self.start + i as i64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gaps_compare_equal_and_read_as_none() {
        let h = Hourly::new(5, [Some(1.0), None, Some(2.5)]);
        assert_eq!(h, Hourly::new(5, [Some(1.0), None, Some(2.5)]));
        assert_ne!(h, Hourly::new(5, [Some(1.0), Some(0.0), Some(2.5)]));
        assert_eq!(
            h.values().collect::<Vec<_>>(),
            vec![Some(1.0), None, Some(2.5)]
        );
        assert_eq!((h.first_observed(), h.last_observed()), (Some(5), Some(7)));
        assert!(Hourly::gaps(0, 3).is_empty());
    }

    fn exp_of(h: &Hourly) -> Option<u8> {
        match &h.values {
            Column::Scaled { exp, .. } => Some(*exp),
            Column::Float(_) => None,
        }
    }

    /// Values are read back bit for bit as they were parsed, whether the
    /// column counts in hundredths, thousandths or plain floats.
    #[test]
    fn columns_keep_every_value_exactly_and_stay_small_for_decimals() {
        let mut h = Hourly::gaps(0, 40_000);
        let mut expected: Vec<Option<f64>> = vec![None; 40_000];
        for i in (0..40_000).step_by(3) {
            let text = format!("{}.{:02}", i / 37, i % 100);
            let v: f64 = text.parse().unwrap();
            h.set(i, Some(v));
            expected[i] = Some(v);
        }
        assert_eq!(exp_of(&h), Some(2), "two decimals are kept as hundredths");
        let same = |h: &Hourly, expected: &[Option<f64>]| {
            h.values()
                .zip(expected)
                .all(|(a, b)| a.map(f64::to_bits) == b.map(f64::to_bits))
        };
        assert!(same(&h, &expected));
        // A third decimal: thousandths, every earlier value unchanged.
        let v: f64 = "7.125".parse().unwrap();
        h.set(1, Some(v));
        expected[1] = Some(v);
        assert_eq!(exp_of(&h), Some(3));
        assert!(same(&h, &expected));
        // A value no power of ten holds: plain floats, nothing rounded.
        let v: f64 = "0.1234567".parse().unwrap();
        h.set(2, Some(v));
        expected[2] = Some(v);
        assert_eq!(exp_of(&h), None);
        assert!(same(&h, &expected));
        // Gaps stay gaps; growing keeps values in place.
        h.set(3, None);
        expected[3] = None;
        h.cover(-5, 40_010);
        assert_eq!((h.start, h.hours()), (-5, 40_015));
        assert!(h.values().skip(5).take(40_000).eq(expected.iter().copied()));
        assert_eq!(h.get(-5), None);
        // Whole numbers too large for thousandths stay whole.
        let mut big = Hourly::gaps(0, 2);
        big.set(0, Some(1_000_000.0));
        big.set(1, Some(0.5));
        assert_eq!(exp_of(&big), Some(1));
        assert_eq!(
            big.values().collect::<Vec<_>>(),
            vec![Some(1_000_000.0), Some(0.5)]
        );
    }
}
