//! Shape: every document against its kind's JSON Schema.
//!
//! The schemas are the committed files under `schemas/`, embedded in the
//! binary and compiled once. Each schema error becomes a diagnostic at the
//! offending key or value, with a message in the document's own terms
//! (`spec.resources.nvidia.com/gpu must be a whole number`) rather than the
//! validator's.

use super::json::{display_path, locate};
use super::yaml::Node;
use crate::diag::{Code, Diagnostic, FileId, Span, suggest};
use crate::model::Kind;
use crate::model::schema;
use jsonschema::error::{TypeKind, ValidationErrorKind};
use serde_json::Value as Json;
use std::collections::{BTreeMap, HashSet};
use std::sync::OnceLock;

struct Compiled {
    schema: Json,
    validator: jsonschema::Validator,
}

fn compiled(kind: Kind) -> &'static Compiled {
    static CACHE: OnceLock<BTreeMap<Kind, Compiled>> = OnceLock::new();
    let cache = CACHE.get_or_init(|| {
        Kind::ALL
            .into_iter()
            .map(|k| {
                let schema: Json =
                    serde_json::from_str(schema::embedded(k)).expect("embedded schema is JSON");
                let validator = jsonschema::draft202012::options()
                    .build(&schema)
                    .expect("embedded schema compiles");
                (k, Compiled { schema, validator })
            })
            .collect()
    });
    &cache[&kind]
}

pub use super::described::{Budget, DESCRIBED_PER_FILE};

/// Validates one document (its tree and its JSON form); returns true when
/// it has the right shape. Describes problems while the file's `budget`
/// lasts, and counts the rest in it.
pub fn check(
    kind: Kind,
    doc: &Node,
    instance: &Json,
    file: FileId,
    diags: &mut Vec<Diagnostic>,
    budget: &mut Budget,
) -> bool {
    let compiled = compiled(kind);
    // One diagnostic per place and code (each unknown key of a mapping is
    // its own place); a wrong type hides the other complaints about the same
    // value (a number is not "one of" the allowed words either).
    let mut found: Vec<(String, Diagnostic)> = Vec::new();
    let mut seen: HashSet<(String, Code, Option<u32>)> = HashSet::new();
    let mut any = false;
    // What this document may describe, and a bound on what it holds to
    // choose from (a wrong type hides the other complaints about the same
    // value, so more are described than shown).
    let room = budget.left;
    let cap = if room == 0 {
        0
    } else {
        room.saturating_mul(2) + 64
    };
    // Problems not described: counted once per place (a value of the
    // wrong type and not one of the allowed words is one problem).
    let mut uncounted = 0usize;
    let mut last_place = String::new();
    for err in compiled.validator.iter_errors(instance) {
        any = true;
        let pointer = err.instance_path().as_str().to_string();
        // The problems this error stands for: each unexpected key is one.
        let problems = match err.kind() {
            ValidationErrorKind::AdditionalProperties { unexpected }
            | ValidationErrorKind::UnevaluatedProperties { unexpected } => unexpected.len(),
            _ => 1,
        };
        let described = if found.len() < cap {
            let schema_path = err.schema_path().as_str().to_string();
            describe(
                err.kind(),
                &pointer,
                &schema_path,
                &compiled.schema,
                doc,
                file,
                cap - found.len(),
            )
        } else {
            Vec::new()
        };
        if problems > described.len() && (problems > 1 || pointer != last_place) {
            uncounted += problems - described.len();
        }
        for d in described {
            let at = d.span().map(|s| s.start);
            if seen.insert((pointer.clone(), d.code, at)) {
                found.push((pointer.clone(), d));
            }
        }
        last_place = pointer;
    }
    let typed: HashSet<String> = found
        .iter()
        .filter(|(_, d)| d.code == Code::WrongType)
        .map(|(p, _)| p.clone())
        .collect();
    let ok = !any;
    let kept: Vec<Diagnostic> = found
        .into_iter()
        .filter(|(p, d)| d.code == Code::WrongType || !typed.contains(p))
        .map(|(_, d)| d)
        .collect();
    let shown = kept.len().min(room);
    let hidden = kept.len() - shown + uncounted;
    budget.left -= shown;
    if hidden > 0 {
        budget.hidden += hidden;
        // A point at the document's start: the document itself may be
        // megabytes.
        budget.first_hidden.get_or_insert(Span {
            file,
            start: doc.start,
            end: doc.start,
        });
    }
    diags.extend(kept.into_iter().take(shown));
    ok
}

