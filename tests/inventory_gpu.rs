//! `capops inventory` on a real GPU node, against the real NVIDIA driver:
//! what capops reads through NVML must be what `nvidia-smi` (the driver's own
//! tool) reports, and a pool declared as the node is must match while one
//! that differs must not.
//!
//! Opt-in: it needs a machine with an NVIDIA GPU, its driver and `nvidia-smi`
//! (`cargo test --test inventory_gpu -- --ignored --nocapture`). It prints
//! the outputs it compared, for docs/inventory.md's "Real hardware" section.
//! MIG settings are only read, never changed.

mod common;

use common::run;
use serde_json::Value;
use std::collections::BTreeMap;
use std::process::Command;

/// One GPU as `nvidia-smi --query-gpu` reports it.
#[derive(Debug)]
struct SmiGpu {
    index: u64,
    name: String,
    uuid: String,
    memory_mib: u64,
    /// `Enabled`, `Disabled` or `[N/A]` (no MIG support).
    mig_current: String,
    mig_pending: String,
    driver: String,
}

fn nvidia_smi(args: &[&str]) -> String {
    let out = Command::new("nvidia-smi")
        .args(args)
        .output()
        .expect("nvidia-smi runs (this test needs an NVIDIA GPU node)");
    assert!(out.status.success(), "nvidia-smi {args:?}: {out:?}");
    String::from_utf8(out.stdout).unwrap()
}

fn smi_gpus() -> Vec<SmiGpu> {
    nvidia_smi(&[
        "--query-gpu=index,name,uuid,memory.total,mig.mode.current,mig.mode.pending,driver_version",
        "--format=csv,noheader,nounits",
    ])
    .lines()
    .filter(|l| !l.trim().is_empty())
    .map(|l| {
        let f: Vec<&str> = l.split(',').map(str::trim).collect();
        assert_eq!(f.len(), 7, "{l}");
        SmiGpu {
            index: f[0].parse().unwrap(),
            name: f[1].to_string(),
            uuid: f[2].to_string(),
            memory_mib: f[3].parse().unwrap(),
            mig_current: f[4].to_string(),
            mig_pending: f[5].to_string(),
            driver: f[6].to_string(),
        }
    })
    .collect()
}

/// MIG device UUIDs per GPU index, from `nvidia-smi -L`.
fn smi_mig_uuids() -> BTreeMap<u64, Vec<String>> {
    let mut by_gpu: BTreeMap<u64, Vec<String>> = BTreeMap::new();
    let mut gpu = None;
    for line in nvidia_smi(&["-L"]).lines() {
        if let Some(rest) = line.strip_prefix("GPU ") {
            gpu = rest.split(':').next().and_then(|i| i.trim().parse().ok());
        } else if line.trim_start().starts_with("MIG ")
            && let (Some(g), Some(i)) = (gpu, line.find("UUID: "))
        {
            let uuid = line[i + 6..].trim_end_matches(')').trim().to_string();
            by_gpu.entry(g).or_default().push(uuid);
        }
    }
    by_gpu
}

fn mig_of(smi: &str) -> Option<bool> {
    match smi {
        "Enabled" => Some(true),
        "Disabled" => Some(false),
        _ => None,
    }
}

/// A capacity repository with one on-prem pool of `gpus_per_node` GPUs of `model`.
fn repo_with_pool(model: &str, gpus_per_node: usize, mig: &str) -> tempfile::TempDir {
    common::repo_with_cluster(&format!(
        "apiVersion: capops.dev/v1alpha1\nkind: Cluster\nmetadata: {{name: node}}\n\
         spec:\n  environment: production\n  provider: onprem\n  nodePools:\n\
         \x20   - name: this\n      gpuModel: {model}\n      gpusPerNode: {gpus_per_node}\n\
         \x20     nodes: 1\n      nodeLabels: {{example.com/pool: this}}\n{mig}"
    ))
}

