//! Money and shares: decimals, never floats, and how amounts are shown.
//!
//! [`Money`] is what documents write (prices, budgets, fees); [`Ratio`] a
//! share such as a threshold. [`format`] shows an amount for people the one way
//! every output uses: grouped, whole units from 100 up, cents below.

use super::types::coded;
use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde::de::{self, Deserialize, Deserializer, Visitor};
use serde::{Serialize, Serializer};
use std::borrow::Cow;
use std::fmt;

/// An amount of money: a decimal number, never a float. Write it as a number
/// (`55.04`) or, for more than 15 significant digits, as a string (`"55.04"`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Money(pub rust_decimal::Decimal);

impl Money {
    pub const ZERO: Money = Money(rust_decimal::Decimal::ZERO);
}

/// The largest amount a document may state: ten billion. With counts of at
/// most a million and windows within the years capops accepts, every product
/// and sum the cost stage forms stays far inside a decimal's range, so money
/// arithmetic cannot overflow.
pub const MAX_MONEY: i64 = 10_000_000_000;

impl fmt::Display for Money {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0.normalize())
    }
}

impl Serialize for Money {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Money {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(DecimalVisitor("an amount of money"))
            .and_then(|v| {
                if v.is_sign_negative() && !v.is_zero() {
                    Err(de::Error::custom(coded(
                        crate::diag::Code::ValueOutOfRange,
                        format!("{v} is negative; amounts of money are zero or more"),
                    )))
                } else if v > rust_decimal::Decimal::from(MAX_MONEY) {
                    Err(de::Error::custom(coded(
                        crate::diag::Code::ValueOutOfRange,
                        format!("{v} is more than {MAX_MONEY}, the largest amount capops reads"),
                    )))
                } else {
                    Ok(Money(v))
                }
            })
    }
}

impl JsonSchema for Money {
    fn schema_name() -> Cow<'static, str> {
        "Money".into()
    }
    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({
            "type": ["number", "string"],
            "description": "A decimal amount, zero or more: a number or a string such as \"55.04\".",
            "minimum": 0,
            "pattern": "^[0-9]+(\\.[0-9]+)?$"
        })
    }
}

/// A share between 0 and 1 (0.4 means 40%).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Ratio(pub rust_decimal::Decimal);

impl Ratio {
    pub fn from_str_const(s: &str) -> Ratio {
        Ratio(s.parse().expect("valid ratio literal"))
    }

    pub fn as_f64(&self) -> f64 {
        use rust_decimal::prelude::ToPrimitive;
        self.0.to_f64().unwrap_or(0.0)
    }
}

impl fmt::Display for Ratio {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0.normalize())
    }
}

impl Serialize for Ratio {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use rust_decimal::prelude::ToPrimitive;
        s.serialize_f64(self.0.to_f64().unwrap_or(0.0))
    }
}

impl<'de> Deserialize<'de> for Ratio {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let v = d.deserialize_any(DecimalVisitor("a share between 0 and 1"))?;
        if v < rust_decimal::Decimal::ZERO || v > rust_decimal::Decimal::from(10) {
            return Err(de::Error::custom(coded(
                crate::diag::Code::ValueOutOfRange,
                format!("{v} is not a share between 0 and 10"),
            )));
        }
        Ok(Ratio(v))
    }
}

impl JsonSchema for Ratio {
    fn schema_name() -> Cow<'static, str> {
        "Ratio".into()
    }
    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({
            "type": "number",
            "description": "A share: 0.4 means 40%.",
            "minimum": 0,
            "maximum": 10
        })
    }
}

