//! `Spanned<T>`: a value with the place in a file it was read from.
//!
//! Deserializing a `Spanned<T>` asks the deserializer for a struct with a
//! private name; the capops YAML tree deserializer (`load::de`) recognises it
//! and hands over the node's span along with the value. Its JSON Schema is the
//! schema of `T`, so spans are invisible in the documents people write.

use crate::diag::Span;
use schemars::{JsonSchema, Schema, SchemaGenerator};
use serde::de::{self, Deserialize, Deserializer, MapAccess, Visitor};
use std::borrow::{Borrow, Cow};
use std::cmp::Ordering;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::ops::Deref;

pub(crate) const MAGIC: &str = "$capops::Spanned";
pub(crate) const FIELD_FILE: &str = "$file";
pub(crate) const FIELD_START: &str = "$start";
pub(crate) const FIELD_END: &str = "$end";
pub(crate) const FIELD_VALUE: &str = "$value";
pub(crate) const FIELDS: &[&str] = &[FIELD_FILE, FIELD_START, FIELD_END, FIELD_VALUE];

/// A value and its source span. Equality, ordering and hashing look at the value only.
#[derive(Clone, Debug, Default)]
pub struct Spanned<T> {
    pub value: T,
    pub span: Span,
}

impl<T> Spanned<T> {
    pub fn new(value: T, span: Span) -> Self {
        Spanned { value, span }
    }

    pub fn map<U>(self, f: impl FnOnce(T) -> U) -> Spanned<U> {
        Spanned {
            value: f(self.value),
            span: self.span,
        }
    }

    pub fn as_ref(&self) -> Spanned<&T> {
        Spanned {
            value: &self.value,
            span: self.span,
        }
    }
}

impl<T> Deref for Spanned<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.value
    }
}

impl<T: PartialEq> PartialEq for Spanned<T> {
    fn eq(&self, other: &Self) -> bool {
        self.value == other.value
    }
}
impl<T: Eq> Eq for Spanned<T> {}
impl<T: PartialOrd> PartialOrd for Spanned<T> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        self.value.partial_cmp(&other.value)
    }
}
impl<T: Ord> Ord for Spanned<T> {
    fn cmp(&self, other: &Self) -> Ordering {
        self.value.cmp(&other.value)
    }
}
impl<T: Hash> Hash for Spanned<T> {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.value.hash(state)
    }
}
impl Borrow<str> for Spanned<String> {
    fn borrow(&self) -> &str {
        &self.value
    }
}
impl<T: fmt::Display> fmt::Display for Spanned<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.value.fmt(f)
    }
}

impl<T: serde::Serialize> serde::Serialize for Spanned<T> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.value.serialize(s)
    }
}

impl<T: JsonSchema> JsonSchema for Spanned<T> {
    fn inline_schema() -> bool {
        T::inline_schema()
    }
    fn schema_name() -> Cow<'static, str> {
        T::schema_name()
    }
    fn schema_id() -> Cow<'static, str> {
        T::schema_id()
    }
    fn json_schema(generator: &mut SchemaGenerator) -> Schema {
        T::json_schema(generator)
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Spanned<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct SpannedVisitor<T>(std::marker::PhantomData<T>);

        impl<'de, T: Deserialize<'de>> Visitor<'de> for SpannedVisitor<T> {
            type Value = Spanned<T>;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a value read by the capops YAML loader")
            }

            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                let mut file = None;
                let mut start = None;
                let mut end = None;
                while let Some(key) = map.next_key::<&str>()? {
                    match key {
                        FIELD_FILE => file = Some(map.next_value::<u32>()?),
                        FIELD_START => start = Some(map.next_value::<u32>()?),
                        FIELD_END => end = Some(map.next_value::<u32>()?),
                        FIELD_VALUE => {
                            let value = map.next_value::<T>()?;
                            let span = Span {
                                file: crate::diag::FileId(file.unwrap_or(0)),
                                start: start.unwrap_or(0),
                                end: end.unwrap_or(0),
                            };
                            return Ok(Spanned { value, span });
                        }
                        other => return Err(de::Error::unknown_field(other, FIELDS)),
                    }
                }
                Err(de::Error::missing_field(FIELD_VALUE))
            }
        }

        deserializer.deserialize_struct(MAGIC, FIELDS, SpannedVisitor(std::marker::PhantomData))
    }
}
