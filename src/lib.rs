//! capops: GPU capacity governance as code.
//!
//! The pipeline reads as the module tree: [`load`] files into spanned
//! documents, [`validate`] them into a typed [`model::Repo`], then (in later
//! stages) evaluate policy, forecast, cost, render and sync. [`gpu`] holds the
//! GPU catalog and MIG logic, [`diag`] the diagnostics every stage reports,
//! [`report`] the output formats and [`cli`] the commands. Everything but
//! `load`'s file reading, `report` and `cli` is pure: no I/O, no clock.

pub mod cli;
pub mod cost;
pub mod diag;
pub mod forecast;
pub mod gpu;
pub mod ingest;
pub mod load;
pub mod model;
pub mod policy;
pub mod render;
pub mod report;
pub mod validate;
