//! A table of the cost report: a header and rows, rendered as aligned text,
//! Markdown or HTML (cells escaped), numbers aligned right.

use super::chart;

/// A table: header and rows, rendered as aligned text or Markdown.
pub struct Table {
    pub head: Vec<String>,
    pub rows: Vec<Vec<String>>,
    /// Columns aligned right (numbers).
    pub right: Vec<bool>,
}

impl Table {
    pub fn new(head: &[(&str, bool)]) -> Table {
        Table {
            head: head.iter().map(|h| h.0.to_string()).collect(),
            right: head.iter().map(|h| h.1).collect(),
            rows: Vec::new(),
        }
    }

    pub fn text(&self) -> String {
        let widths: Vec<usize> = (0..self.head.len())
            .map(|i| {
                self.rows
                    .iter()
                    .map(|r| r[i].chars().count())
                    .chain([self.head[i].chars().count()])
                    .max()
                    .unwrap_or(0)
            })
            .collect();
        let line = |cells: Vec<&str>| -> String {
            let parts: Vec<String> = cells
                .iter()
                .enumerate()
                .map(|(i, c)| {
                    let pad = widths[i].saturating_sub(c.chars().count());
                    if self.right[i] {
                        format!("{}{c}", " ".repeat(pad))
                    } else {
                        format!("{c}{}", " ".repeat(pad))
                    }
                })
                .collect();
            format!("  {}\n", parts.join("  ").trim_end())
        };
        let mut out = line(self.head.iter().map(String::as_str).collect());
        for r in &self.rows {
            out.push_str(&line(r.iter().map(String::as_str).collect()));
        }
        out
    }

    pub fn markdown(&self) -> String {
        let mut out = format!("| {} |\n|", self.head.join(" | "));
        for r in &self.right {
            out.push_str(if *r { " ---: |" } else { " --- |" });
        }
        out.push('\n');
        for r in &self.rows {
            // Cells hold names and text from documents: no links, HTML,
            // mentions, emphasis or line breaks; the names the report put
            // in code spans stay code (`escape::cell`).
            let cells: Vec<String> = r.iter().map(|c| super::escape::cell(c)).collect();
            out.push_str(&format!("| {} |\n", cells.join(" | ")));
        }
        out
    }

    pub fn html(&self) -> String {
        let mut out = String::from("<table>\n<thead><tr>");
        for (h, r) in self.head.iter().zip(&self.right) {
            out.push_str(&format!(
                "<th{}>{}</th>",
                if *r { " class=\"n\"" } else { "" },
                chart::escape(h)
            ));
        }
        out.push_str("</tr></thead>\n<tbody>\n");
        for row in &self.rows {
            out.push_str("<tr>");
            for (c, r) in row.iter().zip(&self.right) {
                out.push_str(&format!(
                    "<td{}>{}</td>",
                    if *r { " class=\"n\"" } else { "" },
                    chart::escape(c)
                ));
            }
            out.push_str("</tr>\n");
        }
        out.push_str("</tbody>\n</table>\n");
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cells_from_documents_cannot_change_how_the_table_reads() {
        let mut t = Table::new(&[("team", false), ("cost center", false)]);
        t.rows.push(vec![
            "a|b".into(),
            "x\n## Injected <img src=x> [click](https://e.x) @acme/finops \u{202e}".into(),
        ]);
        let md = t.markdown();
        // One header, one rule, one row: the line break did not end the table.
        assert_eq!(md.lines().count(), 3, "{md}");
        let row = md.lines().nth(2).unwrap();
        assert!(row.contains("a\\|b"), "{row}");
        for raw in ["<img", "[click]", "@acme", "\u{202e}"] {
            assert!(!row.contains(raw), "{raw} in {row}");
        }
        assert!(row.contains("&lt;U+202E&gt;"), "{row}");
        // Names the report wrote as code stay code; a backtick that pairs
        // with none, or text a span would hide, cannot break out.
        let mut t = Table::new(&[("recommendation", false)]);
        t.rows.push(vec!["keep 3 of `h100-serve-1y` [x](y)".into()]);
        t.rows.push(vec!["`a|b` and `<img src=x>`".into()]);
        t.rows.push(vec!["odd ` [click](https://e.x)".into()]);
        let md = t.markdown();
        let rows: Vec<&str> = md.lines().skip(2).collect();
        assert_eq!(rows[0], "| keep 3 of `h100-serve-1y` \\[x\\](y) |", "{md}");
        assert_eq!(rows[1], "| `a\\|b` and `<img src=x>` |", "{md}");
        assert_eq!(rows[2], "| odd \\` \\[click\\](https://e.x) |", "{md}");
        let html = t.html();
        assert!(
            !html.contains("<img") && !html.contains('\u{202e}'),
            "{html}"
        );
    }
}
