//! YAML 1.2 core-schema scalars (integers in any base, floats, the special
//! float words), duplicate-key comparison, and scanner errors turned into
//! diagnostics at the right line and column.

use super::*;

/// Whether two keys are the same, without allocating for the usual string keys.
pub(super) fn same_key(a: &Node, b: &Node) -> bool {
    match (&a.value, &b.value) {
        (Value::Str(x), Value::Str(y)) => x == y,
        _ => a.key_text() == b.key_text(),
    }
}

/// YAML 1.2 core-schema integers: decimal, `0o` octal, `0x` hex.
/// `Some(Err(()))` is an integer that does not fit in 64 bits.
pub(super) fn resolve_int(s: &str) -> Option<Result<Value, ()>> {
    let (neg, digits) = match s.as_bytes().first()? {
        b'-' => (true, &s[1..]),
        b'+' => (false, &s[1..]),
        _ => (false, s),
    };
    let (radix, body) = if let Some(h) = digits.strip_prefix("0x") {
        (16, h)
    } else if let Some(o) = digits.strip_prefix("0o") {
        (8, o)
    } else {
        (10, digits)
    };
    if body.is_empty() || !body.chars().all(|c| c.is_digit(radix)) {
        return None;
    }
    if radix != 10 && (neg || s.starts_with('+')) {
        return None;
    }
    let magnitude = match u128::from_str_radix(body, radix) {
        Ok(m) => m,
        Err(_) => return Some(Err(())),
    };
    if neg {
        if magnitude <= i64::MAX as u128 + 1 {
            Some(Ok(Value::Int((magnitude as i128).wrapping_neg() as i64)))
        } else {
            Some(Err(()))
        }
    } else if magnitude <= i64::MAX as u128 {
        Some(Ok(Value::Int(magnitude as i64)))
    } else if magnitude <= u64::MAX as u128 {
        Some(Ok(Value::UInt(magnitude as u64)))
    } else {
        Some(Err(()))
    }
}

