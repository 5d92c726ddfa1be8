//! `capops schema` and `capops catalog`: what capops knows, printed.

use super::{Cli, Io, exit};
use crate::diag::suggest;
use crate::gpu::catalog::{self, GpuModel, PlacementStatus};
use crate::model::{Kind, schema};
use crate::output::Format;
use serde_json::json;

pub fn schema(kind: Option<&str>, io: &mut Io<'_>) -> std::io::Result<i32> {
    let Some(name) = kind else {
        for k in Kind::ALL {
            writeln!(io.stdout, "{:<16} schemas/{}", k.as_str(), k.schema_file())?;
        }
        return Ok(exit::OK);
    };
    let Some(k) = Kind::ALL
        .into_iter()
        .find(|k| k.as_str().eq_ignore_ascii_case(name))
    else {
        writeln!(
            io.stderr,
            "error: `{name}` is not a document kind\n  help: {}",
            suggest(name, Kind::ALL.map(|k| k.as_str()), "kinds")
        )?;
        return Ok(exit::INVALID);
    };
    io.stdout.write_all(schema::embedded(k).as_bytes())?;
    Ok(exit::OK)
}

pub fn catalog(cli: &Cli, model: Option<&str>, io: &mut Io<'_>) -> std::io::Result<i32> {
    let models: Vec<&GpuModel> = match model {
        Some(name) => match catalog::model(name) {
            Some(m) => vec![m],
            None => {
                writeln!(
                    io.stderr,
                    "error: `{name}` is not a GPU model in the catalog\n  help: {}",
                    suggest(name, catalog::all_names(), "models")
                )?;
                return Ok(exit::INVALID);
            }
        },
        None => catalog::MODELS.iter().collect(),
    };
    if cli.format == Format::Json {
        let out: Vec<_> = models.iter().map(|m| model_json(m)).collect();
        serde_json::to_writer_pretty(&mut *io.stdout, &json!({"version": 1, "models": out}))?;
        writeln!(io.stdout)?;
        return Ok(exit::OK);
    }
    for m in models {
        let mig = match &m.mig {
            None => "no MIG".to_string(),
            Some(mig) => format!(
                "MIG {}×{} slices, placements {}",
                mig.compute_slices,
                mig.memory_slices,
                match mig.placement_status {
                    PlacementStatus::Observed => "observed",
                    PlacementStatus::Inferred => "INFERRED (not seen on hardware)",
                }
            ),
        };
        writeln!(
            io.stdout,
            "{:<16} {:<30} {:>4} GB  {mig}",
            m.id, m.display, m.memory_gb
        )?;
        if let Some(mig) = &m.mig {
            for p in mig.profiles {
                let starts: Vec<String> = p.starts.iter().map(u32::to_string).collect();
                writeln!(
                    io.stdout,
                    "    {:<12} {}g compute, {} memory slice{}, max {} per GPU, starts {{{}}}",
                    p.name,
                    p.compute_slices,
                    p.memory_slices,
                    if p.memory_slices == 1 { "" } else { "s" },
                    p.max_count,
                    starts.join(",")
                )?;
            }
            for (seen, canonical) in mig.aliases {
                writeln!(io.stdout, "    alias {seen} -> {canonical}")?;
            }
            writeln!(io.stdout, "    source: {}", mig.source)?;
        }
    }
    Ok(exit::OK)
}

fn model_json(m: &GpuModel) -> serde_json::Value {
    json!({
        "id": m.id,
        "display": m.display,
        "names": m.names,
        "memoryGb": m.memory_gb,
        "architecture": m.architecture,
        "mig": m.mig.as_ref().map(|mig| json!({
            "computeSlices": mig.compute_slices,
            "memorySlices": mig.memory_slices,
            "placementStatus": match mig.placement_status {
                PlacementStatus::Observed => "observed",
                PlacementStatus::Inferred => "inferred",
            },
            "source": mig.source,
            "aliases": mig.aliases.iter().map(|(s, c)| json!({"seenAs": s, "name": c})).collect::<Vec<_>>(),
            "profiles": mig.profiles.iter().map(|p| json!({
                "name": p.name,
                "giProfileId": p.gi_profile_id,
                "computeSlices": p.compute_slices,
                "memorySlices": p.memory_slices,
                "memoryGb": p.memory_gb,
                "maxCount": p.max_count,
                "starts": p.starts,
            })).collect::<Vec<_>>(),
        })),
    })
}

/// `capops test`: runs policy test cases.
pub fn test(cli: &Cli, path: &std::path::Path, io: &mut Io<'_>) -> std::io::Result<i32> {
    use crate::policy::testing;
    let cases = match testing::discover(path) {
        Ok(c) => c,
        Err(e) => {
            writeln!(io.stderr, "error: {e}")?;
            return Ok(exit::INVALID);
        }
    };
    if cases.is_empty() {
        writeln!(
            io.stderr,
            "error: no test cases (*.yaml) in {}",
            path.display()
        )?;
        return Ok(exit::INVALID);
    }
    let results: Vec<testing::CaseResult> = {
        use rayon::prelude::*;
        cases.par_iter().map(|c| testing::run_case(c)).collect()
    };
    let failed = results.iter().filter(|r| !r.passed()).count();
    if cli.format == Format::Json {
        let out = json!({
            "version": 1,
            "command": "test",
            "passed": results.len() - failed,
            "failed": failed,
            "cases": results.iter().map(|r| json!({
                "name": r.name,
                "description": r.description,
                "passed": r.passed(),
                "failures": r.failures,
            })).collect::<Vec<_>>(),
        });
        serde_json::to_writer_pretty(&mut *io.stdout, &out)?;
        writeln!(io.stdout)?;
    } else {
        for r in &results {
            writeln!(
                io.stdout,
                "{} {}{}",
                if r.passed() { "PASS" } else { "FAIL" },
                r.name,
                if r.description.is_empty() {
                    String::new()
                } else {
                    format!(": {}", r.description)
                }
            )?;
            for f in &r.failures {
                writeln!(io.stdout, "       {f}")?;
            }
        }
        writeln!(
            io.stdout,
            "\n{} passed, {failed} failed",
            results.len() - failed
        )?;
    }
    Ok(if failed == 0 { exit::OK } else { exit::GATE })
}
