//! The envelope every document shares: apiVersion, kind, metadata.

use super::{Name, Spanned};
use crate::diag::{FileId, Span};
use schemars::JsonSchema;
use serde::Deserialize;
use std::collections::BTreeMap;

/// The only apiVersion capops reads.
pub const API_VERSION: &str = "capops.dev/v1alpha1";

/// Standard object metadata.
#[derive(Clone, Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Metadata {
    /// The document's name, unique among documents of its kind.
    pub name: Spanned<Name>,
    /// Free-form labels for people and tools that read the repository; capops does not copy them onto rendered objects.
    #[serde(default)]
    pub labels: BTreeMap<String, String>,
    /// Free-form annotations for people and tools; capops ignores them.
    #[serde(default)]
    pub annotations: BTreeMap<String, String>,
}

/// Where a document came from.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Origin {
    pub file: FileId,
    /// The span of the document's `kind` value, the usual place to point at the whole document.
    pub kind_span: Span,
    /// Index of the document within its file (0-based).
    pub index: usize,
}

/// What a document says, hashed (SHA-256): metadata and each top-level
/// `spec` field. Two documents with equal fingerprints say the same thing,
/// wherever they sit.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Fingerprint {
    pub metadata: [u8; 32],
    /// Each top-level `spec` field's digest, sorted by name: a packed list,
    /// not a map (a document of every 100,000 holds one).
    pub fields: Box<[(Box<str>, [u8; 32])]>,
}

impl Fingerprint {
    /// A fingerprint of these field digests, in any order.
    pub fn new(metadata: [u8; 32], fields: impl IntoIterator<Item = (String, [u8; 32])>) -> Self {
        let mut fields: Vec<(Box<str>, [u8; 32])> = fields
            .into_iter()
            .map(|(k, v)| (k.into_boxed_str(), v))
            .collect();
        fields.sort_by(|a, b| a.0.cmp(&b.0));
        Fingerprint {
            metadata,
            fields: fields.into_boxed_slice(),
        }
    }

    /// The digest of one `spec` field.
    pub fn field(&self, name: &str) -> Option<&[u8; 32]> {
        self.fields
            .binary_search_by(|(k, _)| k.as_ref().cmp(name))
            .ok()
            .map(|i| &self.fields[i].1)
    }

    /// Top-level `spec` fields that differ between two fingerprints.
    pub fn changed_fields(&self, other: &Fingerprint) -> Vec<String> {
        let mut names: Vec<&str> = self
            .fields
            .iter()
            .chain(other.fields.iter())
            .map(|(k, _)| k.as_ref())
            .collect();
        names.sort();
        names.dedup();
        names
            .into_iter()
            .filter(|n| self.field(n) != other.field(n))
            .map(String::from)
            .collect()
    }
}

/// A typed document.
#[derive(Clone, Debug)]
pub struct Document<S> {
    pub metadata: Metadata,
    pub spec: S,
    pub origin: Origin,
    pub fingerprint: Fingerprint,
}

impl<S> Document<S> {
    pub fn name(&self) -> &str {
        self.metadata.name.value.as_str()
    }

    pub fn name_span(&self) -> Span {
        self.metadata.name.span
    }
}
