//! YAML text to a tree of spanned nodes.
//!
//! granit-parser (the maintained YAML 1.2 parser behind serde-saphyr) turns
//! the text into events with byte positions; this module builds a small tree
//! ([`Node`]) from them in which every value, key included, keeps its byte
//! range. It also enforces what a repository many people edit needs: keys are
//! unique within a mapping, aliases expand to a bounded number of values (no
//! billion laughs), nesting is bounded (no stack exhaustion), integers fit in
//! 64 bits, and only YAML's core tags are accepted. Later steps turn the tree
//! into JSON for schema validation and into typed documents.
//! Built straight from parser events, the tree costs a quarter of serde-saphyr's
//! typed path with a span per value (repositories of ten thousand documents).

use crate::diag::{Code, Diagnostic, FileId, Span};
use granit_parser::{Event, Parser, ScalarStyle, ScanError};
use std::collections::{HashMap, HashSet};

mod scalars;
use scalars::{resolve_float, resolve_int, same_key, scan_error};

/// Deepest nesting accepted. Capacity documents are shallow; anything deeper is an attack or a mistake.
pub const MAX_DEPTH: usize = 32;
/// Most YAML values (scalars, mappings, sequences) in one file, aliases expanded.
pub const MAX_NODES: usize = 5_000_000;
/// Most values produced by expanding aliases in one file.
pub const MAX_ALIAS_NODES: usize = 100_000;
/// Most documents in one file (empty ones included).
pub const MAX_DOCUMENTS: usize = 200_000;

