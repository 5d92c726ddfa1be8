//! Loading: files to typed documents.
//!
//! The files come from a folder ([`files::collect`]) or, for `check --base`,
//! from a git revision; either way they arrive as [`Input`]s. [`load`] reads
//! them into a [`SourceMap`], parses the YAML on all cores, checks each
//! document's envelope (apiVersion, kind) and shape (JSON Schema), and types
//! the documents that pass. Problems become diagnostics; nothing stops early.

pub mod base;
pub mod cache;
pub mod cache_dir;
mod canonical;
pub mod de;
mod decode;
use decode::decode;
mod described;
pub mod files;
pub mod git;
pub mod git_files;
pub mod json;
pub mod output;
mod schedule;
pub mod shape;
pub mod templates;
pub mod typed;
pub mod usage;
mod usage_join;
pub mod yaml;

pub use crate::model::TypedDoc;
pub use files::{CONFIG_FILE, Content, FileKind, Input, MAX_FILE_BYTES};

use crate::diag::{Code, Diagnostic, FileId, SourceKind, SourceMap, Span, Text, suggest};
use crate::model::usage::UsageRows;
use crate::model::{API_VERSION, Kind, Origin, Usage};
use rayon::prelude::*;
use yaml::Node;

/// Everything read from a repository, before cross-document checks.
#[derive(Debug, Default)]
pub struct Loaded {
    pub sources: SourceMap,
    /// Documents that passed the shape check, in file and document order.
    pub docs: Vec<TypedDoc>,
    pub usage: Usage,
    pub diagnostics: Vec<Diagnostic>,
    /// The file holding the root `capops.yaml`, when there is one.
    pub config_file: Option<FileId>,
    /// Documents seen, whatever their validity.
    pub document_count: usize,
    /// The kind and name of each document whose shape did not check: a
    /// reference to one is not reported again as naming nothing.
    pub invalid: std::collections::BTreeSet<(Kind, String)>,
    /// A YAML file could not be read at all (too large, unreadable, binary
    /// from its first byte): the names it holds are not known, so a
    /// reference that names nothing is not reported (the file's own error
    /// is the one to fix first).
    pub unread: bool,
}

/// Reads and parses a set of inputs from the working tree.
pub fn load(inputs: Vec<Input>, cache: Option<&cache::Cache>) -> Loaded {
    load_with(SourceMap::new(), inputs, SourceKind::WorkTree, cache)
}

