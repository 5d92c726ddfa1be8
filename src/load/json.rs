//! The YAML tree as JSON, and JSON pointers back to tree nodes.
//!
//! JSON Schema validation works on `serde_json::Value`; its errors name the
//! failing value by JSON pointer. [`locate`] walks the same pointer through the
//! spanned tree so every schema error gets a file, line and column.

use super::yaml::{Node, Value};
use serde_json::Value as Json;

/// Converts a node to JSON. Mapping keys become their text.
pub fn to_json(node: &Node) -> Json {
    match &node.value {
        Value::Null => Json::Null,
        Value::Bool(b) => Json::Bool(*b),
        Value::Int(i) => Json::from(*i),
        Value::UInt(u) => Json::from(*u),
        Value::Float(f) => serde_json::Number::from_f64(*f).map_or(Json::Null, Json::Number),
        Value::Str(s) => Json::String(s.clone()),
        Value::Seq(items) => Json::Array(items.iter().map(to_json).collect()),
        Value::Map(entries) => Json::Object(
            entries
                .iter()
                .map(|(k, v)| (k.key_text(), to_json(v)))
                .collect(),
        ),
    }
}

/// What a JSON pointer designates in the tree.
#[derive(Debug, Clone, Copy)]
pub struct Located<'a> {
    /// The value at the pointer (the deepest node reached if the pointer goes further).
    pub value: &'a Node,
    /// The mapping key the value sits under, if any.
    pub key: Option<&'a Node>,
    /// Whether the whole pointer was resolved.
    pub exact: bool,
}

/// Resolves a JSON pointer (`/spec/resources/nvidia.com~1gpu`) in the tree.
pub fn locate<'a>(root: &'a Node, pointer: &str) -> Located<'a> {
    let mut here = Located {
        value: root,
        key: None,
        exact: true,
    };
    for raw in pointer.split('/').skip(1) {
        let seg = unescape(raw);
        let next = match &here.value.value {
            Value::Map(entries) => entries
                .iter()
                .find(|(k, _)| k.key_text() == seg)
                .map(|(k, v)| (Some(k), v)),
            Value::Seq(items) => seg
                .parse::<usize>()
                .ok()
                .and_then(|i| items.get(i))
                .map(|v| (None, v)),
            _ => None,
        };
        match next {
            Some((key, value)) => {
                here = Located {
                    value,
                    key: key.or(here.key),
                    exact: true,
                }
            }
            None => {
                here.exact = false;
                return here;
            }
        }
    }
    here
}

/// Decodes one JSON pointer segment.
pub fn unescape(seg: &str) -> String {
    seg.replace("~1", "/").replace("~0", "~")
}

/// A pointer as a dotted path people read: `spec.nodePools[0].gpuModel`.
pub fn display_path(pointer: &str) -> String {
    let mut out = String::new();
    for raw in pointer.split('/').skip(1) {
        let seg = unescape(raw);
        if seg.parse::<usize>().is_ok() {
            out.push_str(&format!("[{seg}]"));
        } else {
            if !out.is_empty() {
                out.push('.');
            }
            out.push_str(&seg);
        }
    }
    if out.is_empty() {
        "the document".into()
    } else {
        format!("`{out}`")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diag::FileId;
    use crate::load::yaml::parse;

    #[test]
    fn pointers_resolve_to_nodes_with_keys() {
        let text = "spec:\n  resources:\n    nvidia.com/gpu: 8\n  items: [a, b]\n";
        let doc = &parse(text, FileId(0)).documents[0];
        let l = locate(doc, "/spec/resources/nvidia.com~1gpu");
        assert!(l.exact);
        assert_eq!(l.value.value, Value::Int(8));
        assert_eq!(l.key.unwrap().as_str(), Some("nvidia.com/gpu"));
        let l = locate(doc, "/spec/items/1");
        assert_eq!(l.value.as_str(), Some("b"));
        let l = locate(doc, "/spec/missing/deeper");
        assert!(!l.exact);
        assert_eq!(l.key.unwrap().as_str(), Some("spec"));
        assert_eq!(display_path("/spec/items/1"), "`spec.items[1]`");
        assert_eq!(to_json(doc)["spec"]["resources"]["nvidia.com/gpu"], 8);
    }
}
