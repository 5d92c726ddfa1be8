//! The document kinds, written once.
//!
//! One table ([`kinds!`] below) names every kind with its spec type, the
//! [`Repo`] field that holds its documents and its committed schema file. From
//! it come the [`Kind`] enum, the owned [`TypedDoc`] and borrowed [`DocRef`]
//! enums, the [`Spec`] trait each spec type implements, and [`Kind::visit`],
//! which hands a generic [`KindVisitor`] the spec type of a kind so that code
//! needing the type (deserializing, schema generation) is written once.

use super::{
    CatalogSpec, ClusterSpec, ConfigSpec, Document, Fingerprint, Metadata, Origin, PolicySpec,
    PriorityClassSpec, Repo, RequestSpec, ReservationSpec, TeamSpec,
};
use schemars::JsonSchema;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::fmt;

/// Where a repository keeps the documents of one kind: one (the Config) or
/// many by name. The first document of a name wins; a second is handed back.
pub trait Slot<S> {
    /// Stores `doc` unless a document of its name is there; returns it otherwise
    /// (moved back to the caller, who reports it: nothing is copied).
    #[allow(clippy::result_large_err)]
    fn put(&mut self, doc: Document<S>) -> Result<(), Document<S>>;
    /// The document of a name.
    fn find(&self, name: &str) -> Option<&Document<S>>;
    /// Every document, in name order.
    fn all(&self) -> Box<dyn Iterator<Item = &Document<S>> + '_>;
}

impl<S> Slot<S> for Option<Document<S>> {
    fn put(&mut self, doc: Document<S>) -> Result<(), Document<S>> {
        match self {
            Some(_) => Err(doc),
            None => {
                *self = Some(doc);
                Ok(())
            }
        }
    }
    fn find(&self, name: &str) -> Option<&Document<S>> {
        self.as_ref().filter(|d| d.name() == name)
    }
    fn all(&self) -> Box<dyn Iterator<Item = &Document<S>> + '_> {
        Box::new(self.iter())
    }
}

impl<S> Slot<S> for BTreeMap<String, Document<S>> {
    fn put(&mut self, doc: Document<S>) -> Result<(), Document<S>> {
        if self.contains_key(doc.name()) {
            return Err(doc);
        }
        self.insert(doc.name().to_string(), doc);
        Ok(())
    }
    fn find(&self, name: &str) -> Option<&Document<S>> {
        self.get(name)
    }
    fn all(&self) -> Box<dyn Iterator<Item = &Document<S>> + '_> {
        Box::new(self.values())
    }
}

/// A document spec type: what a kind's `spec` deserializes into.
pub trait Spec:
    Sized + Clone + fmt::Debug + for<'de> Deserialize<'de> + JsonSchema + 'static
{
    const KIND: Kind;
    fn wrap(doc: Document<Self>) -> TypedDoc;
    fn of(doc: &TypedDoc) -> Option<&Document<Self>>;
    fn slot(repo: &Repo) -> &dyn Slot<Self>;
    fn slot_mut(repo: &mut Repo) -> &mut dyn Slot<Self>;
}

/// Code generic over the spec type of a kind; see [`Kind::visit`].
pub trait KindVisitor {
    type Output;
    fn visit<S: Spec>(self) -> Self::Output;
}

