//! Typed deserialization from the spanned YAML tree.
//!
//! [`from_node`] turns a [`Node`] into any `Deserialize` type, filling every
//! [`Spanned`](crate::model::Spanned) field with the node's place in the file.
//! Errors carry the span of the value that could not be read, so a bad date
//! deep inside a request points at that date.

use super::yaml::{Node, Value};
use crate::diag::{FileId, Span};
use crate::model::spanned;
use serde::de::value::BorrowedStrDeserializer;
use serde::de::{
    self, DeserializeSeed, Deserializer, IntoDeserializer, MapAccess, SeqAccess, Visitor,
};
use std::fmt;

/// A typed-deserialization failure at a place in a file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeError {
    pub message: String,
    pub span: Option<Span>,
}

impl fmt::Display for DeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for DeError {}

impl de::Error for DeError {
    fn custom<T: fmt::Display>(msg: T) -> Self {
        DeError {
            message: msg.to_string(),
            span: None,
        }
    }
}

/// Deserializes `T` from a node of `file`.
pub fn from_node<'a, T: de::Deserialize<'a>>(node: &'a Node, file: FileId) -> Result<T, DeError> {
    T::deserialize(NodeDe { node, file })
}

#[derive(Clone, Copy)]
struct NodeDe<'a> {
    node: &'a Node,
    file: FileId,
}

impl NodeDe<'_> {
    fn locate(&self, mut err: DeError) -> DeError {
        if err.span.is_none() {
            err.span = Some(self.node.span(self.file));
        }
        err
    }
}

impl<'de> Deserializer<'de> for NodeDe<'de> {
    type Error = DeError;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        let result = match &self.node.value {
            Value::Null => visitor.visit_unit(),
            Value::Bool(b) => visitor.visit_bool(*b),
            Value::Int(i) => visitor.visit_i64(*i),
            Value::UInt(u) => visitor.visit_u64(*u),
            Value::Float(f) => visitor.visit_f64(*f),
            Value::Str(s) => visitor.visit_borrowed_str(s),
            Value::Seq(items) => visitor.visit_seq(SeqDe {
                items: items.iter(),
                file: self.file,
            }),
            Value::Map(entries) => visitor.visit_map(MapDe {
                entries: entries.iter(),
                value: None,
                file: self.file,
            }),
        };
        result.map_err(|e| self.locate(e))
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        match self.node.value {
            Value::Null => visitor.visit_none(),
            _ => visitor.visit_some(self),
        }
        .map_err(|e| self.locate(e))
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, DeError> {
        if name == spanned::MAGIC {
            return visitor
                .visit_map(SpannedDe { de: self, step: 0 })
                .map_err(|e| self.locate(e));
        }
        let _ = fields;
        self.deserialize_any(visitor)
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, DeError> {
        match &self.node.value {
            Value::Str(s) => visitor
                .visit_enum(IntoDeserializer::<DeError>::into_deserializer(s.as_str()))
                .map_err(|e| self.locate(e)),
            other => Err(self.locate(de::Error::custom(format!(
                "expected one of the allowed words, found a {}",
                other.type_name()
            )))),
        }
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, DeError> {
        visitor
            .visit_newtype_struct(self)
            .map_err(|e| self.locate(e))
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string
        bytes byte_buf unit unit_struct seq tuple tuple_struct map identifier ignored_any
    }
}

struct SeqDe<'a> {
    items: std::slice::Iter<'a, Node>,
    file: FileId,
}

impl<'de> SeqAccess<'de> for SeqDe<'de> {
    type Error = DeError;

    fn next_element_seed<T: DeserializeSeed<'de>>(
        &mut self,
        seed: T,
    ) -> Result<Option<T::Value>, DeError> {
        match self.items.next() {
            Some(node) => seed
                .deserialize(NodeDe {
                    node,
                    file: self.file,
                })
                .map(Some),
            None => Ok(None),
        }
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.items.len())
    }
}

struct MapDe<'a> {
    entries: std::slice::Iter<'a, (Node, Node)>,
    value: Option<&'a Node>,
    file: FileId,
}

