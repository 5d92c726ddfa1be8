//! A small, deterministic YAML writer for rendered objects.
//!
//! Keys come out sorted (serde_json's maps are ordered), two-space indents,
//! block style, and a string is written plain only when YAML 1.1 and 1.2
//! readers would both read it back as the same string; otherwise it is
//! double-quoted with JSON escapes (valid YAML). Multi-line strings use a
//! literal block (`|` or `|-`). The same value always gives the same bytes,
//! so rendering twice with nothing changed gives no diff.

use serde_json::Value;

/// The value with every mapping's keys in byte order, whatever order the
/// map kept them in.
pub fn sorted(value: &Value) -> Value {
    match value {
        Value::Object(m) => {
            let mut keys: Vec<&String> = m.keys().collect();
            keys.sort();
            Value::Object(
                keys.into_iter()
                    .map(|k| (k.clone(), sorted(&m[k])))
                    .collect(),
            )
        }
        Value::Array(a) => Value::Array(a.iter().map(sorted).collect()),
        other => other.clone(),
    }
}

/// Writes one document (without `---`), keys sorted.
pub fn to_string(value: &Value) -> String {
    let value = &sorted(value);
    let mut out = String::new();
    match value {
        Value::Object(m) if !m.is_empty() => write_map(&mut out, m, 0),
        Value::Array(a) if !a.is_empty() => write_seq(&mut out, a, 0),
        other => {
            out.push_str(&scalar(other));
            out.push('\n');
        }
    }
    out
}

fn indent(out: &mut String, n: usize) {
    out.extend(std::iter::repeat_n(' ', n));
}

fn write_map(out: &mut String, m: &serde_json::Map<String, Value>, level: usize) {
    for (k, v) in m {
        indent(out, level);
        out.push_str(&string(k));
        out.push(':');
        write_value_after_key(out, v, level);
    }
}

fn write_seq(out: &mut String, a: &[Value], level: usize) {
    for v in a {
        indent(out, level);
        out.push('-');
        match v {
            Value::Object(m) if !m.is_empty() => {
                // The first key on the dash line, the rest aligned under it.
                let mut first = true;
                for (k, inner) in m {
                    if first {
                        out.push(' ');
                        first = false;
                    } else {
                        indent(out, level + 2);
                    }
                    out.push_str(&string(k));
                    out.push(':');
                    write_value_after_key(out, inner, level + 2);
                }
            }
            Value::Array(inner) if !inner.is_empty() => {
                out.push('\n');
                write_seq(out, inner, level + 2);
            }
            Value::String(s) if s.contains('\n') => {
                out.push(' ');
                block(out, s, level + 2);
            }
            other => {
                out.push(' ');
                out.push_str(&scalar(other));
                out.push('\n');
            }
        }
    }
}

fn write_value_after_key(out: &mut String, v: &Value, level: usize) {
    match v {
        Value::Object(m) if !m.is_empty() => {
            out.push('\n');
            write_map(out, m, level + 2);
        }
        Value::Array(a) if !a.is_empty() => {
            out.push('\n');
            write_seq(out, a, level);
        }
        Value::String(s) if s.contains('\n') => {
            out.push(' ');
            block(out, s, level + 2);
        }
        other => {
            out.push(' ');
            out.push_str(&scalar(other));
            out.push('\n');
        }
    }
}

/// A literal block scalar; falls back to a quoted string when a line would
/// not survive the block (leading spaces on the first line, tabs, control
/// characters, trailing spaces).
fn block(out: &mut String, s: &str, level: usize) {
    let safe = !s.starts_with(' ')
        && !s.chars().any(|c| escaped(c) && c != '\n')
        && !s.trim_matches('\n').is_empty()
        && s.lines().all(|l| !l.ends_with(' '));
    if !safe {
        out.push_str(&quoted(s));
        out.push('\n');
        return;
    }
    let body = s.strip_suffix('\n').unwrap_or(s);
    if body.ends_with('\n') {
        // More than one trailing newline: keep them exactly.
        out.push_str(&quoted(s));
        out.push('\n');
        return;
    }
    out.push_str(if s.ends_with('\n') { "|\n" } else { "|-\n" });
    for line in body.split('\n') {
        if !line.is_empty() {
            indent(out, level);
            out.push_str(line);
        }
        out.push('\n');
    }
}

