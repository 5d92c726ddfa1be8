//! YAML text to a tree of spanned nodes.
//!
//! serde-saphyr does the parsing: YAML 1.2 scalars, duplicate keys rejected,
//! and budgets that stop alias bombs, deep nesting and node storms before they
//! cost memory. We deserialize each document into a small tree ([`Node`]) in
//! which every value, key included, keeps its byte range. Later steps turn the
//! tree into JSON for schema validation and into typed documents.

use crate::diag::{Code, Diagnostic, FileId, Span};
use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use std::cell::Cell;
use std::fmt;
use std::rc::Rc;

/// Deepest nesting accepted. Capacity documents are shallow; anything deeper is an attack or a mistake.
pub const MAX_DEPTH: usize = 32;
/// Most YAML nodes (scalars, mappings, sequences) in one file.
pub const MAX_NODES: usize = 5_000_000;
/// Most documents in one file.
pub const MAX_DOCUMENTS: usize = 200_000;
/// Most events produced by expanding aliases in one file.
pub const MAX_ALIAS_EVENTS: usize = 100_000;

/// A parsed YAML value with its byte range in the file.
#[derive(Debug, Clone, PartialEq)]
pub struct Node {
    pub value: Value,
    pub start: u32,
    pub end: u32,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Null,
    Bool(bool),
    Int(i64),
    UInt(u64),
    Float(f64),
    Str(String),
    Seq(Vec<Node>),
    Map(Vec<(Node, Node)>),
}

impl Node {
    pub fn span(&self, file: FileId) -> Span {
        Span {
            file,
            start: self.start,
            end: self.end,
        }
    }

    pub fn as_str(&self) -> Option<&str> {
        match &self.value {
            Value::Str(s) => Some(s),
            _ => None,
        }
    }

    pub fn as_map(&self) -> Option<&[(Node, Node)]> {
        match &self.value {
            Value::Map(m) => Some(m),
            _ => None,
        }
    }

    /// The entry of a mapping with a string key.
    pub fn get(&self, key: &str) -> Option<(&Node, &Node)> {
        self.as_map()?
            .iter()
            .find(|(k, _)| k.as_str() == Some(key))
            .map(|(k, v)| (k, v))
    }

    /// A short name of the node's type, for messages.
    pub fn type_name(&self) -> &'static str {
        self.value.type_name()
    }

    /// The key text used when this node is a mapping key (scalars only).
    pub fn key_text(&self) -> String {
        match &self.value {
            Value::Str(s) => s.clone(),
            Value::Null => "null".into(),
            Value::Bool(b) => b.to_string(),
            Value::Int(i) => i.to_string(),
            Value::UInt(u) => u.to_string(),
            Value::Float(f) => f.to_string(),
            Value::Seq(_) | Value::Map(_) => "<complex key>".into(),
        }
    }
}

impl Value {
    pub fn type_name(&self) -> &'static str {
        match self {
            Value::Null => "null",
            Value::Bool(_) => "boolean",
            Value::Int(_) | Value::UInt(_) => "integer",
            Value::Float(_) => "number",
            Value::Str(_) => "string",
            Value::Seq(_) => "list",
            Value::Map(_) => "mapping",
        }
    }
}

/// The documents of one file, and the problems found while reading them.
#[derive(Debug, Default)]
pub struct Parsed {
    pub documents: Vec<Node>,
    pub diagnostics: Vec<Diagnostic>,
}