/// Reads and parses inputs, adding their files to an existing source map
/// (so that documents of a base revision and of the working tree can be
/// shown side by side). YAML trees of files the cache holds are taken from
/// it ([`cache::Cache::parse`]).
pub fn load_with(
    sources: SourceMap,
    inputs: Vec<Input>,
    source_kind: SourceKind,
    cache: Option<&cache::Cache>,
) -> Loaded {
    let mut loaded = Loaded {
        sources,
        ..Loaded::default()
    };
    let ignore = ignore_patterns(&inputs);
    let mut yaml_files = Vec::new();
    let mut csv_files = Vec::new();
    for input in inputs {
        if input.path != CONFIG_FILE && files::ignored(&input.path, &ignore) {
            continue;
        }
        let Some(kind) = files::classify(&input.path) else {
            // Links to folders, loops and submodules have no kind of their own; report them.
            // So is a folder that cannot be listed (its path ends in `/`).
            if matches!(
                input.content,
                Content::SymlinkLoop(_) | Content::Symlink | Content::Submodule
            ) || (input.path.ends_with('/') && matches!(input.content, Content::Unreadable(_)))
            {
                add_source(&mut loaded, &input, &source_kind);
            }
            continue;
        };
        if kind == FileKind::UsageCsv {
            // Read (when deferred), decoded and parsed on all cores below;
            // the file's text is set then.
            let id = loaded.sources.add_text(
                input.path.clone(),
                Text::Full("".into()),
                source_kind.clone(),
            );
            csv_files.push((id, input));
            continue;
        }
        let before = loaded.diagnostics.len();
        let (id, text_ok) = add_source(&mut loaded, &input, &source_kind);
        // A file refused with an error no Config can lower (too large,
        // unreadable, binary, another encoding); a link or submodule not
        // followed is a warning, and names nothing unknown.
        let refused = loaded.diagnostics[before..]
            .iter()
            .any(|d| d.is_error() && !d.code.overridable());
        if input.path == CONFIG_FILE {
            loaded.config_file = Some(id);
        }
        if text_ok {
            yaml_files.push(id);
        } else {
            // Refused as binary or not UTF-8: what can be read of it (up to
            // the first NUL, bad bytes replaced) names its documents, so a
            // reference to one is not another error. A file of which
            // nothing could be read names nothing that is known.
            let names = loaded
                .sources
                .get(id)
                .full_text()
                .map(|t| names_in_text(t))
                .unwrap_or_default();
            loaded.unread |= refused && names.is_empty();
            loaded.invalid.extend(names);
        }
    }

    let sources = &loaded.sources;
    let size = |id| sources.get(id).full_text().map_or(0, |t| t.len());
    let results = schedule::by_size(&yaml_files, size, |id| {
        load_yaml_file(sources.get(id), id, cache)
    });
    for (docs, diags, count, invalid) in results {
        loaded.invalid.extend(invalid);
        loaded.docs.extend(docs);
        loaded.diagnostics.extend(diags);
        loaded.document_count += count;
    }
    // Usage files are read in parallel, then put in place in file order
    // (the same series ids, hours and diagnostics as reading them one by
    // one), one file per core at a time: rows as read take 24 bytes, the
    // grids they land on 16. One batch is put in place while the next is
    // read. A file that reads without a problem keeps only the rows
    // diagnostics can point at (its header, each series' first row): its
    // text is read, parsed and dropped here, not held for the run.
    let mut ids = std::collections::HashMap::new();
    let batch = rayon::current_num_threads().max(1);
    let mut csv_files = csv_files.into_iter();
    let read_batch = |chunk: Vec<(FileId, Input)>| -> Vec<UsagePart> {
        chunk
            .into_par_iter()
            .map(|(id, input)| {
                let (text, part, diags) = read_usage_file(id, input);
                (id, text, part, diags)
            })
            .collect()
    };
    let mut pending: Vec<UsagePart> = Vec::new();
    loop {
        let chunk: Vec<(FileId, Input)> = csv_files.by_ref().take(batch).collect();
        if chunk.is_empty() && pending.is_empty() {
            break;
        }
        let parts = std::mem::take(&mut pending);
        let put = |loaded: &mut Loaded, ids: &mut std::collections::HashMap<_, _>| {
            for (id, text, part, diags) in parts {
                loaded.sources.set_text(id, text);
                loaded.diagnostics.extend(diags);
                usage_join::join(&mut loaded.usage, part, ids, &mut loaded.diagnostics);
            }
        };
        let (next, ()) = rayon::join(|| read_batch(chunk), || put(&mut loaded, &mut ids));
        pending = next;
    }
    loaded
}

/// One usage file as read: its id, what is kept of its text, its rows and
/// its diagnostics.
type UsagePart = (FileId, Text, UsageRows, Vec<Diagnostic>);

/// Reads one usage CSV: its samples, its diagnostics and what is kept of
/// its text.
fn read_usage_file(id: FileId, input: Input) -> (Text, UsageRows, Vec<Diagnostic>) {
    let (origin, content) = match input.content {
        Content::Deferred(path) => {
            let content = files::read(&path);
            (Some(path), content)
        }
        other => (None, other),
    };
    let mut diags = Vec::new();
    let (text, ok) = decode(&input.path, &content, id, &mut diags);
    let mut part = UsageRows::default();
    if !ok {
        return (Text::Full(text.into()), part, diags);
    }
    usage::read_csv(&text, id, &mut part, &mut diags);
    // Only a working-tree file can be read again (for its content id, or by
    // `usage pull`); a file from git keeps its text.
    let kept = if diags.is_empty() && origin.is_some() {
        // Each series' first row, and its row with the most GPUs (where a
        // series over its pool's capacity is shown).
        let offsets = part
            .series_spans
            .iter()
            .chain(part.peaks.iter().map(|(_, s)| s))
            .map(|s| s.start);
        let reread = origin.map(|path| {
            crate::diag::Reread(std::sync::Arc::new(move || match files::read(&path) {
                Content::Bytes(bytes) => String::from_utf8(bytes).ok(),
                _ => None,
            }))
        });
        Text::Rows(std::sync::Arc::new(crate::diag::Rows::keep(
            &text, offsets, reread,
        )))
    } else {
        // A file with problems is shown with its context lines.
        Text::Full(text.into())
    };
    (kept, part, diags)
}

/// One file's typed documents, diagnostics, document count, and the kind
/// and name of its documents that did not check.
type FileDocs = (Vec<TypedDoc>, Vec<Diagnostic>, usize, Vec<(Kind, String)>);

