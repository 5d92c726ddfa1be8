//! Kubernetes quantities compared by value: `1000m` is `1`, `1Ki` is `1024`,
//! `8` is `"8"`.
//!
//! The API server writes quantities of typed fields (a ResourceQuota's
//! `spec.hard`) in canonical form, and custom resources keep whatever was
//! sent, so the live value of a field capops wrote as `8` may read back as
//! `"8"`, `8` or (written by someone else) `"8000m"`. Plans compare the
//! values, not the spellings. The grammar is Kubernetes' own:
//! `<sign><digits>[.<digits>]<suffix>`, the suffix a binary SI one
//! (`Ki`..`Ei`), a decimal SI one (`n`, `u`, `m`, ``, `k`, `M`..`E`) or a
//! decimal exponent (`e3`, `E-2`).

use serde_json::Value;

/// A quantity as an exact value: `mantissa × 10^exponent`, normalised so
/// that the mantissa has no trailing zeros (zero is `0 × 10^0`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Quantity {
    mantissa: i128,
    exponent: i32,
}

/// How a quantity is written, which Kubernetes keeps when it re-writes one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    BinarySi,
    DecimalSi,
    DecimalExponent,
}

impl Quantity {
    /// Parses a quantity string; `None` when it is not one.
    pub fn parse(s: &str) -> Option<Quantity> {
        Self::parse_with_format(s).map(|(q, _)| q)
    }

    /// Parses a quantity and tells how it was written.
    pub fn parse_with_format(s: &str) -> Option<(Quantity, Format)> {
        let s = s.trim();
        if s.is_empty() || s.len() > 64 {
            return None;
        }
        let (negative, rest) = match s.as_bytes()[0] {
            b'-' => (true, &s[1..]),
            b'+' => (false, &s[1..]),
            _ => (false, s),
        };
        let num_end = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len());
        let (number, suffix) = rest.split_at(num_end);
        let (int, frac) = match number.split_once('.') {
            Some((i, f)) => (i, f),
            None => (number, ""),
        };
        if (int.is_empty() && frac.is_empty()) || frac.contains('.') {
            return None;
        }
        let digits = format!("{int}{frac}");
        let digits = digits.trim_start_matches('0');
        if digits.len() > 30 {
            return None;
        }
        let mut mantissa: i128 = if digits.is_empty() {
            0
        } else {
            digits.parse().ok()?
        };
        let mut exponent = -(frac.len() as i32);
        let format = match suffix {
            "Ki" | "Mi" | "Gi" | "Ti" | "Pi" | "Ei" => {
                let power = match suffix {
                    "Ki" => 1,
                    "Mi" => 2,
                    "Gi" => 3,
                    "Ti" => 4,
                    "Pi" => 5,
                    _ => 6,
                };
                mantissa = mantissa.checked_mul(1i128 << (10 * power))?;
                Format::BinarySi
            }
            "n" | "u" | "m" | "" | "k" | "M" | "G" | "T" | "P" | "E" => {
                exponent += match suffix {
                    "n" => -9,
                    "u" => -6,
                    "m" => -3,
                    "" => 0,
                    "k" => 3,
                    "M" => 6,
                    "G" => 9,
                    "T" => 12,
                    "P" => 15,
                    _ => 18,
                };
                Format::DecimalSi
            }
            e if e.starts_with(['e', 'E']) => {
                let n: i32 = e[1..].parse().ok()?;
                if !(-100..=100).contains(&n) {
                    return None;
                }
                exponent += n;
                Format::DecimalExponent
            }
            _ => return None,
        };
        if negative {
            mantissa = -mantissa;
        }
        Some((Quantity::new(mantissa, exponent), format))
    }

    fn new(mut mantissa: i128, mut exponent: i32) -> Quantity {
        if mantissa == 0 {
            return Quantity {
                mantissa: 0,
                exponent: 0,
            };
        }
        while mantissa % 10 == 0 {
            mantissa /= 10;
            exponent += 1;
        }
        Quantity { mantissa, exponent }
    }

    /// A quantity from a JSON value: a string in quantity form, or an
    /// integer (Kubernetes accepts `nominalQuota: 8`). Floats are not
    /// quantities.
    pub fn from_json(v: &Value) -> Option<Quantity> {
        match v {
            Value::String(s) => Quantity::parse(s),
            Value::Number(n) => n
                .as_i64()
                .map(|i| Quantity::new(i128::from(i), 0))
                .or_else(|| n.as_u64().map(|u| Quantity::new(i128::from(u), 0))),
            _ => None,
        }
    }

    /// The canonical spelling Kubernetes writes for a quantity that was
    /// written in `format`: `1000m` → `1`, `1500m` stays, `2048Ki` → `2Mi`,
    /// `1000` → `1k`.
    pub fn canonical(&self, format: Format) -> String {
        if self.mantissa == 0 {
            return "0".into();
        }
        if format == Format::BinarySi && self.exponent >= 0 {
            // Whole numbers of at least 1Ki keep a binary suffix.
            if let Some(v) = 10i128
                .checked_pow(self.exponent as u32)
                .and_then(|p| self.mantissa.checked_mul(p))
                && v.abs() >= 1024
            {
                let mut v = v;
                let mut power = 0;
                while power < 6 && v % 1024 == 0 {
                    v /= 1024;
                    power += 1;
                }
                let suffix = ["", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"][power];
                return format!("{v}{suffix}");
            }
        }
        // Decimal: the largest exponent that is a multiple of 3, keeps the
        // mantissa whole, and has a suffix (n .. E).
        let mut e3 = self.exponent.div_euclid(3) * 3;
        e3 = e3.clamp(-9, 18);
        let shift = self.exponent - e3;
        let mantissa = if shift >= 0 {
            self.mantissa * 10i128.pow(shift as u32)
        } else {
            // Below nano: Kubernetes rounds up to 1n; capops never writes such values.
            let p = 10i128.pow((-shift) as u32);
            (self.mantissa + p - 1) / p
        };
        if format == Format::DecimalExponent {
            return if e3 == 0 {
                mantissa.to_string()
            } else {
                format!("{mantissa}e{e3}")
            };
        }
        let suffix = match e3 {
            -9 => "n",
            -6 => "u",
            -3 => "m",
            0 => "",
            3 => "k",
            6 => "M",
            9 => "G",
            12 => "T",
            15 => "P",
            _ => "E",
        };
        format!("{mantissa}{suffix}")
    }
}

