//! GitHub Actions workflow annotations (`::error file=..,line=..::message`).
//!
//! Printed to stdout when `GITHUB_ACTIONS=true`, so findings appear on the
//! pull request's changed lines. Values are escaped as the runner requires.

use super::Paths;
use crate::diag::{Diagnostic, Severity, SourceMap};

/// Whether the process runs inside GitHub Actions.
pub fn in_actions(env: impl Fn(&str) -> Option<String>) -> bool {
    env("GITHUB_ACTIONS").as_deref() == Some("true")
}

fn escape_data(s: &str) -> String {
    s.replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A")
}

fn escape_property(s: &str) -> String {
    escape_data(s).replace(':', "%3A").replace(',', "%2C")
}

/// The annotation line for one diagnostic (`None` for hidden ones).
pub fn annotation(d: &Diagnostic, sources: &SourceMap, paths: &Paths) -> Option<String> {
    let command = match d.severity {
        Severity::Error => "error",
        Severity::Warning => "warning",
        Severity::Note => "notice",
        Severity::Allow => return None,
    };
    let mut props = vec![format!(
        "title={}",
        escape_property(&format!("capops {}", d.code.as_str()))
    )];
    if let Some(p) = d
        .primary
        .as_ref()
        .filter(|p| Paths::in_worktree(sources, p.span.file))
    {
        let start = sources.line_col(p.span);
        let end = sources.end_line_col(p.span);
        props.insert(
            0,
            format!(
                "file={}",
                escape_property(&paths.file(sources, p.span.file))
            ),
        );
        props.insert(1, format!("line={}", start.line));
        props.insert(2, format!("col={}", start.column));
        props.insert(3, format!("endLine={}", end.line));
        if end.line == start.line {
            props.insert(4, format!("endColumn={}", end.column));
        }
    }
    let mut text = d.message.clone();
    if let Some(h) = &d.help {
        text.push_str("\nhelp: ");
        text.push_str(h);
    }
    Some(format!(
        "::{command} {}::{}",
        props.join(","),
        escape_data(&text)
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diag::{Code, Span};

    #[test]
    fn annotations_are_escaped_and_located() {
        let mut sources = SourceMap::new();
        let id = sources.add("teams/a,b.yaml", "x: 1\nteam: infer\n");
        let d = Diagnostic::new(Code::UnknownTeam, "Team `infer` does not exist\n50% sure")
            .at(Span::new(id, 11, 16), "no such Team")
            .help("did you mean `inference`?");
        let line = annotation(&d, &sources, &Paths::new(std::path::Path::new("repo"))).unwrap();
        assert_eq!(
            line,
            "::error file=repo/teams/a%2Cb.yaml,line=2,col=7,endLine=2,endColumn=12,title=capops unknown-team::Team `infer` does not exist%0A50%25 sure%0Ahelp: did you mean `inference`?"
        );
        assert!(in_actions(|_| Some("true".into())));
        assert!(!in_actions(|_| None));
    }
}