/// Parses every document of a YAML text.
///
/// On a syntax error nothing from the file is returned: a half-read file
/// would make later checks report problems that are not there.
pub fn parse(text: &str, file: FileId) -> Parsed {
    let mut out = Parsed::default();
    let documents_seen = Rc::new(Cell::new(0usize));
    let mut options = serde_saphyr::Options::default();
    options.strict_booleans = true;
    let mut budget = serde_saphyr::Budget::default();
    budget.max_depth = MAX_DEPTH;
    budget.flow_nesting_limit = MAX_DEPTH;
    budget.max_nodes = MAX_NODES;
    budget.max_documents = MAX_DOCUMENTS;
    budget.max_events = MAX_NODES * 4;
    budget.max_recorded_anchor_events = MAX_ALIAS_EVENTS;
    options.budget = Some(budget);
    options.alias_limits.max_total_replayed_events = MAX_ALIAS_EVENTS;
    let seen = documents_seen.clone();
    options.budget_report_cb = Some(Rc::new(std::cell::RefCell::new(
        move |report: serde_saphyr::budget::BudgetReport| seen.set(report.documents),
    )));

    match serde_saphyr::from_multiple_with_options::<Node>(text, options) {
        Ok(docs) => {
            for doc in &docs {
                check_integers(doc, text, file, &mut out.diagnostics);
            }
            // serde-saphyr skips empty and null documents; find where they were.
            let null_docs = docs.iter().filter(|d| d.value == Value::Null).count();
            let mut documents: Vec<Node> = docs
                .into_iter()
                .filter(|d| d.value != Value::Null)
                .collect();
            let seen = documents_seen.get();
            if documents.is_empty() {
                out.diagnostics.push(
                    Diagnostic::new(Code::FileEmpty, "this YAML file holds no documents")
                        .at(Span::file_start(file), "empty file")
                        .help("add documents to it or delete it"),
                );
            } else if seen > documents.len() || null_docs > 0 {
                for at in empty_document_markers(text, &documents) {
                    out.diagnostics.push(
                        Diagnostic::new(Code::DocumentEmpty, "this YAML document is empty")
                            .at(Span::new(file, at, at + 3), "empty document")
                            .help("remove the extra `---` separator"),
                    );
                }
            }
            documents.sort_by_key(|d| d.start);
            out.documents = documents;
        }
        Err(err) => out.diagnostics.push(error_diagnostic(&err, text, file)),
    }
    out
}

/// Finds `---` markers that start a document with no content, given the
/// non-empty documents' start offsets.
fn empty_document_markers(text: &str, documents: &[Node]) -> Vec<usize> {
    let mut markers = Vec::new();
    let mut offset = 0;
    for line in text.split_inclusive('\n') {
        if line.starts_with("---") && line[3..].chars().next().is_none_or(|c| c.is_whitespace()) {
            markers.push(offset);
        }
        offset += line.len();
    }
    let mut starts: Vec<usize> = documents.iter().map(|d| d.start as usize).collect();
    starts.sort_unstable();
    let mut empty = Vec::new();
    for (i, &m) in markers.iter().enumerate() {
        let next = markers.get(i + 1).copied().unwrap_or(usize::MAX);
        let has_content = starts.iter().any(|&s| s > m && s < next)
            // `--- value` on the marker line itself
            || starts.iter().any(|&s| s > m && s < m + text[m..].find('\n').unwrap_or(text.len() - m));
        if !has_content {
            empty.push(m);
        }
    }
    empty
}

/// serde-saphyr reads an integer too large for 64 bits as a float; we refuse it.
fn check_integers(node: &Node, text: &str, file: FileId, diags: &mut Vec<Diagnostic>) {
    match &node.value {
        Value::Float(_) => {
            let raw = text
                .get(node.start as usize..node.end as usize)
                .unwrap_or("");
            let digits = raw.strip_prefix(['-', '+']).unwrap_or(raw);
            if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit() || b == b'_') {
                diags.push(
                    Diagnostic::new(
                        Code::YamlIntegerOverflow,
                        format!("the integer {raw} is too large"),
                    )
                    .at(node.span(file), "does not fit in 64 bits")
                    .help(
                        "GPU and instance counts are small whole numbers; check for extra digits",
                    ),
                );
            }
        }
        Value::Seq(items) => items
            .iter()
            .for_each(|n| check_integers(n, text, file, diags)),
        Value::Map(entries) => entries.iter().for_each(|(k, v)| {
            check_integers(k, text, file, diags);
            check_integers(v, text, file, diags);
        }),
        _ => {}
    }
}