struct DecimalVisitor(&'static str);

impl Visitor<'_> for DecimalVisitor {
    type Value = rust_decimal::Decimal;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.0)
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Self::Value, E> {
        Ok(v.into())
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Self::Value, E> {
        Ok(v.into())
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Self::Value, E> {
        // The shortest text that reads back as `v` is the literal the user wrote
        // (for up to 15 significant digits), so no binary rounding leaks in.
        if !v.is_finite() {
            return Err(E::custom(coded(
                crate::diag::Code::InvalidValue,
                format!("`{v}` is not a finite number"),
            )));
        }
        format!("{v}").parse().map_err(|_| {
            E::custom(coded(
                crate::diag::Code::InvalidValue,
                too_large_or_not(&format!("{v}")),
            ))
        })
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
        let t = v.trim();
        t.parse::<rust_decimal::Decimal>().map_err(|_| {
            E::custom(coded(
                crate::diag::Code::InvalidValue,
                too_large_or_not(v.trim()),
            ))
        })
    }
}

/// Why a number does not read as a decimal amount: out of its range (about
/// 7.9 × 10^28), or not a decimal number at all.
fn too_large_or_not(v: &str) -> String {
    let shown = crate::diag::clip(v);
    let digits = v.bytes().any(|b| b.is_ascii_digit())
        && v.bytes()
            .all(|b| b.is_ascii_digit() || b"+-.eE".contains(&b));
    let huge = digits
        && v.parse::<f64>()
            .is_ok_and(|f| f.is_infinite() || f.abs() >= 7.9e28);
    if huge {
        format!(
            "`{shown}` is out of range for an amount: more than {MAX_MONEY}, the largest amount capops reads"
        )
    } else {
        format!("`{shown}` is not a decimal number (write it as digits, e.g. `1250.50`)")
    }
}

/// An amount for people: `1,610,700 USD`, or `0.45 USD` below 100.
pub fn format_f64(amount: f64, currency: &str) -> String {
    format(
        rust_decimal::Decimal::from_f64_retain(amount).unwrap_or_default(),
        currency,
    )
}

/// [`format_f64`] for a decimal amount: rounded half away from zero, to whole
/// units from 100 up and to cents below (whole units always in a currency
/// without minor units, such as JPY).
pub fn format(amount: rust_decimal::Decimal, currency: &str) -> String {
    format_with(amount, currency, true)
}

/// An amount without its currency (a table whose caption names it), rounded
/// as [`format`] rounds it in `currency`.
pub fn format_bare(amount: rust_decimal::Decimal, currency: &str) -> String {
    let shown = format(amount, currency);
    shown
        .strip_suffix(currency)
        .map_or(shown.as_str(), str::trim_end)
        .to_string()
}

/// A rate (a GPU-hour's price): as [`format`], but to hundredths below 100 in
/// every currency, so a price under one unit of a currency without minor
/// units (0.39 JPY) is not shown as `0 JPY`.
pub fn format_rate(amount: rust_decimal::Decimal, currency: &str) -> String {
    format_with(amount, currency, false)
}

fn format_with(amount: rust_decimal::Decimal, currency: &str, whole_units: bool) -> String {
    use rust_decimal::RoundingStrategy::MidpointAwayFromZero;
    // ISO 4217 currencies without minor units are never shown with cents.
    const WHOLE: [&str; 17] = [
        "BIF", "CLP", "DJF", "GNF", "ISK", "JPY", "KMF", "KRW", "PYG", "RWF", "UGX", "UYI", "VND",
        "VUV", "XAF", "XOF", "XPF",
    ];
    // Cents below 100 as the amount rounds to cents: 99.995 is `100`, not
    // `100.00`.
    let cents = amount.round_dp_with_strategy(2, MidpointAwayFromZero);
    let places = if cents.is_zero()
        || cents.abs() >= rust_decimal::Decimal::ONE_HUNDRED
        || (whole_units && WHOLE.contains(&currency))
    {
        0
    } else {
        2
    };
    let mut rounded = amount.round_dp_with_strategy(places, MidpointAwayFromZero);
    rounded.rescale(places);
    let rounded = rounded.to_string();
    let (int, frac) = rounded.split_once('.').unwrap_or((&rounded, ""));
    let (sign, digits) = int.strip_prefix('-').map_or(("", int), |d| ("-", d));
    let mut grouped = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            grouped.push(',');
        }
        grouped.push(c);
    }
    let frac = if frac.is_empty() {
        String::new()
    } else {
        format!(".{frac}")
    };
    let sign = if grouped.chars().all(|c| c == '0' || c == ',')
        && frac.chars().all(|c| c == '0' || c == '.')
    {
        ""
    } else {
        sign
    };
    format!("{sign}{grouped}{frac} {currency}")
        .trim_end()
        .to_string()
}

/// A share for people: `0.3999` is `40%`.
pub fn percent(share: f64) -> String {
    format!("{:.0}%", 100.0 * share)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn money_is_grouped_and_rounded() {
        assert_eq!(format_f64(1_610_700.0, "USD"), "1,610,700 USD");
        assert_eq!(format_f64(1_928_601.6, "USD"), "1,928,602 USD");
        assert_eq!(format_f64(0.454, "USD"), "0.45 USD");
        // An amount that rounds to 100 is shown as one of 100 and up.
        assert_eq!(format_f64(99.999, "USD"), "100 USD");
        assert_eq!(format("99.995".parse().unwrap(), "USD"), "100 USD");
        assert_eq!(format_f64(-99.999, "USD"), "-100 USD");
        assert_eq!(format_f64(99.994, "USD"), "99.99 USD");
        assert_eq!(format_f64(-12_345.0, "EUR"), "-12,345 EUR");
        assert_eq!(format_f64(999.0, "USD"), "999 USD");
        assert_eq!(format_f64(99.995, "USD"), "100 USD");
        assert_eq!(format_f64(-0.001, "USD"), "0 USD");
        assert_eq!(format_f64(0.0, "USD"), "0 USD");
        assert_eq!(format_f64(1234.5, ""), "1,235");
        // Currencies without minor units: whole yen, even below 100.
        assert_eq!(format_f64(36.5, "JPY"), "37 JPY");
        assert_eq!(format_f64(0.4, "KRW"), "0 KRW");
        // In a table whose caption names the currency: rounded the same.
        let d = |s: &str| s.parse::<rust_decimal::Decimal>().unwrap();
        assert_eq!(format_bare(d("28.08"), "JPY"), "28");
        assert_eq!(format_bare(d("28.08"), "USD"), "28.08");
        assert_eq!(format_bare(d("12345.6"), "EUR"), "12,346");
        // A rate keeps hundredths below 100 in any currency.
        assert_eq!(format_rate(d("0.554"), "JPY"), "0.55 JPY");
        assert_eq!(format_rate(d("1234.5"), "JPY"), "1,235 JPY");
        assert_eq!(
            format(rust_decimal::Decimal::new(96_658_107, 2), "USD"),
            "966,581 USD"
        );
    }
}
