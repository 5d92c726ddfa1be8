//! The documents users write, as typed values.
//!
//! Types here have no I/O. Raw values keep their source spans ([`Spanned`]);
//! the `load` stage fills them from YAML and the `validate` stage cross-checks
//! them into a [`Repo`]. Every document kind has a JSON Schema derived from
//! these types ([`schema`]), committed under `schemas/`.

pub mod api_server;
pub mod bounded;
pub mod catalog;
pub mod cluster;
pub mod config;
pub mod hourly;
pub mod kinds;
pub mod meta;
pub mod money;
pub mod policy;
pub mod priority;
pub mod repo;
pub mod request;
pub mod reservation;
pub mod schema;
pub mod smallmap;
pub mod spanned;
pub mod team;
pub mod template_size;
pub mod types;
pub mod usage;
pub mod usage_settings;

pub use catalog::{CatalogSpec, PriceEntry};
pub use cluster::{
    ClusterSpec, Environment, KueueSpec, Labels, MigSpec, MigStrategy, NodePool, Provider,
    PurchaseMix, Taint, TaintEffect, TimeSlicing, kueue_cohort, purchase_nodes,
    selectors_may_overlap, spot_marker,
};
pub use config::{Chargeback, ConfigSpec, CostSettings, Role, Thresholds};
pub use kinds::{DocRef, Kind, KindVisitor, Spec, TypedDoc};
pub use meta::{API_VERSION, Document, Fingerprint, Metadata, Origin};
pub use money::{Money, Ratio};
pub use policy::{Approval, Effect, PolicySpec, RequiredField, Rule, Subject, Tier};
pub use priority::{PreemptionPolicy, PriorityClassSpec};
pub use repo::{MeasuredRequests, Repo};
pub use request::{RequestSpec, Window, WorkloadClass};
pub use reservation::{CommitmentPlan, PoolRef, ReservationSpec, ReservationType};
pub use smallmap::SmallMap;
pub use spanned::Spanned;
pub use team::{TeamCluster, TeamSpec};
pub use types::{Count, Name, Quantity, Timestamp};
pub use usage::{SeriesKey, Usage, UsageSample};
