//! Sync: from the rendered desired state to live clusters.
//!
//! `capops plan` reads each cluster through the kubeconfig context its
//! Cluster document names, lists what capops owns there (one
//! label-selector list per kind), dry-runs server-side apply for what may
//! change, and computes the plan; `apply` writes it with server-side apply
//! as field manager `capops`, in dependency order, prunes only what carries
//! capops's label and this repository's annotation, and relabels the MIG
//! pools' nodes; `drift` reports the plan as drift; `verify` compares what
//! the nodes advertise with the pools.
//!
//! The layers: [`desired`] (from `render::render`'s output), [`quantity`]
//! and [`fields`] (values and paths), [`diff`] and [`nodes`] (the pure
//! decisions, tested without a server), [`plan`] (the plan as data, also
//! the plan file format), [`report`] (how plans read for people), and the
//! edge: [`client`] (kube, kubeconfig, retries), [`run`] (reading and
//! dry-running one cluster, clusters in parallel) and [`apply`] (writing a
//! cluster's plan, the MIG rollout).

pub mod apply;
pub mod client;
pub mod credential_plugin;
pub mod desired;
pub mod diff;
pub mod fields;
pub mod held;
pub mod kinds;
pub mod kubeconfig;
pub mod kubeconfig_check;
pub mod nodes;
pub mod plan;
pub mod quantity;
pub mod report;
pub mod run;
pub mod secrets;
pub mod servers;

#[cfg(test)]
mod tests;
