//! What GPUs a node really has, and whether that is what its pool declares.
//!
//! A [`GpuReader`] reads a [`NodeInventory`] (the NVML one lives in
//! `ingest::nvml`; tests use values built in memory). [`compare`] is a pure
//! function of an inventory and a pool: GPU count, model (NVML's product name
//! matched against the catalog), MIG mode and the MIG layout of every GPU.
//! A MIG instance's profile is found by its NVML GPU-instance profile id in
//! the catalog, or else by the profile name NVML puts after `MIG` in the
//! instance's name.

use super::catalog::{self, GpuModel, MigProfile};
use super::mig;
use crate::model::{NodePool, Repo};
use serde::Serialize;
use std::collections::BTreeMap;
use thiserror::Error;

/// The GPUs of one node.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct NodeInventory {
    pub driver_version: Option<String>,
    pub gpus: Vec<Gpu>,
}

/// One physical GPU.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Gpu {
    pub index: u32,
    /// NVML's product name (`NVIDIA H100 80GB HBM3`).
    pub name: String,
    pub uuid: String,
    pub memory_mib: Option<u64>,
    /// MIG mode; None when the GPU does not support MIG.
    pub mig: Option<MigMode>,
    pub mig_devices: Vec<MigDevice>,
}

/// MIG mode now and after the next GPU reset.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct MigMode {
    pub current: bool,
    pub pending: bool,
}

/// One MIG device (a GPU instance with its compute instance).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct MigDevice {
    pub index: u32,
    pub uuid: String,
    pub name: Option<String>,
    /// NVML GPU-instance profile id (`nvidia-smi mig -lgip`'s ID column).
    pub gi_profile_id: Option<u32>,
    /// Placement `(start, size)` in memory slices.
    pub placement: Option<(u32, u32)>,
    pub memory_mib: Option<u64>,
}

/// Why a node's GPUs could not be read.
#[derive(Debug, Error, PartialEq, Eq)]
pub enum ReadError {
    #[error("NVML not available: {library} could not be loaded")]
    LibraryNotFound { library: String, detail: String },
    #[error("NVML not available: {0}")]
    Unavailable(String),
    #[error("NVML call {call} failed: {detail}")]
    Failed { call: &'static str, detail: String },
}

/// Reads a node's GPUs.
pub trait GpuReader {
    fn read(&self) -> Result<NodeInventory, ReadError>;
}

/// An inventory held in memory (tests, or one read earlier).
impl GpuReader for NodeInventory {
    fn read(&self) -> Result<NodeInventory, ReadError> {
        Ok(self.clone())
    }
}

/// The catalog model of an NVML product name.
pub fn model_of(name: &str) -> Option<&'static GpuModel> {
    catalog::model(name).or_else(|| {
        let lower = name.trim().to_ascii_lowercase();
        let short = lower
            .strip_prefix("nvidia ")
            .or_else(|| lower.strip_prefix("tesla "))?;
        catalog::model(short).or_else(|| {
            // `A100-SXM4-80GB`, `H100 80GB HBM3`: try dropping trailing
            // words that say only memory or form factor. Any other word
            // names another product (`H20-3e` is not the 96 GB H20), which
            // the catalog does not know.
            let words: Vec<&str> = short.split([' ', '-']).collect();
            let descriptor = |w: &str| {
                w.ends_with("gb") || ["sxm", "pcie", "hbm"].iter().any(|p| w.starts_with(p))
            };
            (1..words.len())
                .rev()
                .take_while(|&k| descriptor(words[k]))
                .find_map(|k| catalog::model(&words[..k].join("-")))
        })
    })
}

/// The profile of a MIG device on a GPU of `model`.
pub fn profile_of(
    dev: &MigDevice,
    model: Option<&'static GpuModel>,
) -> Option<&'static MigProfile> {
    let mig = model?.mig.as_ref()?;
    if let Some(id) = dev.gi_profile_id
        && let Some(p) = mig.profiles.iter().find(|p| p.gi_profile_id == id)
    {
        return Some(p);
    }
    let name = dev.name.as_deref()?;
    let written = match name.rfind("MIG ") {
        Some(i) => &name[i + 4..],
        None => name,
    };
    let written = written.trim();
    mig::resolve(mig, written).ok().map(|r| r.profile)
}

/// One difference between a node and its pool.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Finding {
    /// `gpu-count`, `gpu-model`, `mig-mode`, `mig-layout` (mismatches) or `mig-mode-pending` (a note).
    pub code: &'static str,
    /// The GPU it is about, if one.
    pub gpu: Option<u32>,
    pub message: String,
    /// Whether it makes the node differ from the pool (exit 1).
    pub mismatch: bool,
}

/// `1 GPU`, `n GPUs`.
pub fn gpus(n: usize) -> String {
    if n == 1 {
        "1 GPU".to_string()
    } else {
        format!("{n} GPUs")
    }
}