/// Parses, checks and types every document of one YAML file.
fn load_yaml_file(
    source: &crate::diag::SourceFile,
    file: FileId,
    cache: Option<&cache::Cache>,
) -> FileDocs {
    let text: &str = source.full_text().map_or("", |t| t);
    let parsed = match cache {
        Some(c) => c.parse(text, file, source.content_id(cache::key_of)),
        None => yaml::parse(text, file),
    };
    let mut diags = parsed.diagnostics;
    let mut docs = Vec::new();
    let mut invalid = Vec::new();
    // A file that did not parse has no documents to name; the names its
    // text seems to hold are marked as not checked, so a reference to one
    // is not another error (its own diagnostic says what is wrong).
    if diags
        .iter()
        .any(|d| d.severity == crate::diag::Severity::Error)
    {
        invalid.extend(names_in_text(text));
    }
    let count = parsed.documents.len();
    let mut budget = shape::Budget::new();
    // Integers too large to read were reported by the parser; the schema's
    // view of the same values (a float, out of range) would only repeat it.
    let mut overflows: Vec<Span> = diags
        .iter()
        .filter(|d| d.code == Code::YamlIntegerOverflow)
        .filter_map(Diagnostic::span)
        .collect();
    // All of this file: by start, then end.
    overflows.sort_unstable();
    for (index, node) in parsed.documents.iter().enumerate() {
        let Some((kind, kind_span)) = envelope(node, file, &mut diags) else {
            invalid.extend(envelope_names(node));
            continue;
        };
        let (from, to) = (node.start, node_end(node));
        let first = overflows.partition_point(|s| s.start < from);
        let last = overflows.partition_point(|s| s.start <= to);
        let overflows = &overflows[first..last];
        let mut instance = json::to_json(node);
        let mut shape = Vec::new();
        let shape_ok = shape::check(kind, node, &instance, file, &mut shape, &mut budget);
        canonical::canonicalize(kind, &mut instance);
        shape.retain(|d| {
            d.span()
                .is_none_or(|s| overflows.binary_search(&s).is_err())
        });
        diags.append(&mut shape);
        // The name as written and, with look-alike letters in it, as it
        // reads (a reference to `devex` is to the Team named `dеvex`).
        let name = || {
            let n = instance["metadata"]["name"].as_str();
            n.map(|n| (kind, n.to_string())).into_iter().chain(
                n.and_then(crate::diag::lookalike::skeleton)
                    .map(|s| (kind, s)),
            )
        };
        if !shape_ok || !overflows.is_empty() {
            invalid.extend(name());
            continue;
        }
        let origin = Origin {
            file,
            kind_span,
            index,
        };
        match typed::type_document(kind, node, origin, &typed::fingerprint(&instance)) {
            Ok(doc) => docs.push(doc),
            Err(d) => {
                invalid.extend(name());
                diags.push(d);
            }
        }
    }
    diags.extend(budget.finish());
    (docs, diags, count, invalid)
}

fn node_end(node: &Node) -> u32 {
    match &node.value {
        yaml::Value::Seq(items) => items.iter().map(node_end).max().unwrap_or(node.end),
        yaml::Value::Map(entries) => entries
            .iter()
            .map(|(k, v)| node_end(k).max(node_end(v)))
            .max()
            .unwrap_or(node.end),
        _ => node.end,
    }
}

/// Checks apiVersion and kind; returns the kind and the span of its value.
/// The names a document refused for its envelope (an apiVersion or kind
/// capops does not read) seems to hold: its `metadata.name` under its kind
/// when that is one capops knows, else under every kind. A reference to one
/// is then not another error (`unknown-team` for the Team whose apiVersion
/// is misspelt): its own diagnostic, which no Config can lower, says what
/// is wrong.
fn envelope_names(node: &Node) -> Vec<(Kind, String)> {
    let Some(name) = node
        .get("metadata")
        .and_then(|(_, m)| m.get("name"))
        .and_then(|(_, n)| n.as_str())
    else {
        return Vec::new();
    };
    let kinds: Vec<Kind> = match node
        .get("kind")
        .and_then(|(_, k)| k.as_str())
        .and_then(Kind::parse)
    {
        Some(k) => vec![k],
        None => Kind::ALL.to_vec(),
    };
    let names: Vec<String> = std::iter::once(name.to_string())
        .chain(crate::diag::lookalike::skeleton(name))
        .collect();
    kinds
        .into_iter()
        .flat_map(|k| names.iter().map(move |n| (k, n.clone())))
        .collect()
}