fn describe(
    kind: &ValidationErrorKind,
    pointer: &str,
    schema_path: &str,
    schema: &Json,
    doc: &Node,
    file: FileId,
    most: usize,
) -> Vec<Diagnostic> {
    let at = locate(doc, pointer);
    let value_span = at.value.span(file);
    // Point at the key when there is one: "spec.team: wrong type" reads best at the key's line.
    let path = display_path(pointer);
    let found = describe_value(at.value);
    match kind {
        ValidationErrorKind::AdditionalProperties { unexpected }
        | ValidationErrorKind::UnevaluatedProperties { unexpected } => {
            let allowed = allowed_properties(schema, schema_path);
            // Each key looked up once (a mapping of 80,000 unknown keys
            // searched key by key would take quadratic time).
            // Keys by the text they have in JSON (`~` is `null`, `1` is `1`).
            let keys: std::collections::HashMap<String, &Node> = at
                .value
                .as_map()
                .unwrap_or_default()
                .iter()
                .map(|(k, _)| (k.key_text(), k))
                .collect();
            unexpected
                .iter()
                .take(most)
                .map(|name| {
                    let key_span = keys
                        .get(name.as_str())
                        .map(|k| k.span(file))
                        .unwrap_or(value_span);
                    let help = if allowed.is_empty() {
                        "remove this field".to_string()
                    } else {
                        format!(
                            "{}; remove the field or correct its name",
                            suggest(name, allowed.iter().map(String::as_str), "fields here")
                        )
                    };
                    let where_ = if pointer.is_empty() {
                        "at the top of the document".to_string()
                    } else {
                        format!("in {path}")
                    };
                    Diagnostic::new(
                        Code::UnknownField,
                        format!("unknown field `{name}` {where_}"),
                    )
                    .at(key_span, "not a known field")
                    .help(help)
                })
                .collect()
        }
        ValidationErrorKind::Required { property } => {
            let name = property.as_str().unwrap_or("?");
            // At the mapping's key; a list item has none of its own (the
            // key above it is the list's), so at the item itself.
            let in_list = pointer
                .rsplit('/')
                .next()
                .is_some_and(|s| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()));
            let span = match at.key {
                Some(k) if !in_list => k.span(file),
                _ => value_span,
            };
            let within = if pointer.is_empty() {
                "the document".to_string()
            } else {
                path.clone()
            };
            vec![
                Diagnostic::new(
                    Code::MissingField,
                    format!("{within} is missing the required field `{name}`"),
                )
                .at(span, format!("`{name}` is required here"))
                .help(format!("add `{name}:` with a value")),
            ]
        }
        ValidationErrorKind::Type { kind } => {
            let expected = match kind {
                TypeKind::Single(t) => type_word(&t.to_string()).to_string(),
                TypeKind::Multiple(set) => set
                    .iter()
                    .map(|t| type_word(&t.to_string()).to_string())
                    .collect::<Vec<_>>()
                    .join(" or "),
            };
            if let super::yaml::Value::Float(f) = at.value.value
                && !f.is_finite()
            {
                return vec![
                    Diagnostic::new(
                        Code::WrongType,
                        format!("{path} must be a finite number, found {f}"),
                    )
                    .at(value_span, "not a finite number")
                    .help(format!(
                        "write {path} as {expected}: `.nan` and `.inf` are not amounts or counts"
                    )),
                ];
            }
            // A date written as a number (`20261001`, a bare year): a date
            // problem, with the form that reads.
            let is_time = schema_path
                .rsplit_once('/')
                .and_then(|(parent, _)| schema.pointer(parent))
                .and_then(|s| s.get("pattern"))
                .and_then(Json::as_str)
                == Some(crate::model::types::TIMESTAMP_PATTERN);
            if is_time {
                return vec![
                    Diagnostic::new(
                        Code::InvalidDate,
                        format!("{path} must be a date or a time, found {found}"),
                    )
                    .at(value_span, "not a date")
                    .help("write a date as 2026-12-01 or a time as 2026-12-01T08:00:00Z"),
                ];
            }
            let help = if expected.contains("whole number") && found.starts_with("the number") {
                "counts are whole numbers: GPUs and MIG instances cannot be split".to_string()
            } else if found == "nothing (null)" {
                "give a value or remove the key".to_string()
            } else {
                format!("write {path} as {expected}")
            };
            vec![
                Diagnostic::new(
                    Code::WrongType,
                    format!("{path} must be {expected}, found {found}"),
                )
                .at(value_span, format!("expected {expected}"))
                .help(help),
            ]
        }
        ValidationErrorKind::Minimum { limit }
        | ValidationErrorKind::ExclusiveMinimum { limit } => {
            let is_count = limit.as_i64() == Some(1) || limit.as_i64() == Some(2);
            let msg = if is_count {
                format!("{path} must be at least {limit}, found {found}")
            } else {
                format!("{path} must not be below {limit}, found {found}")
            };
            vec![
                Diagnostic::new(Code::ValueOutOfRange, msg)
                    .at(value_span, format!("below {limit}"))
                    .help(if limit.as_i64() == Some(1) {
                        "counts are positive whole numbers; remove the entry instead of asking for zero".to_string()
                    } else {
                        format!("use a value of at least {limit}")
                    }),
            ]
        }
        ValidationErrorKind::Maximum { limit }
        | ValidationErrorKind::ExclusiveMaximum { limit } => vec![
            Diagnostic::new(
                Code::ValueOutOfRange,
                format!("{path} must not exceed {limit}, found {found}"),
            )
            .at(value_span, format!("above {limit}"))
            .help(format!("use a value of at most {limit}")),
        ],
        ValidationErrorKind::Enum { options } => {
            let allowed: Vec<String> = options
                .as_array()
                .map(|a| {
                    a.iter()
                        .filter_map(|v| v.as_str().map(String::from))
                        .collect()
                })
                .unwrap_or_default();
            vec![not_allowed(&path, &allowed, &found, at.value, value_span)]
        }
        ValidationErrorKind::Constant { expected_value } => vec![
            Diagnostic::new(
                Code::InvalidValue,
                format!("{path} must be {expected_value}, found {found}"),
            )
            .at(value_span, "unexpected value"),
        ],
        ValidationErrorKind::Pattern { pattern } => {
            let (what, help) = pattern_hint(pattern);
            // A date or time written in another form is a date problem.
            let code = if pattern == crate::model::types::TIMESTAMP_PATTERN {
                Code::InvalidDate
            } else {
                Code::InvalidValue
            };
            // A look-alike letter is invisible in the value as shown: name it.
            let odd = at
                .value
                .as_str()
                .and_then(crate::diag::lookalike::first_non_ascii)
                .map(|s| format!(": {s}"))
                .unwrap_or_default();
            // A URL's user and password are not repeated in output.
            let found = if pattern == crate::model::api_server::API_SERVER_PATTERN {
                crate::model::api_server::without_userinfo_text(&found)
            } else {
                found
            };
            vec![
                Diagnostic::new(code, format!("{path} must be {what}, found {found}{odd}"))
                    .at(value_span, "not in the allowed form")
                    .help(help),
            ]
        }
        ValidationErrorKind::MinLength { limit } | ValidationErrorKind::MaxLength { limit } => {
            let bound = if matches!(kind, ValidationErrorKind::MinLength { .. }) {
                "at least"
            } else {
                "at most"
            };
            vec![
                Diagnostic::new(
                    Code::InvalidValue,
                    format!("{path} must be {bound} {limit} characters long, found {found}"),
                )
                .at(value_span, "wrong length")
                .help(match at.value.as_str() {
                    Some(text) => format!(
                        "it is {} characters long; write one of {bound} {limit}",
                        text.chars().count()
                    ),
                    None => format!("write a value of {bound} {limit} characters"),
                }),
            ]
        }
        ValidationErrorKind::MinItems { limit } | ValidationErrorKind::MinProperties { limit } => {
            vec![
                Diagnostic::new(
                    Code::InvalidValue,
                    format!(
                        "{path} must have at least {limit} {}",
                        if *limit == 1 { "entry" } else { "entries" }
                    ),
                )
                .at(
                    at.key.map(|k| k.span(file)).unwrap_or(value_span),
                    "too few entries",
                )
                .help(if path.ends_with("spec.resources`") {
                    "name what is asked for, as `nvidia.com/gpu: 8` (or a MIG profile's `nvidia.com/mig-1g.10gb: 7`)"
                } else {
                    "add the missing entries"
                }),
            ]
        }
        ValidationErrorKind::OneOfNotValid { .. }
        | ValidationErrorKind::AnyOf { .. }
        | ValidationErrorKind::OneOfMultipleValid { .. } => {
            // The kinds the schemas spell as `oneOf` constants (each with
            // its description): named like an enum's values.
            let allowed = alternatives(schema, schema_path);
            if allowed.is_empty() {
                vec![
                    Diagnostic::new(
                        Code::InvalidValue,
                        format!("{path} matches none of the forms it may take, found {found}"),
                    )
                    .at(value_span, "not an allowed form")
                    .help(format!("see the {path} entry in docs/documents.md")),
                ]
            } else {
                vec![not_allowed(&path, &allowed, &found, at.value, value_span)]
            }
        }
        other => vec![
            Diagnostic::new(
                Code::InvalidValue,
                format!("{path} is not valid: {}", other_text(other)),
            )
            .at(value_span, "invalid"),
        ],
    }
}

