//! GPU models added to the catalog after the first one: the Hopper GH200
//! (96 GB and 144 GB) and H20, and the Blackwell B300, GB300 and RTX PRO 6000.
//!
//! Same facts and conventions as `catalog.rs` (this module is its child, so
//! [`super::models`] lists these after the first catalog): NVML product names
//! as `nvidia-smi` prints them, from NVIDIA's driver README (the supported-GPU
//! table of `NVIDIA/open-gpu-kernel-modules`); profiles, counts and GPU-instance
//! profile ids from the MIG User Guide, `nvidia-smi mig -lgip` captures and the
//! GPU Operator's `default-mig-parted-config`. Each model's `source` says which
//! fact comes from where, and what is inferred: where no capture shows a
//! model's GPU-instance profile ids or placements, they are those of the
//! A100/H100 family, whose fractions and counts the model shares, and the
//! placements are marked [`PlacementStatus::Inferred`].

use super::{GpuModel, MigModel, MigProfile, PlacementStatus, S0, S2, S3, S4, S7};

/// Starts of the RTX PRO 6000's profiles on the driver's placement axis,
/// which has 12 units (`nvidia-smi mig -lgipp`: `{0,3,6,9}:3`, `{0,6}:6`,
/// `{0}:12`): a memory quarter is 3 units.
const Q4: &[u32] = &[0, 3, 6, 9];
const Q2: &[u32] = &[0, 6];

/// One RTX PRO 6000 profile: (name, GPU-instance profile id, compute slices,
/// memory quarters, GB, most instances).
const fn rtx(name: &'static str, id: u32, g: u32, quarters: u32, gb: u32, max: u32) -> MigProfile {
    MigProfile {
        name,
        gi_profile_id: id,
        compute_slices: g,
        memory_slices: quarters * 3,
        memory_gb: gb,
        max_count: max,
        starts: match quarters {
            1 => Q4,
            2 => Q2,
            _ => S0,
        },
    }
}

/// The H100 96GB profiles (H100 on GH200, and H20): same fractions, counts
/// and names (MIG User Guide, and the operator's `all-balanced` entry
/// shared by the H100-96GB, GH200 and H20 device ids).
const H100_96_PROFILES: &[MigProfile] = gpc7_mem8!(
    "1g.12gb",
    "1g.12gb+me",
    "1g.24gb",
    "2g.24gb",
    "3g.48gb",
    "4g.48gb",
    "7g.96gb",
    [12, 24, 48, 96]
);

/// Every model capops knows: the first catalog, then the models added since.
pub fn models() -> impl Iterator<Item = &'static GpuModel> + Clone {
    super::MODELS.iter().chain(MODELS)
}

