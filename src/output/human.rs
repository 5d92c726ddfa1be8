//! Diagnostics for people: miette snippets with the code, the label and help.

use super::Paths;
use crate::diag::{Diagnostic, Label, Severity, SourceMap, Text};
use miette::{
    GraphicalReportHandler, GraphicalTheme, LabeledSpan, MietteError, MietteSpanContents,
    NamedSource, SourceSpan, SpanContents,
};
use std::fmt;

/// Renders one diagnostic as text (no trailing blank line).
pub fn render(d: &Diagnostic, sources: &SourceMap, paths: &Paths, color: bool) -> String {
    // Text a terminal would act on (from a document, a file name) is shown
    // escaped; in colour that cannot be told from the colours, so such a
    // diagnostic is drawn without them.
    let color = color && !acts_on_terminal(d, sources);
    let out = draw(d, sources, paths, color);
    if color {
        out
    } else {
        crate::output::escape::terminal(&out).into_owned()
    }
}

/// Whether the diagnostic's texts, or the lines its snippet shows, hold a
/// control character a terminal would act on.
fn acts_on_terminal(d: &Diagnostic, sources: &SourceMap) -> bool {
    let acts = crate::output::escape::acts_on_terminal;
    let labels = || d.primary.iter().chain(&d.related);
    if acts(&d.message) || d.help.as_deref().is_some_and(acts) || labels().any(|l| acts(&l.text)) {
        return true;
    }
    labels().any(|l| {
        let file = sources.get(l.span.file);
        if acts(&file.path) {
            return true;
        }
        match file.text() {
            Text::Full(text) => {
                // The label's lines and one on each side, as drawn.
                let bytes = text.as_bytes();
                let (a, b) = (
                    (l.span.start as usize).min(bytes.len()),
                    (l.span.end as usize).min(bytes.len()),
                );
                let mut start = a;
                for _ in 0..2 {
                    start = memchr::memrchr(b'\n', &bytes[..start.saturating_sub(1)])
                        .map_or(0, |i| i + 1);
                }
                let mut end = b;
                for _ in 0..2 {
                    end = memchr::memchr(b'\n', &bytes[end.min(bytes.len())..])
                        .map_or(bytes.len(), |i| end + i + 1);
                }
                acts(&String::from_utf8_lossy(
                    &bytes[start.min(end)..end.min(bytes.len())],
                ))
            }
            Text::Rows(rows) => rows.row_at(l.span.start).is_some_and(|r| acts(&r.text)),
        }
    })
}

fn draw(d: &Diagnostic, sources: &SourceMap, paths: &Paths, color: bool) -> String {
    let theme = if color {
        GraphicalTheme::unicode()
    } else {
        GraphicalTheme::unicode_nocolor()
    };
    let handler = GraphicalReportHandler::new_themed(theme)
        .with_context_lines(1)
        .with_width(100)
        .with_links(false);
    let mut out = String::new();
    // Each label is drawn with its own lines (miette draws labels far apart
    // as snippets of their own), so each is measured alone.
    if d.primary
        .iter()
        .chain(&d.related)
        .any(|l| long_line(sources, l))
    {
        // miette cannot draw a snippet this wide (it panics past column
        // 65,535), and one of megabytes helps nobody; say where, without
        // the snippet.
        return plain(d, sources, paths).trim_end().to_string();
    } else {
        let adapter = Adapter::new(d, sources, paths);
        if handler.render_report(&mut out, &adapter).is_err() {
            return plain(d, sources, paths).trim_end().to_string();
        }
    }
    // Labels in other files than the primary one cannot share its snippet.
    for label in &d.related {
        if d.primary
            .as_ref()
            .is_some_and(|p| p.span.file != label.span.file)
        {
            out.push_str(&format!(
                "  note: {} at {}\n",
                label.text,
                crate::output::escape::terminal_line(&paths.describe(sources, label.span))
            ));
        }
    }
    out.trim_end().to_string()
}

/// Lines longer than this are not drawn as snippets.
const MAX_SNIPPET_LINE: usize = 2_000;

/// Snippets of more lines than this (a label over a whole document) are not drawn.
const MAX_SNIPPET_LINES: usize = 60;

/// Whether the lines a label's snippet would show (its own and one on each
/// side) are too long or too many to draw.
fn long_line(sources: &SourceMap, l: &Label) -> bool {
    let file = sources.get(l.span.file);
    match file.text() {
        Text::Full(text) => long_region(text.as_bytes(), l.span),
        Text::Rows(rows) => match rows.row_at(l.span.start) {
            Some(r) => r.text.len() > MAX_SNIPPET_LINE,
            // A row the file did not keep is drawn from the whole file, read
            // again (once, and kept): its lines are what is drawn.
            None => file
                .whole()
                .is_some_and(|whole| long_region(whole.as_bytes(), l.span)),
        },
    }
}