macro_rules! kinds {
    (@unit $kind:ident) => { () };
    ($($kind:ident($spec:ty) in $field:ident, $file:literal;)*) => {
        /// The kinds of document a capacity repository holds.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
        pub enum Kind {
            $($kind),*
        }

        impl Kind {
            pub const ALL: [Kind; <[()]>::len(&[$(kinds!(@unit $kind)),*])] = [$(Kind::$kind),*];

            pub fn as_str(self) -> &'static str {
                match self {
                    $(Kind::$kind => stringify!($kind)),*
                }
            }

            /// File name of the kind's schema under `schemas/`.
            pub fn schema_file(self) -> &'static str {
                match self {
                    $(Kind::$kind => $file),*
                }
            }

            /// The committed schema text of the kind, embedded in the binary.
            pub fn embedded_schema(self) -> &'static str {
                match self {
                    $(Kind::$kind => include_str!(concat!("../../schemas/", $file))),*
                }
            }

            /// Runs `visitor` with the kind's spec type.
            pub fn visit<V: KindVisitor>(self, visitor: V) -> V::Output {
                match self {
                    $(Kind::$kind => visitor.visit::<$spec>()),*
                }
            }
        }

        /// A document of any kind, typed.
        #[derive(Debug, Clone)]
        pub enum TypedDoc {
            $($kind(Document<$spec>)),*
        }

        /// A document of any kind, borrowed from a [`Repo`].
        #[derive(Debug, Clone, Copy)]
        pub enum DocRef<'a> {
            $($kind(&'a Document<$spec>)),*
        }

        impl TypedDoc {
            pub fn kind(&self) -> Kind {
                match self {
                    $(TypedDoc::$kind(_) => Kind::$kind),*
                }
            }

            pub fn as_ref(&self) -> DocRef<'_> {
                match self {
                    $(TypedDoc::$kind(d) => DocRef::$kind(d)),*
                }
            }

            /// Files the document under its kind in `repo`; a document whose
            /// name is taken is handed back.
            #[allow(clippy::result_large_err)]
            pub fn insert_into(self, repo: &mut Repo) -> Result<(), TypedDoc> {
                match self {
                    $(TypedDoc::$kind(d) => repo.$field.put(d).map_err(TypedDoc::$kind)),*
                }
            }
        }

        impl<'a> DocRef<'a> {
            pub fn kind(&self) -> Kind {
                match self {
                    $(DocRef::$kind(_) => Kind::$kind),*
                }
            }

            pub fn metadata(&self) -> &'a Metadata {
                match self {
                    $(DocRef::$kind(d) => &d.metadata),*
                }
            }

            pub fn origin(&self) -> Origin {
                match self {
                    $(DocRef::$kind(d) => d.origin),*
                }
            }

            pub fn fingerprint(&self) -> &'a Fingerprint {
                match self {
                    $(DocRef::$kind(d) => &d.fingerprint),*
                }
            }

            pub fn to_owned(&self) -> TypedDoc {
                match self {
                    $(DocRef::$kind(d) => TypedDoc::$kind((*d).clone())),*
                }
            }
        }

        impl Repo {
            /// Every document of every kind, in kind and name order.
            pub fn documents(&self) -> impl Iterator<Item = DocRef<'_>> {
                std::iter::empty()
                    $(.chain(self.$field.all().map(DocRef::$kind)))*
            }

            /// The document of a kind and name.
            pub fn find(&self, kind: Kind, name: &str) -> Option<DocRef<'_>> {
                match kind {
                    $(Kind::$kind => self.$field.find(name).map(DocRef::$kind)),*
                }
            }
        }

        $(
            impl Spec for $spec {
                const KIND: Kind = Kind::$kind;
                fn wrap(doc: Document<Self>) -> TypedDoc {
                    TypedDoc::$kind(doc)
                }
                fn of(doc: &TypedDoc) -> Option<&Document<Self>> {
                    match doc {
                        TypedDoc::$kind(d) => Some(d),
                        #[allow(unreachable_patterns)]
                        _ => None,
                    }
                }
                fn slot(repo: &Repo) -> &dyn Slot<Self> {
                    &repo.$field
                }
                fn slot_mut(repo: &mut Repo) -> &mut dyn Slot<Self> {
                    &mut repo.$field
                }
            }
        )*
    };
}

kinds! {
    Config(ConfigSpec) in config, "config.schema.json";
    Team(TeamSpec) in teams, "team.schema.json";
    Cluster(ClusterSpec) in clusters, "cluster.schema.json";
    CapacityRequest(RequestSpec) in requests, "capacityrequest.schema.json";
    PriorityClass(PriorityClassSpec) in priority_classes, "priorityclass.schema.json";
    Reservation(ReservationSpec) in reservations, "reservation.schema.json";
    ApprovalPolicy(PolicySpec) in policies, "approvalpolicy.schema.json";
    PriceCatalog(CatalogSpec) in catalogs, "pricecatalog.schema.json";
}

impl Kind {
    pub fn parse(s: &str) -> Option<Kind> {
        Kind::ALL.into_iter().find(|k| k.as_str() == s)
    }
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl TypedDoc {
    pub fn metadata(&self) -> &Metadata {
        self.as_ref().metadata()
    }

    pub fn origin(&self) -> Origin {
        self.as_ref().origin()
    }

    pub fn name(&self) -> &str {
        self.metadata().name.value.as_str()
    }

    /// The document as its spec type, when it is of that kind.
    pub fn get<S: Spec>(&self) -> Option<&Document<S>> {
        S::of(self)
    }
}

impl DocRef<'_> {
    pub fn name(&self) -> &str {
        self.metadata().name.value.as_str()
    }
}

impl Repo {
    /// Number of documents of every kind.
    pub fn document_count(&self) -> usize {
        self.documents().count()
    }

    /// The documents of one kind.
    pub fn all<S: Spec>(&self) -> Box<dyn Iterator<Item = &Document<S>> + '_> {
        S::slot(self).all()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_round_trip_and_name_their_schemas() {
        assert_eq!(Kind::ALL.len(), 8);
        for k in Kind::ALL {
            assert_eq!(Kind::parse(k.as_str()), Some(k));
            assert_eq!(
                k.schema_file(),
                format!("{}.schema.json", k.as_str().to_ascii_lowercase())
            );
        }
        assert_eq!(Kind::parse("Teams"), None);
    }
}
