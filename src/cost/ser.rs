//! How the report writes money and prices in JSON: amounts always with two
//! decimals (`58400.00`, never `58400` or `44895000.0`), per-GPU-hour prices
//! always with four (`5.0000`), whatever scale the arithmetic left them at.

use rust_decimal::Decimal;
use serde::Serializer;

fn scaled(d: &Decimal, places: u32) -> Decimal {
    let mut x = d.round_dp(places);
    x.rescale(places);
    x
}

/// An amount of money, to the cent.
pub fn cents<S: Serializer>(d: &Decimal, s: S) -> Result<S::Ok, S::Error> {
    serde::Serialize::serialize(&scaled(d, 2), s)
}

/// An amount of money, to the cent, or null.
pub fn cents_opt<S: Serializer>(d: &Option<Decimal>, s: S) -> Result<S::Ok, S::Error> {
    serde::Serialize::serialize(&d.as_ref().map(|d| scaled(d, 2)), s)
}

/// A price per GPU-hour, to four decimals.
pub fn price<S: Serializer>(d: &Decimal, s: S) -> Result<S::Ok, S::Error> {
    serde::Serialize::serialize(&scaled(d, 4), s)
}

/// A price per GPU-hour, to four decimals, or null.
pub fn price_opt<S: Serializer>(d: &Option<Decimal>, s: S) -> Result<S::Ok, S::Error> {
    serde::Serialize::serialize(&d.as_ref().map(|d| scaled(d, 4)), s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(serde::Serialize)]
    struct Row {
        #[serde(serialize_with = "cents")]
        a: Decimal,
        #[serde(serialize_with = "cents_opt")]
        b: Option<Decimal>,
        #[serde(serialize_with = "price")]
        c: Decimal,
    }

    #[test]
    fn money_has_two_decimals_and_prices_four() {
        let row = Row {
            a: Decimal::new(584, 0) * Decimal::from(100),
            b: Some(Decimal::new(448950000, 1)),
            c: Decimal::from(5),
        };
        assert_eq!(
            serde_json::to_string(&row).unwrap(),
            r#"{"a":"58400.00","b":"44895000.00","c":"5.0000"}"#
        );
    }
}
