//! `capops inventory` through the real nvml-wrapper path, against a fake
//! `libnvidia-ml` built from `tests/fixtures/fake-nvml/fake_nvml.c` with gcc
//! and configured per test (GPU models, MIG mode, MIG devices), and without
//! any library at all (the no-driver case).
//!
//! gcc is needed; without it these tests say so and pass, unless `CAPOPS_CI`
//! is set, where a missing compiler fails them.

mod common;

use common::run;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// The fake library, compiled once per test run; None when gcc is missing.
fn fake_library() -> Option<&'static Path> {
    static BUILT: OnceLock<Option<PathBuf>> = OnceLock::new();
    BUILT
        .get_or_init(|| {
            let root = common::root();
            let out = root.join("target/fake-nvml");
            std::fs::create_dir_all(&out).unwrap();
            // Built under a name of its own, then renamed: test binaries running at
            // once each get a whole library.
            let lib = out.join("libfake-nvml.so");
            let tmp = out.join(format!(".libfake-nvml-{}.so", std::process::id()));
            let status = std::process::Command::new("gcc")
                .args(["-shared", "-fPIC", "-O1", "-Wall", "-Werror", "-o"])
                .arg(&tmp)
                .arg(root.join("tests/fixtures/fake-nvml/fake_nvml.c"))
                .arg("-ldl")
                .status();
            match status {
                Ok(s) if s.success() => {
                    std::fs::rename(&tmp, &lib).unwrap();
                    Some(lib)
                }
                Ok(s) => panic!("gcc failed to build the fake NVML library: {s}"),
                Err(e) => {
                    assert!(
                        std::env::var_os("CAPOPS_CI").is_none(),
                        "gcc is needed for the NVML tests (CAPOPS_CI is set): {e}"
                    );
                    eprintln!(
                        "skipping: gcc not found ({e}); the fake NVML library cannot be built"
                    );
                    None
                }
            }
        })
        .as_deref()
}

/// A copy of the fake library with its own configuration, in a folder of its own.
struct Node {
    _dir: tempfile::TempDir,
    lib: String,
}

fn node(conf: &str) -> Option<Node> {
    let built = fake_library()?;
    let dir = tempfile::tempdir().unwrap();
    let lib = dir.path().join("libnvidia-ml.so.1");
    std::fs::copy(built, &lib).unwrap();
    std::fs::write(dir.path().join("libnvidia-ml.so.1.conf"), conf).unwrap();
    Some(Node {
        lib: lib.display().to_string(),
        _dir: dir,
    })
}

const H100: &str = "NVIDIA H100 80GB HBM3";

/// MIG devices of the layout {3g.40gb: 1, 2g.20gb: 1, 1g.10gb: 2}, in slots with holes
/// (NVML's device count is a maximum).
fn declared_migs(gpu: u32) -> String {
    [
        (0, 9, 0, 4, "3g.40gb", 40192),
        (2, 14, 4, 2, "2g.20gb", 19968),
        (5, 19, 6, 1, "1g.10gb", 9856),
        (6, 19, 7, 1, "1g.10gb", 9856),
    ]
    .iter()
    .map(|(slot, id, start, size, p, mem)| {
        format!("mig {slot}|{id}|{start}|{size}|MIG-{gpu}-{slot}|{mem}|{H100} MIG {p}\n")
    })
    .collect()
}

/// A capacity repository with an H100 MIG pool and an L4 pool.
fn repo() -> tempfile::TempDir {
    common::repo_with_cluster(
        r#"apiVersion: capops.dev/v1alpha1
kind: Cluster
metadata: {name: prod}
spec:
  environment: production
  provider: onprem
  nodePools:
    - name: h100-mig
      gpuModel: h100-80gb-sxm
      gpusPerNode: 2
      nodes: 4
      nodeLabels: {example.com/pool: h100-mig}
      mig: {layout: {3g.40gb: 1, 2g.20gb: 1, 1g.10gb: 2}}
    - name: l4
      gpuModel: l4
      gpusPerNode: 1
      nodes: 4
      nodeLabels: {example.com/pool: l4}
"#,
    )
}

