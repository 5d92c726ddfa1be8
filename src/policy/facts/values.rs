//! Fact values: numbers rounded for people, time as text, and the two views
//! of a fact value the rest of the crate needs (a dotted-path lookup for
//! traces and outputs, and JSON).

use crate::model::{Spanned, Timestamp};
use minijinja::Value;
use minijinja::value::ValueKind;

/// Four decimals: enough for GPU-equivalents (1/7 = 0.1429) and shares.
pub fn round(x: f64) -> f64 {
    (x * 1e4).round() / 1e4
}

/// A share rounded down to four places: never above what it rounds, so a
/// rule's `>= 0.8` fires exactly where the budget's alert at 80% does
/// (79.9998% is not 80%).
pub fn round_down(x: f64) -> f64 {
    // Within a hair of a whole step, the step: 0.57 is 5699.999… ten-thousandths.
    (x * 1e4 + 1e-7).floor() / 1e4
}

/// A share rounded up to four places: never below what it rounds, so a
/// rule's `> 0.2` fires for 0.200025 as the report's 20.0025% says it
/// should (the waste shares, which rules compare with `>`).
pub fn round_up(x: f64) -> f64 {
    // Within a hair of a whole step, the step: 0.2 is 2000.000…2 ten-thousandths.
    // `+ 0.0`: -0.0 (the ceiling of a hair below 0) is shown as 0.
    (x * 1e4 - 1e-7).ceil() / 1e4 + 0.0
}

/// An hour index as an RFC 3339 time.
pub fn hour_text(hour: i64) -> String {
    Timestamp::from_second(hour * 3600)
        .map(|t| t.to_string())
        .unwrap_or_default()
}

pub fn texts<'s>(items: impl IntoIterator<Item = &'s Spanned<String>>) -> Vec<String> {
    items.into_iter().map(|s| s.value.clone()).collect()
}

/// Looks a dotted path up in a fact value (for traces).
pub fn lookup(facts: &Value, path: &str) -> Option<Value> {
    let mut v = facts.clone();
    for part in path.split('.') {
        v = v.get_attr(part).ok().filter(|x| !x.is_undefined())?;
    }
    Some(v)
}

/// A fact value as JSON.
pub fn to_json(v: &Value) -> serde_json::Value {
    match v.kind() {
        ValueKind::Undefined | ValueKind::None => serde_json::Value::Null,
        ValueKind::Bool => serde_json::Value::Bool(v.is_true()),
        ValueKind::Number => {
            if let Ok(i) = i64::try_from(v.clone()) {
                serde_json::Value::from(i)
            } else {
                f64::try_from(v.clone())
                    .ok()
                    .and_then(serde_json::Number::from_f64)
                    .map_or(serde_json::Value::Null, serde_json::Value::Number)
            }
        }
        ValueKind::String => serde_json::Value::String(v.as_str().unwrap_or("").to_string()),
        ValueKind::Seq | ValueKind::Iterable => serde_json::Value::Array(
            v.try_iter()
                .map(|it| it.map(|x| to_json(&x)).collect())
                .unwrap_or_default(),
        ),
        ValueKind::Map => {
            let mut m = serde_json::Map::new();
            if let Ok(keys) = v.try_iter() {
                for k in keys {
                    let key = k
                        .as_str()
                        .map(str::to_string)
                        .unwrap_or_else(|| k.to_string());
                    let child = v.get_item(&k).unwrap_or_default();
                    m.insert(key, to_json(&child));
                }
            }
            serde_json::Value::Object(m)
        }
        _ => serde_json::Value::String(v.to_string()),
    }
}

/// A fact value as JSON-like text: `true`, `256`, `3.14`, `"training"`, `{...}`.
pub fn show(v: &Value) -> String {
    match v.kind() {
        ValueKind::String => format!("{:?}", v.as_str().unwrap_or("")),
        ValueKind::Bool => v.is_true().to_string(),
        ValueKind::Number => match f64::try_from(v.clone()) {
            Ok(f) if f.fract() == 0.0 && f.abs() < 1e15 => format!("{}", f as i64),
            _ => v.to_string(),
        },
        ValueKind::None | ValueKind::Undefined => "none".into(),
        _ => to_json(v).to_string(),
    }
}

/// A fact struct as the value conditions are evaluated against (struct
/// fields become static-keyed maps).
pub fn value_of<T: serde::Serialize + ?Sized>(facts: &T) -> Value {
    Value::from(minijinja::value::Serde(facts))
}

#[cfg(test)]
mod round_tests {
    #[test]
    fn a_share_is_never_rounded_up_past_a_threshold() {
        // 79.9998% of a budget is below the 80% alert, and reads so.
        assert_eq!(super::round_down(0.799_998), 0.7999);
        assert!(super::round_down(0.799_998) < 0.8);
        assert_eq!(super::round_down(0.8), 0.8);
        assert_eq!(super::round_down(1.234_56), 1.2345);
        assert_eq!(super::round(0.799_998), 0.8);
        // Never a negative zero, which would print as "-0".
        assert!(super::round_up(0.0).is_sign_positive());
        assert_eq!(super::round_up(0.000_01), 0.0001);
    }
}
