//! `SmallMap<V>`: a map of a few string keys in one sorted vector.
//!
//! The facts of a decision hold several maps of one or two entries (a
//! request's resources, its team's quota, its pool's capacity). A
//! `BTreeMap` allocates a node for eleven entries whatever it holds, about
//! 300 bytes; at 100,000 requests those maps alone took 160 MB. A
//! `SmallMap` keeps its entries sorted by key in a vector, serializes as a
//! map in the same order as a `BTreeMap` and has its JSON Schema, so the
//! facts policies read are unchanged.

use schemars::{JsonSchema, Schema, SchemaGenerator};
use serde::ser::{Serialize, SerializeMap, Serializer};
use std::borrow::Cow;
use std::collections::BTreeMap;

/// A map of string keys, sorted, in one vector.
#[derive(Clone, Debug, PartialEq)]
pub struct SmallMap<V>(Vec<(String, V)>);

impl<V> Default for SmallMap<V> {
    fn default() -> Self {
        SmallMap(Vec::new())
    }
}

impl<V> SmallMap<V> {
    pub fn new() -> Self {
        SmallMap::default()
    }

    fn find(&self, key: &str) -> Result<usize, usize> {
        self.0.binary_search_by(|(k, _)| k.as_str().cmp(key))
    }

    pub fn get(&self, key: &str) -> Option<&V> {
        self.find(key).ok().map(|i| &self.0[i].1)
    }

    pub fn contains_key(&self, key: &str) -> bool {
        self.find(key).is_ok()
    }

    /// Sets `key` to `value`; returns the value it replaces.
    pub fn insert(&mut self, key: String, value: V) -> Option<V> {
        match self.find(&key) {
            Ok(i) => Some(std::mem::replace(&mut self.0[i].1, value)),
            Err(i) => {
                self.0.insert(i, (key, value));
                None
            }
        }
    }

    /// The value of `key`, inserted as `V::default()` when missing.
    pub fn entry_or_default(&mut self, key: String) -> &mut V
    where
        V: Default,
    {
        let i = match self.find(&key) {
            Ok(i) => i,
            Err(i) => {
                self.0.insert(i, (key, V::default()));
                i
            }
        };
        &mut self.0[i].1
    }

    pub fn iter(&self) -> impl Iterator<Item = (&String, &V)> {
        self.0.iter().map(|(k, v)| (k, v))
    }

    pub fn keys(&self) -> impl Iterator<Item = &String> {
        self.0.iter().map(|(k, _)| k)
    }

    pub fn values(&self) -> impl Iterator<Item = &V> {
        self.0.iter().map(|(_, v)| v)
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl<V> FromIterator<(String, V)> for SmallMap<V> {
    /// Later values of a key replace earlier ones, as in a `BTreeMap`.
    fn from_iter<I: IntoIterator<Item = (String, V)>>(iter: I) -> Self {
        let mut out = SmallMap::new();
        for (k, v) in iter {
            out.insert(k, v);
        }
        out.0.shrink_to_fit();
        out
    }
}

impl<V> From<BTreeMap<String, V>> for SmallMap<V> {
    fn from(map: BTreeMap<String, V>) -> Self {
        // Already sorted and unique.
        SmallMap(map.into_iter().collect())
    }
}

impl<'a, V> IntoIterator for &'a SmallMap<V> {
    type Item = (&'a String, &'a V);
    type IntoIter = std::iter::Map<
        std::slice::Iter<'a, (String, V)>,
        fn(&'a (String, V)) -> (&'a String, &'a V),
    >;
    fn into_iter(self) -> Self::IntoIter {
        self.0.iter().map(|(k, v)| (k, v))
    }
}

impl<V: Serialize> Serialize for SmallMap<V> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(Some(self.0.len()))?;
        for (k, v) in &self.0 {
            map.serialize_entry(k, v)?;
        }
        map.end()
    }
}

impl<V: JsonSchema> JsonSchema for SmallMap<V> {
    fn inline_schema() -> bool {
        <BTreeMap<String, V>>::inline_schema()
    }
    fn schema_name() -> Cow<'static, str> {
        <BTreeMap<String, V>>::schema_name()
    }
    fn schema_id() -> Cow<'static, str> {
        <BTreeMap<String, V>>::schema_id()
    }
    fn json_schema(generator: &mut SchemaGenerator) -> Schema {
        <BTreeMap<String, V>>::json_schema(generator)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_and_serializes_as_a_btreemap_does() {
        let pairs = [("b", 2), ("a", 1), ("c", 3), ("a", 9)];
        let small: SmallMap<i32> = pairs.iter().map(|(k, v)| (k.to_string(), *v)).collect();
        let big: BTreeMap<String, i32> = pairs.iter().map(|(k, v)| (k.to_string(), *v)).collect();
        assert_eq!(
            serde_json::to_string(&small).unwrap(),
            serde_json::to_string(&big).unwrap()
        );
        assert_eq!(small.get("a"), Some(&9));
        assert_eq!(small.get("z"), None);
        assert_eq!(small.len(), 3);
        assert_eq!(small.keys().cloned().collect::<Vec<_>>(), ["a", "b", "c"]);
        assert_eq!(SmallMap::from(big.clone()), small);
        let mut generator = SchemaGenerator::default();
        assert_eq!(
            SmallMap::<i32>::json_schema(&mut generator),
            <BTreeMap<String, i32>>::json_schema(&mut SchemaGenerator::default())
        );
    }
}
