//! `Repo`: every document of a capacity repository, typed and indexed by name.

use super::{
    CatalogSpec, ClusterSpec, ConfigSpec, Document, NodePool, PolicySpec, PriorityClassSpec,
    RequestSpec, ReservationSpec, TeamSpec, Usage,
};
use std::collections::BTreeMap;

/// The documents of one repository. Maps are keyed by document name; when two
/// documents share a name the first one read is kept (the duplicate is a diagnostic).
#[derive(Clone, Debug, Default)]
pub struct Repo {
    pub config: Option<Document<ConfigSpec>>,
    pub teams: BTreeMap<String, Document<TeamSpec>>,
    pub clusters: BTreeMap<String, Document<ClusterSpec>>,
    pub requests: BTreeMap<String, Document<RequestSpec>>,
    pub priority_classes: BTreeMap<String, Document<PriorityClassSpec>>,
    pub reservations: BTreeMap<String, Document<ReservationSpec>>,
    pub policies: BTreeMap<String, Document<PolicySpec>>,
    pub catalogs: BTreeMap<String, Document<CatalogSpec>>,
    /// The usage history, shared (a judging world and its base hold the same one).
    pub usage: std::sync::Arc<Usage>,
    /// The reservations that price pools (`cost::prices::pool`): in a world
    /// judging a change, the base's, so that a reservation the change proposes
    /// (at any price) cannot lower the price that judges the change's other
    /// documents; `None`: the repository's own.
    pub pricing_reservations: Option<std::sync::Arc<BTreeMap<String, Document<ReservationSpec>>>>,
    /// In a world judging a change, the base's requests of the files the
    /// change touched: the measured usage holds those versions, so a pool's
    /// demand outlook adds what the change does to a running request (grown,
    /// shrunk, removed) from the first forecast hour (`cost::approved`).
    /// `None`: the repository's requests are the measured ones.
    pub measured_requests: Option<std::sync::Arc<MeasuredRequests>>,
    /// Documents the repository holds that did not check (kind, name): a
    /// reference to one names something, only something invalid.
    pub invalid: std::collections::BTreeSet<(super::Kind, String)>,
    /// A YAML file could not be read at all ([`crate::load::Loaded::unread`]):
    /// a reference that names nothing may name what it holds.
    pub unread: bool,
}

impl Repo {
    /// Rebuilds the document maps with full nodes. Documents are inserted in
    /// file order, mostly ascending, which leaves each B-tree node about half
    /// full: at 100,000 requests of several hundred bytes each, a hundred
    /// megabytes of empty slots. A map collected from its own (sorted) entries
    /// is built packed.
    pub fn compact(&mut self) {
        fn packed<V>(map: &mut BTreeMap<String, V>) {
            *map = std::mem::take(map).into_iter().collect();
        }
        packed(&mut self.teams);
        packed(&mut self.clusters);
        packed(&mut self.requests);
        packed(&mut self.priority_classes);
        packed(&mut self.reservations);
        packed(&mut self.policies);
        packed(&mut self.catalogs);
    }

    /// The Config's spec, or the defaults when the repository has none.
    pub fn config_spec(&self) -> std::borrow::Cow<'_, ConfigSpec> {
        match &self.config {
            Some(c) => std::borrow::Cow::Borrowed(&c.spec),
            None => std::borrow::Cow::Owned(ConfigSpec::default()),
        }
    }

    /// A node pool by cluster and pool name.
    pub fn pool(&self, cluster: &str, pool: &str) -> Option<&NodePool> {
        self.clusters
            .get(cluster)?
            .spec
            .node_pools
            .iter()
            .find(|p| p.name.value.as_str() == pool)
    }
}

/// What the measurements hold of a change's requests ([`Repo::measured_requests`]).
#[derive(Clone, Debug, Default)]
pub struct MeasuredRequests {
    /// The base's requests of the files the change touched.
    pub base: BTreeMap<String, Document<RequestSpec>>,
    /// Requests the change adds (in the head, not in the base): none of
    /// them is in the measurements, whatever its window says (a request
    /// renamed is one removed and one added, and changes nothing).
    pub added: std::collections::BTreeSet<String>,
}
