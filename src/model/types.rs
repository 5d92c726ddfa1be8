//! Scalar types shared by the documents: names, counts, times and money.
//!
//! Each type knows how to read itself, what its JSON Schema is, and what a
//! person must be told when a value is wrong. Counts are integers; money is a
//! decimal; times are instants in UTC.

use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde::de::{self, Deserialize, Deserializer};
use serde::{Serialize, Serializer};
use std::borrow::Cow;
use std::fmt;
use std::str::FromStr;

/// Prefix that lets a custom deserialization error carry a diagnostic code
/// through serde (see `load::de::DeError`).
pub(crate) fn coded(code: crate::diag::Code, message: impl fmt::Display) -> String {
    format!("[{}] {message}", code.as_str())
}

// ---------------------------------------------------------------- Name

/// Pattern of a document name: a DNS-1123 label, because names become Kubernetes object names.
pub const NAME_PATTERN: &str = "^[a-z0-9]([-a-z0-9]*[a-z0-9])?$";

/// A document or pool name: lowercase letters, digits and `-`, at most 63 characters.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Default)]
#[serde(transparent)]
pub struct Name(pub String);

impl Name {
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for Name {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl<'de> Deserialize<'de> for Name {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        String::deserialize(d).map(Name)
    }
}

impl JsonSchema for Name {
    fn schema_name() -> Cow<'static, str> {
        "Name".into()
    }
    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({
            "type": "string",
            "description": "Lowercase letters, digits and '-', starting and ending with a letter or digit (a DNS-1123 label).",
            "pattern": NAME_PATTERN,
            "minLength": 1,
            "maxLength": 63
        })
    }
}

/// True when `s` is a DNS-1123 label (what Kubernetes requires of namespaces).
pub fn is_dns_label(s: &str) -> bool {
    let b = s.as_bytes();
    !b.is_empty()
        && b.len() <= 63
        && b.iter()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'-')
        && b[0] != b'-'
        && b[b.len() - 1] != b'-'
}

// ---------------------------------------------------------------- Count

/// A positive whole number of GPUs, MIG instances, nodes or instances.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Default)]
#[serde(transparent)]
pub struct Count(pub u32);

/// The largest count accepted anywhere: a million GPUs is beyond any fleet.
pub const MAX_COUNT: u32 = 1_000_000;

impl<'de> Deserialize<'de> for Count {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let n = u32::deserialize(d)?;
        if n == 0 || n > MAX_COUNT {
            return Err(de::Error::custom(coded(
                crate::diag::Code::ValueOutOfRange,
                format!("{n} is not between 1 and {MAX_COUNT}"),
            )));
        }
        Ok(Count(n))
    }
}

impl JsonSchema for Count {
    fn schema_name() -> Cow<'static, str> {
        "Count".into()
    }
    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({
            "type": "integer",
            "description": "A positive whole number.",
            "minimum": 1,
            "maximum": MAX_COUNT
        })
    }
}

/// A whole number that may be zero (a quota ceiling, a node count).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Default)]
#[serde(transparent)]
pub struct Quantity(pub u32);

impl<'de> Deserialize<'de> for Quantity {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let n = u32::deserialize(d)?;
        if n > MAX_COUNT {
            return Err(de::Error::custom(coded(
                crate::diag::Code::ValueOutOfRange,
                format!("{n} is more than {MAX_COUNT}"),
            )));
        }
        Ok(Quantity(n))
    }
}

impl JsonSchema for Quantity {
    fn schema_name() -> Cow<'static, str> {
        "Quantity".into()
    }
    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({
            "type": "integer",
            "description": "A whole number, zero or more.",
            "minimum": 0,
            "maximum": MAX_COUNT
        })
    }
}

// ---------------------------------------------------------------- Timestamp

/// An instant, written as an ISO 8601 date (`2026-12-01`, midnight UTC) or an
/// RFC 3339 date-time (`2026-12-01T08:00:00Z`, `2026-12-01T10:00:00+02:00`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Timestamp(pub jiff::Timestamp);

