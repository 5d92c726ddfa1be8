//! capops: GPU capacity governance as code.
//!
//! The module tree is the pipeline, bottom to top; each stage uses only the
//! ones listed before it (`tests/architecture.rs` checks it):
//!
//! - [`diag`]: diagnostics with stable codes and spans, which every stage reports;
//!   [`model`]: the documents users write, typed, with their schemas;
//!   [`gpu`]: the GPU catalog, MIG profiles and placements, resource names;
//!   [`capacity`]: what requests commit over time against what pools hold.
//! - [`load`]: files of a folder or a git revision to spanned, shape-checked
//!   documents (JSON Schema), the base revision of a change.
//! - [`validate`]: documents to a cross-checked [`model::Repo`].
//! - [`forecast`]: demand series and the forecaster; [`cost`]: prices,
//!   reservations, budgets, utilization, the report's figures and charts.
//! - [`policy`]: facts, compiled conditions, decisions per change, policy lint
//!   and tests; [`render`]: desired Kubernetes objects and Terraform, and the
//!   lint of what will be rendered.
//! - [`output`]: human text, JSON, Markdown, HTML, SARIF and annotations.
//! - [`pipeline`]: load, validate and lint, in one place, for every command.
//! - Edges to outside systems: [`ingest`] (usage history pulled from
//!   Prometheus, GPUs read through NVML), [`sync`] (plans and server-side
//!   apply against live clusters), [`github`] (the pull-request loop). Each
//!   keeps its decisions pure and its I/O in a few named modules.
//! - [`cli`]: the commands, which build a result in the stages, format it in
//!   [`output`] and write it.
//!
//! Everything but `load`'s file and git reading, the edges' clients and `cli` is pure: no I/O, no
//! environment, no clock (the time is passed in). `clippy.toml` forbids the
//! calls that would break that, and the edges opt out module by module.

#![deny(clippy::disallowed_methods, clippy::disallowed_types)]

pub mod capacity;
pub mod cli;
pub mod cost;
pub mod diag;
pub mod forecast;
pub mod github;
pub mod gpu;
pub mod ingest;
pub mod load;
pub mod model;
pub mod output;
pub mod pipeline;
pub mod policy;
pub mod render;
pub mod sync;
pub mod validate;
