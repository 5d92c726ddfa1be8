//! A policy test case as written: its fields, read and checked from its
//! text (`capops test`), and where its embedded documents sit in the file,
//! so that errors in them are shown at the case file's lines.

use crate::diag::{Code, SourceMap};
use crate::load::de::from_node;
use crate::load::yaml;
use crate::model::Kind;
use serde::Deserialize;
use std::collections::BTreeMap;

/// One test case as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Case {
    pub description: String,
    /// Evaluation time.
    pub at: String,
    /// Fixture repository, relative to the case file.
    #[serde(default)]
    pub fixture: Option<String>,
    /// Documents added to the fixture to form the base (a YAML stream).
    #[serde(default)]
    pub base: Option<String>,
    /// Documents of the repository judged without a base (a YAML stream), added to the fixture.
    #[serde(default)]
    pub documents: Option<String>,
    /// A change to the base: when present, only the change is judged, by the base's policy.
    #[serde(default)]
    pub change: Option<ChangeSpec>,
    /// GPUs each team gained in the 30 days before the base (what `check --base`
    /// reads from git history), by team.
    #[serde(default)]
    pub recent_growth: BTreeMap<String, f64>,
    pub expect: Expect,
    /// Where each embedded stream is in the case file, by the name it is
    /// loaded under (`case-base.yaml`, `case-change.yaml`,
    /// `case-documents.yaml`): errors in it are shown at the case's lines.
    #[serde(skip)]
    pub embedded: BTreeMap<String, Embedded>,
    /// ` at line:column` of each `recentGrowth` team and `change.remove`
    /// entry (`recentGrowth.research`, `change.remove.0`), for the errors
    /// only the base can tell (a team or document it lacks).
    #[serde(skip)]
    pub places: BTreeMap<String, String>,
}

/// Where a literal block (`add: |`) starts in a case file: the case line of
/// its first line, and its indentation. Its lines are the stream's lines,
/// one for one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Embedded {
    /// 1-based.
    pub line: usize,
    pub indent: usize,
    /// The key the stream is under (`change.add`).
    pub key: &'static str,
}