pub const TIMESTAMP_PATTERN: &str = r"^[0-9]{4}-[0-9]{2}-[0-9]{2}([Tt ][0-9]{2}:[0-9]{2}(:[0-9]{2}(\.[0-9]+)?)?([Zz]|[+-][0-9]{2}:?[0-9]{2}))?$";

impl Timestamp {
    pub fn from_second(s: i64) -> Option<Timestamp> {
        jiff::Timestamp::from_second(s).ok().map(Timestamp)
    }

    pub fn as_second(&self) -> i64 {
        self.0.as_second()
    }

    /// Whole hours since the Unix epoch, rounded down.
    pub fn hour_index(&self) -> i64 {
        self.0.as_second().div_euclid(3600)
    }

    /// The date (UTC) of this instant.
    pub fn date(&self) -> jiff::civil::Date {
        jiff::tz::TimeZone::UTC.to_datetime(self.0).date()
    }
}

impl fmt::Display for Timestamp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // RFC 3339 in UTC, whole seconds.
        write!(f, "{}", self.0.strftime("%Y-%m-%dT%H:%M:%SZ"))
    }
}

impl FromStr for Timestamp {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        let s = s.trim();
        if s.len() == 10 {
            let date: jiff::civil::Date = s.parse().map_err(|e| describe_time_error(s, e))?;
            let ts = jiff::tz::TimeZone::UTC
                .to_timestamp(date.to_datetime(jiff::civil::Time::midnight()))
                .map_err(|e| describe_time_error(s, e))?;
            return Ok(Timestamp(ts));
        }
        let b = s.as_bytes();
        if b.len() >= 19
            && matches!(b[10], b'T' | b't' | b' ')
            && b[13] == b':'
            && b[16] == b':'
            && &b[17..19] == b"60"
        {
            return Err(format!(
                "`{s}` has the second 60, a leap second: capops counts UTC hours and cannot place one; write :59 or the next minute"
            ));
        }
        if let Some(offset) = bad_offset(s) {
            return Err(format!(
                "`{s}` has the offset `{offset}`, beyond ±23:59 (RFC 3339): write Z or an offset such as +02:00"
            ));
        }
        if let Some(digits) = fraction_digits(s).filter(|d| *d > 9) {
            return Err(format!(
                "`{}` has {digits} digits after the seconds' point; a time holds at most 9 (nanoseconds): write 2026-12-01T08:00:00.5Z or leave the fraction out",
                crate::diag::clip(s)
            ));
        }
        s.parse::<jiff::Timestamp>()
            .map(Timestamp)
            .map_err(|e| describe_time_error(s, e))
    }
}

/// How many digits follow the seconds' decimal point of a time, if it has one.
fn fraction_digits(s: &str) -> Option<usize> {
    let time = &s[s.find(['T', 't', ' '])?..];
    let fraction = &time[time.find(['.', ','])? + 1..];
    Some(fraction.bytes().take_while(u8::is_ascii_digit).count())
}

/// An offset RFC 3339 does not allow (hours above 23, minutes above 59),
/// which the parser would take: `+25:00`.
fn bad_offset(s: &str) -> Option<&str> {
    let time = &s[s.find(['T', 't', ' '])?..];
    let at = time.rfind(['+', '-'])?;
    let offset = &time[at..];
    let digits: Vec<u32> = offset[1..]
        .split(':')
        .map(|p| p.parse::<u32>().ok())
        .collect::<Option<_>>()?;
    match digits.as_slice() {
        [h, m, ..] if *h > 23 || *m > 59 => Some(offset),
        [h] if *h > 23 && offset.len() <= 3 => Some(offset),
        _ => None,
    }
}

fn describe_time_error(s: &str, e: jiff::Error) -> String {
    // A year the clock cannot hold (9999-12-31) is out of range, not unreal.
    let written_year = s
        .get(..5)
        .filter(|p| p.ends_with('-') && p[..4].bytes().all(|b| b.is_ascii_digit()))
        .and_then(|p| p[..4].parse::<i16>().ok());
    if let Some(y) = written_year.filter(|y| !YEARS.contains(y)) {
        return format!(
            "{y} is outside the years capops works in ({}-{}); give a time within them",
            YEARS.start(),
            YEARS.end()
        );
    }
    let detail = e.to_string();
    let detail = detail.rsplit(": ").next().unwrap_or(&detail).to_string();
    format!("`{s}` is not a real date or time ({detail})")
}

