//! Reading one fact by its dotted path straight from the typed facts.
//!
//! A decision keeps its subject's typed facts, not the value tree conditions
//! were evaluated against: at 100,000 requests the trees alone would take
//! about a gigabyte. [`seek`] walks the typed facts with a serde serializer
//! that descends only into the fields the path names and converts just the
//! value found, the same way the whole tree is converted
//! ([`super::values::value_of`]), so a lookup here and a lookup in the tree
//! give the same answer.

use super::values::value_of;
use minijinja::Value;
use serde::ser::{self, Impossible, Serialize, Serializer};

/// The value at `path` (dot-separated field and map-key names) in `facts`,
/// or `None` when the path leads nowhere (like [`super::lookup`]).
pub fn seek<T: Serialize + ?Sized>(facts: &T, path: &str) -> Option<Value> {
    let parts: Vec<&str> = path.split('.').collect();
    facts
        .serialize(Seek { path: &parts })
        .ok()
        .flatten()
        .filter(|v| !v.is_undefined())
}

/// The serializer's error: never raised by the walk itself, only passed on.
#[derive(Debug)]
pub struct Stop;

impl std::fmt::Display for Stop {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("fact lookup stopped")
    }
}

impl std::error::Error for Stop {}

impl ser::Error for Stop {
    fn custom<M: std::fmt::Display>(_: M) -> Self {
        Stop
    }
}

/// Looks the rest of the path up in the value serialized into it. The path
/// is never empty: the last part is converted by the field or entry that
/// matches it.
struct Seek<'p> {
    path: &'p [&'p str],
}

/// A value the path cannot descend into (a number, a text, a list).
macro_rules! leaf {
    ($($name:ident($($arg:ty),*);)*) => {
        $(fn $name(self $(, _: $arg)*) -> Result<Option<Value>, Stop> { Ok(None) })*
    };
}

impl<'p> Serializer for Seek<'p> {
    type Ok = Option<Value>;
    type Error = Stop;
    type SerializeSeq = Nothing;
    type SerializeTuple = Nothing;
    type SerializeTupleStruct = Nothing;
    type SerializeTupleVariant = Nothing;
    type SerializeMap = Fields<'p>;
    type SerializeStruct = Fields<'p>;
    type SerializeStructVariant = Fields<'p>;

    leaf! {
        serialize_bool(bool); serialize_i8(i8); serialize_i16(i16); serialize_i32(i32);
        serialize_i64(i64); serialize_i128(i128); serialize_u8(u8); serialize_u16(u16);
        serialize_u32(u32); serialize_u64(u64); serialize_u128(u128); serialize_f32(f32);
        serialize_f64(f64); serialize_char(char); serialize_str(&str); serialize_bytes(&[u8]);
        serialize_none(); serialize_unit(); serialize_unit_struct(&'static str);
        serialize_unit_variant(&'static str, u32, &'static str);
    }

    fn serialize_some<T: Serialize + ?Sized>(self, value: &T) -> Result<Self::Ok, Stop> {
        value.serialize(self)
    }

    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        value: &T,
    ) -> Result<Self::Ok, Stop> {
        value.serialize(self)
    }

    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: &T,
    ) -> Result<Self::Ok, Stop> {
        Ok(None)
    }

    fn serialize_seq(self, _: Option<usize>) -> Result<Nothing, Stop> {
        Ok(Nothing)
    }

    fn serialize_tuple(self, _: usize) -> Result<Nothing, Stop> {
        Ok(Nothing)
    }

    fn serialize_tuple_struct(self, _: &'static str, _: usize) -> Result<Nothing, Stop> {
        Ok(Nothing)
    }

    fn serialize_tuple_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Nothing, Stop> {
        Ok(Nothing)
    }

    fn serialize_map(self, _: Option<usize>) -> Result<Fields<'p>, Stop> {
        Ok(Fields::new(self.path))
    }

    fn serialize_struct(self, _: &'static str, _: usize) -> Result<Fields<'p>, Stop> {
        Ok(Fields::new(self.path))
    }

    fn serialize_struct_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Fields<'p>, Stop> {
        Ok(Fields::new(self.path))
    }
}

/// The fields or entries of a mapping: the one named by the path's first
/// part is looked into (or converted, when it is the last part).
struct Fields<'p> {
    path: &'p [&'p str],
    found: Option<Value>,
    /// The key just serialized matched (for maps written key, then value).
    matched: bool,
}

impl<'p> Fields<'p> {
    fn new(path: &'p [&'p str]) -> Self {
        Fields {
            path,
            found: None,
            matched: false,
        }
    }

    fn field<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Stop> {
        if self.found.is_some() {
            return Ok(());
        }
        self.found = match self.path {
            [_] => Some(value_of(value)),
            [_, rest @ ..] => value.serialize(Seek { path: rest })?,
            [] => None,
        };
        Ok(())
    }

    fn is_next(&self, key: &str) -> bool {
        self.found.is_none() && self.path.first() == Some(&key)
    }
}

