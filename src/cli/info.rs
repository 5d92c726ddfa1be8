//! `capops schema` and `capops catalog`: what capops knows, printed.

use super::common::{Exit, Outcome, invalid, write_json};
use super::{Cli, Io};
use crate::diag::suggest;
use crate::gpu::catalog::{self, GpuModel, PlacementStatus};
use crate::model::{Kind, schema};
use crate::output::Format;
use serde_json::json;

pub fn schema(cli: &Cli, kind: Option<&str>, io: &mut Io<'_>) -> Outcome {
    let Some(name) = kind else {
        if cli.format == Format::Json {
            let kinds: Vec<_> = Kind::ALL
                .iter()
                .map(|k| json!({"kind": k.as_str(), "schema": format!("schemas/{}", k.schema_file())}))
                .collect();
            write_json(io, "schema", &json!({"kinds": kinds}))?;
        } else {
            for k in Kind::ALL {
                writeln!(io.stdout, "{:<16} schemas/{}", k.as_str(), k.schema_file())?;
            }
        }
        return Ok(Exit::Ok);
    };
    let Some(k) = Kind::ALL
        .into_iter()
        .find(|k| k.as_str().eq_ignore_ascii_case(name))
    else {
        let help = suggest(name, Kind::ALL.map(|k| k.as_str()), "kinds");
        return Err(invalid(
            io,
            &format!("`{name}` is not a document kind"),
            Some(&help),
        ));
    };
    // The schema is JSON whatever the format: it is what editors read.
    io.stdout.write_all(schema::embedded(k).as_bytes())?;
    Ok(Exit::Ok)
}

pub fn catalog(cli: &Cli, model: Option<&str>, io: &mut Io<'_>) -> Outcome {
    let models: Vec<&GpuModel> = match model {
        Some(name) => match catalog::model(name) {
            Some(m) => vec![m],
            None => {
                let help = suggest(&catalog::normalize(name), catalog::all_names(), "models");
                return Err(invalid(
                    io,
                    &format!("`{name}` is not a GPU model in the catalog"),
                    Some(&help),
                ));
            }
        },
        None => catalog::models().collect(),
    };
    if cli.format == Format::Json {
        let out: Vec<_> = models.iter().map(|m| model_json(m)).collect();
        write_json(io, "catalog", &json!({"models": out}))?;
        return Ok(Exit::Ok);
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
    Ok(Exit::Ok)
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