impl Serialize for Timestamp {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

/// The years a document's dates may fall in: capacity is planned in this century.
pub const YEARS: std::ops::RangeInclusive<i16> = 2000..=2099;

/// A time something is judged at (`--at`, a policy test's `at`): a date or an
/// RFC 3339 time within [`YEARS`], so forecasts and budgets stay within the
/// calendar.
pub fn moment(text: &str) -> Result<Timestamp, String> {
    let t: Timestamp = text.parse().map_err(|e: String| {
        format!("{e}; write a date as 2026-12-01 or a time as 2026-12-01T08:00:00Z")
    })?;
    let year = t.0.to_zoned(jiff::tz::TimeZone::UTC).year();
    if !YEARS.contains(&year) {
        return Err(format!(
            "{year} is outside the years capops works in ({}-{}); give a time within them",
            YEARS.start(),
            YEARS.end()
        ));
    }
    Ok(t)
}

impl<'de> Deserialize<'de> for Timestamp {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        // A year written out of range is that, even where no clock can
        // hold the date (9999-12-31 is past the last representable hour).
        let written_year = s
            .get(..5)
            .filter(|p| p.ends_with('-') && p[..4].bytes().all(|b| b.is_ascii_digit()))
            .and_then(|p| p[..4].parse::<i16>().ok());
        let parsed: Result<Timestamp, _> = s.parse();
        let year = match (&parsed, written_year) {
            (Ok(t), _) => t.date().year(),
            (Err(_), Some(y)) if !YEARS.contains(&y) => y,
            (Err(m), _) => {
                return Err(de::Error::custom(coded(
                    crate::diag::Code::InvalidDate,
                    format!("{m}; write a date as 2026-12-01 or a time as 2026-12-01T08:00:00Z"),
                )));
            }
        };
        if !YEARS.contains(&year) {
            return Err(de::Error::custom(coded(
                crate::diag::Code::ValueOutOfRange,
                format!(
                    "`{s}` is in the year {year}; capops reads dates from {} to {}",
                    YEARS.start(),
                    YEARS.end()
                ),
            )));
        }
        parsed.map_err(|m| de::Error::custom(m.to_string()))
    }
}