impl ser::SerializeStruct for Fields<'_> {
    type Ok = Option<Value>;
    type Error = Stop;

    fn serialize_field<T: Serialize + ?Sized>(
        &mut self,
        key: &'static str,
        value: &T,
    ) -> Result<(), Stop> {
        if self.is_next(key) {
            self.field(value)?;
        }
        Ok(())
    }

    fn end(self) -> Result<Option<Value>, Stop> {
        Ok(self.found)
    }
}

impl ser::SerializeStructVariant for Fields<'_> {
    type Ok = Option<Value>;
    type Error = Stop;

    fn serialize_field<T: Serialize + ?Sized>(
        &mut self,
        key: &'static str,
        value: &T,
    ) -> Result<(), Stop> {
        ser::SerializeStruct::serialize_field(self, key, value)
    }

    fn end(self) -> Result<Option<Value>, Stop> {
        Ok(self.found)
    }
}

impl ser::SerializeMap for Fields<'_> {
    type Ok = Option<Value>;
    type Error = Stop;

    fn serialize_key<T: Serialize + ?Sized>(&mut self, key: &T) -> Result<(), Stop> {
        self.matched = self.found.is_none()
            && self
                .path
                .first()
                .is_some_and(|want| key.serialize(KeyIs(want)).unwrap_or(false));
        Ok(())
    }

    fn serialize_value<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Stop> {
        if std::mem::take(&mut self.matched) {
            self.field(value)?;
        }
        Ok(())
    }

    fn end(self) -> Result<Option<Value>, Stop> {
        Ok(self.found)
    }
}

/// A list or tuple: paths do not index into them.
struct Nothing;

macro_rules! nothing {
    ($($trait:ident :: $method:ident;)*) => {
        $(impl ser::$trait for Nothing {
            type Ok = Option<Value>;
            type Error = Stop;
            fn $method<T: Serialize + ?Sized>(&mut self, _: &T) -> Result<(), Stop> {
                Ok(())
            }
            fn end(self) -> Result<Option<Value>, Stop> {
                Ok(None)
            }
        })*
    };
}

nothing! {
    SerializeSeq::serialize_element;
    SerializeTuple::serialize_element;
    SerializeTupleStruct::serialize_field;
    SerializeTupleVariant::serialize_field;
}

/// Whether a map key is the given text (keys that are not texts never are).
struct KeyIs<'a>(&'a str);

macro_rules! not_text {
    ($($name:ident($($arg:ty),*);)*) => {
        $(fn $name(self $(, _: $arg)*) -> Result<bool, Stop> { Ok(false) })*
    };
}

impl Serializer for KeyIs<'_> {
    type Ok = bool;
    type Error = Stop;
    type SerializeSeq = Impossible<bool, Stop>;
    type SerializeTuple = Impossible<bool, Stop>;
    type SerializeTupleStruct = Impossible<bool, Stop>;
    type SerializeTupleVariant = Impossible<bool, Stop>;
    type SerializeMap = Impossible<bool, Stop>;
    type SerializeStruct = Impossible<bool, Stop>;
    type SerializeStructVariant = Impossible<bool, Stop>;

    not_text! {
        serialize_bool(bool); serialize_i8(i8); serialize_i16(i16); serialize_i32(i32);
        serialize_i64(i64); serialize_i128(i128); serialize_u8(u8); serialize_u16(u16);
        serialize_u32(u32); serialize_u64(u64); serialize_u128(u128); serialize_f32(f32);
        serialize_f64(f64); serialize_char(char); serialize_bytes(&[u8]);
        serialize_none(); serialize_unit(); serialize_unit_struct(&'static str);
    }

    fn serialize_str(self, v: &str) -> Result<bool, Stop> {
        Ok(v == self.0)
    }

    fn serialize_unit_variant(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
    ) -> Result<bool, Stop> {
        Ok(variant == self.0)
    }

    fn serialize_some<T: Serialize + ?Sized>(self, value: &T) -> Result<bool, Stop> {
        value.serialize(self)
    }

    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        value: &T,
    ) -> Result<bool, Stop> {
        value.serialize(self)
    }

    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: &T,
    ) -> Result<bool, Stop> {
        Ok(false)
    }

    fn serialize_seq(self, _: Option<usize>) -> Result<Self::SerializeSeq, Stop> {
        Err(Stop)
    }

    fn serialize_tuple(self, _: usize) -> Result<Self::SerializeTuple, Stop> {
        Err(Stop)
    }

    fn serialize_tuple_struct(
        self,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeTupleStruct, Stop> {
        Err(Stop)
    }

    fn serialize_tuple_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeTupleVariant, Stop> {
        Err(Stop)
    }

    fn serialize_map(self, _: Option<usize>) -> Result<Self::SerializeMap, Stop> {
        Err(Stop)
    }

    fn serialize_struct(self, _: &'static str, _: usize) -> Result<Self::SerializeStruct, Stop> {
        Err(Stop)
    }

    fn serialize_struct_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeStructVariant, Stop> {
        Err(Stop)
    }
}