fn envelope(node: &Node, file: FileId, diags: &mut Vec<Diagnostic>) -> Option<(Kind, Span)> {
    let doc_span = node.span(file);
    if node.as_map().is_none() {
        diags.push(
            Diagnostic::new(
                Code::DocumentNotMapping,
                format!("a document must be a mapping, found {}", node.type_name()),
            )
            .at(doc_span, "document starts here")
            .help("each document starts with `apiVersion: capops.dev/v1alpha1` and `kind:`"),
        );
        return None;
    }
    let mut ok = true;
    match node.get("apiVersion") {
        None => {
            diags.push(
                Diagnostic::new(Code::MissingApiVersion, "the document has no apiVersion")
                    .at(doc_span, "document starts here")
                    .help(format!("add `apiVersion: {API_VERSION}`")),
            );
            ok = false;
        }
        Some((_, v)) if v.as_str() != Some(API_VERSION) => {
            diags.push(
                Diagnostic::new(
                    Code::UnknownApiVersion,
                    not_known("apiVersion", v, "reads"),
                )
                .at(v.span(file), "unknown apiVersion")
                .help(format!(
                    "capops reads `{API_VERSION}`; files of other tools can be skipped with the Config's `ignore`"
                )),
            );
            ok = false;
        }
        Some(_) => {}
    }
    if !ok {
        // A document of another tool: its kind means nothing to capops.
        return None;
    }
    let kind = match node.get("kind") {
        None => {
            diags.push(
                Diagnostic::new(Code::MissingKind, "the document has no kind")
                    .at(doc_span, "document starts here")
                    .help(format!(
                        "add `kind:` with one of {}",
                        Kind::ALL.map(|k| k.as_str()).join(", ")
                    )),
            );
            return None;
        }
        Some((_, v)) => match v.as_str().and_then(Kind::parse) {
            Some(k) => (k, v.span(file)),
            None => {
                let found = v.as_str().unwrap_or("");
                diags.push(
                    Diagnostic::new(Code::UnknownKind, not_known("kind", v, "knows"))
                        .at(v.span(file), "unknown kind")
                        .help(suggest(found, Kind::ALL.map(|k| k.as_str()), "kinds")),
                );
                return None;
            }
        },
    };
    Some(kind)
}

/// Adds an input to the source map and reports problems with its content.
/// Returns the file id and whether its text can be parsed.
fn add_source(loaded: &mut Loaded, input: &Input, kind: &SourceKind) -> (FileId, bool) {
    let id = loaded.sources.next_id();
    let (text, ok) = match &input.content {
        Content::Deferred(path) => {
            let content = files::read(path);
            let (text, ok) = decode(&input.path, &content, id, &mut loaded.diagnostics);
            (text.into_owned(), ok)
        }
        content => {
            let (text, ok) = decode(&input.path, content, id, &mut loaded.diagnostics);
            (text.into_owned(), ok)
        }
    };
    let added = loaded
        .sources
        .add_from(input.path.clone(), text, kind.clone());
    debug_assert_eq!(added, id);
    (id, ok)
}

/// Why an `apiVersion` or `kind` is not one capops reads: the string it
/// names (cut at 60 characters), or the type it has instead of a string.
fn not_known(field: &str, v: &yaml::Node, verb: &str) -> String {
    match &v.value {
        yaml::Value::Str(s) => format!(
            "{field} `{}` is not one capops {verb}",
            crate::diag::clip(s)
        ),
        yaml::Value::Null => format!("{field} is empty: it must be a string"),
        yaml::Value::Seq(_) | yaml::Value::Map(_) => {
            format!("{field} must be a string, found a {}", v.type_name())
        }
        _ => format!(
            "{field} must be a string, found the {} `{}`",
            v.type_name(),
            crate::diag::clip(&v.key_text())
        ),
    }
}

fn symlink_loop(id: FileId, path: &str) -> Diagnostic {
    Diagnostic::new(
        Code::SymlinkLoop,
        format!("`{path}` is a symbolic link back into its own folder; skipped"),
    )
    .at(Span::file_start(id), "symlink loop")
    .help("remove the link or point it outside the repository")
}