impl JsonSchema for Timestamp {
    fn schema_name() -> Cow<'static, str> {
        "Timestamp".into()
    }
    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({
            "type": "string",
            "description": "An ISO 8601 date (midnight UTC) or an RFC 3339 date-time.",
            "pattern": TIMESTAMP_PATTERN
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_accept_dates_and_times_and_reject_impossible_dates() {
        let d: Timestamp = "2026-12-01".parse().unwrap();
        assert_eq!(d.to_string(), "2026-12-01T00:00:00Z");
        let t: Timestamp = "2026-12-01T10:00:00+02:00".parse().unwrap();
        assert_eq!(t.to_string(), "2026-12-01T08:00:00Z");
        let err = "2027-02-30".parse::<Timestamp>().unwrap_err();
        assert!(err.contains("not a real date"), "{err}");
        assert!("2026-13-01T00:00:00Z".parse::<Timestamp>().is_err());
        assert!("next tuesday".parse::<Timestamp>().is_err());
        // RFC 3339 offsets stop at 23:59, though the parser takes ±25:59.
        for bad in [
            "2026-11-01T00:00:00+25:00",
            "2026-11-01T00:00:00-24:00",
            "2026-11-01T00:00:00+05:60",
        ] {
            let err = bad.parse::<Timestamp>().unwrap_err();
            assert!(err.contains("beyond ±23:59"), "{bad}: {err}");
        }
        let t: Timestamp = "2026-11-01T00:00:00-23:59".parse().unwrap();
        assert_eq!(t.to_string(), "2026-11-01T23:59:00Z");
        // A leap second is refused, not read as :59 (the parser's choice).
        for bad in ["2026-11-16T23:59:60Z", "2026-11-16 23:59:60.5+01:00"] {
            let err = bad.parse::<Timestamp>().unwrap_err();
            assert!(err.contains("a leap second"), "{bad}: {err}");
        }
        // Multibyte text where the seconds would be does not panic.
        assert!("2026-11-16Tééé:60Z".parse::<Timestamp>().is_err());
        // Nine digits of a second are read; twelve are refused in capops'
        // words, not the parser's.
        let t: Timestamp = "2026-11-16T08:00:00.123456789Z".parse().unwrap();
        assert_eq!(
            t.hour_index(),
            "2026-11-16T08:00:00Z"
                .parse::<Timestamp>()
                .unwrap()
                .hour_index()
        );
        let err = "2026-11-16T08:00:00.123456789012Z"
            .parse::<Timestamp>()
            .unwrap_err();
        assert!(err.contains("12 digits after the seconds' point"), "{err}");
        assert!(!err.contains("unparsed"), "{err}");
        // A year the clock cannot hold is out of range, not unreal.
        let err = "9999-12-31".parse::<Timestamp>().unwrap_err();
        assert!(err.contains("outside the years capops works in"), "{err}");
    }

    #[test]
    fn dns_labels() {
        assert!(is_dns_label("team-a1"));
        assert!(!is_dns_label("Team"));
        assert!(!is_dns_label("-a"));
        assert!(!is_dns_label("a-"));
        assert!(!is_dns_label(""));
        assert!(!is_dns_label(&"a".repeat(64)));
    }
}

/// Whether a text a rule asks for (a justification, a success metric, a
/// business case) says anything a reader can see: at least one character
/// that is not white space, a control, or of zero width (format characters
/// such as zero-width spaces, joiners, bidi marks and the BOM, every
/// default-ignorable code point, combining marks with nothing to combine
/// with), nor one of the blanks drawn as nothing (Hangul and Braille blanks,
/// interlinear annotation and other format controls). `trim` alone leaves
/// `"\u{200b}"`, which an approver would see as nothing, counted as written.
pub fn has_visible_text(s: &str) -> bool {
    use unicode_width::UnicodeWidthChar;
    s.chars().any(|c| {
        !(c.is_whitespace()
            || c.is_control()
            || c.width().is_none_or(|w| w == 0)
            || matches!(c,
                '\u{00AD}' | '\u{034F}' | '\u{061C}' | '\u{115F}' | '\u{1160}' | '\u{17B4}'
                | '\u{17B5}' | '\u{180B}'..='\u{180F}' | '\u{200B}'..='\u{200F}'
                | '\u{202A}'..='\u{202E}' | '\u{2060}'..='\u{206F}' | '\u{2800}' | '\u{3164}'
                | '\u{FE00}'..='\u{FE0F}' | '\u{FEFF}' | '\u{FFA0}' | '\u{FFF0}'..='\u{FFFB}'
                | '\u{13430}'..='\u{1345F}' | '\u{1BCA0}'..='\u{1BCA3}'
                | '\u{1D173}'..='\u{1D17A}' | '\u{E0000}'..='\u{E0FFF}'))
    })
}

#[cfg(test)]
mod visible_text_tests {
    use super::has_visible_text;

    #[test]
    fn invisible_text_is_no_text() {
        for blank in [
            "",
            "  \n\t",
            "\u{200b}",
            "\u{2060}\u{200c}\u{feff}",
            "\u{00a0}\u{3000}",
            "\u{202e}\u{2066}",
            "\u{3164}\u{2800}",
            "\u{e0041}\u{e0042}",
            "\u{fff9}\u{fffa}\u{fffb}",
            "\u{1bca0}\u{1bca3}",
            "\u{13430}",
            "\u{0301}",
            "\u{200b}\u{0301}",
        ] {
            assert!(!has_visible_text(blank), "{blank:?}");
        }
        for text in ["x", " needed for Q3 ", "\u{200b}x", "学習", "é"] {
            assert!(has_visible_text(text), "{text:?}");
        }
    }
}
