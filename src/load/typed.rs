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

/// Hashes a document's JSON form: metadata, and each top-level spec field,
/// with SHA-256 over an unambiguous encoding (every string and collection
/// length-prefixed, numbers as JSON writes them). Object keys are hashed in
/// sorted order, so reordering fields changes nothing. Whether a document
/// changed is decided on these digests, so they must not collide: a
/// contributor who could find two values of a field with the same digest
/// could change it unseen.
pub fn fingerprint(instance: &serde_json::Value) -> Fingerprint {
    use sha2::{Digest, Sha256};
    fn bytes(h: &mut Sha256, tag: u8, b: &[u8]) {
        h.update([tag]);
        h.update((b.len() as u64).to_le_bytes());
        h.update(b);
    }
    fn feed(v: &serde_json::Value, h: &mut Sha256) {
        match v {
            serde_json::Value::Object(m) => {
                let mut keys: Vec<&String> = m.keys().collect();
                keys.sort();
                h.update([b'{']);
                h.update((keys.len() as u64).to_le_bytes());
                for k in keys {
                    bytes(h, b'k', k.as_bytes());
                    feed(&m[k], h);
                }
            }
            serde_json::Value::Array(items) => {
                h.update([b'[']);
                h.update((items.len() as u64).to_le_bytes());
                items.iter().for_each(|i| feed(i, h));
            }
            serde_json::Value::String(s) => bytes(h, b's', s.as_bytes()),
            // A whole number written as a float (`50000.0`) is the number
            // written without the point: the same amount, not a change.
            serde_json::Value::Number(n) => match n.as_f64() {
                Some(f) if n.is_f64() && f.fract() == 0.0 && f.abs() < 9.0e15 => {
                    bytes(h, b'n', (f as i64).to_string().as_bytes())
                }
                _ => bytes(h, b'n', n.to_string().as_bytes()),
            },
            serde_json::Value::Bool(b) => h.update([b'b', u8::from(*b)]),
            serde_json::Value::Null => h.update([b'0']),
        }
    }
    let hash = |v: &serde_json::Value| -> [u8; 32] {
        let mut h = Sha256::new();
        feed(v, &mut h);
        h.finalize().into()
    };
    // Annotations are for people and other tools; capops reads none, so
    // writing one is no change.
    let mut metadata = instance["metadata"].clone();
    if let Some(m) = metadata.as_object_mut() {
        m.remove("annotations");
    }
    Fingerprint::new(
        hash(&metadata),
        instance["spec"]
            .as_object()
            .into_iter()
            .flatten()
            .map(|(k, v)| (k.clone(), hash(v))),
    )
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
    if code == Code::WrongType
        && let Some((message, help)) = plain_type_error(&message)
    {
        return Diagnostic::new(code, message).at(span, label).help(help);
    }
    Diagnostic::new(code, message).at(span, label).help(help)
}

/// Says serde's "invalid type: floating point `8.0`, expected u32" in the
/// words of the document: what was written, what is needed, and (for a
/// whole number written with a fraction) the spelling that would be read.
fn plain_type_error(message: &str) -> Option<(String, String)> {
    let rest = message
        .strip_prefix("invalid type: ")
        .or_else(|| message.strip_prefix("invalid value: "))?;
    let (found, expected) = rest.rsplit_once(", expected ")?;
    let wanted = match expected {
        "u8" | "u16" | "u32" | "u64" | "usize" => "a whole number, 0 or more",
        "i8" | "i16" | "i32" | "i64" | "isize" => "a whole number",
        "f32" | "f64" => "a number",
        "a boolean" => "true or false",
        "a string" | "a borrowed string" | "a character" => "text",
        "a sequence" => "a list",
        e if e.starts_with("a map") || e.starts_with("struct ") => "a mapping of keys to values",
        _ => return None,
    };
    let literal = found.split('`').nth(1);
    let (said, help) = match (found, literal) {
        (f, Some(v)) if f.starts_with("floating point") => match v.strip_suffix(".0") {
            Some(whole) if wanted.starts_with("a whole") => (
                format!("`{v}` is not {wanted}"),
                format!("write `{whole}`, without the fraction"),
            ),
            _ => (format!("`{v}` is not {wanted}"), format!("write {wanted}")),
        },
        (f, Some(v)) if f.starts_with("integer") && wanted.ends_with("0 or more") => {
            let negative = v.starts_with('-');
            let why = if negative {
                "is negative"
            } else {
                "is too large"
            };
            let help = if negative {
                format!("write {wanted}")
            } else {
                format!("write at most {}", max_for(expected))
            };
            (format!("`{v}` {why}: this needs {wanted}"), help)
        }
        (f, Some(v)) if f.starts_with("integer") && wanted.starts_with("a whole") => (
            format!("`{v}` is too large for this field"),
            format!("write at most {}", max_for(expected)),
        ),
        (_, Some(v)) => (format!("`{v}` is not {wanted}"), format!("write {wanted}")),
        (f, None) => (format!("{f} is not {wanted}"), format!("write {wanted}")),
    };
    Some((said, help))
}

