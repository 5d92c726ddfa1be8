//! Tests of the built-in GPU catalog: the models it must cover, the names
//! it accepts, and profile facts that agree with each other.

use super::*;

#[test]
fn covers_the_required_models() {
    for id in [
        "h100-80gb-sxm",
        "h100-80gb-pcie",
        "h100-94gb-nvl",
        "h200-141gb",
        "b200-180gb",
        "a100-40gb",
        "a100-80gb",
        "a30-24gb",
        "l40s",
        "l4",
        "a10g",
        "t4",
        "a10-24gb",
        "a40-48gb",
        "l40-48gb",
        "v100-16gb",
        "v100-32gb",
    ] {
        assert!(model(id).is_some(), "{id} missing");
    }
    assert_eq!(model("NVIDIA_H200").unwrap().id, "h200-141gb");
    assert_eq!(model("A100").unwrap().id, "a100-80gb");
    assert!(model("l4").unwrap().mig.is_none());
}

#[test]
fn profile_facts_are_consistent() {
    for m in models() {
        let Some(mig) = &m.mig else { continue };
        for p in mig.profiles {
            assert!(
                p.compute_slices <= mig.compute_slices,
                "{} {}",
                m.id,
                p.name
            );
            for s in p.starts {
                assert!(
                    s + p.memory_slices <= mig.memory_slices,
                    "{} {}",
                    m.id,
                    p.name
                );
            }
            let g: u32 = p.name.split('g').next().unwrap().parse().unwrap();
            assert_eq!(g, p.compute_slices, "{} {}", m.id, p.name);
            let gb: u32 = p
                .name
                .split('.')
                .nth(1)
                .unwrap()
                .trim_end_matches(|c: char| !c.is_ascii_digit())
                .split("gb")
                .next()
                .unwrap()
                .parse()
                .unwrap_or(0);
            assert_eq!(gb, p.memory_gb, "{} {}", m.id, p.name);
        }
    }
}

#[test]
fn names_of_the_same_silicon_share_a_model() {
    // The A800 and H800 are sold under other names with the MIG tables of
    // the A100 and H100 (`products` in the reference's mig-profiles.yaml).
    for (name, id) in [
        ("A800-SXM4-80GB", "a100-80gb"),
        ("a800_80gb_pcie", "a100-80gb"),
        ("A800-40GB", "a100-40gb"),
        ("H800", "h100-80gb-sxm"),
        ("H800 NVL", "h100-94gb-nvl"),
        ("H800 PCIe", "h100-80gb-pcie"),
        // As nvidia-smi names them.
        ("NVIDIA A100-SXM4-80GB", "a100-80gb"),
        ("NVIDIA A100 80GB PCIe", "a100-80gb"),
        ("Tesla V100-PCIE-32GB", "v100-32gb"),
        ("NVIDIA A800-SXM4-80GB", "a100-80gb"),
        ("NVIDIA H800", "h100-80gb-sxm"),
        ("V100-SXM2-32GB", "v100-32gb"),
        ("V100-PCIE-16GB", "v100-16gb"),
        ("A10", "a10-24gb"),
        ("A10G", "a10g"),
        ("L40", "l40-48gb"),
        ("L40S", "l40s"),
    ] {
        assert_eq!(model(name).map(|m| m.id), Some(id), "{name}");
    }
    // A bare `v100` is ambiguous (16 or 32 GB): it names no model.
    assert!(model("v100").is_none());
    assert!(model("a100-80gb").unwrap().mig.is_some());
    assert!(model("v100-32gb").unwrap().mig.is_none());
}
