//! From a checked YAML tree to a typed document.
//!
//! Runs after the shape check, so failures here are about meaning the schema
//! cannot express (a date that does not exist) or, if the schema and types
//! ever disagree, a precise report rather than a panic.

use super::de::{DeError, from_node};
use super::yaml::Node;
use crate::diag::{Code, Diagnostic, FileId};
use crate::model::*;
use serde::Deserialize;

#[derive(Deserialize)]
struct Envelope<S> {
    metadata: Metadata,
    spec: S,
}

fn read<'a, S: Deserialize<'a>>(
    node: &'a Node,
    file: FileId,
    origin: Origin,
    fingerprint: &Fingerprint,
) -> Result<Document<S>, DeError> {
    // apiVersion and kind were checked before typing; serde skips them here.
    let env: Envelope<S> = from_node(node, file)?;
    Ok(Document {
        metadata: env.metadata,
        spec: env.spec,
        origin,
        fingerprint: fingerprint.clone(),
    })
}

/// Hashes a document's JSON form: metadata, and each top-level spec field.
/// Object keys are hashed in sorted order, so reordering fields changes nothing.
pub fn fingerprint(instance: &serde_json::Value) -> Fingerprint {
    use std::hash::{Hash, Hasher};
    fn feed(v: &serde_json::Value, h: &mut std::collections::hash_map::DefaultHasher) {
        match v {
            serde_json::Value::Object(m) => {
                let mut keys: Vec<&String> = m.keys().collect();
                keys.sort();
                "{".hash(h);
                for k in keys {
                    k.hash(h);
                    feed(&m[k], h);
                }
            }
            serde_json::Value::Array(items) => {
                "[".hash(h);
                items.iter().for_each(|i| feed(i, h));
            }
            serde_json::Value::String(s) => {
                "s".hash(h);
                s.hash(h);
            }
            serde_json::Value::Number(n) => match n.as_i64() {
                Some(i) => i.hash(h),
                None => n.as_f64().unwrap_or(0.0).to_bits().hash(h),
            },
            serde_json::Value::Bool(b) => b.hash(h),
            serde_json::Value::Null => "null".hash(h),
        }
    }
    let hash = |v: &serde_json::Value| {
        let mut h = std::collections::hash_map::DefaultHasher::new();
        feed(v, &mut h);
        h.finish()
    };
    Fingerprint {
        metadata: hash(&instance["metadata"]),
        fields: instance["spec"]
            .as_object()
            .map(|m| m.iter().map(|(k, v)| (k.clone(), hash(v))).collect())
            .unwrap_or_default(),
    }
}

/// Types one document whose shape is valid.
pub fn type_document(
    kind: Kind,
    node: &Node,
    origin: Origin,
    fp: &Fingerprint,
) -> Result<TypedDoc, Diagnostic> {
    struct Read<'a> {
        node: &'a Node,
        origin: Origin,
        fp: &'a Fingerprint,
    }
    impl KindVisitor for Read<'_> {
        type Output = Result<TypedDoc, DeError>;
        fn visit<S: Spec>(self) -> Self::Output {
            read::<S>(self.node, self.origin.file, self.origin, self.fp).map(S::wrap)
        }
    }
    kind.visit(Read { node, origin, fp })
        .map_err(|e| de_error_diagnostic(e, origin))
}

/// Turns a typing error into a diagnostic; a `[code]` prefix names the code.
pub fn de_error_diagnostic(err: DeError, origin: Origin) -> Diagnostic {
    let (code, message) = match err
        .message
        .strip_prefix('[')
        .and_then(|r| r.split_once("] "))
    {
        Some((name, rest)) => (
            Code::parse(name).unwrap_or(Code::InvalidValue),
            rest.to_string(),
        ),
        None => (Code::WrongType, err.message.clone()),
    };
    let span = err.span.unwrap_or(origin.kind_span);
    let (label, help) = match code {
        Code::InvalidDate => (
            "not a real date",
            "write a date that exists, as 2026-12-01 or 2026-12-01T08:00:00Z",
        ),
        Code::ValueOutOfRange => ("out of range", "use a value within the allowed range"),
        _ => ("cannot be read", "correct the value"),
    };
    Diagnostic::new(code, message).at(span, label).help(help)
}