fn max_for(ty: &str) -> String {
    match ty {
        "u8" => u8::MAX.to_string(),
        "u16" => u16::MAX.to_string(),
        "u32" => u32::MAX.to_string(),
        "i8" => i8::MAX.to_string(),
        "i16" => i16::MAX.to_string(),
        "i32" => i32::MAX.to_string(),
        "i64" | "isize" => i64::MAX.to_string(),
        _ => u64::MAX.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::{fingerprint, plain_type_error};

    #[test]
    fn type_errors_are_said_in_the_words_of_the_document() {
        let (m, h) = plain_type_error("invalid type: floating point `8.0`, expected u32").unwrap();
        assert_eq!(m, "`8.0` is not a whole number, 0 or more");
        assert_eq!(h, "write `8`, without the fraction");
        let (m, h) = plain_type_error("invalid type: floating point `2.5`, expected u32").unwrap();
        assert_eq!(m, "`2.5` is not a whole number, 0 or more");
        assert_eq!(h, "write a whole number, 0 or more");
        let (m, h) = plain_type_error("invalid value: integer `-3`, expected u32").unwrap();
        assert_eq!(m, "`-3` is negative: this needs a whole number, 0 or more");
        assert_eq!(h, "write a whole number, 0 or more");
        let (m, h) = plain_type_error("invalid value: integer `5000000000`, expected u32").unwrap();
        assert_eq!(
            m,
            "`5000000000` is too large: this needs a whole number, 0 or more"
        );
        assert_eq!(h, "write at most 4294967295");
        let (m, _) = plain_type_error("invalid type: string \"x\", expected f64").unwrap();
        assert_eq!(m, "string \"x\" is not a number");
        let (m, _) = plain_type_error("invalid type: sequence, expected a string").unwrap();
        assert_eq!(m, "sequence is not text");
        // A message it does not know is left as serde wrote it.
        assert!(plain_type_error("missing field `team`").is_none());
        assert!(plain_type_error("invalid type: map, expected enum Thing").is_none());
    }
    use serde_json::json;

    fn spec(v: serde_json::Value) -> serde_json::Value {
        json!({"metadata": {"name": "x"}, "spec": v})
    }

    #[test]
    fn fingerprints_tell_apart_what_an_encoding_could_confuse() {
        let a = fingerprint(&spec(json!({"w": {"start": "a", "end": "b"}, "n": 1})));
        // Key order is not content.
        let b = fingerprint(&spec(json!({"n": 1, "w": {"end": "b", "start": "a"}})));
        assert_eq!(a, b);
        // Strings are length-prefixed: "ab" + "" is not "a" + "b".
        let c = fingerprint(&spec(json!({"w": ["ab", ""]})));
        let d = fingerprint(&spec(json!({"w": ["a", "b"]})));
        assert_ne!(c.field("w"), d.field("w"));
        // Integers beyond f64's precision stay apart, and so do 1 and "1".
        let e = fingerprint(&spec(json!({"n": u64::MAX})));
        let f = fingerprint(&spec(json!({"n": u64::MAX - 1})));
        assert_ne!(e.field("n"), f.field("n"));
        let g = fingerprint(&spec(json!({"n": "1"})));
        assert_ne!(a.field("n"), g.field("n"));
        // A whole number written with a point is the same number; a
        // fraction is not.
        let one = fingerprint(&spec(json!({"n": 1.0})));
        assert_eq!(a.field("n"), one.field("n"));
        let more = fingerprint(&spec(json!({"n": 1.5})));
        assert_ne!(a.field("n"), more.field("n"));
        // Nesting is part of the content.
        let h = fingerprint(&spec(json!({"w": [["a"], []]})));
        let i = fingerprint(&spec(json!({"w": [[], ["a"]]})));
        assert_ne!(h.field("w"), i.field("w"));
        assert_eq!(a.changed_fields(&c), vec!["n".to_string(), "w".to_string()]);
    }
}