fn scalar(v: &Value) -> String {
    match v {
        Value::Null => "null".into(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => n.to_string(),
        Value::String(s) => string(s),
        Value::Array(_) => "[]".into(),
        Value::Object(_) => "{}".into(),
    }
}

/// A string, plain when that reads back as the same string, else quoted.
pub fn string(s: &str) -> String {
    if plain_ok(s) {
        s.to_string()
    } else {
        quoted(s)
    }
}

/// A double-quoted scalar. Every character YAML cannot print as is (C0
/// and C1 controls, DEL, U+FEFF, U+FFFE, U+FFFF) or that YAML 1.1 reads as a
/// line break (U+0085, U+2028, U+2029) is escaped, so the value reads back
/// the same in both.
fn quoted(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if escaped(c) => out.push_str(&format!("\\u{:04X}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// Characters written only as escapes (see [`quoted`]).
fn escaped(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{85}' | '\u{2028}' | '\u{2029}' | '\u{FEFF}' | '\u{FFFE}' | '\u{FFFF}'
        )
}

fn plain_ok(s: &str) -> bool {
    if s.is_empty() || s.len() > 200 {
        return false;
    }
    // Words YAML 1.1 or 1.2 read as something other than a string.
    const SPECIAL: &[&str] = &[
        "null", "Null", "NULL", "~", "true", "True", "TRUE", "false", "False", "FALSE", "yes",
        "Yes", "YES", "no", "No", "NO", "on", "On", "ON", "off", "Off", "OFF", "y", "Y", "n", "N",
        ".inf", ".Inf", ".INF", "-.inf", "-.Inf", "-.INF", ".nan", ".NaN", ".NAN", "<<", "=",
    ];
    if SPECIAL.contains(&s) {
        return false;
    }
    // Anything that starts like a number, a date or a sexagesimal is quoted.
    let first = s.chars().next().expect("not empty");
    if first.is_ascii_digit() || ((first == '-' || first == '+' || first == '.') && s.len() > 1) {
        return false;
    }
    if s.starts_with(|c: char| "-?:,[]{}#&*!|>'\"%@`~ ".contains(c)) || s.ends_with(' ') {
        return false;
    }
    if s.contains(": ") || s.contains(" #") || s.ends_with(':') {
        return false;
    }
    s.chars()
        .all(|c| c.is_ascii_alphanumeric() || "-_./=:+ ()".contains(c))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn keys_are_sorted_and_ambiguous_strings_quoted() {
        let v = json!({
            "spec": {"hard": {"requests.nvidia.com/gpu": "8", "pods": "10"}},
            "kind": "ResourceQuota",
            "list": [{"b": "no", "a": 1}, "2026-01-01", "plain text", ""],
            "empty": {},
            "none": [],
            "text": "version: v1\nmig-configs:\n  a: 1\n",
        });
        let y = to_string(&v);
        assert_eq!(
            y,
            "empty: {}\nkind: ResourceQuota\nlist:\n- a: 1\n  b: \"no\"\n- \"2026-01-01\"\n- plain text\n- \"\"\nnone: []\nspec:\n  hard:\n    pods: \"10\"\n    requests.nvidia.com/gpu: \"8\"\ntext: |\n  version: v1\n  mig-configs:\n    a: 1\n"
        );
    }

    #[test]
    fn written_yaml_reads_back_as_the_same_value() {
        let v = json!({
            "a": ["x: y", "#c", "-1", "1.5", "true", "~", "a b", "ü", "tab\there", "  lead"],
            "b": {"nested": [[1, 2], {"k": "line1\nline2"}]},
            "c": "trailing\n\n",
            "d": null,
            "e": -3,
            "f": ["del\u{7f}", "nel\u{85}", "c1\u{9f}", "ls\u{2028}x", "\u{feff}bom", "\u{fffe}", "\n", "\n\n", "q\"\\"],
            "g": "two\nlines\u{7f}",
            "h": "\n",
        });
        let y = to_string(&v);
        let parsed = crate::load::yaml::parse(&y, crate::diag::FileId(0));
        assert!(parsed.diagnostics.is_empty(), "{y}");
        let back = crate::load::json::to_json(&parsed.documents[0]);
        assert_eq!(back, v, "{y}");
    }
}
