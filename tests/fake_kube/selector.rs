//! Label selectors as the API server reads them: `k=v`, `k==v`, `k!=v`,
//! `k in (a,b)`, `k notin (a,b)`, `k`, `!k`, comma-separated; a malformed one
//! is a 400 with the real server's kind of message.

use serde_json::Value;

/// A parsed label selector requirement.
#[derive(Debug)]
pub enum Req {
    Eq(String, String),
    Ne(String, String),
    In(String, Vec<String>),
    NotIn(String, Vec<String>),
    Exists(String),
    NotExists(String),
}

/// Parses a label selector; `Err` with the real server's kind of message.
pub fn parse(s: &str) -> Result<Vec<Req>, String> {
    let mut parts = Vec::new();
    let mut depth = 0;
    let mut cur = String::new();
    for c in s.chars() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(std::mem::take(&mut cur));
                continue;
            }
            _ => {}
        }
        cur.push(c);
    }
    parts.push(cur);
    let valid_key = |k: &str| {
        !k.is_empty()
            && k.chars()
                .all(|c| c.is_ascii_alphanumeric() || "-_./".contains(c))
    };
    let mut out = Vec::new();
    for p in parts.iter().map(|p| p.trim()).filter(|p| !p.is_empty()) {
        let set = |rest: &str| -> Result<Vec<String>, String> {
            let inner = rest
                .trim()
                .strip_prefix('(')
                .and_then(|r| r.strip_suffix(')'))
                .ok_or_else(|| format!("unable to parse requirement: expected '(' in {p:?}"))?;
            Ok(inner.split(',').map(|v| v.trim().to_string()).collect())
        };
        let req = if let Some(k) = p.strip_prefix('!') {
            Req::NotExists(k.trim().to_string())
        } else if let Some((k, v)) = p.split_once("!=") {
            Req::Ne(k.trim().into(), v.trim().into())
        } else if let Some((k, v)) = p.split_once("==") {
            if v.contains('=') {
                return Err("unable to parse requirement: found '=', expected: identifier".into());
            }
            Req::Eq(k.trim().into(), v.trim().into())
        } else if let Some((k, v)) = p.split_once('=') {
            if v.starts_with('=') || v.contains('=') {
                return Err("unable to parse requirement: found '=', expected: identifier".into());
            }
            Req::Eq(k.trim().into(), v.trim().into())
        } else if let Some((k, rest)) = p.split_once(" notin ") {
            Req::NotIn(k.trim().into(), set(rest)?)
        } else if let Some((k, rest)) = p.split_once(" in ") {
            Req::In(k.trim().into(), set(rest)?)
        } else {
            Req::Exists(p.to_string())
        };
        let key = match &req {
            Req::Eq(k, _)
            | Req::Ne(k, _)
            | Req::In(k, _)
            | Req::NotIn(k, _)
            | Req::Exists(k)
            | Req::NotExists(k) => k,
        };
        if !valid_key(key) {
            return Err(format!(
                "unable to parse requirement: invalid label key {key:?}"
            ));
        }
        out.push(req);
    }
    Ok(out)
}

pub fn matches(labels: &Value, reqs: &[Req]) -> bool {
    let get = |k: &str| labels.get(k).and_then(Value::as_str);
    reqs.iter().all(|r| match r {
        Req::Eq(k, v) => get(k) == Some(v.as_str()),
        Req::Ne(k, v) => get(k) != Some(v.as_str()),
        Req::In(k, vs) => get(k).is_some_and(|x| vs.iter().any(|v| v == x)),
        Req::NotIn(k, vs) => get(k).is_none_or(|x| !vs.iter().any(|v| v == x)),
        Req::Exists(k) => get(k).is_some(),
        Req::NotExists(k) => get(k).is_none(),
    })
}