#[test]
fn lists_gpus_mig_mode_and_devices_with_their_profiles() {
    let conf = format!(
        "driver 550.54.15\ngpu {H100}|GPU-a0|81559|1|1|7\n{}gpu {H100}|GPU-a1|81559|0|1|7\n",
        declared_migs(0)
    );
    let Some(n) = node(&conf) else { return };
    let out = run(&["inventory", "--json"], &[("CAPOPS_NVML_LIB", &n.lib)]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let v: Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(v["driverVersion"], "550.54.15");
    let gpus = v["gpus"].as_array().unwrap();
    assert_eq!(gpus.len(), 2);
    assert_eq!(gpus[0]["name"], H100);
    assert_eq!(gpus[0]["model"], "h100-80gb-sxm");
    assert_eq!(gpus[0]["uuid"], "GPU-a0");
    assert_eq!(gpus[0]["memoryMib"], 81559);
    assert_eq!(
        gpus[0]["mig"],
        serde_json::json!({"current": true, "pending": true})
    );
    let devices = gpus[0]["migDevices"].as_array().unwrap();
    let slots: Vec<u64> = devices
        .iter()
        .map(|d| d["index"].as_u64().unwrap())
        .collect();
    assert_eq!(slots, vec![0, 2, 5, 6]);
    assert_eq!(devices[1]["giProfileId"], 14);
    assert_eq!(devices[1]["placement"], serde_json::json!([4, 2]));
    assert_eq!(devices[1]["uuid"], "MIG-0-2");
    assert_eq!(devices[1]["memoryMib"], 19968);
    assert_eq!(
        gpus[0]["migProfiles"],
        serde_json::json!(["3g.40gb", "2g.20gb", "1g.10gb", "1g.10gb"])
    );
    assert_eq!(
        gpus[1]["mig"],
        serde_json::json!({"current": false, "pending": true})
    );
    assert_eq!(gpus[1]["migDevices"], serde_json::json!([]));
    assert_eq!(v["comparison"], Value::Null);

    let human = run(&["inventory"], &[("CAPOPS_NVML_LIB", &n.lib)]);
    assert_eq!(human.code, 0);
    assert!(
        human
            .stdout
            .starts_with("2 GPUs (NVML, driver 550.54.15)\n"),
        "{}",
        human.stdout
    );
    assert!(
        human.stdout.contains("MIG 2  2g.20gb  slices 4-5  MIG-0-2"),
        "{}",
        human.stdout
    );
    assert!(
        human.stdout.contains("MIG disabled (pending enabled)"),
        "{}",
        human.stdout
    );
}

#[test]
fn a_placement_no_gpu_has_is_left_out_not_wrapped() {
    // A start and size of 2^32 - 1: past any GPU's 8 memory slices, and
    // their sum wraps. The device is listed without a placement.
    let conf = format!(
        "driver 550\ngpu {H100}|GPU-1|81559|1|1|7\nmig 0|9|4294967295|4294967295|MIG-a|40000|{H100} MIG 3g.40gb\n"
    );
    let Some(n) = node(&conf) else { return };
    let out = run(&["inventory", "--json"], &[("CAPOPS_NVML_LIB", &n.lib)]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let v: Value = serde_json::from_str(&out.stdout).unwrap();
    let d = &v["gpus"][0]["migDevices"][0];
    assert_eq!(d["uuid"], "MIG-a", "{}", out.stdout);
    assert!(d["placement"].is_null(), "{}", out.stdout);
    let out = run(&["inventory"], &[("CAPOPS_NVML_LIB", &n.lib)]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(!out.stdout.contains("slices"), "{}", out.stdout);
}

#[test]
fn a_node_as_its_pool_declares_matches() {
    let conf = format!(
        "gpu {H100}|GPU-a0|81559|1|1|7\n{}gpu {H100}|GPU-a1|81559|1|1|7\n{}",
        declared_migs(0),
        declared_migs(1)
    );
    let Some(n) = node(&conf) else { return };
    let r = repo();
    let path = r.path().display().to_string();
    let env = [("CAPOPS_NVML_LIB", n.lib.as_str())];
    let out = run(
        &[
            "inventory",
            "--path",
            &path,
            "--cluster",
            "prod",
            "--pool",
            "h100-mig",
        ],
        &env,
    );
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    assert!(
        out.stdout
            .ends_with("compared with prod/h100-mig: matches\n"),
        "{}",
        out.stdout
    );
    // The node's labels find the same pool.
    let by_label = run(
        &[
            "inventory",
            "--json",
            "--path",
            &path,
            "--label",
            "example.com/pool=h100-mig",
            "--label",
            "kubernetes.io/hostname=gpu-7",
        ],
        &env,
    );
    assert_eq!(by_label.code, 0, "{}", by_label.stderr);
    let v: Value = serde_json::from_str(&by_label.stdout).unwrap();
    assert_eq!(v["comparison"]["pool"], "h100-mig");
    assert_eq!(v["comparison"]["matches"], true);
}

#[test]
fn mismatches_in_model_count_mig_mode_and_layout_exit_1() {
    // GPU 0 is cut into seven 1g.10gb; GPU 1 has MIG off (on after a reset); GPU 2 is an A100.
    let mut conf = format!("gpu {H100}|GPU-a0|81559|1|1|7\n");
    for slot in 0..7 {
        conf += &format!("mig {slot}|19|{slot}|1|MIG-0-{slot}|9856|{H100} MIG 1g.10gb\n");
    }
    conf +=
        &format!("gpu {H100}|GPU-a1|81559|0|1|7\ngpu NVIDIA A100-SXM4-80GB|GPU-a2|81920|0|0|7\n");
    let Some(n) = node(&conf) else { return };
    let r = repo();
    let path = r.path().display().to_string();
    let args = [
        "inventory",
        "--path",
        &path,
        "--cluster",
        "prod",
        "--pool",
        "h100-mig",
    ];
    let out = run(&args, &[("CAPOPS_NVML_LIB", &n.lib)]);
    assert_eq!(out.code, 1, "{}{}", out.stdout, out.stderr);
    let tail: Vec<&str> = out
        .stdout
        .lines()
        .skip_while(|l| !l.starts_with("compared with"))
        .collect();
    assert_eq!(
        tail,
        vec![
            "compared with prod/h100-mig: 5 mismatches",
            "  mismatch[gpu-count]: the node has 3 GPUs, the pool declares 2 per node",
            "  mismatch[mig-layout]: GPU 0 has {1g.10gb: 7}, the pool declares {1g.10gb: 2, 2g.20gb: 1, 3g.40gb: 1}",
            "  mismatch[mig-mode]: GPU 1 has MIG disabled, the pool declares a MIG layout",
            "  note[mig-mode-pending]: GPU 1: MIG mode becomes enabled after the next GPU reset or reboot",
            "  mismatch[gpu-model]: GPU 2 is `NVIDIA A100-SXM4-80GB` (a100-80gb), the pool declares `h100-80gb-sxm`",
            "  mismatch[mig-mode]: GPU 2 has MIG disabled, the pool declares a MIG layout",
        ]
    );
}

#[test]
fn gpus_without_mig_and_libraries_without_gpu_instance_calls() {
    // L4s do not support MIG (NOT_SUPPORTED); the H100's instances are found by name
    // when the GPU-instance functions are not supported.
    let conf = "gpu NVIDIA L4|GPU-l4|23034|-1|-1|0\n";
    let Some(n) = node(conf) else { return };
    let r = repo();
    let path = r.path().display().to_string();
    let out = run(
        &[
            "inventory",
            "--json",
            "--path",
            &path,
            "--cluster",
            "prod",
            "--pool",
            "l4",
        ],
        &[("CAPOPS_NVML_LIB", &n.lib)],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    let v: Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(v["gpus"][0]["mig"], Value::Null);
    assert_eq!(v["gpus"][0]["model"], "l4");
    assert_eq!(v["comparison"]["matches"], true);

    let conf = format!(
        "no_gi_functions\ngpu {H100}|GPU-a0|81559|1|1|7\n{}",
        declared_migs(0)
    );
    let Some(n) = node(&conf) else { return };
    let out = run(&["inventory", "--json"], &[("CAPOPS_NVML_LIB", &n.lib)]);
    let v: Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(v["gpus"][0]["migDevices"][0]["giProfileId"], Value::Null);
    assert_eq!(
        v["gpus"][0]["migProfiles"],
        serde_json::json!(["3g.40gb", "2g.20gb", "1g.10gb", "1g.10gb"])
    );
}

#[test]
fn without_the_driver_it_says_nvml_is_not_available_and_exits_3() {
    // A library path that does not exist stands for a machine without the driver.
    let out = run(
        &["inventory"],
        &[("CAPOPS_NVML_LIB", "/nonexistent/libnvidia-ml.so.1")],
    );
    assert_eq!(out.code, 3);
    assert!(
        out.stderr.starts_with(
            "error: NVML not available: /nonexistent/libnvidia-ml.so.1 could not be loaded\n"
        ),
        "{}",
        out.stderr
    );
    assert!(out.stdout.is_empty());
    // A file that is there but is no library: not "not found"; the cause
    // line says what the loader said.
    let out = run(&["inventory"], &[("CAPOPS_NVML_LIB", "/etc/passwd")]);
    assert_eq!(out.code, 3);
    assert!(
        out.stderr
            .starts_with("error: NVML not available: /etc/passwd could not be loaded\n  cause: "),
        "{}",
        out.stderr
    );
    // A named pipe would hold the loader forever: refused before it is
    // opened, at once.
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("libnvidia-ml.so.1");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(made.success());
    let out = run(
        &["inventory"],
        &[("CAPOPS_NVML_LIB", fifo.to_str().unwrap())],
    );
    assert_eq!(out.code, 3, "{}", out.stderr);
    assert!(
        out.stderr.contains("is a named pipe, not a library file"),
        "{}",
        out.stderr
    );
    // The default library: this machine (and CI) has no NVIDIA driver.
    let default = run(&["inventory", "--json"], &[]);
    if default.code == 0 {
        eprintln!("skipping the no-driver check of the default library: this machine has NVML");
        return;
    }
    assert_eq!(default.code, 3);
    assert!(
        default
            .stderr
            .starts_with("error: NVML not available: libnvidia-ml.so.1 could not be loaded\n"),
        "{}",
        default.stderr
    );
}

#[test]
fn a_driver_that_is_not_loaded_is_an_outside_failure() {
    // NVML_ERROR_DRIVER_NOT_LOADED = 9
    let Some(n) = node("init_error 9\n") else {
        return;
    };
    let out = run(&["inventory"], &[("CAPOPS_NVML_LIB", &n.lib)]);
    assert_eq!(out.code, 3);
    assert!(
        out.stderr
            .starts_with("error: NVML not available: the NVIDIA kernel driver is not loaded\n"),
        "{}",
        out.stderr
    );
}

#[test]
fn a_driver_that_reports_billions_of_gpus_is_not_believed() {
    // 2^32 - 1 GPUs: capops made room for each (412 GB) and aborted.
    let Some(n) = node("reported_count 4294967295\n") else {
        return;
    };
    let out = run(&["inventory"], &[("CAPOPS_NVML_LIB", &n.lib)]);
    assert_eq!(out.code, 3, "{}", out.stderr);
    assert!(
        out.stderr
            .contains("the driver reports 4294967295 GPUs, more than the 1024"),
        "{}",
        out.stderr
    );
}

#[test]
fn bad_pool_choices_are_usage_errors() {
    let r = repo();
    let path = r.path().display().to_string();
    let env = [("CAPOPS_NVML_LIB", "/nonexistent/lib.so")];
    let out = run(
        &[
            "inventory",
            "--path",
            &path,
            "--cluster",
            "prod",
            "--pool",
            "h100-mgi",
        ],
        &env,
    );
    assert_eq!(out.code, 2);
    assert!(
        out.stderr.contains("did you mean `h100-mig`?"),
        "{}",
        out.stderr
    );
    let out = run(
        &[
            "inventory",
            "--path",
            &path,
            "--label",
            "example.com/pool=a100",
        ],
        &env,
    );
    assert_eq!(out.code, 2);
    assert!(
        out.stderr.contains("no pool's nodeLabels"),
        "{}",
        out.stderr
    );
    let out = run(&["inventory", "--path", &path, "--label", "nolabel"], &env);
    assert_eq!(out.code, 2);
    let out = run(&["inventory", "--path", &path, "--cluster", "prod"], &env);
    assert_eq!(out.code, 2);
    let out = run(&["inventory", "--pool", "x"], &env);
    assert_eq!(out.code, 2);
}