/// A value that is none of the `allowed` ones, with the nearest suggested.
fn not_allowed(
    path: &str,
    allowed: &[String],
    found: &str,
    value: &Node,
    span: crate::diag::Span,
) -> Diagnostic {
    let word = value.as_str().unwrap_or("");
    Diagnostic::new(
        Code::InvalidValue,
        format!(
            "{path} must be one of {}, found {found}",
            quote_list(allowed)
        ),
    )
    .at(span, "not an allowed value")
    .help(suggest(word, allowed.iter().map(String::as_str), "values"))
}

/// The constants a `oneOf` or `anyOf` at `schema_path` allows (empty when
/// its alternatives are not all constants).
fn alternatives(schema: &Json, schema_path: &str) -> Vec<String> {
    let node = schema.pointer(schema_path);
    let list = node.and_then(Json::as_array).or_else(|| {
        node.and_then(|n| n.get("oneOf").or_else(|| n.get("anyOf")))
            .and_then(Json::as_array)
    });
    let Some(list) = list else {
        return Vec::new();
    };
    let consts: Vec<String> = list
        .iter()
        .filter_map(|alt| alt.get("const").and_then(Json::as_str).map(String::from))
        .collect();
    if consts.len() == list.len() {
        consts
    } else {
        Vec::new()
    }
}

