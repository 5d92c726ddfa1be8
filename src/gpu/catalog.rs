//! The built-in GPU catalog: models, memory, MIG profiles and placements.
//!
//! Facts come from the NVIDIA MIG User Guide (v580), `nvidia-smi mig -lgip` /
//! `-lgipp` captures and the GPU Operator's shipped mig-parted config; the
//! research notes with sources are in the project's reference material.
//! Where no `-lgipp` capture was found for a model, its placements are copied
//! from the same-shaped family and marked [`PlacementStatus::Inferred`];
//! capops shows that mark to users whenever it relies on it.

/// One MIG GPU-instance profile on one GPU model.
#[derive(Debug, PartialEq, Eq)]
pub struct MigProfile {
    /// Canonical name, as the driver and mig-parted spell it (`1g.10gb`, `1g.10gb+me`).
    pub name: &'static str,
    /// NVML GPU-instance profile id (per model: ids differ across families).
    pub gi_profile_id: u32,
    /// Compute (SM) slices: the `<n>g` of the name.
    pub compute_slices: u32,
    /// Memory slices, which is also the placement size.
    pub memory_slices: u32,
    /// The `<n>gb` of the name.
    pub memory_gb: u32,
    /// Most instances of this profile on one empty GPU.
    pub max_count: u32,
    /// Allowed start indexes on the memory-slice axis.
    pub starts: &'static [u32],
}

impl MigProfile {
    /// Whether the name has attributes: engines added (`+me`, `+gfx`) or left out (`-me`).
    pub fn has_attributes(&self) -> bool {
        self.name.contains(['+', '-'])
    }
}

/// Whether a model's placements were seen on hardware.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PlacementStatus {
    Observed,
    Inferred,
}

/// MIG facts of a model.
#[derive(Debug)]
pub struct MigModel {
    pub compute_slices: u32,
    pub memory_slices: u32,
    pub profiles: &'static [MigProfile],
    pub placement_status: PlacementStatus,
    /// Names seen from some drivers for a canonical profile: `(seen_as, canonical)`.
    pub aliases: &'static [(&'static str, &'static str)],
    pub source: &'static str,
}

/// A GPU model.
#[derive(Debug)]
pub struct GpuModel {
    /// Catalog id used in documents (`h100-80gb-sxm`).
    pub id: &'static str,
    /// Marketing name.
    pub display: &'static str,
    /// Other names accepted for the model (product strings, short names).
    pub names: &'static [&'static str],
    pub memory_gb: u32,
    pub architecture: &'static str,
    pub mig: Option<MigModel>,
}

const S7: &[u32] = &[0, 1, 2, 3, 4, 5, 6];
const S4: &[u32] = &[0, 2, 4, 6];
const S3: &[u32] = &[0, 2, 4];
const S2: &[u32] = &[0, 4];
const S0: &[u32] = &[0];

/// The seven profiles of the 7-compute / 8-memory-slice family (A100, H100, H200, B200),
/// given the model's names for them, smallest first.
macro_rules! gpc7_mem8 {
    ($p1:literal, $p1me:literal, $p1x2:literal, $p2:literal, $p3:literal, $p4:literal, $p7:literal,
     [$g1:literal, $g1x2:literal, $g3:literal, $g7:literal]) => {
        &[
            MigProfile {
                name: $p1,
                gi_profile_id: 19,
                compute_slices: 1,
                memory_slices: 1,
                memory_gb: $g1,
                max_count: 7,
                starts: S7,
            },
            MigProfile {
                name: $p1me,
                gi_profile_id: 20,
                compute_slices: 1,
                memory_slices: 1,
                memory_gb: $g1,
                max_count: 1,
                starts: S7,
            },
            MigProfile {
                name: $p1x2,
                gi_profile_id: 15,
                compute_slices: 1,
                memory_slices: 2,
                memory_gb: $g1x2,
                max_count: 4,
                starts: S4,
            },
            MigProfile {
                name: $p2,
                gi_profile_id: 14,
                compute_slices: 2,
                memory_slices: 2,
                memory_gb: $g1x2,
                max_count: 3,
                starts: S3,
            },
            MigProfile {
                name: $p3,
                gi_profile_id: 9,
                compute_slices: 3,
                memory_slices: 4,
                memory_gb: $g3,
                max_count: 2,
                starts: S2,
            },
            MigProfile {
                name: $p4,
                gi_profile_id: 5,
                compute_slices: 4,
                memory_slices: 4,
                memory_gb: $g3,
                max_count: 1,
                starts: S0,
            },
            MigProfile {
                name: $p7,
                gi_profile_id: 0,
                compute_slices: 7,
                memory_slices: 8,
                memory_gb: $g7,
                max_count: 1,
                starts: S0,
            },
        ]
    };
}

