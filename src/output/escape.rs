//! Text from users made safe to show: Markdown for comments and job
//! summaries (no links, HTML, table breaks, emphasis or mentions), inline
//! code that holds any text, paths for links, and text for a terminal or a
//! CI log (no escape sequences: a value cannot retitle the window, clear
//! the screen or recolour what follows).
//!
//! File names, messages and names come from pull requests; a contributor
//! who can name a file `<img src=x>` or `a|b` must not be able to change how
//! the comment reads.

/// Markdown-escapes text that came from users (file names, messages, roles,
/// team slugs): no links, no HTML, no table breaks, no emphasis, no mentions,
/// one line.
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '&' => out.push_str("&amp;"),
            '@' => out.push_str("@\u{200b}"),
            '\n' | '\r' | '\t' => out.push(' '),
            '\\' | '`' | '*' | '_' | '[' | ']' | '|' | '~' | '#' | '!' => {
                out.push('\\');
                out.push(c);
            }
            c if c.is_control() => {}
            c if reorders(c) => out.push_str(&format!("&lt;U+{:04X}&gt;", c as u32)),
            c => out.push(c),
        }
    }
    out
}

/// A table cell the report built: text with names in single-backtick code
/// spans (``keep 3 of `h100-serve-1y` ``). The spans stay code (each
/// re-fenced as [`cell_code`] does, so what is inside cannot end it or the
/// cell); the text between them is escaped as [`escape`] does. A cell whose
/// backticks do not pair up is escaped whole.
pub fn cell(s: &str) -> String {
    let ticks = s.matches('`').count();
    if ticks == 0 || ticks % 2 == 1 || s.contains("``") {
        return escape(s);
    }
    s.split('`')
        .enumerate()
        .map(|(i, part)| {
            if i % 2 == 1 {
                cell_code(part)
            } else {
                escape(part)
            }
        })
        .collect()
}

/// Whether a character is a bidirectional embedding, override or isolate
/// (U+202A to U+202E, U+2066 to U+2069), or an invisible direction mark
/// (U+200E, U+200F, U+061C): shown raw, it reverses the order in which what
/// follows reads ("Trojan Source"), so a name can look like another. Every
/// output shows it by its code point instead.
pub fn reorders(c: char) -> bool {
    matches!(
        c,
        '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}' | '\u{200E}' | '\u{200F}' | '\u{061C}'
    )
}

/// The longest run of `c` in `s`.
pub fn longest_run(s: &str, c: char) -> usize {
    let (mut longest, mut run) = (0, 0);
    for x in s.chars() {
        run = if x == c { run + 1 } else { 0 };
        longest = longest.max(run);
    }
    longest
}

/// Inline code holding any text: one line, no control characters, fenced
/// with more backticks than the longest run inside; in a table `|` is
/// escaped so that it cannot end the cell (GitHub unescapes it there).
fn code_span(s: &str, in_table: bool) -> String {
    let mut inner: String = s
        .chars()
        .map(|c| {
            if matches!(c, '\n' | '\r' | '\t') {
                ' '
            } else {
                c
            }
        })
        .filter(|c| !c.is_control())
        .flat_map(|c| {
            let shown = if reorders(c) {
                format!("<U+{:04X}>", c as u32)
            } else {
                c.to_string()
            };
            shown.chars().collect::<Vec<_>>()
        })
        .collect();
    if in_table {
        inner = inner.replace('|', "\\|");
    }
    let fence = "`".repeat(longest_run(&inner, '`') + 1);
    if inner.is_empty() {
        return "` `".into();
    }
    let pad = if inner.starts_with('`') || inner.ends_with('`') {
        " "
    } else {
        ""
    };
    format!("{fence}{pad}{inner}{pad}{fence}")
}

/// Inline code outside a table.
pub fn code(s: &str) -> String {
    code_span(s, false)
}

/// Inline code inside a table cell.
pub fn cell_code(s: &str) -> String {
    code_span(s, true)
}

/// Percent-encodes a repository path for a link: everything but unreserved
/// characters and `/`.
pub fn url_path(path: &str) -> String {
    let mut out = String::with_capacity(path.len());
    for b in path.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'~' | b'/') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// Whether a character would be acted on by a terminal rather than shown:
