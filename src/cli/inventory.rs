//! `capops inventory`: a node's GPUs through NVML, compared with its pool.
//!
//! Glue only: find the pool to compare with (`--cluster C --pool P`, or the
//! pool whose nodeLabels the node's `--label`s carry), read the GPUs through
//! a `GpuReader` (NVML from `libnvidia-ml.so.1`, or the library
//! `CAPOPS_NVML_LIB` names), compare with `gpu::inventory::compare`, print.
//! Exit 0 when the node matches (or nothing is compared), 1 on a mismatch,
//! 2 for bad arguments, 3 when NVML cannot be read.

// An edge: it loads the NVML library and reads the environment (see clippy.toml).
#![allow(clippy::disallowed_methods, clippy::disallowed_types)]

use super::common::{Exit, Outcome, Stop, invalid, load_valid, write_json};
use super::{Cli, Io};
use crate::gpu::inventory::{self, Comparison, GpuReader, NodeInventory, ReadError};
use crate::ingest::nvml::NvmlReader;
use crate::output::Format;
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::PathBuf;

/// Environment variable naming the NVML library to load instead of `libnvidia-ml.so.1`.
pub const LIBRARY_ENV: &str = "CAPOPS_NVML_LIB";

#[derive(Debug, clap::Args)]
pub struct InventoryArgs {
    /// Print JSON (the same as --format json).
    #[arg(long)]
    pub json: bool,
    /// The capacity repository that declares the pool.
    #[arg(long, default_value = ".")]
    pub path: PathBuf,
    /// Cluster of the pool to compare with.
    #[arg(long)]
    pub cluster: Option<String>,
    /// Pool to compare with (with --cluster).
    #[arg(long, requires = "cluster")]
    pub pool: Option<String>,
    /// A label of this node, KEY=VALUE (repeat it): compare with the pool whose nodeLabels the node carries.
    #[arg(long = "label", value_name = "KEY=VALUE")]
    pub labels: Vec<String>,
}

pub fn run(cli: &Cli, args: &InventoryArgs, io: &mut Io<'_>) -> Outcome {
    let library = (io.env)(LIBRARY_ENV).filter(|s| !s.is_empty());
    // A bare name is the loader's to search; a path is looked at first.
    let not_a_file = library
        .as_deref()
        .filter(|p| p.contains('/'))
        .and_then(|p| std::fs::metadata(p).ok())
        .filter(|m| !m.is_file())
        .map(|m| {
            use std::os::unix::fs::FileTypeExt;
            let t = m.file_type();
            if t.is_dir() {
                "a folder"
            } else if t.is_fifo() {
                "a named pipe"
            } else if t.is_socket() {
                "a socket"
            } else {
                "a device"
            }
        });
    let reader = NvmlReader {
        library,
        not_a_file,
    };
    run_with(cli, args, &reader, io)
}

/// `capops inventory` with any reader.
pub fn run_with(
    cli: &Cli,
    args: &InventoryArgs,
    reader: &dyn GpuReader,
    io: &mut Io<'_>,
) -> Outcome {
    let json = args.json || cli.format == Format::Json;
    let target = pool_to_compare(cli, args, io)?;
    let inv = match reader.read() {
        Ok(inv) => inv,
        Err(e) => {
            writeln!(io.stderr, "error: {e}")?;
            if let ReadError::LibraryNotFound { detail, .. } = &e {
                writeln!(io.stderr, "  cause: {detail}")?;
            }
            writeln!(
                io.stderr,
                "  help: run `capops inventory` on a GPU node with the NVIDIA driver installed, or set {LIBRARY_ENV} to the library's path"
            )?;
            return Err(Stop::Exit(Exit::External));
        }
    };
    let comparison = target.and_then(|(repo, cluster, pool)| {
        repo.pool(&cluster, &pool)
            .map(|p| inventory::compare(&inv, &cluster, p))
    });
    if json {
        let out = JsonOut {
            driver_version: inv.driver_version.clone(),
            gpus: views(&inv),
            comparison: comparison.clone(),
        };
        write_json(io, "inventory", &out)?;
    } else {
        io.stdout
            .write_all(human(&inv, comparison.as_ref()).as_bytes())?;
    }
    Ok(match comparison {
        Some(c) if !c.matches => Exit::Gate,
        _ => Exit::Ok,
    })
}

type Target = Option<(crate::model::Repo, String, String)>;