/// The node compared with one pool.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Comparison {
    pub cluster: String,
    pub pool: String,
    pub matches: bool,
    pub findings: Vec<Finding>,
}

/// `{3g.40gb: 1, 1g.10gb: 2}` for messages.
fn layout_text(layout: &BTreeMap<String, u32>) -> String {
    if layout.is_empty() {
        return "no MIG devices".into();
    }
    let parts: Vec<String> = layout.iter().map(|(p, n)| format!("{p}: {n}")).collect();
    format!("{{{}}}", parts.join(", "))
}

/// Compares a node's GPUs with the pool it should belong to.
pub fn compare(inv: &NodeInventory, cluster: &str, pool: &NodePool) -> Comparison {
    let mut findings = Vec::new();
    let mut push = |code, gpu, message: String, mismatch| {
        findings.push(Finding {
            code,
            gpu,
            message,
            mismatch,
        })
    };
    let declared = catalog::model(&pool.gpu_model.value);
    let want_gpus = pool.gpus_per_node.value.0 as usize;
    if inv.gpus.len() != want_gpus {
        push(
            "gpu-count",
            None,
            format!(
                "the node has {}, the pool declares {want_gpus} per node",
                gpus(inv.gpus.len())
            ),
            true,
        );
    }
    let expected_layout: Option<BTreeMap<String, u32>> = pool.mig.as_ref().map(|m| {
        let mut out = BTreeMap::new();
        for (name, count) in &m.layout.value {
            let canonical = declared
                .and_then(|d| d.mig.as_ref())
                .and_then(|mm| mig::resolve(mm, &name.value).ok())
                .map(|r| r.profile.name.to_string())
                .unwrap_or_else(|| name.value.clone());
            let slot: &mut u32 = out.entry(canonical).or_default();
            *slot = slot.saturating_add(count.value.0);
        }
        out
    });
    for gpu in &inv.gpus {
        let found = model_of(&gpu.name);
        match (found, declared) {
            (Some(f), Some(d)) if f.id == d.id => {}
            (f, _) => push(
                "gpu-model",
                Some(gpu.index),
                format!(
                    "GPU {} is `{}` ({}), the pool declares `{}`",
                    gpu.index,
                    gpu.name,
                    f.map(|m| m.id).unwrap_or("not in the catalog"),
                    pool.gpu_model.value
                ),
                true,
            ),
        }
        let want_mig = expected_layout.is_some();
        let current = gpu.mig.is_some_and(|m| m.current);
        if current != want_mig {
            let has = match gpu.mig {
                None => "does not support MIG",
                Some(m) if m.current => "has MIG enabled",
                Some(_) => "has MIG disabled",
            };
            let wants = if want_mig {
                "a MIG layout"
            } else {
                "whole GPUs"
            };
            push(
                "mig-mode",
                Some(gpu.index),
                format!("GPU {} {has}, the pool declares {wants}", gpu.index),
                true,
            );
        }
        if let Some(m) = gpu.mig
            && m.pending != m.current
        {
            let to = if m.pending { "enabled" } else { "disabled" };
            push(
                "mig-mode-pending",
                Some(gpu.index),
                format!(
                    "GPU {}: MIG mode becomes {to} after the next GPU reset or reboot",
                    gpu.index
                ),
                false,
            );
        }
        if let (Some(expected), true) = (&expected_layout, current) {
            let mut layout: BTreeMap<String, u32> = BTreeMap::new();
            for dev in &gpu.mig_devices {
                let name = match profile_of(dev, found) {
                    Some(p) => p.name.to_string(),
                    None => format!(
                        "unknown profile (id {})",
                        dev.gi_profile_id.map_or("?".into(), |i| i.to_string())
                    ),
                };
                *layout.entry(name).or_default() += 1;
            }
            if &layout != expected {
                push(
                    "mig-layout",
                    Some(gpu.index),
                    format!(
                        "GPU {} has {}, the pool declares {}",
                        gpu.index,
                        layout_text(&layout),
                        layout_text(expected)
                    ),
                    true,
                );
            }
        }
    }
    let matches = !findings.iter().any(|f| f.mismatch);
    Comparison {
        cluster: cluster.to_string(),
        pool: pool.name.value.to_string(),
        matches,
        findings,
    }
}

/// Pools (`(cluster, pool)`) whose `nodeLabels` are all among `labels`, in `cluster` if given.
pub fn pools_with_labels(
    repo: &Repo,
    labels: &BTreeMap<String, String>,
    cluster: Option<&str>,
) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for (name, doc) in &repo.clusters {
        if cluster.is_some_and(|c| c != name) {
            continue;
        }
        for p in &doc.spec.node_pools {
            if !p.node_labels.is_empty()
                && p.node_labels
                    .iter()
                    .all(|(k, v)| labels.get(k.as_str()).is_some_and(|x| *x == v.value))
            {
                out.push((name.clone(), p.name.value.to_string()));
            }
        }
    }
    out
}

#[cfg(test)]
#[path = "inventory_tests.rs"]
pub(crate) mod tests;