const H100_80_PROFILES: &[MigProfile] = gpc7_mem8!(
    "1g.10gb",
    "1g.10gb+me",
    "1g.20gb",
    "2g.20gb",
    "3g.40gb",
    "4g.40gb",
    "7g.80gb",
    [10, 20, 40, 80]
);
const A100_80_ALIASES: &[(&str, &str)] = &[("7g.79gb", "7g.80gb"), ("3g.39gb", "3g.40gb")];

const UG: &str = "NVIDIA MIG User Guide v580, Supported MIG Profiles";

#[path = "catalog_recent.rs"]
mod recent;
pub use recent::models;

/// The first catalog's models; [`models`] adds those of `catalog_recent.rs`.
static MODELS: &[GpuModel] = &[
    GpuModel {
        id: "h100-80gb-sxm",
        display: "NVIDIA H100 80GB HBM3 (SXM5)",
        names: &[
            "h100",
            "h100-sxm",
            "h100-sxm5-80gb",
            "nvidia-h100-80gb-hbm3",
            "h100-80gb",
            // The H800 shares the H100 80GB's MIG table.
            "h800",
            "h800-80gb",
            "h800-sxm5-80gb",
        ],
        memory_gb: 80,
        architecture: "Hopper",
        mig: Some(MigModel {
            compute_slices: 7,
            memory_slices: 8,
            profiles: H100_80_PROFILES,
            placement_status: PlacementStatus::Observed,
            aliases: A100_80_ALIASES,
            source: "NVIDIA MIG User Guide v580, Table 7; nvidia-smi mig -lgip/-lgipp on an H100 80GB HBM3 (driver 580.159.04, 2026-11-26, tests/inventory_gpu.rs)",
        }),
    },
    GpuModel {
        id: "h100-80gb-pcie",
        display: "NVIDIA H100 80GB PCIe",
        names: &[
            "h100-pcie",
            "h100-pcie-80gb",
            "nvidia-h100-pcie",
            "h800-pcie",
        ],
        memory_gb: 80,
        architecture: "Hopper",
        mig: Some(MigModel {
            compute_slices: 7,
            memory_slices: 8,
            profiles: H100_80_PROFILES,
            placement_status: PlacementStatus::Observed,
            aliases: A100_80_ALIASES,
            source: "NVIDIA MIG User Guide v580, Table 7 (H100 SXM5 and PCIe share profiles)",
        }),
    },
    GpuModel {
        id: "h100-94gb-nvl",
        display: "NVIDIA H100 NVL 94GB",
        names: &["h100-nvl", "h100-94gb", "nvidia-h100-nvl", "h800-nvl"],
        memory_gb: 94,
        architecture: "Hopper",
        mig: Some(MigModel {
            compute_slices: 7,
            memory_slices: 8,
            profiles: gpc7_mem8!(
                "1g.12gb",
                "1g.12gb+me",
                "1g.24gb",
                "2g.24gb",
                "3g.47gb",
                "4g.47gb",
                "7g.94gb",
                [12, 24, 47, 94]
            ),
            placement_status: PlacementStatus::Observed,
            aliases: &[],
            source: "nvidia-smi mig -lgip/-lgipp capture on H100 NVL (driver 560.35.03); GPU Operator default-mig-parted-config",
        }),
    },
    GpuModel {
        id: "h200-141gb",
        display: "NVIDIA H200 141GB",
        names: &["h200", "h200-sxm", "h200-nvl", "nvidia-h200"],
        memory_gb: 141,
        architecture: "Hopper",
        mig: Some(MigModel {
            compute_slices: 7,
            memory_slices: 8,
            profiles: gpc7_mem8!(
                "1g.18gb",
                "1g.18gb+me",
                "1g.35gb",
                "2g.35gb",
                "3g.71gb",
                "4g.71gb",
                "7g.141gb",
                [18, 35, 71, 141]
            ),
            placement_status: PlacementStatus::Observed,
            aliases: &[],
            source: "NVIDIA MIG User Guide v580, Table 8; nvidia-smi mig -lgip/-lgipp on an H200 (driver 580.159.04, 2026-11-26, tests/inventory_gpu.rs)",
        }),
    },
    GpuModel {
        id: "b200-180gb",
        display: "NVIDIA B200 180GB",
        names: &["b200", "nvidia-b200"],
        memory_gb: 180,
        architecture: "Blackwell",
        mig: Some(MigModel {
            compute_slices: 7,
            memory_slices: 8,
            profiles: gpc7_mem8!(
                "1g.23gb",
                "1g.23gb+me",
                "1g.45gb",
                "2g.45gb",
                "3g.90gb",
                "4g.90gb",
                "7g.180gb",
                [23, 45, 90, 180]
            ),
            placement_status: PlacementStatus::Inferred,
            aliases: &[],
            source: "NVIDIA MIG User Guide v580, Table 9; placements inferred from the A100/H100 family (no -lgipp capture)",
        }),
    },
    GpuModel {
        id: "gb200-186gb",
        display: "NVIDIA GB200 186GB",
        names: &["gb200", "nvidia-gb200"],
        memory_gb: 186,
        architecture: "Blackwell",
        mig: Some(MigModel {
            compute_slices: 7,
            memory_slices: 8,
            profiles: gpc7_mem8!(
                "1g.23gb",
                "1g.23gb+me",
                "1g.47gb",
                "2g.47gb",
                "3g.93gb",
                "4g.93gb",
                "7g.186gb",
                [23, 47, 93, 186]
            ),
            placement_status: PlacementStatus::Inferred,
            aliases: &[
                ("1g.24gb", "1g.23gb"),
                ("1g.24gb+me", "1g.23gb+me"),
                ("3g.95gb", "3g.93gb"),
                ("4g.95gb", "4g.93gb"),
                ("7g.189gb", "7g.186gb"),
            ],
            source: "GPU Operator default-mig-parted-config (commit a05d0ed35) and mig-parted issue #227; no NVIDIA table",
        }),
    },
    GpuModel {
        id: "a100-40gb",
        display: "NVIDIA A100 40GB",
        // The A800 40GB shares the A100 40GB's MIG table
        // (`../shared/reference/mig-profiles.yaml`, `products`).
        names: &[
            "a100-sxm4-40gb",
            "a100-pcie-40gb",
            "nvidia-a100-40gb",
            "a800-40gb",
            "a800-pcie-40gb",
        ],
        memory_gb: 40,
        architecture: "Ampere",
        mig: Some(MigModel {
            compute_slices: 7,
            memory_slices: 8,
            profiles: &[
                MigProfile {
                    name: "1g.5gb",
                    gi_profile_id: 19,
                    compute_slices: 1,
                    memory_slices: 1,
                    memory_gb: 5,
                    max_count: 7,
                    starts: S7,
                },
                MigProfile {
                    name: "1g.5gb+me",
                    gi_profile_id: 20,
                    compute_slices: 1,
                    memory_slices: 1,
                    memory_gb: 5,
                    max_count: 1,
                    starts: S7,
                },
                MigProfile {
                    name: "1g.10gb",
                    gi_profile_id: 15,
                    compute_slices: 1,
                    memory_slices: 2,
                    memory_gb: 10,
                    max_count: 4,
                    starts: S4,
                },
                MigProfile {
                    name: "2g.10gb",
                    gi_profile_id: 14,
                    compute_slices: 2,
                    memory_slices: 2,
                    memory_gb: 10,
                    max_count: 3,
                    starts: S3,
                },
                MigProfile {
                    name: "3g.20gb",
                    gi_profile_id: 9,
                    compute_slices: 3,
                    memory_slices: 4,
                    memory_gb: 20,
                    max_count: 2,
                    starts: S2,
                },
                MigProfile {
                    name: "4g.20gb",
                    gi_profile_id: 5,
                    compute_slices: 4,
                    memory_slices: 4,
                    memory_gb: 20,
                    max_count: 1,
                    starts: S0,
                },
                MigProfile {
                    name: "7g.40gb",
                    gi_profile_id: 0,
                    compute_slices: 7,
                    memory_slices: 8,
                    memory_gb: 40,
                    max_count: 1,
                    starts: S0,
                },
            ],
            placement_status: PlacementStatus::Observed,
            aliases: &[],
            source: "NVIDIA MIG User Guide v580, Table 6; -lgipp example in the guide's Getting Started",
        }),
    },
    GpuModel {
        id: "a100-80gb",
        display: "NVIDIA A100 80GB",
        names: &[
            "a100",
            "a100-sxm4-80gb",
            "a100-pcie-80gb",
            "a100-80gb-pcie",
            "nvidia-a100-80gb",
            // The A800 80GB shares the A100 80GB's MIG table.
            "a800",
            "a800-80gb",
            "a800-sxm4-80gb",
            "a800-80gb-pcie",
        ],
        memory_gb: 80,
        architecture: "Ampere",
        mig: Some(MigModel {
            compute_slices: 7,
            memory_slices: 8,
            profiles: H100_80_PROFILES,
            placement_status: PlacementStatus::Inferred,
            aliases: A100_80_ALIASES,
            source: "NVIDIA MIG User Guide v580, A100 section (80GB names); placements inferred from the A100 40GB capture",
        }),
    },
    GpuModel {
        id: "a30-24gb",
        display: "NVIDIA A30 24GB",
        names: &["a30", "a30-pcie-24gb", "nvidia-a30"],
        memory_gb: 24,
        architecture: "Ampere",
        mig: Some(MigModel {
            compute_slices: 4,
            memory_slices: 4,
            profiles: &[
                MigProfile {
                    name: "1g.6gb",
                    gi_profile_id: 14,
                    compute_slices: 1,
                    memory_slices: 1,
                    memory_gb: 6,
                    max_count: 4,
                    starts: &[0, 1, 2, 3],
                },
                MigProfile {
                    name: "1g.6gb+me",
                    gi_profile_id: 21,
                    compute_slices: 1,
                    memory_slices: 1,
                    memory_gb: 6,
                    max_count: 1,
                    starts: &[0, 1, 2, 3],
                },
                MigProfile {
                    name: "2g.12gb",
                    gi_profile_id: 5,
                    compute_slices: 2,
                    memory_slices: 2,
                    memory_gb: 12,
                    max_count: 2,
                    starts: &[0, 2],
                },
                MigProfile {
                    name: "2g.12gb+me",
                    gi_profile_id: 6,
                    compute_slices: 2,
                    memory_slices: 2,
                    memory_gb: 12,
                    max_count: 1,
                    starts: &[0, 2],
                },
                MigProfile {
                    name: "4g.24gb",
                    gi_profile_id: 0,
                    compute_slices: 4,
                    memory_slices: 4,
                    memory_gb: 24,
                    max_count: 1,
                    starts: &[0],
                },
            ],
            placement_status: PlacementStatus::Observed,
            aliases: &[],
            source: "NVIDIA MIG User Guide v580, A30 MIG Profiles; two public -lgipp captures",
        }),
    },
    GpuModel {
        id: "l40s",
        display: "NVIDIA L40S 48GB",
        names: &["l40s-48gb", "nvidia-l40s"],
        memory_gb: 48,
        architecture: "Ada Lovelace",
        mig: None,
    },
    GpuModel {
        id: "l4",
        display: "NVIDIA L4 24GB",
        names: &["l4-24gb", "nvidia-l4"],
        memory_gb: 24,
        architecture: "Ada Lovelace",
        mig: None,
    },
    GpuModel {
        id: "a10g",
        display: "NVIDIA A10G 24GB",
        names: &["a10g-24gb", "nvidia-a10g"],
        memory_gb: 24,
        architecture: "Ampere",
        mig: None,
    },
    GpuModel {
        id: "a10-24gb",
        display: "NVIDIA A10 24GB",
        names: &["a10", "nvidia-a10"],
        memory_gb: 24,
        architecture: "Ampere",
        mig: None,
    },
    GpuModel {
        id: "a40-48gb",
        display: "NVIDIA A40 48GB",
        names: &["a40", "nvidia-a40"],
        memory_gb: 48,
        architecture: "Ampere",
        mig: None,
    },
    GpuModel {
        id: "l40-48gb",
        display: "NVIDIA L40 48GB",
        names: &["l40", "nvidia-l40"],
        memory_gb: 48,
        architecture: "Ada Lovelace",
        mig: None,
    },
    GpuModel {
        id: "v100-16gb",
        display: "NVIDIA V100 16GB",
        names: &["v100-sxm2-16gb", "v100-pcie-16gb", "tesla-v100-sxm2-16gb"],
        memory_gb: 16,
        architecture: "Volta",
        mig: None,
    },
    GpuModel {
        id: "v100-32gb",
        display: "NVIDIA V100 32GB",
        names: &[
            "v100-sxm2-32gb",
            "v100-pcie-32gb",
            "v100s-pcie-32gb",
            "v100s",
            "tesla-v100-sxm2-32gb",
        ],
        memory_gb: 32,
        architecture: "Volta",
        mig: None,
    },
    GpuModel {
        id: "t4",
        display: "NVIDIA T4 16GB",
        names: &["t4-16gb", "tesla-t4", "nvidia-t4"],
        memory_gb: 16,
        architecture: "Turing",
        mig: None,
    },
];

/// Source of the catalog as a whole.
pub const CATALOG_SOURCE: &str = UG;

/// Finds a model by id or any of its names, ignoring case and `_`/` ` vs `-`.
pub fn model(name: &str) -> Option<&'static GpuModel> {
    // The catalog id as written is the common case (no allocation).
    if let Some(m) = models().find(|m| m.id == name) {
        return Some(m);
    }
    let norm = normalize(name);
    let find = |n: &str| models().find(|m| m.id == n || m.names.contains(&n));
    // NVML's names as `nvidia-smi` prints them (`Tesla V100-PCIE-16GB`).
    find(&norm).or_else(|| {
        ["nvidia-", "tesla-"]
            .iter()
            .find_map(|p| norm.strip_prefix(p).and_then(find))
    })
}

/// A name in the form catalog ids take (lower case, `-` for spaces and `_`).
pub fn normalize(s: &str) -> String {
    s.trim().to_ascii_lowercase().replace(['_', ' '], "-")
}

/// Every model's catalog id (for suggestions).
pub fn all_names() -> impl Iterator<Item = &'static str> + Clone {
    models().map(|m| m.id)
}

#[cfg(test)]
#[path = "catalog_tests.rs"]
mod tests;