/// C0 controls other than newline and tab, DEL, and the C1 controls (a
/// UTF-8 terminal reads U+009B as the start of a control sequence), and
/// the bidirectional controls of [`reorders`] (they reorder what follows). A
/// carriage return is one only when no newline follows it (CRLF ends a
/// line; a CR alone returns to its start and lets what follows overwrite
/// what was shown).
fn acted_on(c: char, next: Option<char>) -> bool {
    (c.is_control() && c != '\n' && c != '\t' && !(c == '\r' && next == Some('\n'))) || reorders(c)
}

/// The escape of a control character: `\u001b`, which reads the same in
/// a log and, inside a JSON string, is the JSON escape of the same
/// character (so JSON on stdout stays valid and means what it meant).
fn push_escaped(out: &mut String, c: char) {
    out.push_str(&format!("\\u{:04x}", c as u32));
}

/// Whether text holds a character a terminal would act on.
pub fn acts_on_terminal(s: &str) -> bool {
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        if acted_on(c, chars.peek().copied()) {
            return true;
        }
    }
    false
}

/// Text for a terminal: every control character a terminal would act on
/// written as `\u001b`; newlines, tabs and CRLF kept.
pub fn terminal(s: &str) -> std::borrow::Cow<'_, str> {
    if !acts_on_terminal(s) {
        return std::borrow::Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        if acted_on(c, chars.peek().copied()) {
            push_escaped(&mut out, c);
        } else {
            out.push(c);
        }
    }
    std::borrow::Cow::Owned(out)
}

/// One line for a terminal (a file name): [`terminal`], and newlines and
/// tabs escaped too, so that a name cannot start a line of its own.
pub fn terminal_line(s: &str) -> std::borrow::Cow<'_, str> {
    if !s.chars().any(|c| c.is_control() || reorders(c)) {
        return std::borrow::Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        match c {
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            c if c.is_control() || reorders(c) => push_escaped(&mut out, c),
            c => out.push(c),
        }
    }
    out.into()
}

/// A writer that shows what it is given as [`terminal`] does: for an
/// output that carries no escape sequences of its own (capops' stdout,
/// and stderr without colour). JSON stays valid: serde_json escapes the
/// C0 controls itself, and DEL and the C1 controls it writes raw become
/// `\u007f`, the JSON escape of the same character. A UTF-8 sequence (or a
/// CR) split from what follows it is held until the next write or flush.
pub struct Terminal<W: std::io::Write> {
    inner: W,
    pending: Vec<u8>,
}

impl<W: std::io::Write> Terminal<W> {
    pub fn new(inner: W) -> Self {
        Terminal {
            inner,
            pending: Vec::new(),
        }
    }
}

impl<W: std::io::Write> std::io::Write for Terminal<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        // Fast path: nothing a terminal acts on (bytes below 0x20 other than
        // newline and tab, DEL, 0xC2 that may start a C1 control, and 0xD8
        // and 0xE2 that may start a bidirectional control).
        let plain = |b: &u8| {
            !((*b < 0x20 && *b != b'\n' && *b != b'\t')
                || *b == 0x7f
                || *b == 0xc2
                || *b == 0xd8
                || *b == 0xe2)
        };
        if self.pending.is_empty() && buf.iter().all(plain) {
            return self.inner.write(buf);
        }
        let mut all = std::mem::take(&mut self.pending);
        all.extend_from_slice(buf);
        // Whole characters only; the tail of a split sequence, or a CR at
        // the end (a newline may follow), waits.
        let mut whole = match std::str::from_utf8(&all) {
            Ok(_) => all.len(),
            Err(e) if e.error_len().is_none() => e.valid_up_to(),
            // Not UTF-8: written as it is, less the C0 controls.
            Err(_) => {
                let bytes: Vec<u8> = all
                    .into_iter()
                    .map(|b| if plain(&b) || b >= 0x80 { b } else { b'?' })
                    .collect();
                self.inner.write_all(&bytes)?;
                return Ok(buf.len());
            }
        };
        if whole > 0 && all[whole - 1] == b'\r' {
            whole -= 1;
        }
        let text = String::from_utf8_lossy(&all[..whole]).into_owned();
        let shown = terminal(&text);
        self.pending = all[whole..].to_vec();
        self.inner.write_all(shown.as_bytes())?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        if !self.pending.is_empty() {
            let rest = std::mem::take(&mut self.pending);
            let text = String::from_utf8_lossy(&rest).into_owned();
            self.inner.write_all(terminal(&text).as_bytes())?;
        }
        self.inner.flush()
    }
}