fn error_diagnostic(err: &serde_saphyr::Error, text: &str, file: FileId) -> Diagnostic {
    let raw = raw_message(err);
    let message = plain_message(&raw, text);
    let offset = err
        .location()
        .map(|loc| {
            loc.span()
                .byte_offset()
                .map(|b| b as usize)
                .filter(|&b| b <= text.len())
                .unwrap_or_else(|| {
                    line_col_offset(text, loc.line() as usize, loc.column() as usize)
                })
        })
        .unwrap_or(0);
    let lower = raw.to_ascii_lowercase();
    // The parser reports a tab error after the tab; point at the tab itself.
    let offset = if lower.contains("tab") {
        let line_start = text[..offset.min(text.len())]
            .rfind('\n')
            .map_or(0, |i| i + 1);
        text[line_start..offset.min(text.len())]
            .find('\t')
            .map_or(offset, |i| line_start + i)
    } else {
        offset
    };
    let span = Span::new(file, offset, offset + usize::from(lower.contains("tab")));
    let (code, label, help) = if lower.contains("duplicate mapping key") {
        (
            Code::YamlDuplicateKey,
            "second occurrence of this key",
            "a key may appear once per mapping: remove one of the two or merge them",
        )
    } else if lower.contains("depth")
        || lower.contains("recursion limit")
        || lower.contains("nesting")
        || lower.contains("nested")
    {
        (
            Code::YamlTooDeep,
            "nested too deeply",
            "capops documents are at most a few levels deep; this nesting is a mistake or an attack",
        )
    } else if lower.contains("alias")
        || lower.contains("anchor")
        || (lower.contains("budget") && uses_aliases(text))
    {
        (
            Code::YamlAliasLimit,
            "alias expansion stopped here",
            "aliases here expand to too many values (an alias bomb); write the values out or use fewer nested aliases",
        )
    } else if lower.contains("budget") {
        (
            Code::YamlTooLarge,
            "limit reached here",
            "split the file into smaller files",
        )
    } else if lower.contains("tab") {
        (
            Code::YamlSyntax,
            "tab character",
            "YAML does not allow tabs for indentation: indent with spaces",
        )
    } else {
        (
            Code::YamlSyntax,
            "here",
            "fix the YAML syntax at this place; quote values that contain `: ` or start with special characters",
        )
    };
    Diagnostic::new(code, message).at(span, label).help(help)
}

/// serde-saphyr's error text without its snippet.
fn raw_message(err: &serde_saphyr::Error) -> String {
    let options = serde_saphyr::render_options! {
        snippets: serde_saphyr::SnippetMode::Off,
    };
    err.without_snippet().render_with_options(options)
}

/// The error text without serde-saphyr's own location prefix, in our words for budget breaches.
fn plain_message(text: &str, source: &str) -> String {
    let first = text.lines().next().unwrap_or("").trim();
    let first = first.strip_prefix("error:").unwrap_or(first).trim();
    // "line 3 column 1: duplicate mapping key: a, set DuplicateKeyPolicy ..."
    let rest = match first.split_once(": ") {
        Some((head, rest)) if head.starts_with("line ") => rest,
        _ => first,
    };
    let rest = rest
        .split(", set DuplicateKeyPolicy")
        .next()
        .unwrap_or(rest);
    let rest = if rest.starts_with("budget breached")
        || rest.starts_with("alias")
        || rest.starts_with("recursion limit")
    {
        describe_budget(rest, source)
    } else {
        rest.to_string()
    };
    rest.trim().to_string()
}

fn describe_budget(raw: &str, source: &str) -> String {
    if raw.contains("Depth") || raw.contains("recursion limit") {
        format!("values are nested more than {MAX_DEPTH} levels deep")
    } else if raw.contains("Documents") {
        format!("the file holds more than {MAX_DOCUMENTS} documents")
    } else if (raw.contains("Nodes") || raw.contains("Events")) && !uses_aliases(source) {
        format!("the file holds more than {MAX_NODES} YAML values")
    } else {
        format!("alias expansion exceeds the limit of {MAX_ALIAS_EVENTS} values")
    }
}

/// Whether a YAML text defines anchors that aliases could expand.
fn uses_aliases(source: &str) -> bool {
    source.contains('&') && source.contains('*')
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

// --- serde glue: build `Node`s from serde-saphyr's spanned values ---

impl<'de> Deserialize<'de> for Node {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let spanned: serde_saphyr::Spanned<Value> = serde_saphyr::Spanned::deserialize(d)?;
        let loc = spanned.referenced;
        let start = loc.span().byte_offset().unwrap_or(0);
        let len = loc.span().byte_len().unwrap_or(0);
        Ok(Node {
            value: spanned.value,
            start: u32::try_from(start).unwrap_or(u32::MAX),
            end: u32::try_from(start + len).unwrap_or(u32::MAX),
        })
    }
}

impl<'de> Deserialize<'de> for Value {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(ValueVisitor)
    }
}

struct ValueVisitor;

