//! Tests of the models added after the first catalog: their numbers as the
//! sources give them, the names `nvidia-smi` and GPU Feature Discovery print,
//! and layouts that fit or do not on each.

use super::MODELS as RECENT;
use crate::gpu::catalog::{self, GpuModel, MigModel, MigProfile, PlacementStatus, model, models};
use crate::gpu::inventory::model_of;
use crate::gpu::mig::{FitError, place, resolve, resource_name};
use crate::gpu::resources::{self, ResourceName};
use crate::model::MigStrategy;

fn mig(id: &str) -> &'static MigModel {
    model(id).unwrap().mig.as_ref().unwrap()
}

fn profile(id: &str, name: &str) -> &'static MigProfile {
    mig(id).profiles.iter().find(|p| p.name == name).unwrap()
}

fn layout(m: &'static MigModel, spec: &[(&str, u32)]) -> Vec<(&'static MigProfile, u32)> {
    spec.iter()
        .map(|(n, c)| (resolve(m, n).unwrap().profile, *c))
        .collect()
}

/// (name, GI profile id, compute slices, memory slices, GB, most instances, starts).
type Row = (&'static str, u32, u32, u32, u32, u32, &'static [u32]);

fn table(id: &str) -> Vec<Row> {
    mig(id)
        .profiles
        .iter()
        .map(|p| {
            (
                p.name,
                p.gi_profile_id,
                p.compute_slices,
                p.memory_slices,
                p.memory_gb,
                p.max_count,
                p.starts,
            )
        })
        .collect()
}

const S7: &[u32] = &[0, 1, 2, 3, 4, 5, 6];