/// [`long_line`] over a whole text.
fn long_region(bytes: &[u8], span: crate::diag::Span) -> bool {
    let a = (span.start as usize).min(bytes.len());
    let b = (span.end as usize).clamp(a, bytes.len());
    // From the start of the line before the label's first, to the end of
    // the line after its last.
    let mut start = memchr::memrchr(b'\n', &bytes[..a]).map_or(0, |i| i + 1);
    if start > 0 {
        start = memchr::memrchr(b'\n', &bytes[..start - 1]).map_or(0, |i| i + 1);
    }
    let mut end = memchr::memchr(b'\n', &bytes[b..]).map_or(bytes.len(), |i| b + i);
    if end < bytes.len() {
        end = memchr::memchr(b'\n', &bytes[end + 1..]).map_or(bytes.len(), |i| end + 1 + i);
    }
    let mut lines = 0;
    bytes[start..end].split(|&c| c == b'\n').any(|line| {
        lines += 1;
        line.len() > MAX_SNIPPET_LINE || lines > MAX_SNIPPET_LINES
    })
}

/// The diagnostic without a snippet: code, message, where, labels, help.
fn plain(d: &Diagnostic, sources: &SourceMap, paths: &Paths) -> String {
    let mut out = format!("{}[{}]: {}\n", d.severity, d.code.as_str(), d.message);
    for (i, l) in d.primary.iter().chain(&d.related).enumerate() {
        let what = if i == 0 { "at" } else { "see" };
        out.push_str(&format!(
            "  {what} {}: {}\n",
            crate::output::escape::terminal_line(&paths.describe(sources, l.span)),
            l.text
        ));
    }
    if let Some(h) = &d.help {
        out.push_str(&format!("  help: {h}\n"));
    }
    out
}

struct Adapter<'a> {
    d: &'a Diagnostic,
    source: Option<NamedSource<Source>>,
    labels: Vec<LabeledSpan>,
}

impl<'a> Adapter<'a> {
    fn new(d: &'a Diagnostic, sources: &SourceMap, paths: &Paths) -> Self {
        let Some(primary) = &d.primary else {
            return Adapter {
                d,
                source: None,
                labels: Vec::new(),
            };
        };
        let file = sources.get(primary.span.file);
        // A usage file kept as rows is shown from them, unless a label
        // falls outside them (then from its whole text, read again).
        let outside = |l: &Label| match file.text() {
            Text::Rows(rows) => {
                l.span.file == primary.span.file && rows.row_at(l.span.start).is_none()
            }
            Text::Full(_) => false,
        };
        let text = if std::iter::once(primary).chain(&d.related).any(outside) {
            file.whole()
                .map(|whole| Text::Full(whole.clone()))
                .unwrap_or_else(|| file.text().clone())
        } else {
            file.text().clone()
        };
        let name = crate::output::escape::terminal_line(&paths.file(sources, primary.span.file))
            .into_owned();
        let source = NamedSource::new(name, Source(text));
        let mut labels = vec![labeled(primary, true, file.len())];
        for l in &d.related {
            if l.span.file == primary.span.file {
                labels.push(labeled(l, false, file.len()));
            }
        }
        Adapter {
            d,
            source: Some(source),
            labels,
        }
    }
}

/// A file's text as miette reads it: the whole text, or the kept rows of a
/// usage file (a snippet then shows the labelled row alone, at its line).
#[derive(Debug)]
struct Source(Text);

impl miette::SourceCode for Source {
    fn read_span<'a>(
        &'a self,
        span: &SourceSpan,
        before: usize,
        after: usize,
    ) -> Result<Box<dyn SpanContents<'a> + 'a>, MietteError> {
        let rows = match &self.0 {
            Text::Full(text) => {
                return <str as miette::SourceCode>::read_span(text, span, before, after);
            }
            Text::Rows(rows) => rows,
        };
        let offset = u32::try_from(span.offset()).unwrap_or(u32::MAX);
        let row = rows.row_at(offset).ok_or(MietteError::OutOfBounds)?;
        let start = (offset - row.start) as usize;
        if start > row.text.len() {
            return Err(MietteError::OutOfBounds);
        }
        // The whole row; its column is the span's where miette asks for the
        // span alone (the snippet's heading: in bytes, as miette counts it
        // for a whole text), the row's start otherwise.
        let column = if before == 0 { start } else { 0 };
        // Without a CRLF file's carriage return, which miette would read
        // as the end of the text (and number the row one line short).
        let data = row.text.strip_suffix('\r').unwrap_or(&row.text);
        Ok(Box::new(MietteSpanContents::new(
            data.as_bytes(),
            SourceSpan::new((row.start as usize).into(), data.len()),
            row.line as usize,
            column,
            1,
        )))
    }
}

