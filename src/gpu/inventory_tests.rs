//! The comparison of a node with its pool, on inventories built in memory.

use super::*;
use crate::load::{Content, Input};

/// A cluster `c` of one pool (written as YAML list items), validated.
pub(crate) fn pool(yaml_pool: &str) -> (Repo, NodePool) {
    let cluster = format!(
        "apiVersion: capops.dev/v1alpha1\nkind: Cluster\nmetadata: {{name: c}}\nspec:\n  environment: research\n  provider: onprem\n  nodePools:\n{yaml_pool}"
    );
    let inputs = vec![
        Input {
            path: "capops.yaml".into(),
            content: Content::Bytes(
                b"apiVersion: capops.dev/v1alpha1\nkind: Config\nmetadata: {name: t}\nspec: {}\n"
                    .to_vec(),
            ),
        },
        Input {
            path: "c.yaml".into(),
            content: Content::Bytes(cluster.into_bytes()),
        },
    ];
    let out = crate::validate::validate(crate::load::load(inputs, None));
    assert!(out.is_valid(), "{:#?}", out.diagnostics);
    let p = out.repo.clusters["c"].spec.node_pools[0].clone();
    (out.repo, p)
}

const MIG_POOL: &str = "    - name: h100-mig\n      gpuModel: h100-80gb-sxm\n      gpusPerNode: 2\n      nodes: 1\n      nodeLabels: {example.com/pool: h100-mig, example.com/zone: a}\n      mig: {layout: {3g.40gb: 1, 2g.20gb: 1, 1g.10gb: 2}}\n";
const WHOLE_POOL: &str =
    "    - name: a100\n      gpuModel: a100-80gb\n      gpusPerNode: 2\n      nodes: 1\n";

fn dev(index: u32, gi_profile_id: Option<u32>, name: Option<&str>) -> MigDevice {
    MigDevice {
        index,
        uuid: format!("MIG-{index}"),
        name: name.map(String::from),
        gi_profile_id,
        placement: None,
        memory_mib: None,
    }
}

fn h100(index: u32, mig: Option<MigMode>, devices: Vec<MigDevice>) -> Gpu {
    Gpu {
        index,
        name: "NVIDIA H100 80GB HBM3".into(),
        uuid: format!("GPU-{index}"),
        memory_mib: Some(81559),
        mig,
        mig_devices: devices,
    }
}

const ON: Option<MigMode> = Some(MigMode {
    current: true,
    pending: true,
});

/// 3g.40gb (id 9), 2g.20gb (14), two 1g.10gb (19).
fn declared_layout() -> Vec<MigDevice> {
    vec![
        dev(0, Some(9), None),
        dev(1, Some(14), None),
        dev(2, Some(19), None),
        dev(3, Some(19), None),
    ]
}

#[test]
fn a_node_as_declared_matches() {
    let (_, p) = pool(MIG_POOL);
    let inv = NodeInventory {
        driver_version: Some("550.54.15".into()),
        gpus: vec![
            h100(0, ON, declared_layout()),
            h100(1, ON, declared_layout()),
        ],
    };
    let c = compare(&inv, "c", &p);
    assert!(c.matches, "{:#?}", c.findings);
    assert!(c.findings.is_empty());
}

#[test]
fn count_model_mode_and_layout_differences_are_mismatches() {
    let (_, p) = pool(MIG_POOL);
    let seven: Vec<MigDevice> = (0..7).map(|i| dev(i, Some(19), None)).collect();
    let inv = NodeInventory {
        driver_version: None,
        gpus: vec![
            h100(0, ON, seven),
            h100(
                1,
                Some(MigMode {
                    current: false,
                    pending: true,
                }),
                vec![],
            ),
            Gpu {
                name: "NVIDIA A100-SXM4-80GB".into(),
                ..h100(2, None, vec![])
            },
        ],
    };
    let c = compare(&inv, "c", &p);
    assert!(!c.matches);
    let codes: Vec<(&str, Option<u32>, bool)> = c
        .findings
        .iter()
        .map(|f| (f.code, f.gpu, f.mismatch))
        .collect();
    assert_eq!(
        codes,
        vec![
            ("gpu-count", None, true),
            ("mig-layout", Some(0), true),
            ("mig-mode", Some(1), true),
            ("mig-mode-pending", Some(1), false),
            ("gpu-model", Some(2), true),
            ("mig-mode", Some(2), true),
        ]
    );
    assert_eq!(
        c.findings[1].message,
        "GPU 0 has {1g.10gb: 7}, the pool declares {1g.10gb: 2, 2g.20gb: 1, 3g.40gb: 1}"
    );
    assert_eq!(
        c.findings[0].message,
        "the node has 3 GPUs, the pool declares 2 per node"
    );
    assert!(
        c.findings[4].message.contains("a100-80gb"),
        "{}",
        c.findings[4].message
    );
}