/// Where `node`'s text starts, if it is a literal block scalar.
fn embedded_place(text: &str, node: &yaml::Node, key: &'static str) -> Option<Embedded> {
    let start = (node.start as usize).min(text.len());
    let before = text.get(..start)?;
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    // The block's header (`|`, `|-`, `|2+`) ends the line before its text.
    let header = before[..line_start].trim_end();
    // `add: |  # a note`: the header without its comment.
    let header_line = header.rsplit('\n').next().unwrap_or("");
    let header = match header_line.find(" #") {
        Some(i) => header[..header.len() - header_line.len() + i].trim_end(),
        None => header,
    };
    let last = header.rsplit([' ', '\t', '\n']).next().unwrap_or("");
    if !last.starts_with('|') || before[line_start..].trim() != "" {
        return None;
    }
    let indent = before[line_start..].chars().count();
    // The text starts on the line after the header; blank lines before it
    // are the stream's too.
    let header_end = header.len();
    let first = text[..header_end].matches('\n').count() + 2;
    Some(Embedded {
        line: first,
        indent,
        key,
    })
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ChangeSpec {
    /// Documents added, or replacing those of the same kind and name (a YAML stream).
    #[serde(default)]
    pub add: Option<String>,
    /// Documents removed, as `Kind/name`.
    #[serde(default)]
    pub remove: Vec<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Expect {
    /// Exit code `capops check` would give (0, 1 or 2).
    #[serde(default)]
    pub exit: Option<i32>,
    /// Expected decisions, by document name.
    #[serde(default)]
    pub decisions: BTreeMap<String, ExpectDecision>,
    /// Diagnostic codes expected (a multiset; warnings and errors).
    #[serde(default)]
    pub codes: Option<Vec<String>>,
    /// Documents expected to be judged (exactly these names), when given.
    #[serde(default)]
    pub judged: Option<Vec<String>>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ExpectDecision {
    pub decision: String,
    #[serde(default)]
    pub tier: Option<String>,
    #[serde(default)]
    pub roles: Option<Vec<String>>,
    #[serde(default)]
    pub missing: Option<Vec<String>>,
    #[serde(default)]
    pub rules: Option<Vec<String>>,
    #[serde(default)]
    pub change: Option<String>,
}

/// Reads a case from its text.
pub fn read_case(text: &str) -> Result<Case, String> {
    // One map of the text, made when a place is first asked for (one per
    // place made the case's reading quadratic in its entries).
    let map = std::cell::OnceCell::new();
    let at = |span: Option<crate::diag::Span>| {
        span.map(|s| {
            let m = map.get_or_init(|| {
                let mut m = SourceMap::new();
                m.add("", text.to_string());
                m
            });
            format!(" at {}", m.line_col(s))
        })
        .unwrap_or_default()
    };
    let parsed = yaml::parse(text, crate::diag::FileId(0));
    if let Some(d) = parsed.diagnostics.iter().find(|d| d.is_error()) {
        return Err(format!("{}{}", d.message, at(d.span())));
    }
    let node = parsed.documents.first().ok_or("the file holds no case")?;
    if let Some(second) = parsed.documents.get(1) {
        return Err(format!(
            "the file holds {} YAML documents; a case file holds one case (put each case in its own file){}",
            parsed.documents.len(),
            at(Some(second.span(crate::diag::FileId(0))))
        ));
    }
    if !matches!(node.value, yaml::Value::Map(_)) {
        return Err(format!(
            "a test case is a mapping of its fields (description, at, expect, …), not {}{}",
            match node.value {
                yaml::Value::Seq(_) => "a list",
                yaml::Value::Null => "nothing",
                _ => "a single value",
            },
            at(Some(node.span(crate::diag::FileId(0))))
        ));
    }
    let mut case = from_node::<Case>(node, crate::diag::FileId(0))
        .map_err(|e| format!("not a test case: {}{}", e.message, at(e.span)))?;
    let streams = [
        ("case-base.yaml", node.get("base"), "base"),
        ("case-documents.yaml", node.get("documents"), "documents"),
        (
            "case-change.yaml",
            node.get("change").and_then(|(_, c)| c.get("add")),
            "change.add",
        ),
    ];
    for (file, found, key) in streams {
        if let Some(place) = found.and_then(|(_, v)| embedded_place(text, v, key)) {
            case.embedded.insert(file.to_string(), place);
        }
    }
    if let (Some((k, _)), Some(_)) = (node.get("documents"), node.get("change")) {
        return Err(format!(
            "documents and change: a case is judged as it stands (`documents`) or as a change to its base (`base` and `change`), not both; move the documents into `base` or `change.add`{}",
            at(Some(k.span(crate::diag::FileId(0))))
        ));
    }
    if let Some((_, growth)) = node.get("recentGrowth")
        && let yaml::Value::Map(entries) = &growth.value
    {
        for (k, _) in entries {
            if let yaml::Value::Str(team) = &k.value {
                let place = at(Some(k.span(crate::diag::FileId(0))));
                case.places.insert(format!("recentGrowth.{team}"), place);
            }
        }
    }
    if let Some((
        _,
        yaml::Node {
            value: yaml::Value::Seq(items),
            ..
        },
    )) = node.get("change").and_then(|(_, c)| c.get("remove"))
    {
        for (i, item) in items.iter().enumerate() {
            let place = at(Some(item.span(crate::diag::FileId(0))));
            case.places.insert(format!("change.remove.{i}"), place);
        }
    }
    // What the case states must read too: a bad `at` or removal is the
    // file's fault, not a failed test.
    if let Err(e) = crate::model::types::moment(&case.at) {
        let span = node.get("at").map(|(_, v)| v.span(crate::diag::FileId(0)));
        return Err(format!("at: {e}{}", at(span)));
    }
    if let Some((team, g)) = case
        .recent_growth
        .iter()
        .find(|(_, g)| !g.is_finite() || **g < 0.0)
    {
        let span = node
            .get("recentGrowth")
            .and_then(|(_, r)| r.get(team))
            .map(|(_, v)| v.span(crate::diag::FileId(0)));
        return Err(format!(
            "recentGrowth.{team}: {g} is not GPUs' worth gained (a number from 0 up){}",
            at(span)
        ));
    }
    let expect = node.get("expect").map(|(_, e)| e);
    if let Some(code) = case.expect.exit.filter(|c| !(0..=3).contains(c)) {
        let span = expect
            .and_then(|e| e.get("exit"))
            .map(|(_, v)| v.span(crate::diag::FileId(0)));
        return Err(format!(
            "expect.exit: {code} is not an exit code `check` gives (0, 1, 2 or 3){}",
            at(span)
        ));
    }
    if let Some(codes) = &case.expect.codes
        && let Some((i, bad)) = codes
            .iter()
            .enumerate()
            .find(|(_, c)| Code::parse(c).is_none())
    {
        let span = expect
            .and_then(|e| e.get("codes"))
            .and_then(|(_, c)| match &c.value {
                yaml::Value::Seq(items) => items.get(i).map(|n| n.span(crate::diag::FileId(0))),
                _ => None,
            });
        return Err(format!(
            "expect.codes: `{bad}` is not a diagnostic code (docs/codes.md lists them){}",
            at(span)
        ));
    }
    for (name, d) in &case.expect.decisions {
        if let Some(change) = d
            .change
            .as_deref()
            .filter(|c| !["added", "modified", "removed", "unchanged"].contains(c))
        {
            let span = expect
                .and_then(|e| e.get("decisions"))
                .and_then(|(_, ds)| ds.get(name))
                .and_then(|(_, d)| d.get("change"))
                .map(|(_, v)| v.span(crate::diag::FileId(0)));
            return Err(format!(
                "expect.decisions.{name}.change: `{change}` is not a change (added, modified, removed or unchanged){}",
                at(span)
            ));
        }
        if !["approved", "needs-approval", "denied"].contains(&d.decision.as_str()) {
            let span = expect
                .and_then(|e| e.get("decisions"))
                .and_then(|(_, ds)| ds.get(name))
                .and_then(|(_, d)| d.get("decision"))
                .map(|(_, v)| v.span(crate::diag::FileId(0)));
            return Err(format!(
                "expect.decisions.{name}.decision: `{}` is not a decision (approved, needs-approval or denied){}",
                d.decision,
                at(span)
            ));
        }
    }
    if let Some(change) = &case.change {
        let items = node
            .get("change")
            .and_then(|(_, c)| c.get("remove"))
            .and_then(|(_, r)| match &r.value {
                yaml::Value::Seq(items) => Some(items.clone()),
                _ => None,
            })
            .unwrap_or_default();
        let mut seen = std::collections::BTreeSet::new();
        for (i, r) in change.remove.iter().enumerate() {
            let span = items.get(i).map(|n| n.span(crate::diag::FileId(0)));
            match r.split_once('/') {
                Some((k, n)) if !n.is_empty() => {
                    let Some(kind) = Kind::parse(k) else {
                        return Err(format!(
                            "change.remove: `{k}` in `{r}` is not a document kind{}",
                            at(span)
                        ));
                    };
                    if !seen.insert((kind, n)) {
                        return Err(format!(
                            "change.remove: `{r}` is listed twice; list each document once{}",
                            at(span)
                        ));
                    }
                }
                _ => {
                    return Err(format!(
                        "change.remove: `{r}` is not `Kind/name` (a document kind and its name){}",
                        at(span)
                    ));
                }
            }
        }
    }
    Ok(case)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_literal_block_is_placed_with_or_without_a_comment_on_its_header() {
        // With `|2` the text is indented by 2; the rest of each line's
        // spaces are the documents' own.
        for (header, indent) in [
            ("|", 4),
            ("|-", 4),
            ("|2", 2),
            ("| # the request", 4),
            ("|  # note", 4),
        ] {
            let text = format!(
                "description: d\nat: 2026-11-22\ndocuments: {header}\n    a: 1\n    b: 2\nexpect: {{exit: 0}}\n"
            );
            let case = read_case(&text).unwrap();
            assert_eq!(
                case.embedded.get("case-documents.yaml"),
                Some(&Embedded {
                    line: 4,
                    indent,
                    key: "documents"
                }),
                "{header}"
            );
        }
        // A quoted string's lines are its own.
        let case =
            read_case("description: d\nat: 2026-11-22\ndocuments: \"a: 1\"\nexpect: {exit: 0}\n")
                .unwrap();
        assert!(case.embedded.is_empty());
    }

    #[test]
    fn a_case_is_a_mapping() {
        let e = read_case("- description: d\n  at: 2026-11-22\n").unwrap_err();
        assert_eq!(
            e,
            "a test case is a mapping of its fields (description, at, expect, …), not a list at 1:1"
        );
    }

    #[test]
    fn recent_growth_is_gpus_gained_from_zero_up() {
        let case = |g: &str| {
            read_case(&format!(
                "description: d\nat: 2026-11-22\nrecentGrowth:\n  research: {g}\nexpect: {{exit: 0}}\n"
            ))
        };
        assert_eq!(case("40").unwrap().recent_growth["research"], 40.0);
        for bad in ["-100", ".nan", ".inf"] {
            let e = case(bad).unwrap_err();
            assert!(
                e.starts_with("recentGrowth.research: ") && e.ends_with(" at 4:13"),
                "{bad}: {e}"
            );
        }
    }

    #[test]
    fn a_document_is_removed_once() {
        let text = "description: d\nat: 2026-11-22\nchange:\n  remove:\n    - CapacityRequest/a\n    - CapacityRequest/b\n    - CapacityRequest/a\nexpect: {exit: 0}\n";
        let e = read_case(text).unwrap_err();
        assert_eq!(
            e,
            "change.remove: `CapacityRequest/a` is listed twice; list each document once at 7:7"
        );
        let text = text.replace("    - CapacityRequest/a\nexpect", "expect");
        assert_eq!(read_case(&text).unwrap().change.unwrap().remove.len(), 2);
    }
}