/// The repository and `(cluster, pool)` to compare with, if any was asked for.
fn pool_to_compare(cli: &Cli, args: &InventoryArgs, io: &mut Io<'_>) -> Result<Target, Stop> {
    if args.pool.is_none() && args.labels.is_empty() {
        if args.cluster.is_some() {
            return Err(invalid(
                io,
                "--cluster needs --pool or --label to choose the pool",
                Some("capops inventory --cluster C --pool P"),
            ));
        }
        return Ok(None);
    }
    let mut labels = BTreeMap::new();
    for l in &args.labels {
        let Some((k, v)) = l.split_once('=') else {
            return Err(invalid(
                io,
                &format!("--label `{l}` is not KEY=VALUE"),
                Some("for example --label acme.ai/gpu-pool=h100-mig"),
            ));
        };
        labels.insert(k.trim().to_string(), v.trim().to_string());
    }
    let head = load_valid(cli, &args.path, "the node can be compared", io)?;
    let repo = head.repo;
    let (cluster, pool) = match (&args.cluster, &args.pool) {
        (Some(c), Some(p)) => {
            let Some(doc) = repo.clusters.get(c) else {
                let known = repo.clusters.keys().map(String::as_str);
                let help = crate::diag::suggest(c, known, "clusters");
                return Err(invalid(
                    io,
                    &format!("`{c}` is not a Cluster of the repository"),
                    Some(&help),
                ));
            };
            if repo.pool(c, p).is_none() {
                let known = doc.spec.node_pools.iter().map(|x| x.name.value.as_str());
                let help = crate::diag::suggest(p, known, "pools");
                return Err(invalid(
                    io,
                    &format!("cluster `{c}` has no pool `{p}`"),
                    Some(&help),
                ));
            }
            (c.clone(), p.clone())
        }
        _ => {
            let found = inventory::pools_with_labels(&repo, &labels, args.cluster.as_deref());
            match found.as_slice() {
                [one] => one.clone(),
                [] => {
                    return Err(invalid(
                        io,
                        "no pool's nodeLabels are all among the given labels",
                        Some(
                            "pass the node's labels as --label KEY=VALUE, or name the pool with --cluster C --pool P",
                        ),
                    ));
                }
                many => {
                    let names: Vec<String> = many.iter().map(|(c, p)| format!("{c}/{p}")).collect();
                    return Err(invalid(
                        io,
                        &format!("the labels match several pools: {}", names.join(", ")),
                        Some("add --cluster, or name the pool with --pool"),
                    ));
                }
            }
        }
    };
    Ok(Some((repo, cluster, pool)))
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct JsonOut {
    driver_version: Option<String>,
    gpus: Vec<GpuView>,
    comparison: Option<Comparison>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct GpuView {
    #[serde(flatten)]
    gpu: inventory::Gpu,
    /// The catalog model of the name, if known.
    model: Option<&'static str>,
    /// Profile of each MIG device, in `migDevices` order.
    mig_profiles: Vec<Option<&'static str>>,
}

fn views(inv: &NodeInventory) -> Vec<GpuView> {
    inv.gpus
        .iter()
        .map(|g| {
            let model = inventory::model_of(&g.name);
            GpuView {
                gpu: g.clone(),
                model: model.map(|m| m.id),
                mig_profiles: g
                    .mig_devices
                    .iter()
                    .map(|d| inventory::profile_of(d, model).map(|p| p.name))
                    .collect(),
            }
        })
        .collect()
}

fn human(inv: &NodeInventory, comparison: Option<&Comparison>) -> String {
    use std::fmt::Write;
    let mut s = String::new();
    let driver = inv
        .driver_version
        .as_deref()
        .map(|d| format!(", driver {d}"))
        .unwrap_or_default();
    let _ = writeln!(s, "{} (NVML{driver})", inventory::gpus(inv.gpus.len()));
    for v in views(inv) {
        let g = &v.gpu;
        let mig = match g.mig {
            None => "no MIG".to_string(),
            Some(m) if m.current == m.pending => {
                format!("MIG {}", if m.current { "enabled" } else { "disabled" })
            }
            Some(m) => format!(
                "MIG {} (pending {})",
                if m.current { "enabled" } else { "disabled" },
                if m.pending { "enabled" } else { "disabled" }
            ),
        };
        let mem = g.memory_mib.map(|m| format!("{m} MiB")).unwrap_or_default();
        let _ = writeln!(
            s,
            "  GPU {}  {}  ({})  {}  {mem}  {mig}",
            g.index,
            g.name,
            v.model.unwrap_or("not in the catalog"),
            g.uuid
        );
        for (d, p) in g.mig_devices.iter().zip(&v.mig_profiles) {
            let place = d
                .placement
                .map(|(start, size)| {
                    format!(
                        "  slices {start}-{}",
                        (u64::from(start) + u64::from(size)).saturating_sub(1)
                    )
                })
                .unwrap_or_default();
            let _ = writeln!(
                s,
                "    MIG {}  {}{place}  {}",
                d.index,
                p.unwrap_or("unknown profile"),
                d.uuid
            );
        }
    }
    if let Some(c) = comparison {
        let mismatches = c.findings.iter().filter(|f| f.mismatch).count();
        let verdict = match mismatches {
            0 => "matches".to_string(),
            1 => "1 mismatch".to_string(),
            n => format!("{n} mismatches"),
        };
        let _ = writeln!(s, "compared with {}/{}: {verdict}", c.cluster, c.pool);
        for f in &c.findings {
            let kind = if f.mismatch { "mismatch" } else { "note" };
            let _ = writeln!(s, "  {kind}[{}]: {}", f.code, f.message);
        }
    }
    s
}