/// A parsed YAML value with its byte range in the file. Mappings and
/// sequences have an empty range at their first token.
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

    /// Values in this subtree, itself included, a text once more per 64
    /// bytes (an alias copies it: 1 MB named 5,000 times is 5 GB).
    fn count(&self) -> usize {
        1 + match &self.value {
            Value::Seq(items) => items.iter().map(Node::count).sum(),
            Value::Map(entries) => entries.iter().map(|(k, v)| k.count() + v.count()).sum(),
            Value::Str(text) => text.len() / 64,
            _ => 0,
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
/// On an error that stops parsing nothing from the file is returned: a
/// half-read file would make later checks report problems that are not there.
pub fn parse(text: &str, file: FileId) -> Parsed {
    let mut options = granit_parser::Options::default();
    options.block_nesting_limit = MAX_DEPTH;
    options.flow_nesting_limit = MAX_DEPTH;
    options.emit_comments = false;
    let mut builder = Builder {
        text,
        file,
        stack: Vec::new(),
        root: None,
        doc_marker: None,
        documents: Vec::new(),
        anchors: HashMap::new(),
        alias_nodes: 0,
        nodes: 0,
        documents_seen: 0,
        saw_document: false,
        diagnostics: Vec::new(),
    };
    for item in Parser::new_from_str_with_options(text, options) {
        let result = match item {
            Ok((event, span)) => builder.event(event, span),
            Err(err) => Err(scan_error(&err, text, file)),
        };
        if let Err(d) = result {
            let mut diagnostics: Vec<Diagnostic> = builder
                .diagnostics
                .into_iter()
                .filter(|d| d.code == Code::YamlIntegerOverflow)
                .collect();
            diagnostics.push(d);
            return Parsed {
                documents: Vec::new(),
                diagnostics,
            };
        }
    }
    if !builder.saw_document {
        builder.diagnostics.push(
            Diagnostic::new(Code::FileEmpty, "this YAML file holds no documents")
                .at(Span::file_start(file), "empty file")
                .help("add documents to it or delete it"),
        );
    }
    Parsed {
        documents: builder.documents,
        diagnostics: builder.diagnostics,
    }
}

enum Frame {
    Seq {
        items: Vec<Node>,
        start: u32,
        anchor: usize,
    },
    Map {
        entries: Vec<(Node, Node)>,
        key: Option<Node>,
        /// Key texts, built once the mapping is large enough for a linear scan to cost.
        index: Option<HashSet<String>>,
        start: u32,
        anchor: usize,
    },
}

struct Builder<'a> {
    text: &'a str,
    file: FileId,
    stack: Vec<Frame>,
    root: Option<Node>,
    /// Byte offset of the current document's explicit `---`, if any.
    doc_marker: Option<usize>,
    documents: Vec<Node>,
    /// Anchored nodes of the current document, with their value counts.
    anchors: HashMap<usize, (Node, usize)>,
    alias_nodes: usize,
    nodes: usize,
    /// Documents begun, empty ones included.
    documents_seen: usize,
    saw_document: bool,
    diagnostics: Vec<Diagnostic>,
}

type Step = Result<(), Diagnostic>;

impl Builder<'_> {
    fn offset(&self, marker: &granit_parser::Marker) -> u32 {
        let off = marker.byte_offset().unwrap_or(0).min(self.text.len());
        u32::try_from(off).unwrap_or(u32::MAX)
    }

    fn event(&mut self, event: Event<'_>, span: granit_parser::Span) -> Step {
        let start = self.offset(&span.start);
        let end = self.offset(&span.end).max(start);
        match event {
            Event::StreamStart | Event::StreamEnd => Ok(()),
            Event::DocumentStart(explicit, version) => {
                if let Some(v) = version.filter(|v| v.minor != 2) {
                    let before = self.text.get(..start as usize).unwrap_or("");
                    let at = before.rfind("%YAML").unwrap_or(start as usize);
                    return Err(self.error(
                        Code::YamlSyntax,
                        at as u32,
                        &format!("the document declares YAML {}.{}; capops reads YAML 1.2, which reads some values otherwise (`010` is ten, not eight; `yes` is text, not true)", v.major, v.minor),
                        "remove the `%YAML` line, and write each value as YAML 1.2 reads it",
                    ));
                }
                self.saw_document = true;
                self.documents_seen += 1;
                if self.documents_seen > MAX_DOCUMENTS {
                    return Err(self.error(
                        Code::YamlTooLarge,
                        start,
                        &format!("the file holds more than {MAX_DOCUMENTS} documents"),
                        "split the file into smaller files",
                    ));
                }
                self.doc_marker = explicit.then_some(start as usize);
                self.anchors.clear();
                Ok(())
            }
            Event::DocumentEnd => {
                match self.root.take() {
                    root @ (Some(Node {
                        value: Value::Null, ..
                    })
                    | None) => {
                        // At the separator, else at the `null` written.
                        let at = self
                            .doc_marker
                            .or(root.map(|r| r.start as usize))
                            .unwrap_or(start as usize);
                        // Between two separators, the extra one is the
                        // fix; a document that is only `null` (or `~`) has
                        // no separator to remove.
                        let help = if self.doc_marker.is_some() {
                            "remove the extra `---` separator"
                        } else {
                            "write the document's fields (apiVersion, kind, metadata, spec), or remove the file"
                        };
                        self.diagnostics.push(
                            Diagnostic::new(Code::DocumentEmpty, "this YAML document is empty")
                                .at(Span::new(self.file, at, at + 3), "empty document")
                                .help(help),
                        );
                    }
                    Some(root) => self.documents.push(root),
                }
                Ok(())
            }
            Event::Scalar(value, style, anchor, tag) => {
                let resolved = self.scalar(&value, style, tag.as_deref(), start, end)?;
                let node = Node {
                    value: resolved,
                    start,
                    end,
                };
                self.count(1, start)?;
                if anchor != 0 {
                    self.anchors.insert(anchor, (node.clone(), node.count()));
                }
                self.attach(node)
            }
            Event::SequenceStart(_, anchor, tag) => {
                self.collection_tag(tag.as_deref(), "seq", start)?;
                self.open(start)?;
                self.stack.push(Frame::Seq {
                    items: Vec::new(),
                    start,
                    anchor,
                });
                Ok(())
            }
            Event::MappingStart(_, anchor, tag) => {
                self.collection_tag(tag.as_deref(), "map", start)?;
                self.open(start)?;
                self.stack.push(Frame::Map {
                    entries: Vec::new(),
                    key: None,
                    index: None,
                    start,
                    anchor,
                });
                Ok(())
            }
            Event::SequenceEnd | Event::MappingEnd => {
                let (value, start, anchor) = match self.stack.pop() {
                    Some(Frame::Seq {
                        items,
                        start,
                        anchor,
                    }) => (Value::Seq(items), start, anchor),
                    Some(Frame::Map {
                        entries,
                        start,
                        anchor,
                        ..
                    }) => (Value::Map(entries), start, anchor),
                    None => return Ok(()),
                };
                self.count(1, start)?;
                let node = Node {
                    value,
                    start,
                    end: start,
                };
                if anchor != 0 {
                    let count = node.count();
                    self.anchors.insert(anchor, (node.clone(), count));
                }
                self.attach(node)
            }
            Event::Alias(id) => {
                let Some((node, count)) = self.anchors.get(&id).cloned() else {
                    return Err(self.error(
                        Code::YamlSyntax,
                        start,
                        "an alias refers to an unknown anchor",
                        "define the anchor (`&name`) before using it (`*name`)",
                    ));
                };
                self.alias_nodes += count;
                if self.alias_nodes > MAX_ALIAS_NODES {
                    return Err(self.error(
                        Code::YamlAliasLimit,
                        start,
                        &format!("alias expansion exceeds the limit of {MAX_ALIAS_NODES} values (a text counts once for every 64 bytes)"),
                        "aliases here expand to too many values (an alias bomb); write the values out or use fewer nested aliases",
                    ));
                }
                self.count(count, start)?;
                // The value is shown where the alias is, not where its
                // anchor is: a duplicate key or a wrong type is at the use.
                self.attach(Node { start, end, ..node })
            }
            // Presentation only, or not enabled.
            _ => Ok(()),
        }
    }

    fn open(&self, start: u32) -> Step {
        if self.stack.len() >= MAX_DEPTH {
            return Err(self.too_deep(start));
        }
        Ok(())
    }

    fn too_deep(&self, at: u32) -> Diagnostic {
        self.error(
            Code::YamlTooDeep,
            at,
            &format!("values are nested more than {MAX_DEPTH} levels deep"),
            "capops documents are at most a few levels deep; this nesting is a mistake or an attack",
        )
    }

    fn count(&mut self, n: usize, at: u32) -> Step {
        self.nodes += n;
        if self.nodes > MAX_NODES {
            return Err(self.error(
                Code::YamlTooLarge,
                at,
                &format!("the file holds more than {MAX_NODES} YAML values"),
                "split the file into smaller files",
            ));
        }
        Ok(())
    }

    fn error(&self, code: Code, at: u32, message: &str, help: &str) -> Diagnostic {
        let at = at as usize;
        Diagnostic::new(code, message)
            .at(Span::new(self.file, at, at), "here")
            .help(help)
    }

    /// Adds a finished node to its parent (or makes it the document's root).
    fn attach(&mut self, node: Node) -> Step {
        let file = self.file;
        match self.stack.last_mut() {
            None => {
                self.root = Some(node);
                Ok(())
            }
            Some(Frame::Seq { items, .. }) => {
                items.push(node);
                Ok(())
            }
            Some(Frame::Map {
                entries,
                key,
                index,
                ..
            }) => match key.take() {
                None => {
                    if matches!(node.value, Value::Seq(_) | Value::Map(_)) {
                        let at = node.start as usize;
                        return Err(Diagnostic::new(
                            Code::YamlSyntax,
                            "a mapping key is a list or a mapping",
                        )
                        .at(Span::new(file, at, at), "complex key")
                        .help("capops documents use plain text keys"));
                    }
                    if node.as_str() == Some("<<") {
                        return Err(Diagnostic::new(
                            Code::YamlSyntax,
                            "merge keys (`<<`) are not supported",
                        )
                        .at(node.span(file), "merge key")
                        .help("write the fields out in this mapping: each document states its values itself"));
                    }
                    *key = Some(node);
                    Ok(())
                }
                Some(k) => {
                    let duplicate = match index {
                        Some(set) => !set.insert(k.key_text()),
                        None => entries.iter().any(|(e, _)| same_key(e, &k)),
                    };
                    if duplicate {
                        let mut d = Diagnostic::new(
                            Code::YamlDuplicateKey,
                            format!("duplicate mapping key `{}`", k.key_text()),
                        )
                        .at(k.span(file), "second occurrence of this key")
                        .help("a key may appear once per mapping: remove one of the two or merge them");
                        // Where the first one is (found again only now: rare).
                        if let Some((first, _)) = entries.iter().find(|(e, _)| same_key(e, &k)) {
                            d = d.related(first.span(file), "first occurrence");
                        }
                        return Err(d);
                    }
                    entries.push((k, node));
                    if index.is_none() && entries.len() >= 16 {
                        *index = Some(entries.iter().map(|(k, _)| k.key_text()).collect());
                    }
                    Ok(())
                }
            },
        }
    }

    /// Resolves a scalar by the YAML 1.2 core schema and its tag.
    fn scalar(
        &mut self,
        value: &str,
        style: ScalarStyle,
        tag: Option<&granit_parser::Tag>,
        start: u32,
        end: u32,
    ) -> Result<Value, Diagnostic> {
        let core = match tag {
            None => None,
            Some(t) if t.handle() == "!" && t.suffix().is_empty() => Some("str"),
            Some(t) => match t.core_suffix() {
                Some(s) => Some(s),
                None => {
                    // The tag as written (`!!binary`, `!custom`), not its value.
                    let handle = match t.handle() {
                        "tag:yaml.org,2002:" => "!!",
                        h => h,
                    };
                    let written = format!("{handle}{}", t.suffix());
                    return Err(self.error(
                        Code::YamlSyntax,
                        start,
                        &format!("the tag `{written}` is not supported"),
                        "capops reads plain YAML values; remove the tag",
                    ));
                }
            },
        };
        let plain = style == ScalarStyle::Plain;
        let resolved = match core {
            Some("str") => Value::Str(value.to_string()),
            Some("null") => Value::Null,
            Some("bool") => match value {
                "true" | "True" | "TRUE" => Value::Bool(true),
                "false" | "False" | "FALSE" => Value::Bool(false),
                _ => return Err(self.bad_tagged(start, value, "a boolean")),
            },
            Some("int") => match resolve_int(value) {
                Some(Ok(v)) => v,
                Some(Err(())) => self.overflow(value, start, end),
                None => return Err(self.bad_tagged(start, value, "an integer")),
            },
            Some("float") => match resolve_int(value)
                .and_then(Result::ok)
                .or_else(|| resolve_float(value))
            {
                Some(Value::Int(i)) => Value::Float(i as f64),
                Some(v) => v,
                None => return Err(self.bad_tagged(start, value, "a number")),
            },
            None if !plain => Value::Str(value.to_string()),
            Some(other) => {
                // `!!map "abc"`, `!!seq x`: a collection's tag on a scalar.
                return Err(self.error(
                    Code::YamlSyntax,
                    start,
                    &format!("the tag `!!{other}` is not supported on a single value"),
                    "capops reads plain YAML values; remove the tag",
                ));
            }
            None => match value {
                "" | "~" | "null" | "Null" | "NULL" => Value::Null,
                "true" | "True" | "TRUE" => Value::Bool(true),
                "false" | "False" | "FALSE" => Value::Bool(false),
                _ => match resolve_int(value) {
                    Some(Ok(v)) => v,
                    Some(Err(())) => self.overflow(value, start, end),
                    None => resolve_float(value).unwrap_or_else(|| Value::Str(value.to_string())),
                },
            },
        };
        Ok(resolved)
    }

    fn bad_tagged(&self, at: u32, value: &str, what: &str) -> Diagnostic {
        self.error(
            Code::YamlSyntax,
            at,
            &format!("`{value}` is tagged as {what} but is not one"),
            "remove the tag or correct the value",
        )
    }

    /// An integer too large for 64 bits: reported, and kept as a float so that
    /// the rest of the document can still be checked.
    fn overflow(&mut self, value: &str, start: u32, end: u32) -> Value {
        self.diagnostics.push(
            Diagnostic::new(
                Code::YamlIntegerOverflow,
                format!(
                    "the integer {} is too {}",
                    crate::diag::clip(value),
                    if value.trim_start().starts_with('-') {
                        "small"
                    } else {
                        "large"
                    }
                ),
            )
            .at(
                Span {
                    file: self.file,
                    start,
                    end,
                },
                "does not fit in 64 bits",
            )
            .help("no whole number capops reads needs more than 19 digits (counts and priorities are far smaller); check for extra digits"),
        );
        Value::Float(value.parse().unwrap_or(f64::MAX))
    }
}

#[cfg(test)]
mod tests;
