//! GPUs: the built-in model catalog, MIG layouts and resource names.
//!
//! [`catalog`] is data (models, profiles, placements, sources); [`mig`]
//! resolves profile names and decides whether a layout fits on a GPU;
//! [`resources`] maps pools to the Kubernetes resources they provide;
//! [`gcp`] names GPU machines as Compute Engine commits them.

pub mod catalog;
pub mod gcp;
pub mod inventory;
pub mod mig;
pub mod resources;

pub use catalog::{GpuModel, MigModel, MigProfile, PlacementStatus, model};

/// Node label the GPU operator's MIG manager reads (capops sets it on MIG pools' nodes).
pub const MIG_CONFIG_LABEL: &str = "nvidia.com/mig.config";
/// Node label the device plugin reads (capops sets it on MIG and time-sliced pools' nodes).
pub const DEVICE_PLUGIN_CONFIG_LABEL: &str = "nvidia.com/device-plugin.config";