#[test]
fn profiles_are_found_by_id_or_by_the_name_nvml_gives() {
    let model = catalog::model("h100-80gb-sxm");
    assert_eq!(
        profile_of(&dev(0, Some(5), None), model).unwrap().name,
        "4g.40gb"
    );
    let named = dev(0, None, Some("NVIDIA H100 80GB HBM3 MIG 1g.10gb"));
    assert_eq!(profile_of(&named, model).unwrap().name, "1g.10gb");
    // An id the catalog does not know falls back to the name, then to nothing.
    assert_eq!(
        profile_of(&dev(0, Some(99), Some("MIG 7g.80gb")), model)
            .unwrap()
            .name,
        "7g.80gb"
    );
    assert!(profile_of(&dev(0, Some(99), None), model).is_none());
}

#[test]
fn nvml_product_names_map_to_catalog_models() {
    for (name, id) in [
        ("NVIDIA H100 80GB HBM3", "h100-80gb-sxm"),
        ("NVIDIA A100-SXM4-80GB", "a100-80gb"),
        ("NVIDIA A100-SXM4-40GB", "a100-40gb"),
        ("NVIDIA L4", "l4"),
        ("Tesla T4", "t4"),
        ("NVIDIA H200", "h200-141gb"),
        ("Tesla V100-SXM2-32GB", "v100-32gb"),
        ("Tesla V100-PCIE-16GB", "v100-16gb"),
        ("Tesla V100S-PCIE-32GB", "v100-32gb"),
        ("NVIDIA A10", "a10-24gb"),
        ("NVIDIA A10G", "a10g"),
        ("NVIDIA A40", "a40-48gb"),
        ("NVIDIA L40", "l40-48gb"),
        ("NVIDIA A800-SXM4-80GB", "a100-80gb"),
        ("NVIDIA H800", "h100-80gb-sxm"),
    ] {
        assert_eq!(model_of(name).map(|m| m.id), Some(id), "{name}");
    }
    assert!(model_of("Quadro RTX 4000").is_none());
    // Only memory and form-factor words are dropped: the 141 GB H20-3e is
    // another product, not the 96 GB H20 the catalog knows.
    assert_eq!(model_of("NVIDIA H20").map(|m| m.id), Some("h20-96gb"));
    assert!(model_of("NVIDIA H20-3e").is_none());
}

#[test]
fn whole_gpu_pools_want_mig_off_and_labels_pick_the_pool() {
    let (_, p) = pool(WHOLE_POOL);
    let a100 = |i| Gpu {
        name: "NVIDIA A100-SXM4-80GB".into(),
        ..h100(
            i,
            Some(MigMode {
                current: false,
                pending: false,
            }),
            vec![],
        )
    };
    let inv = NodeInventory {
        driver_version: None,
        gpus: vec![a100(0), a100(1)],
    };
    assert!(compare(&inv, "c", &p).matches);

    let (repo, _) = pool(MIG_POOL);
    let labels: BTreeMap<String, String> = [
        ("example.com/pool", "h100-mig"),
        ("example.com/zone", "a"),
        ("kubernetes.io/hostname", "n1"),
    ]
    .iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect();
    assert_eq!(
        pools_with_labels(&repo, &labels, None),
        vec![("c".to_string(), "h100-mig".to_string())]
    );
    let partial: BTreeMap<String, String> =
        [("example.com/pool".to_string(), "h100-mig".to_string())].into();
    assert!(pools_with_labels(&repo, &partial, None).is_empty());
}