/// Whether two JSON values are equal, quantities compared by value:
/// `"1000m"` equals `1` and `"1"`. Objects and arrays compare member by member.
pub fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| same(v, w)))
        }
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(v, w)| same(v, w))
        }
        _ if a == b => true,
        (Value::String(_) | Value::Number(_), Value::String(_) | Value::Number(_)) => {
            match (Quantity::from_json(a), Quantity::from_json(b)) {
                (Some(x), Some(y)) => x == y,
                _ => false,
            }
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn q(s: &str) -> Quantity {
        Quantity::parse(s).unwrap_or_else(|| panic!("{s} should parse"))
    }

    #[test]
    fn equal_values_in_every_spelling() {
        assert_eq!(q("1000m"), q("1"));
        assert_eq!(q("1k"), q("1000"));
        assert_eq!(q("1Ki"), q("1024"));
        assert_eq!(q("1e3"), q("1k"));
        assert_eq!(q("0.5"), q("500m"));
        assert_eq!(q("+8"), q("8"));
        assert_eq!(q("0"), q("0m"));
        assert_eq!(q("2Gi"), q("2048Mi"));
        assert_ne!(q("1"), q("1001m"));
        assert_ne!(q("-1"), q("1"));
    }

    #[test]
    fn rejects_what_kubernetes_rejects() {
        for bad in [
            "", "abc", "1.2.3", "1KI", "1 k", ".", "1e", "8gb", "--1", "1mm",
        ] {
            assert!(Quantity::parse(bad).is_none(), "{bad} should not parse");
        }
    }

    #[test]
    fn canonical_spelling_follows_kubernetes() {
        let c = |s: &str| {
            let (q, f) = Quantity::parse_with_format(s).unwrap();
            q.canonical(f)
        };
        assert_eq!(c("1000m"), "1");
        assert_eq!(c("1500m"), "1500m");
        assert_eq!(c("1000"), "1k");
        assert_eq!(c("8"), "8");
        assert_eq!(c("2048Ki"), "2Mi");
        assert_eq!(c("1536Ki"), "1536Ki");
        assert_eq!(c("100Ki"), "100Ki");
        assert_eq!(c("0.5Ki"), "512");
        assert_eq!(c("1e3"), "1e3");
        assert_eq!(c("0"), "0");
        assert_eq!(c("12000000"), "12M");
    }

    #[test]
    fn json_values_compare_as_quantities() {
        assert!(same(&json!(8), &json!("8")));
        assert!(same(&json!("1000m"), &json!(1)));
        assert!(same(
            &json!({"hard": {"requests.nvidia.com/gpu": "8000m"}}),
            &json!({"hard": {"requests.nvidia.com/gpu": 8}})
        ));
        assert!(!same(&json!("8"), &json!("9")));
        assert!(!same(&json!("a"), &json!("b")));
        assert!(!same(&json!([1, 2]), &json!([2, 1])));
        assert!(!same(&json!({"a": 1}), &json!({"a": 1, "b": 2})));
        // Floats are not quantities.
        assert!(!same(&json!(1.0), &json!("1")));
    }
}