fn labeled(l: &Label, primary: bool, len: usize) -> LabeledSpan {
    let start = (l.span.start as usize).min(len);
    let end = (l.span.end as usize).min(len).max(start);
    let span = SourceSpan::new(start.into(), end - start);
    if primary {
        LabeledSpan::new_primary_with_span(Some(l.text.clone()), span)
    } else {
        LabeledSpan::new_with_span(Some(l.text.clone()), span)
    }
}

impl fmt::Debug for Adapter<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.d.message)
    }
}

impl fmt::Display for Adapter<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // `error[unknown-team]: ...`: the severity in words and the code on the
        // message line, so nothing depends on colour or symbols.
        write!(
            f,
            "{}[{}]: {}",
            self.d.severity,
            self.d.code.as_str(),
            self.d.message
        )
    }
}

impl std::error::Error for Adapter<'_> {}

impl miette::Diagnostic for Adapter<'_> {
    fn severity(&self) -> Option<miette::Severity> {
        Some(match self.d.severity {
            Severity::Error => miette::Severity::Error,
            Severity::Warning => miette::Severity::Warning,
            Severity::Note | Severity::Allow => miette::Severity::Advice,
        })
    }

    fn help<'b>(&'b self) -> Option<Box<dyn fmt::Display + 'b>> {
        self.d
            .help
            .as_ref()
            .map(|h| Box::new(h) as Box<dyn fmt::Display>)
    }

    fn source_code(&self) -> Option<&dyn miette::SourceCode> {
        self.source.as_ref().map(|s| s as &dyn miette::SourceCode)
    }

    fn labels(&self) -> Option<Box<dyn Iterator<Item = LabeledSpan> + '_>> {
        if self.labels.is_empty() {
            None
        } else {
            Some(Box::new(self.labels.iter().cloned()))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diag::{Code, Rows, SourceKind, Span};

    /// A usage file kept as some of its rows is shown at the same line and
    /// column as its whole text, with the labelled row.
    #[test]
    fn a_file_kept_as_rows_renders_its_row_at_its_line() {
        let text = "ts,team\nr1,a\nça,bé\nr3,c\n";
        let b = text.find('b').unwrap();
        let mut sources = SourceMap::new();
        let full = sources.add("full.csv", text);
        let rows = Rows::keep(text, [b as u32], None);
        let kept = sources.add_text(
            "kept.csv",
            Text::Rows(std::sync::Arc::new(rows)),
            SourceKind::WorkTree,
        );
        let paths = Paths::new(std::path::Path::new("."));
        let show = |f| {
            let d = Diagnostic::new(Code::UsageBadRow, "bad")
                .at(Span::new(f, b, b + "bé".len()), "this cell");
            render(&d, &sources, &paths, false)
        };
        let (whole, some) = (show(full), show(kept));
        // The heading names the same line and column.
        let heading = |t: &str, name: &str| {
            t.lines()
                .find(|l| l.contains('['))
                .map(|l| l.replace(name, "file"))
        };
        assert!(whole.contains("[full.csv:3:"), "{whole}");
        assert_eq!(heading(&whole, "full.csv"), heading(&some, "kept.csv"));
        assert!(some.contains(" 3 │ ça,bé"), "{some}");
        assert!(some.contains("this cell"), "{some}");
        // The whole text shows the lines around; the kept rows only theirs.
        assert!(
            whole.contains(" 2 │ r1,a") && !some.contains("r1,a"),
            "{some}"
        );
    }

    /// A CRLF row is numbered as its line; a label outside the kept rows is
    /// shown from the whole text, read again.
    #[test]
    fn crlf_rows_and_labels_outside_the_rows_render_at_their_lines() {
        let text = "ts,team\r\nr1,a\r\nr2,b\r\n";
        let whole = text.to_string();
        let reread = crate::diag::Reread(std::sync::Arc::new(move || Some(whole.clone())));
        let r1 = text.find("r1").unwrap();
        let mut sources = SourceMap::new();
        let kept = sources.add_text(
            "u.csv",
            Text::Rows(std::sync::Arc::new(Rows::keep(
                text,
                [r1 as u32],
                Some(reread),
            ))),
            SourceKind::WorkTree,
        );
        let paths = Paths::new(std::path::Path::new("."));
        let show = |at: usize| {
            let d =
                Diagnostic::new(Code::UsageBadRow, "bad").at(Span::new(kept, at, at + 2), "here");
            render(&d, &sources, &paths, false)
        };
        let in_row = show(r1);
        assert!(in_row.contains("[u.csv:2:1]"), "{in_row}");
        assert!(in_row.contains(" 2 │ r1,a"), "{in_row}");
        assert!(!in_row.contains('\r'), "{in_row:?}");
        let r2 = text.find("r2").unwrap();
        let outside = show(r2);
        assert!(outside.contains("[u.csv:3:1]"), "{outside}");
        assert!(outside.contains(" 3 │ r2,b"), "{outside}");
        assert!(!outside.contains("Failed"), "{outside}");
    }
}
