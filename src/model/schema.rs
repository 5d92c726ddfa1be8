//! JSON Schemas of the document kinds, derived from the Rust types.
//!
//! [`generate`] builds a kind's schema (draft 2020-12) from its spec type; the
//! results are committed under `schemas/` and embedded in the binary
//! ([`embedded`]). A test regenerates them and fails if the committed files
//! differ, so the schemas users see and the types capops reads cannot drift.

use super::meta::{API_VERSION, Metadata};
use super::{Kind, KindVisitor, Spec};
use schemars::generate::SchemaSettings;
use serde_json::{Value, json};

/// Base URI of the published schemas.
pub const SCHEMA_BASE: &str = "https://capops.dev/schemas/v1alpha1/";

/// The schema of a kind, as generated from the Rust types.
pub fn generate(kind: Kind) -> Value {
    let mut generator = SchemaSettings::draft2020_12().into_generator();
    let metadata = generator.subschema_for::<Metadata>();
    struct SpecSchema<'g>(&'g mut schemars::SchemaGenerator);
    impl KindVisitor for SpecSchema<'_> {
        type Output = schemars::Schema;
        fn visit<S: Spec>(self) -> schemars::Schema {
            self.0.subschema_for::<S>()
        }
    }
    let spec = kind.visit(SpecSchema(&mut generator));
    let defs = generator.take_definitions(true);
    let mut schema = json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": format!("{SCHEMA_BASE}{}", kind.schema_file()),
        "title": kind.as_str(),
        "description": format!("A capops {} document.", kind.as_str()),
        "type": "object",
        "additionalProperties": false,
        "required": ["apiVersion", "kind", "metadata", "spec"],
        "properties": {
            "apiVersion": {"const": API_VERSION},
            "kind": {"const": kind.as_str()},
            "metadata": metadata.to_value(),
            "spec": spec.to_value(),
        },
        "$defs": Value::Object(defs),
    });
    strip_null(&mut schema);
    schema
}

/// schemars lets `Option` fields be `null`; in capops documents an absent
/// field is left out, and `key:` with no value is a mistake worth reporting.
fn strip_null(v: &mut Value) {
    match v {
        Value::Object(map) => {
            if let Some(Value::Array(types)) = map.get_mut("type") {
                types.retain(|t| t != "null");
                if types.len() == 1 {
                    let only = types[0].clone();
                    map.insert("type".into(), only);
                }
            }
            if let Some(Value::Array(options)) = map.get_mut("anyOf") {
                options.retain(|o| o != &json!({"type": "null"}));
                if options.len() == 1 {
                    let only = options.pop().expect("one option");
                    map.remove("anyOf");
                    if let Value::Object(inner) = only {
                        for (k, v) in inner {
                            map.entry(k).or_insert(v);
                        }
                    }
                }
            }
            map.values_mut().for_each(strip_null);
        }
        Value::Array(items) => items.iter_mut().for_each(strip_null),
        _ => {}
    }
}

/// The committed schema text of a kind, embedded in the binary.
pub fn embedded(kind: Kind) -> &'static str {
    kind.embedded_schema()
}

/// Pretty JSON with a trailing newline, as committed.
pub fn to_committed_text(schema: &Value) -> String {
    let mut s = serde_json::to_string_pretty(schema).expect("schema serializes");
    s.push('\n');
    s
}

#[cfg(test)]
#[allow(clippy::disallowed_methods)] // compares with and rewrites the committed files
mod tests {
    use super::*;

    /// The committed schemas are exactly what the Rust types imply. Run with
    /// `CAPOPS_BLESS=1` to rewrite `schemas/` after changing a type.
    #[test]
    fn committed_schemas_match_the_types() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("schemas");
        let bless = std::env::var_os("CAPOPS_BLESS").is_some();
        let mut stale = Vec::new();
        for kind in Kind::ALL {
            let text = to_committed_text(&generate(kind));
            let path = dir.join(kind.schema_file());
            if bless {
                std::fs::write(&path, &text).unwrap();
            } else if std::fs::read_to_string(&path).ok().as_deref() != Some(text.as_str()) {
                stale.push(kind.schema_file());
            }
        }
        assert!(
            stale.is_empty(),
            "schemas out of date: {stale:?}; run `CAPOPS_BLESS=1 cargo test committed_schemas` and commit"
        );
    }

    #[test]
    fn schemas_are_valid_draft_2020_12_and_closed() {
        for kind in Kind::ALL {
            let schema = generate(kind);
            jsonschema::draft202012::meta::validate(&schema)
                .unwrap_or_else(|e| panic!("{kind}: {e}"));
            assert_eq!(schema["additionalProperties"], json!(false));
            let text = serde_json::to_string(&schema).unwrap();
            assert!(!text.contains("\"null\""), "{kind} allows null somewhere");
        }
    }
}