#[test]
#[ignore = "needs an NVIDIA GPU node (the driver and nvidia-smi)"]
fn nvml_inventory_is_what_nvidia_smi_reports_and_compares_with_a_pool() {
    let smi = smi_gpus();
    assert!(!smi.is_empty(), "nvidia-smi lists no GPU");
    let out = run(&["inventory", "--json"], &[]);
    println!("$ capops inventory --json\n{}", out.stdout);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let human = run(&["inventory"], &[]);
    println!("$ capops inventory\n{}", human.stdout);
    assert_eq!(human.code, 0, "{}", human.stderr);

    let v = &out.json;
    assert_eq!(v["driverVersion"], smi[0].driver.as_str());
    let gpus = v["gpus"].as_array().unwrap();
    assert_eq!(gpus.len(), smi.len());
    let migs = smi_mig_uuids();
    for (g, s) in gpus.iter().zip(&smi) {
        assert_eq!(g["index"].as_u64(), Some(s.index));
        assert_eq!(g["name"], s.name.as_str());
        assert_eq!(g["uuid"], s.uuid.as_str());
        assert_eq!(
            g["memoryMib"].as_u64(),
            Some(s.memory_mib),
            "GPU {}",
            s.index
        );
        match (mig_of(&s.mig_current), mig_of(&s.mig_pending)) {
            (Some(current), Some(pending)) => {
                assert_eq!(g["mig"]["current"], current, "GPU {}", s.index);
                assert_eq!(g["mig"]["pending"], pending, "GPU {}", s.index);
            }
            _ => assert_eq!(g["mig"], Value::Null, "GPU {}", s.index),
        }
        let uuids: Vec<&str> = g["migDevices"]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| d["uuid"].as_str().unwrap())
            .collect();
        let want: Vec<&str> = migs
            .get(&s.index)
            .map(|v| v.iter().map(String::as_str).collect())
            .unwrap_or_default();
        assert_eq!(uuids, want, "MIG devices of GPU {}", s.index);
        // Every MIG device's profile is known to the catalog.
        for p in g["migProfiles"].as_array().unwrap() {
            assert!(
                p.is_string(),
                "GPU {}: a MIG device of unknown profile",
                s.index
            );
        }
    }

    // A pool declared as the node is matches; one GPU more per node does not.
    let first = &gpus[0];
    let model = first["model"]
        .as_str()
        .unwrap_or_else(|| panic!("`{}` is not in the catalog", first["name"]));
    let mut layout: BTreeMap<&str, u64> = BTreeMap::new();
    for p in first["migProfiles"].as_array().unwrap() {
        *layout.entry(p.as_str().unwrap()).or_default() += 1;
    }
    let mig = if first["mig"]["current"] == true {
        let entries: Vec<String> = layout.iter().map(|(p, n)| format!("{p}: {n}")).collect();
        format!("      mig: {{layout: {{{}}}}}\n", entries.join(", "))
    } else {
        String::new()
    };
    let homogeneous = gpus.iter().all(|g| g["model"] == model);
    let same = repo_with_pool(model, gpus.len(), &mig);
    let path = same.path().display().to_string();
    let args = [
        "inventory",
        "--path",
        &path,
        "--cluster",
        "node",
        "--pool",
        "this",
    ];
    let compared = run(&args, &[]);
    println!(
        "$ capops inventory --path REPO --cluster node --pool this\n{}",
        compared.stdout
    );
    if homogeneous && mig.is_empty() == gpus.iter().all(|g| g["mig"]["current"] != true) {
        assert_eq!(compared.code, 0, "{}{}", compared.stdout, compared.stderr);
        assert!(
            compared
                .stdout
                .ends_with("compared with node/this: matches\n"),
            "{}",
            compared.stdout
        );
    }
    let more = repo_with_pool(model, gpus.len() + 1, &mig);
    let path = more.path().display().to_string();
    let mut args = args;
    args[2] = &path;
    let differs = run(&args, &[]);
    println!(
        "$ capops inventory --path REPO --cluster node --pool this  # one GPU more declared\n{}",
        differs.stdout
    );
    assert_eq!(differs.code, 1, "{}{}", differs.stdout, differs.stderr);
    let want = format!(
        "  mismatch[gpu-count]: the node has {}, the pool declares {} per node",
        capops::gpu::inventory::gpus(gpus.len()),
        gpus.len() + 1
    );
    assert!(differs.stdout.contains(&want), "{}", differs.stdout);
}

