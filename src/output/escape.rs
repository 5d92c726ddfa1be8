//! Text from users made safe to show: Markdown for comments and job
//! summaries (no links, HTML, table breaks, emphasis or mentions), inline
//! code that holds any text, and paths for links.
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
            c => out.push(c),
        }
    }
    out
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

#[cfg(test)]
mod tests {
    use super::*;

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