impl<W: std::io::Write> Drop for Terminal<W> {
    fn drop(&mut self) {
        let _ = std::io::Write::flush(self);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn terminal_text_acts_on_nothing() {
        assert_eq!(terminal("plain\ttext\r\n"), "plain\ttext\r\n");
        assert_eq!(
            terminal("a\u{1b}]0;pwned\u{7}\u{1b}[2Jb\u{9b}31m\rz"),
            "a\\u001b]0;pwned\\u0007\\u001b[2Jb\\u009b31m\\u000dz"
        );
        assert_eq!(
            terminal_line("dev\u{1b}[31mex\nx.yaml"),
            "dev\\u001b[31mex\\nx.yaml"
        );
        // Written in pieces, a split sequence and CRLF included, it reads the same.
        use std::io::Write as _;
        let mut out = Vec::new();
        {
            let mut w = Terminal::new(&mut out);
            let text = "é\u{1b}[2J\u{9b}x\r\n\u{7f}";
            for b in text.as_bytes() {
                w.write_all(std::slice::from_ref(b)).unwrap();
            }
        }
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "é\\u001b[2J\\u009bx\r\n\\u007f"
        );
        // JSON that holds DEL and a C1 control raw stays JSON, with the same text.
        let value = serde_json::json!({"file": "dev\u{7f}ex\u{85}.yaml"});
        let mut out = Vec::new();
        {
            let mut w = Terminal::new(&mut out);
            serde_json::to_writer(&mut w, &value).unwrap();
        }
        let back: serde_json::Value = serde_json::from_slice(&out).unwrap();
        assert_eq!(back, value);
    }

    #[test]
    fn bidirectional_controls_are_shown_by_code_point() {
        // "team-a" followed by a right-to-left override reads reversed.
        let name = "team-\u{202e}a.yaml\u{2066}\u{61c}";
        assert_eq!(terminal(name), "team-\\u202ea.yaml\\u2066\\u061c");
        assert_eq!(terminal_line(name), "team-\\u202ea.yaml\\u2066\\u061c");
        assert_eq!(
            escape(name),
            "team-&lt;U+202E&gt;a.yaml&lt;U+2066&gt;&lt;U+061C&gt;"
        );
        assert_eq!(code(name), "`team-<U+202E>a.yaml<U+2066><U+061C>`");
        // Through the writer, byte by byte, and as JSON that reads back the same.
        use std::io::Write as _;
        let value = serde_json::json!({ "team": name, "note": "… ─ ×" });
        let mut out = Vec::new();
        {
            let mut w = Terminal::new(&mut out);
            for b in serde_json::to_vec(&value).unwrap() {
                w.write_all(&[b]).unwrap();
            }
            w.flush().unwrap();
        }
        let text = String::from_utf8(out.clone()).unwrap();
        assert!(!text.chars().any(reorders), "{text}");
        assert!(text.contains("… ─ ×"), "{text}");
        let back: serde_json::Value = serde_json::from_slice(&out).unwrap();
        assert_eq!(back, value);
    }

    #[test]
    fn code_spans_hold_any_text() {
        assert_eq!(code("a"), "`a`");
        assert_eq!(code("a`b"), "``a`b``");
        assert_eq!(code("`x``"), "``` `x`` ```");
        assert_eq!(code("a\nb\u{7}"), "`a b`");
        assert_eq!(cell_code("a|b"), "`a\\|b`");
        assert_eq!(code(""), "` `");
    }

    #[test]
    fn escaped_text_has_no_markup_left() {
        let e = escape("x | y <b>&</b> [l](u) @org/team **b** ~s~ # h\n!");
        assert_eq!(
            e,
            "x \\| y &lt;b&gt;&amp;&lt;/b&gt; \\[l\\](u) @\u{200b}org/team \\*\\*b\\*\\* \\~s\\~ \\# h \\!"
        );
    }

    #[test]
    fn link_paths_are_percent_encoded() {
        assert_eq!(url_path("requests/a b|c.yaml"), "requests/a%20b%7Cc.yaml");
        assert_eq!(url_path("é"), "%C3%A9");
    }
}