/// The Config's `ignore` patterns, read straight from `capops.yaml` so they
/// apply before the other files are parsed.
pub(super) fn ignore_patterns(inputs: &[Input]) -> Vec<String> {
    let Some(Input {
        content: Content::Bytes(bytes),
        ..
    }) = inputs.iter().find(|i| i.path == CONFIG_FILE)
    else {
        return Vec::new();
    };
    let Ok(text) = std::str::from_utf8(bytes) else {
        return Vec::new();
    };
    let parsed = yaml::parse(text, FileId(0));
    parsed
        .documents
        .iter()
        .filter(|d| d.get("kind").and_then(|(_, v)| v.as_str()) == Some("Config"))
        .filter_map(|d| d.get("spec")?.1.get("ignore"))
        .filter_map(|(_, v)| match &v.value {
            yaml::Value::Seq(items) => Some(items),
            _ => None,
        })
        .flatten()
        .filter_map(|n| n.as_str().map(String::from))
        .collect()
}

/// The kind and `metadata.name` of each document a YAML text seems to
/// hold, read line by line without parsing (for a file that does not
/// parse): `kind: X` at the top level, and `name:` under a top-level
/// `metadata:` (block or flow style).
fn names_in_text(text: &str) -> Vec<(Kind, String)> {
    fn scalar(v: &str) -> Option<String> {
        let mut v = v.split(" #").next().unwrap_or("").trim();
        // An anchor (`&a devex`) or a tag (`!!str devex`) before the value.
        while v.starts_with(['&', '!']) {
            v = v
                .split_once([' ', '\t'])
                .map_or("", |(_, rest)| rest)
                .trim_start();
        }
        let v = v.trim_matches(|c| c == '"' || c == '\'');
        (!v.is_empty() && !v.contains(['{', '}', '[', ']', ','])).then(|| v.to_string())
    }
    let mut out = Vec::new();
    let (mut kind, mut name): (Option<Kind>, Option<String>) = (None, None);
    let mut in_metadata = false;
    let mut flush = |kind: &mut Option<Kind>, name: &mut Option<String>| {
        if let (Some(k), Some(n)) = (kind.take(), name.take()) {
            out.push((k, n));
        }
    };
    for line in text.lines().take(1_000_000) {
        // A byte-order mark inside the text (a file pasted into another).
        let line = line.trim_start_matches('\u{feff}');
        if line.starts_with("---") {
            flush(&mut kind, &mut name);
            in_metadata = false;
            continue;
        }
        let top = !line.starts_with([' ', '\t']);
        if top {
            in_metadata = false;
            if let Some(v) = line.strip_prefix("kind:") {
                kind = scalar(v).and_then(|k| Kind::parse(&k));
            } else if let Some(v) = line.strip_prefix("metadata:") {
                let v = v.trim();
                match v.strip_prefix('{').and_then(|v| v.split("name:").nth(1)) {
                    Some(rest) => name = scalar(rest.split([',', '}']).next().unwrap_or("")),
                    None => in_metadata = v.is_empty(),
                }
            }
        } else if in_metadata && let Some(v) = line.trim_start().strip_prefix("name:") {
            name = scalar(v);
        }
    }
    flush(&mut kind, &mut name);
    out
}

#[cfg(test)]
mod names_tests {
    use super::*;

    #[test]
    fn names_are_read_from_a_file_that_does_not_parse() {
        let text = "apiVersion: capops.dev/v1alpha1\nkind: Team\nmetadata:\n  name: inference\n  labels: {a: b}\nspec:\n  costCenter: a\n  costCenter: b\n---\nkind: Cluster\nmetadata: {name: \"prod\", labels: {}}\nspec: {nodes: [6\n";
        assert_eq!(
            names_in_text(text),
            vec![
                (Kind::Team, "inference".to_string()),
                (Kind::Cluster, "prod".to_string())
            ]
        );
        // An anchor or a tag before the value is not part of it.
        let text = "kind: !!str Team\nmetadata:\n  name: &a devex\n---\nkind: Team\nmetadata: {name: !!str \"ml\"}\n---\nkind: Team\nmetadata:\n  name: !t &b 'ops'\n";
        assert_eq!(
            names_in_text(text),
            vec![
                (Kind::Team, "devex".to_string()),
                (Kind::Team, "ml".to_string()),
                (Kind::Team, "ops".to_string())
            ]
        );
        // A stray byte-order mark before a top-level key.
        let text = "\u{feff}kind: Team\nmetadata:\n  name: devex\n";
        assert_eq!(names_in_text(text), vec![(Kind::Team, "devex".to_string())]);
        // A spec's own `name:` keys are not the document's.
        let text = "kind: Cluster\nspec:\n  nodePools:\n    - name: a100\n";
        assert!(names_in_text(text).is_empty());
    }
}
