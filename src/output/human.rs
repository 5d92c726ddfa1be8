//! Diagnostics for people: miette snippets with the code, the label and help.

use super::Paths;
use crate::diag::{Diagnostic, Label, Severity, SourceMap};
use miette::{GraphicalReportHandler, GraphicalTheme, LabeledSpan, NamedSource, SourceSpan};
use std::fmt;
use std::sync::Arc;

/// Renders one diagnostic as text (no trailing blank line).
pub fn render(d: &Diagnostic, sources: &SourceMap, paths: &Paths, color: bool) -> String {
    let theme = if color {
        GraphicalTheme::unicode()
    } else {
        GraphicalTheme::unicode_nocolor()
    };
    let handler = GraphicalReportHandler::new_themed(theme)
        .with_context_lines(1)
        .with_width(100)
        .with_links(false);
    let adapter = Adapter::new(d, sources, paths);
    let mut out = String::new();
    if handler.render_report(&mut out, &adapter).is_err() {
        out = format!("{}[{}]: {}\n", d.severity, d.code.as_str(), d.message);
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
                paths.describe(sources, label.span)
            ));
        }
    }
    out.trim_end().to_string()
}

struct Adapter<'a> {
    d: &'a Diagnostic,
    source: Option<NamedSource<Arc<str>>>,
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
        let source = NamedSource::new(paths.file(sources, primary.span.file), file.text.clone());
        let mut labels = vec![labeled(primary, true, file.text.len())];
        for l in &d.related {
            if l.span.file == primary.span.file {
                labels.push(labeled(l, false, file.text.len()));
            }
        }
        Adapter {
            d,
            source: Some(source),
            labels,
        }
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