/// One row of `nvidia-smi mig -lgip`: GPU, profile name (after `MIG `), id, total instances.
fn smi_profiles() -> Vec<(u64, String, u32, u32)> {
    nvidia_smi(&["mig", "-lgip"])
        .lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.trim_matches('|').split_whitespace().collect();
            if f.len() < 5 || f[1] != "MIG" {
                return None;
            }
            let total = f[4].split('/').nth(1)?.parse().ok()?;
            Some((
                f[0].parse().ok()?,
                f[2].to_string(),
                f[3].parse().ok()?,
                total,
            ))
        })
        .collect()
}

/// `nvidia-smi mig -lgipp`: (GPU, profile id) -> (placement starts, size).
fn smi_placements() -> BTreeMap<(u64, u32), (Vec<u32>, u32)> {
    let mut out = BTreeMap::new();
    for l in nvidia_smi(&["mig", "-lgipp"]).lines() {
        // `GPU  0 Profile ID 15 Placements: {0,2,4,6}:2`
        let f: Vec<&str> = l.split_whitespace().collect();
        let (Some(gpu), Some(id)) = (
            f.get(1).and_then(|s| s.parse().ok()),
            f.get(4).and_then(|s| s.parse().ok()),
        ) else {
            continue;
        };
        let (Some(open), Some(close)) = (l.find('{'), l.find("}:")) else {
            continue;
        };
        let starts = l[open + 1..close]
            .split(',')
            .filter_map(|s| s.trim().parse().ok())
            .collect();
        let size = l[close + 2..].trim().parse().unwrap();
        out.insert((gpu, id), (starts, size));
    }
    out
}

#[test]
#[ignore = "needs an NVIDIA GPU node (the driver and nvidia-smi)"]
fn the_catalogs_mig_profiles_are_what_the_driver_lists() {
    let profiles = smi_profiles();
    let placements = smi_placements();
    println!("driver MIG profiles: {profiles:?}\nplacements: {placements:?}");
    for s in smi_gpus() {
        let listed: Vec<_> = profiles.iter().filter(|p| p.0 == s.index).collect();
        if listed.is_empty() {
            continue; // a GPU without MIG support
        }
        let model = capops::gpu::inventory::model_of(&s.name)
            .unwrap_or_else(|| panic!("`{}` is not in the catalog", s.name));
        let mig = model
            .mig
            .as_ref()
            .unwrap_or_else(|| panic!("the catalog has no MIG profiles for {}", model.id));
        for (_, name, id, total) in &listed {
            let p = mig
                .profiles
                .iter()
                .find(|p| p.name == name)
                .unwrap_or_else(|| {
                    panic!(
                        "{}: the driver lists `{name}`, the catalog does not",
                        model.id
                    )
                });
            assert_eq!(p.gi_profile_id, *id, "{} {name}: profile id", model.id);
            assert_eq!(
                p.max_count, *total,
                "{} {name}: instances on an empty GPU",
                model.id
            );
            if let Some((starts, size)) = placements.get(&(s.index, *id)) {
                assert_eq!(
                    p.starts,
                    starts.as_slice(),
                    "{} {name}: placement starts",
                    model.id
                );
                assert_eq!(
                    p.memory_slices, *size,
                    "{} {name}: placement size",
                    model.id
                );
            }
        }
        for p in mig.profiles {
            assert!(
                listed.iter().any(|l| l.1 == p.name),
                "{}: the catalog has `{}`, the driver does not list it",
                model.id,
                p.name
            );
        }
    }
}