impl<'de> Visitor<'de> for ValueVisitor {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any YAML value")
    }
    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_none<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        Value::deserialize(d)
    }
    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(Value::Int(v))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(match i64::try_from(v) {
            Ok(i) => Value::Int(i),
            Err(_) => Value::UInt(v),
        })
    }
    fn visit_i128<E: de::Error>(self, v: i128) -> Result<Value, E> {
        Err(E::custom(format!("the integer {v} is too large")))
    }
    fn visit_u128<E: de::Error>(self, v: u128) -> Result<Value, E> {
        Err(E::custom(format!("the integer {v} is too large")))
    }
    fn visit_f64<E>(self, v: f64) -> Result<Value, E> {
        Ok(Value::Float(v))
    }
    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::Str(v.to_owned()))
    }
    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(Value::Str(v))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(0));
        while let Some(n) = seq.next_element::<Node>()? {
            items.push(n);
        }
        Ok(Value::Seq(items))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut entries = Vec::with_capacity(map.size_hint().unwrap_or(0));
        while let Some(k) = map.next_key::<Node>()? {
            let v = map.next_value::<Node>()?;
            entries.push((k, v));
        }
        Ok(Value::Map(entries))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn codes(text: &str) -> Vec<&'static str> {
        parse(text, FileId(0))
            .diagnostics
            .iter()
            .map(|d| d.code.as_str())
            .collect()
    }

    #[test]
    fn keeps_spans_of_keys_and_values() {
        let p = parse("a: 1\nb:\n  c: hello\n", FileId(0));
        assert!(p.diagnostics.is_empty(), "{:?}", p.diagnostics);
        let doc = &p.documents[0];
        let (k, v) = doc.get("b").unwrap();
        assert_eq!((k.start, k.end), (5, 6));
        let (_, c) = v.get("c").unwrap();
        assert_eq!(c.as_str(), Some("hello"));
        assert_eq!((c.start, c.end), (13, 18));
    }

    #[test]
    fn yaml_1_1_booleans_and_dates_stay_strings() {
        let p = parse("y: n\nd: 2027-02-30\n", FileId(0));
        let doc = &p.documents[0];
        assert_eq!(doc.get("y").unwrap().1.as_str(), Some("n"));
        assert_eq!(doc.get("d").unwrap().1.as_str(), Some("2027-02-30"));
    }

    #[test]
    fn rejects_duplicate_keys_with_position() {
        let p = parse("a: 1\nb: 2\na: 3\n", FileId(0));
        assert_eq!(p.diagnostics.len(), 1);
        let d = &p.diagnostics[0];
        assert_eq!(d.code, Code::YamlDuplicateKey);
        assert_eq!(d.span().unwrap().start, 10);
        assert!(p.documents.is_empty());
    }

    #[test]
    fn stops_alias_bombs_quickly() {
        let mut s = String::from("a0: &a0 [x,x,x,x,x,x,x,x,x]\n");
        for i in 1..10 {
            let refs = vec![format!("*a{}", i - 1); 9].join(",");
            s.push_str(&format!("a{i}: &a{i} [{refs}]\n"));
        }
        let p = parse(&s, FileId(0));
        assert_eq!(
            p.diagnostics[0].code,
            Code::YamlAliasLimit,
            "{}",
            p.diagnostics[0].message
        );
    }

    #[test]
    fn limits_nesting() {
        let deep = format!("a: {}{}\n", "[".repeat(10_000), "]".repeat(10_000));
        assert_eq!(codes(&deep), vec!["yaml-too-deep"]);
        let block: String = (0..10_000)
            .map(|i| format!("{}k{i}:\n", "  ".repeat(i)))
            .collect();
        assert_eq!(codes(&block), vec!["yaml-too-deep"]);
    }

    #[test]
    fn reports_tabs_and_syntax_errors() {
        let p = parse("a:\n\tb: 1\n", FileId(0));
        assert_eq!(p.diagnostics[0].code, Code::YamlSyntax);
        assert!(p.diagnostics[0].help.as_deref().unwrap().contains("tabs"));
        assert_eq!(codes("a: [1, 2\nb: 3\n"), vec!["yaml-syntax"]);
    }

    #[test]
    fn refuses_integer_overflow() {
        assert_eq!(
            codes("n: 99999999999999999999999\n"),
            vec!["yaml-integer-overflow"]
        );
        assert!(codes("n: 18446744073709551615\nf: 1.5e3\n").is_empty());
    }

    #[test]
    fn warns_on_empty_documents_and_files() {
        assert_eq!(
            codes("a: 1\n---\n# nothing\n---\nb: 2\n"),
            vec!["document-empty"]
        );
        assert_eq!(codes("# only a comment\n"), vec!["file-empty"]);
        assert_eq!(codes(""), vec!["file-empty"]);
        assert!(codes("---\na: 1\n---\nb: 2\n").is_empty());
    }
}