/// The models added since the first catalog.
pub static MODELS: &[GpuModel] = &[
    GpuModel {
        id: "gh200-96gb",
        display: "NVIDIA GH200 96GB (H100 96GB)",
        // NVML names the GH200 by its module: `NVIDIA GH200 480GB` and
        // `NVIDIA GH200 120GB` (device 0x2342) carry the 96 GB H100.
        names: &[
            "gh200",
            "gh200-480gb",
            "gh200-120gb",
            "nvidia-gh200",
            // The MIG User Guide's "H100 96GB product (H100 on GH200)".
            "h100-96gb",
        ],
        memory_gb: 96,
        architecture: "Hopper",
        mig: Some(MigModel {
            compute_slices: 7,
            memory_slices: 8,
            profiles: H100_96_PROFILES,
            placement_status: PlacementStatus::Inferred,
            aliases: &[],
            source: "NVIDIA MIG User Guide, Supported MIG Profiles, H100 96GB (H100 on GH200) table, and Supported GPUs (96GB, 7 instances); GI profile ids 19/20/15/14/9/5/0 and counts from an nvidia-smi mig -lgip capture on a GH200 (github.com/kf-cuanschutz/NVIDIA_Grace_Hopper_benchmarking_logs_, 2024); GPU Operator default-mig-parted-config (H100-96GB, GH200); placements inferred from the A100/H100 family (no -lgipp capture)",
        }),
    },
    GpuModel {
        id: "h20-96gb",
        display: "NVIDIA H20 96GB",
        names: &["h20", "nvidia-h20"],
        memory_gb: 96,
        architecture: "Hopper",
        mig: Some(MigModel {
            compute_slices: 7,
            memory_slices: 8,
            profiles: H100_96_PROFILES,
            placement_status: PlacementStatus::Inferred,
            aliases: &[],
            source: "NVIDIA MIG User Guide, Supported GPUs (H20, 96GB, 7 instances); NVIDIA AI Enterprise vGPU types reference, Hopper, MIG-backed vGPU for the H20 SXM5 96GB (its GPU-instance profiles and their counts, those of the H100 96GB); GPU Operator default-mig-parted-config (device 0x2329 with H100-96GB and GH200); GI profile ids and placements inferred from the H100 96GB (no -lgip/-lgipp capture of an H20)",
        }),
    },
    GpuModel {
        id: "gh200-144gb",
        display: "NVIDIA GH200 144GB HBM3e",
        names: &["gh200-144g-hbm3e", "gh200-144g"],
        memory_gb: 144,
        architecture: "Hopper",
        mig: Some(MigModel {
            compute_slices: 7,
            memory_slices: 8,
            profiles: gpc7_mem8!(
                "1g.18gb",
                "1g.18gb+me",
                "1g.36gb",
                "2g.36gb",
                "3g.72gb",
                "4g.72gb",
                "7g.144gb",
                [18, 36, 72, 144]
            ),
            placement_status: PlacementStatus::Inferred,
            aliases: &[],
            source: "GPU Operator default-mig-parted-config and mig-parted config-default.yaml (GH200 144G HBM3e, device 0x2348: all-<profile> counts 7/1/4/3/2/1/1); no NVIDIA table in the MIG User Guide read; GI profile ids and placements inferred from the A100/H100 family (no -lgip/-lgipp capture)",
        }),
    },
    GpuModel {
        id: "b300-269gb",
        display: "NVIDIA B300 SXM6 AC 269GB",
        names: &["b300", "b300-sxm6-ac", "nvidia-b300", "b300-288gb"],
        memory_gb: 269,
        architecture: "Blackwell",
        mig: Some(MigModel {
            compute_slices: 7,
            memory_slices: 8,
            profiles: gpc7_mem8!(
                "1g.34gb",
                "1g.34gb+me",
                "1g.67gb",
                "2g.67gb",
                "3g.135gb",
                "4g.135gb",
                "7g.269gb",
                [34, 67, 135, 269]
            ),
            placement_status: PlacementStatus::Inferred,
            aliases: &[],
            source: "GPU Operator default-mig-parted-config and mig-parted config-default.yaml (B300, device 0x3182: all-<profile> counts 7/1/4/3/2/1/1); no NVIDIA table in the MIG User Guide read; GI profile ids and placements inferred from the A100/H100 family (no -lgip/-lgipp capture)",
        }),
    },
    GpuModel {
        id: "gb300-278gb",
        display: "NVIDIA GB300 278GB",
        names: &["gb300", "nvidia-gb300", "gb300-288gb"],
        memory_gb: 278,
        architecture: "Blackwell",
        mig: Some(MigModel {
            compute_slices: 7,
            memory_slices: 8,
            profiles: gpc7_mem8!(
                "1g.35gb",
                "1g.35gb+me",
                "1g.70gb",
                "2g.70gb",
                "3g.139gb",
                "4g.139gb",
                "7g.278gb",
                [35, 70, 139, 278]
            ),
            placement_status: PlacementStatus::Inferred,
            aliases: &[],
            source: "GPU Operator default-mig-parted-config and mig-parted config-default.yaml (GB300, device 0x31C2: all-<profile> counts 7/1/4/3/2/1/1); GI profile ids 19/20/15/14/9/5/0 as an NVIDIA DGX Station MIG playbook lists them for GB300 (no capture); placements inferred from the A100/H100 family (no -lgipp capture)",
        }),
    },
    GpuModel {
        id: "rtx-pro-6000-96gb",
        display: "NVIDIA RTX PRO 6000 Blackwell 96GB",
        // The Server, Workstation and Max-Q Workstation Editions share the
        // MIG table (MIG User Guide).
        names: &[
            "rtx-pro-6000",
            "rtx-pro-6000-blackwell",
            "rtx-pro-6000-blackwell-server-edition",
            "rtx-pro-6000-blackwell-workstation-edition",
            "rtx-pro-6000-blackwell-max-q-workstation-edition",
        ],
        memory_gb: 96,
        architecture: "Blackwell",
        mig: Some(MigModel {
            // Four compute slices; memory in quarters, 3 placement units each.
            compute_slices: 4,
            memory_slices: 12,
            profiles: &[
                rtx("1g.24gb", 14, 1, 1, 24, 4),
                rtx("1g.24gb+me", 21, 1, 1, 24, 1),
                rtx("1g.24gb+gfx", 47, 1, 1, 24, 4),
                rtx("1g.24gb+me.all", 65, 1, 1, 24, 1),
                rtx("1g.24gb-me", 67, 1, 1, 24, 4),
                rtx("2g.48gb", 5, 2, 2, 48, 2),
                rtx("2g.48gb+gfx", 35, 2, 2, 48, 2),
                rtx("2g.48gb+me.all", 64, 2, 2, 48, 1),
                rtx("2g.48gb-me", 66, 2, 2, 48, 2),
                rtx("4g.96gb", 0, 4, 4, 96, 1),
                rtx("4g.96gb+gfx", 32, 4, 4, 96, 1),
            ],
            placement_status: PlacementStatus::Observed,
            aliases: &[],
            source: "NVIDIA MIG User Guide, Supported MIG Profiles, RTX PRO 6000 Blackwell table (profiles, fractions, instances; Server, Workstation and Max-Q Workstation Editions) and Supported GPUs (96GB, 4 instances); GI profile ids from nvidia-smi mig -lgip captures in two public write-ups; placements from an nvidia-smi mig -lgipp capture on an RTX PRO 6000 Blackwell Server Edition (driver 610.43.02), on the driver's 12-unit axis: {0,3,6,9}:3, {0,6}:6, {0}:12; GPU Operator default-mig-parted-config (RTX-PRO-6000-96GB). Media engines are checked only as far as +me.all goes (it takes all of them)",
        }),
    },
];

#[cfg(test)]
#[path = "catalog_recent_tests.rs"]
mod tests;