/// YAML 1.2 core-schema floats, including `.inf` and `.nan`.
pub(super) fn resolve_float(s: &str) -> Option<Value> {
    match s {
        ".inf" | ".Inf" | ".INF" | "+.inf" | "+.Inf" | "+.INF" => {
            return Some(Value::Float(f64::INFINITY));
        }
        "-.inf" | "-.Inf" | "-.INF" => return Some(Value::Float(f64::NEG_INFINITY)),
        ".nan" | ".NaN" | ".NAN" => return Some(Value::Float(f64::NAN)),
        _ => {}
    }
    let body = s.strip_prefix(['-', '+']).unwrap_or(s);
    let (mantissa, exponent) = match body.find(['e', 'E']) {
        Some(i) => (&body[..i], Some(&body[i + 1..])),
        None => (body, None),
    };
    let digits_ok = {
        let (int, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
        (!int.is_empty() || !frac.is_empty())
            && int.bytes().all(|b| b.is_ascii_digit())
            && frac.bytes().all(|b| b.is_ascii_digit())
            && (!int.is_empty() || mantissa.starts_with('.'))
    };
    let exp_ok = exponent.is_none_or(|e| {
        let e = e.strip_prefix(['-', '+']).unwrap_or(e);
        !e.is_empty() && e.bytes().all(|b| b.is_ascii_digit())
    });
    if digits_ok && exp_ok {
        s.parse::<f64>().ok().map(Value::Float)
    } else {
        None
    }
}

pub(super) fn scan_error(err: &ScanError, text: &str, file: FileId) -> Diagnostic {
    let marker = err.marker();
    let mut offset = marker
        .byte_offset()
        .unwrap_or_else(|| line_col_offset(text, marker.line(), marker.col() + 1))
        .min(text.len());
    let message = err.to_string();
    let message = message
        .split(" at byte ")
        .next()
        .and_then(|m| m.split(" at char ").next())
        .unwrap_or(&message)
        .trim()
        .to_string();
    let lower = message.to_ascii_lowercase();
    let (code, label, help, message) = if lower.contains("nesting")
        || lower.contains("recursion")
        || lower.contains("depth")
    {
        (
            Code::YamlTooDeep,
            "nested too deeply",
            "capops documents are at most a few levels deep; this nesting is a mistake or an attack",
            format!("values are nested more than {MAX_DEPTH} levels deep"),
        )
    } else if lower.contains("tab") {
        // The scanner reports the position after the tab; point at the tab itself.
        let line_start = text[..offset].rfind('\n').map_or(0, |i| i + 1);
        offset = text[line_start..offset]
            .find('\t')
            .map_or(offset, |i| line_start + i);
        (
            Code::YamlSyntax,
            "tab character",
            "YAML does not allow tabs for indentation: indent with spaces",
            message,
        )
    } else if lower.contains("mapping values") && long_key(text, offset) {
        (
            Code::YamlSyntax,
            "after a key of more than 1024 characters",
            "shorten the key (capops' keys are short names), or write a long key explicitly after `? `",
            format!(
                "a key on this line is longer than the 1024 characters YAML allows a plain key ({message})"
            ),
        )
    } else if lower.contains("unknown anchor") {
        // The parser says so from inside a flow value too, where the open
        // bracket would otherwise be blamed.
        (
            Code::YamlSyntax,
            "alias to an unknown anchor",
            "define the anchor (`&name`) before using it (`*name`), or quote a value that starts with `*`",
            "an alias refers to an unknown anchor".to_string(),
        )
    } else if let Some((open, c)) = unclosed(&text[..offset]) {
        // Say which bracket or quote is left open, and point at it too.
        let close = match c {
            '{' => '}',
            '[' => ']',
            q => q,
        };
        let line_start = text[..open].rfind('\n').map_or(0, |i| i + 1);
        let at = format!(
            "line {}, column {}",
            text[..open].matches('\n').count() + 1,
            text[line_start..open].chars().count() + 1
        );
        let what = if c == '{' || c == '[' {
            format!("the `{c}` at {at} is not closed")
        } else {
            format!("the quoted value that starts with `{c}` at {at} is not closed")
        };
        return Diagnostic::new(Code::YamlSyntax, format!("{what} ({message})"))
            .at(Span::new(file, offset, offset), "found here")
            .related(Span::new(file, open, open + 1), "opened here")
            .help(format!(
                "close it with `{close}` where the value ends (a flow value may span lines, but then every line of it is inside it)"
            ));
    } else {
        (
            Code::YamlSyntax,
            "here",
            "fix the YAML syntax at this place; quote values that contain `: ` or start with special characters",
            message,
        )
    };
    let width = usize::from(code == Code::YamlSyntax && lower.contains("tab"));
    Diagnostic::new(code, message)
        .at(Span::new(file, offset, offset + width), label)
        .help(help)
}

/// The bracket or quote left open at the end of `text`, and where it
/// Whether the text of the line before `offset` (a `:` the parser would
/// not take) holds more than the 1024 characters YAML allows a plain key.
fn long_key(text: &str, offset: usize) -> bool {
    let offset = offset.min(text.len());
    let line_start = text[..offset].rfind('\n').map_or(0, |i| i + 1);
    text.get(line_start..offset)
        .is_some_and(|key| key.trim_start().chars().count() > 1024)
}

/// opened: brackets outside quotes and comments, and quotes that start a
/// value (after `: `, `- `, a bracket or a comma, or first on a line), so
/// the apostrophe of `don't` opens nothing.
fn unclosed(text: &str) -> Option<(usize, char)> {
    let mut stack: Vec<(usize, char)> = Vec::new();
    let mut quote: Option<(usize, char)> = None;
    let mut comment = false;
    let mut prev = '\n';
    let mut last_mark = '\n';
    let mut chars = text.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        if c == '\n' {
            comment = false;
            if quote.is_none() {
                last_mark = '\n';
            }
            prev = c;
            continue;
        }
        if comment {
            continue;
        }
        match quote {
            Some((_, '"')) if c == '\\' => {
                chars.next();
            }
            Some((_, '\'')) if c == '\'' => {
                if chars.peek().is_some_and(|&(_, n)| n == '\'') {
                    chars.next();
                } else {
                    quote = None;
                }
            }
            Some((_, q)) if c == q => quote = None,
            Some(_) => {}
            None => match c {
                '#' if prev.is_whitespace() => comment = true,
                '"' | '\'' if matches!(last_mark, '\n' | ':' | '-' | '[' | '{' | ',') => {
                    quote = Some((i, c));
                }
                '{' | '[' => stack.push((i, c)),
                '}' | ']' => {
                    stack.pop();
                }
                _ => {}
            },
        }
        if !c.is_whitespace() && quote.is_none() {
            last_mark = c;
        }
        prev = c;
    }
    quote.or_else(|| stack.pop())
}

fn line_col_offset(text: &str, line: usize, column: usize) -> usize {
    let mut off = 0;
    for (i, l) in text.split_inclusive('\n').enumerate() {
        if i + 1 == line {
            let col_bytes: usize = l
                .chars()
                .take(column.saturating_sub(1))
                .map(char::len_utf8)
                .sum();
            return off + col_bytes;
        }
        off += l.len();
    }
    text.len()
}

impl Builder<'_> {
    pub(super) fn collection_tag(
        &self,
        tag: Option<&granit_parser::Tag>,
        expected: &str,
        at: u32,
    ) -> Step {
        match tag {
            None => Ok(()),
            Some(t) if t.core_suffix() == Some(expected) => Ok(()),
            Some(t) => Err(self.error(
                Code::YamlSyntax,
                at,
                &format!(
                    "the tag `{}{}` is not supported here",
                    t.original_handle(),
                    t.suffix()
                ),
                "capops reads plain YAML values; remove the tag",
            )),
        }
    }
}