impl<'de> MapAccess<'de> for MapDe<'de> {
    type Error = DeError;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, DeError> {
        match self.entries.next() {
            Some((k, v)) => {
                self.value = Some(v);
                seed.deserialize(NodeDe {
                    node: k,
                    file: self.file,
                })
                .map(Some)
            }
            None => Ok(None),
        }
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, DeError> {
        let node = self
            .value
            .take()
            .ok_or_else(|| <DeError as de::Error>::custom("value requested before key"))?;
        let de = NodeDe {
            node,
            file: self.file,
        };
        // A check made after the value was read (a range, in a type's own
        // `Deserialize`) is the value's problem, not its mapping's.
        seed.deserialize(de).map_err(|e| de.locate(e))
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.entries.len())
    }
}

/// Presents a node as the private four-field struct `Spanned<T>` asks for.
struct SpannedDe<'a> {
    de: NodeDe<'a>,
    step: u8,
}

impl<'de> MapAccess<'de> for SpannedDe<'de> {
    type Error = DeError;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, DeError> {
        let key = match self.step {
            0 => spanned::FIELD_FILE,
            1 => spanned::FIELD_START,
            2 => spanned::FIELD_END,
            3 => spanned::FIELD_VALUE,
            _ => return Ok(None),
        };
        seed.deserialize(BorrowedStrDeserializer::<DeError>::new(key))
            .map(Some)
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, DeError> {
        let step = self.step;
        self.step += 1;
        let node = self.de.node;
        match step {
            0 => seed.deserialize(self.de.file.0.into_deserializer()),
            1 => seed.deserialize(node.start.into_deserializer()),
            2 => seed.deserialize(node.end.into_deserializer()),
            _ => seed.deserialize(self.de),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::load::yaml;
    use crate::model::Spanned;
    use serde::Deserialize;

    #[derive(Deserialize, Debug)]
    #[serde(deny_unknown_fields)]
    struct Doc {
        name: Spanned<String>,
        count: Option<Spanned<u32>>,
        items: Vec<Spanned<String>>,
        kind: Mode,
    }

    #[derive(Deserialize, Debug, PartialEq)]
    #[serde(rename_all = "camelCase")]
    enum Mode {
        First,
        SecondMode,
    }

    #[test]
    fn fills_spans_and_enums() {
        let text = "name: abc\ncount: 7\nitems: [x, y]\nkind: secondMode\n";
        let p = yaml::parse(text, FileId(3));
        let doc: Doc = from_node(&p.documents[0], FileId(3)).unwrap();
        assert_eq!(doc.name.value, "abc");
        assert_eq!(
            doc.name.span,
            Span {
                file: FileId(3),
                start: 6,
                end: 9
            }
        );
        assert_eq!(doc.count.unwrap().value, 7);
        assert_eq!(doc.items[1].span.start, 30);
        assert_eq!(doc.kind, Mode::SecondMode);
    }

    #[test]
    fn errors_point_at_the_bad_value() {
        let text = "name: abc\ncount: many\nitems: []\nkind: first\n";
        let p = yaml::parse(text, FileId(0));
        let err = from_node::<Doc>(&p.documents[0], FileId(0)).unwrap_err();
        assert_eq!(err.span.unwrap().start, 17);
        assert!(err.message.contains("invalid type"), "{}", err.message);
    }

    #[test]
    fn a_range_checked_after_reading_points_at_the_value_not_its_mapping() {
        #[derive(Deserialize, Debug)]
        struct Outer {
            #[allow(dead_code)]
            inner: Inner,
        }
        #[derive(Deserialize, Debug)]
        struct Inner {
            #[allow(dead_code)]
            a: u32,
            #[allow(dead_code)]
            cost: crate::model::money::Money,
        }
        let text = "inner:\n  a: 1\n  cost: 10000000001\n";
        let p = yaml::parse(text, FileId(0));
        let err = from_node::<Outer>(&p.documents[0], FileId(0)).unwrap_err();
        assert_eq!(
            err.span.unwrap().start as usize,
            text.find("10000000001").unwrap()
        );
    }
}