/// The seven profiles of an 8-memory-slice model, given its names and GB.
fn family(names: [&'static str; 7], gb: [u32; 4]) -> Vec<Row> {
    let [g1, g1x2, g3, g7] = gb;
    vec![
        (names[0], 19, 1, 1, g1, 7, S7),
        (names[1], 20, 1, 1, g1, 1, S7),
        (names[2], 15, 1, 2, g1x2, 4, &[0, 2, 4, 6]),
        (names[3], 14, 2, 2, g1x2, 3, &[0, 2, 4]),
        (names[4], 9, 3, 4, g3, 2, &[0, 4]),
        (names[5], 5, 4, 4, g3, 1, &[0]),
        (names[6], 0, 7, 8, g7, 1, &[0]),
    ]
}

#[test]
fn the_new_models_are_in_the_catalog() {
    let ids: Vec<&str> = RECENT.iter().map(|m| m.id).collect();
    assert_eq!(
        ids,
        [
            "gh200-96gb",
            "h20-96gb",
            "gh200-144gb",
            "b300-269gb",
            "gb300-278gb",
            "rtx-pro-6000-96gb"
        ]
    );
    for id in ids {
        assert_eq!(model(id).map(|m| m.id), Some(id));
        assert!(catalog::all_names().any(|n| n == id), "{id}");
        assert!(model(id).unwrap().mig.is_some(), "{id}");
    }
    // Listed after the first catalog, which keeps its order.
    assert_eq!(models().next().unwrap().id, "h100-80gb-sxm");
    assert_eq!(models().last().unwrap().id, "rtx-pro-6000-96gb");
}

/// No id or name names two models, across the first catalog and the new one.
#[test]
fn every_name_names_one_model() {
    let all: Vec<&GpuModel> = models().collect();
    for m in &all {
        for n in std::iter::once(&m.id).chain(m.names) {
            let owners: Vec<&str> = all
                .iter()
                .filter(|o| o.id == *n || o.names.contains(n))
                .map(|o| o.id)
                .collect();
            assert_eq!(owners, [m.id], "`{n}`");
        }
    }
}

#[test]
fn gh200_96gb_and_h20_have_the_h100_96gb_table() {
    let names = [
        "1g.12gb",
        "1g.12gb+me",
        "1g.24gb",
        "2g.24gb",
        "3g.48gb",
        "4g.48gb",
        "7g.96gb",
    ];
    for id in ["gh200-96gb", "h20-96gb"] {
        assert_eq!(table(id), family(names, [12, 24, 48, 96]), "{id}");
        assert_eq!(model(id).unwrap().memory_gb, 96);
        assert_eq!(model(id).unwrap().architecture, "Hopper");
    }
    let p = profile("gh200-96gb", "1g.12gb");
    assert_eq!((p.gi_profile_id, p.max_count), (19, 7));
    // Placements were not captured on either: inferred, and said so.
    assert_eq!(
        mig("gh200-96gb").placement_status,
        PlacementStatus::Inferred
    );
    assert_eq!(mig("h20-96gb").placement_status, PlacementStatus::Inferred);
    assert!(mig("h20-96gb").source.contains("inferred"));
}

#[test]
fn gh200_144gb_b300_and_gb300_tables() {
    assert_eq!(
        table("gh200-144gb"),
        family(
            [
                "1g.18gb",
                "1g.18gb+me",
                "1g.36gb",
                "2g.36gb",
                "3g.72gb",
                "4g.72gb",
                "7g.144gb"
            ],
            [18, 36, 72, 144]
        )
    );
    assert_eq!(
        table("b300-269gb"),
        family(
            [
                "1g.34gb",
                "1g.34gb+me",
                "1g.67gb",
                "2g.67gb",
                "3g.135gb",
                "4g.135gb",
                "7g.269gb"
            ],
            [34, 67, 135, 269]
        )
    );
    assert_eq!(
        table("gb300-278gb"),
        family(
            [
                "1g.35gb",
                "1g.35gb+me",
                "1g.70gb",
                "2g.70gb",
                "3g.139gb",
                "4g.139gb",
                "7g.278gb"
            ],
            [35, 70, 139, 278]
        )
    );
    // On the GB300 `1g.35gb` is the one-slice profile; on the H200 the same
    // name is the two-slice one: profiles are per model.
    assert_eq!(profile("gb300-278gb", "1g.35gb").memory_slices, 1);
    assert_eq!(profile("h200-141gb", "1g.35gb").memory_slices, 2);
    for id in ["gh200-144gb", "b300-269gb", "gb300-278gb"] {
        assert_eq!(mig(id).placement_status, PlacementStatus::Inferred, "{id}");
    }
    assert_eq!(model("b300").unwrap().architecture, "Blackwell");
}

#[test]
fn rtx_pro_6000_has_four_slices_on_a_twelve_unit_axis() {
    let q4: &[u32] = &[0, 3, 6, 9];
    let q2: &[u32] = &[0, 6];
    let whole: &[u32] = &[0];
    let expected: Vec<Row> = vec![
        ("1g.24gb", 14, 1, 3, 24, 4, q4),
        ("1g.24gb+me", 21, 1, 3, 24, 1, q4),
        ("1g.24gb+gfx", 47, 1, 3, 24, 4, q4),
        ("1g.24gb+me.all", 65, 1, 3, 24, 1, q4),
        ("1g.24gb-me", 67, 1, 3, 24, 4, q4),
        ("2g.48gb", 5, 2, 6, 48, 2, q2),
        ("2g.48gb+gfx", 35, 2, 6, 48, 2, q2),
        ("2g.48gb+me.all", 64, 2, 6, 48, 1, q2),
        ("2g.48gb-me", 66, 2, 6, 48, 2, q2),
        ("4g.96gb", 0, 4, 12, 96, 1, whole),
        ("4g.96gb+gfx", 32, 4, 12, 96, 1, whole),
    ];
    assert_eq!(table("rtx-pro-6000-96gb"), expected);
    let m = mig("rtx-pro-6000-96gb");
    assert_eq!((m.compute_slices, m.memory_slices), (4, 12));
    assert_eq!(m.placement_status, PlacementStatus::Observed);
    assert!(profile("rtx-pro-6000-96gb", "1g.24gb-me").has_attributes());
}

#[test]
fn nvml_and_feature_discovery_names_find_the_models() {
    for (name, id) in [
        // NVML product names (NVIDIA/open-gpu-kernel-modules README).
        ("NVIDIA GH200 480GB", "gh200-96gb"),
        ("NVIDIA GH200 120GB", "gh200-96gb"),
        ("NVIDIA GH200 144G HBM3e", "gh200-144gb"),
        ("NVIDIA H20", "h20-96gb"),
        ("NVIDIA B300 SXM6 AC", "b300-269gb"),
        ("NVIDIA GB300", "gb300-278gb"),
        (
            "NVIDIA RTX PRO 6000 Blackwell Server Edition",
            "rtx-pro-6000-96gb",
        ),
        (
            "NVIDIA RTX PRO 6000 Blackwell Workstation Edition",
            "rtx-pro-6000-96gb",
        ),
        (
            "NVIDIA RTX PRO 6000 Blackwell Max-Q Workstation Edition",
            "rtx-pro-6000-96gb",
        ),
        // GPU Feature Discovery's `nvidia.com/gpu.product`.
        ("NVIDIA-B300-SXM6-AC", "b300-269gb"),
        (
            "NVIDIA-RTX-PRO-6000-Blackwell-Server-Edition",
            "rtx-pro-6000-96gb",
        ),
        // Short names.
        ("GH200", "gh200-96gb"),
        ("H20", "h20-96gb"),
        ("B300", "b300-269gb"),
        ("GB300", "gb300-278gb"),
        ("RTX PRO 6000", "rtx-pro-6000-96gb"),
    ] {
        assert_eq!(model(name).map(|m| m.id), Some(id), "{name}");
        assert_eq!(model_of(name).map(|m| m.id), Some(id), "{name}");
    }
    // Dropping trailing words must not fall back to another model's table:
    // the 144GB GH200 is not the 96GB one, an H100 96GB is not an H100 80GB.
    assert_eq!(
        model_of("NVIDIA GH200 144G HBM3e").map(|m| m.id),
        Some("gh200-144gb")
    );
    assert_eq!(
        model_of("NVIDIA H100 96GB HBM3").map(|m| m.id),
        Some("gh200-96gb")
    );
    // The H200 is not the H20.
    assert_eq!(model("NVIDIA H200").unwrap().id, "h200-141gb");
}

#[test]
fn layouts_on_gh200_and_h20() {
    for id in ["gh200-96gb", "h20-96gb"] {
        let m = mig(id);
        for spec in [
            vec![("1g.12gb", 7)],
            vec![("3g.48gb", 1), ("2g.24gb", 1), ("1g.12gb", 2)],
            vec![("4g.48gb", 1), ("3g.48gb", 1)],
            vec![("1g.24gb", 4)],
        ] {
            assert!(place(m, &layout(m, &spec)).is_ok(), "{id} {spec:?}");
        }
        assert_eq!(
            place(m, &layout(m, &[("3g.48gb", 2), ("1g.12gb", 1)])),
            Err(FitError::Memory { used: 9, total: 8 })
        );
        // An H100 80GB profile is not an H20 one.
        assert!(resolve(m, "1g.10gb").is_err());
    }
}

#[test]
fn layouts_on_b300_and_gb300() {
    let b300 = mig("b300-269gb");
    assert!(place(b300, &layout(b300, &[("7g.269gb", 1)])).is_ok());
    assert!(place(b300, &layout(b300, &[("3g.135gb", 2)])).is_ok());
    assert!(place(b300, &layout(b300, &[("1g.34gb+me", 1), ("1g.34gb", 6)])).is_ok());
    assert_eq!(
        place(b300, &layout(b300, &[("7g.269gb", 2)])),
        Err(FitError::TooMany {
            profile: "7g.269gb",
            count: 2,
            max: 1
        })
    );
    assert_eq!(
        place(
            b300,
            &layout(b300, &[("4g.135gb", 1), ("3g.135gb", 1), ("1g.34gb", 1)])
        ),
        Err(FitError::Compute { used: 8, total: 7 })
    );
    // The GB300's name of a profile on a B300 is read with a note (4%).
    let r = resolve(b300, "1g.35gb").unwrap();
    assert_eq!((r.profile.name, r.alias), ("1g.34gb", true));
    let gb300 = mig("gb300-278gb");
    assert!(place(gb300, &layout(gb300, &[("1g.35gb", 7)])).is_ok());
    assert_eq!(
        place(gb300, &layout(gb300, &[("1g.70gb", 4), ("1g.35gb", 1)])),
        Err(FitError::Memory { used: 9, total: 8 })
    );
}

#[test]
fn layouts_on_rtx_pro_6000() {
    let m = mig("rtx-pro-6000-96gb");
    let fits = |spec: &[(&str, u32)]| place(m, &layout(m, spec));
    let placed = fits(&[("1g.24gb", 4)]).unwrap();
    assert_eq!(
        placed.iter().map(|p| p.start).collect::<Vec<_>>(),
        [0, 3, 6, 9]
    );
    for spec in [
        vec![("2g.48gb", 1), ("1g.24gb", 2)],
        vec![("2g.48gb+gfx", 1), ("1g.24gb+gfx", 1), ("1g.24gb+me", 1)],
        vec![("2g.48gb", 2)],
        vec![("4g.96gb+gfx", 1)],
        vec![("1g.24gb+me.all", 1), ("1g.24gb-me", 3)],
        vec![("2g.48gb+me.all", 1), ("2g.48gb-me", 1)],
    ] {
        assert!(fits(&spec).is_ok(), "{spec:?}");
    }
    assert_eq!(
        fits(&[("2g.48gb", 1), ("1g.24gb", 3)]),
        Err(FitError::Compute { used: 5, total: 4 })
    );
    assert_eq!(
        fits(&[("1g.24gb+me", 2)]),
        Err(FitError::TooMany {
            profile: "1g.24gb+me",
            count: 2,
            max: 1
        })
    );
    // `+me.all` takes every media engine: only `-me` instances can share.
    assert_eq!(
        fits(&[("1g.24gb+me.all", 1), ("1g.24gb", 1)]),
        Err(FitError::MediaEngines {
            all: "1g.24gb+me.all",
            other: "1g.24gb"
        })
    );
    assert!(matches!(
        fits(&[("2g.48gb+me.all", 1), ("1g.24gb+me", 1)]),
        Err(FitError::MediaEngines { .. })
    ));
}

#[test]
fn rtx_pro_6000_names_and_resources() {
    let m = mig("rtx-pro-6000-96gb");
    // `-me` is an attribute like `+me`: a driver's rounding of the GB
    // resolves to the profile with the same attribute, not to two profiles.
    let r = resolve(m, "1g.23gb-me").unwrap();
    assert_eq!((r.profile.name, r.alias), ("1g.24gb-me", true));
    assert_eq!(resolve(m, "1g.23gb").unwrap().profile.name, "1g.24gb");
    assert_eq!(resolve(m, "2g.48gb+gfx").unwrap().profile.gi_profile_id, 35);
    assert_eq!(resource_name("1g.24gb+gfx"), "nvidia.com/mig-1g.24gb.gfx");
    assert_eq!(
        resource_name("1g.24gb+me.all"),
        "nvidia.com/mig-1g.24gb.me.all"
    );
    assert_eq!(resource_name("2g.48gb-me"), "nvidia.com/mig-2g.48gb-me");
    for (resource, profile) in [
        ("nvidia.com/mig-1g.24gb.gfx", "1g.24gb+gfx"),
        ("nvidia.com/mig-1g.24gb.me.all", "1g.24gb+me.all"),
        ("nvidia.com/mig-2g.48gb-me", "2g.48gb-me"),
    ] {
        assert_eq!(
            resources::parse(resource),
            Ok(ResourceName::Mig(profile.into()))
        );
        assert!(resolve(m, profile).is_ok(), "{profile}");
    }
}

#[test]
fn pools_of_the_new_models_provide_mig_resources() {
    let provided = |model: &str, layout: &str| -> Vec<(String, u32, f64)> {
        let pool = format!(
            "    - name: p\n      gpuModel: {model}\n      gpusPerNode: 4\n      nodes: 2\n      mig: {{layout: {layout}}}\n"
        );
        let pool = crate::gpu::inventory::tests::pool(&pool).1;
        resources::provided(&pool, MigStrategy::Mixed)
            .into_iter()
            .map(|p| (p.resource, p.per_gpu, p.gpu_equivalent))
            .collect()
    };
    assert_eq!(
        provided("gh200-96gb", "{1g.12gb: 7}"),
        [("nvidia.com/mig-1g.12gb".to_string(), 7, 1.0 / 7.0)]
    );
    assert_eq!(
        provided("B300", "{3g.135gb: 2}"),
        [("nvidia.com/mig-3g.135gb".to_string(), 2, 0.5)]
    );
    // Four compute slices: a 1g instance is a quarter of an RTX PRO 6000.
    assert_eq!(
        provided("rtx-pro-6000-96gb", "{2g.48gb: 1, 1g.24gb+gfx: 2}"),
        [
            ("nvidia.com/mig-1g.24gb.gfx".to_string(), 2, 0.25),
            ("nvidia.com/mig-2g.48gb".to_string(), 1, 0.5),
        ]
    );
}