/// The property names allowed by the object schema that holds `.../additionalProperties`.
fn allowed_properties(schema: &Json, schema_path: &str) -> Vec<String> {
    let parent = match schema_path.rsplit_once('/') {
        Some((parent, _)) => parent,
        None => return Vec::new(),
    };
    schema
        .pointer(parent)
        .and_then(|s| s.get("properties"))
        .and_then(Json::as_object)
        .map(|props| props.keys().cloned().collect())
        .unwrap_or_default()
}

fn describe_value(node: &Node) -> String {
    use super::yaml::Value;
    match &node.value {
        Value::Null => "nothing (null)".into(),
        Value::Bool(b) => format!("the boolean {b}"),
        Value::Int(i) => format!("{i}"),
        Value::UInt(u) => format!("{u}"),
        Value::Float(f) => {
            // 1e308 and 1e-320 as written, not as 300 digits.
            let plain = format!("{f}");
            if plain.len() > 24 {
                format!("the number {f:e}")
            } else {
                format!("the number {plain}")
            }
        }
        Value::Str(s) => {
            let short: String = s.chars().take(40).collect();
            let ell = if s.chars().count() > 40 { "…" } else { "" };
            format!("the string \"{short}{ell}\"")
        }
        Value::Seq(_) => "a list".into(),
        Value::Map(_) => "a mapping".into(),
    }
}

fn type_word(t: &str) -> &'static str {
    match t {
        "integer" => "a whole number",
        "number" => "a number",
        "string" => "a string",
        "boolean" => "true or false",
        "array" => "a list",
        "object" => "a mapping",
        "null" => "null",
        _ => "a value",
    }
}

fn quote_list(items: &[String]) -> String {
    items
        .iter()
        .map(|s| format!("`{s}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

fn pattern_hint(pattern: &str) -> (String, String) {
    use crate::model::types::{NAME_PATTERN, TIMESTAMP_PATTERN};
    if pattern == NAME_PATTERN {
        (
            "a name of lowercase letters, digits and '-'".into(),
            "names become Kubernetes object names: use lowercase letters, digits and '-', starting and ending with a letter or digit".into(),
        )
    } else if pattern == TIMESTAMP_PATTERN {
        (
            "a date or date-time".into(),
            "write a date as 2026-12-01 or a time with its zone as 2026-12-01T08:00:00Z (or +02:00)".into(),
        )
    } else if pattern == "^[A-Z]{3}$" {
        (
            "an ISO 4217 currency code".into(),
            "write three capital letters, such as USD, EUR or JPY".into(),
        )
    } else if pattern == crate::model::api_server::API_SERVER_PATTERN {
        (
            "an http or https URL without a user, query or fragment".into(),
            "write the API server as `kubectl config view --minify` shows it, such as https://203.0.113.10 or https://k8s.example.com:6443; credentials belong in the kubeconfig, never in the repository".into(),
        )
    } else if pattern.contains("[0-9]+(\\.[0-9]+)?") {
        (
            "a decimal number".into(),
            "write amounts as numbers such as 55.04 or strings such as \"55.04\"".into(),
        )
    } else {
        (
            format!("text matching `{pattern}`"),
            "correct the value".into(),
        )
    }
}

/// A schema rule without a message of its own, by its name only (never the
/// validator's internal dump).
fn other_text(kind: &ValidationErrorKind) -> String {
    let debug = format!("{kind:?}");
    let name: String = debug
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric())
        .collect();
    format!("it breaks the schema's `{name}` rule")
}

#[cfg(test)]
#[path = "shape_tests.rs"]
mod tests;
