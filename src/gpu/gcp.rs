//! Compute Engine's names for GPU machines: the commitment type a machine
//! series is bought under, the accelerator type its GPUs are committed as,
//! and the GPUs an N1 instance type of the catalogs has attached.
//!
//! A commitment of the wrong type is refused by the Compute API (or, with no
//! type, bought as `GENERAL_PURPOSE`, which no GPU machine but N1 uses), and
//! its discount applies only to the accelerator type it names; so a
//! commitment for a machine series not listed here is refused at validation
//! rather than rendered with a guess.

/// How Compute Engine commits a machine series: its commitment `type`
/// (`None`: the API's default, `GENERAL_PURPOSE`, for N1) and the
/// accelerator type of its GPUs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Commitment {
    pub commitment_type: Option<&'static str>,
    pub accelerator: &'static str,
}

/// Machine series (the first two parts of the machine type), the commitment
/// type the Compute API's `Commitment.type` enum has for them, the
/// accelerator type of their GPUs, and the catalog models they carry.
const SERIES: &[(&str, &str, &str, &[&str])] = &[
    (
        "a2-highgpu",
        "ACCELERATOR_OPTIMIZED",
        "nvidia-tesla-a100",
        &["a100-40gb"],
    ),
    (
        "a2-megagpu",
        "ACCELERATOR_OPTIMIZED",
        "nvidia-tesla-a100",
        &["a100-40gb"],
    ),
    (
        "a2-ultragpu",
        "ACCELERATOR_OPTIMIZED",
        "nvidia-a100-80gb",
        &["a100-80gb"],
    ),
    (
        "a3-highgpu",
        "ACCELERATOR_OPTIMIZED_A3",
        "nvidia-h100-80gb",
        &["h100-80gb-sxm"],
    ),
    (
        "a3-edgegpu",
        "ACCELERATOR_OPTIMIZED_A3",
        "nvidia-h100-80gb",
        &["h100-80gb-sxm"],
    ),
    (
        "a3-megagpu",
        "ACCELERATOR_OPTIMIZED_A3_MEGA",
        "nvidia-h100-mega-80gb",
        &["h100-80gb-sxm"],
    ),
    (
        "a3-ultragpu",
        "ACCELERATOR_OPTIMIZED_A3_ULTRA",
        "nvidia-h200-141gb",
        &["h200-141gb"],
    ),
    (
        "a4-highgpu",
        "ACCELERATOR_OPTIMIZED_A4",
        "nvidia-b200",
        &["b200-180gb"],
    ),
    (
        "a4x-highgpu",
        "ACCELERATOR_OPTIMIZED_A4X",
        "nvidia-gb200",
        &["gb200-186gb"],
    ),
    ("g2-standard", "GRAPHICS_OPTIMIZED", "nvidia-l4", &["l4"]),
    (
        "g4-standard",
        "GRAPHICS_OPTIMIZED_G4",
        "nvidia-rtx-pro-6000",
        &["rtx-pro-6000-96gb"],
    ),
];

/// N1 GPUs as the catalogs suffix them, their accelerator type and model.
const N1_GPUS: &[(&str, &str, Option<&str>)] = &[
    ("t4", "nvidia-tesla-t4", Some("t4")),
    ("v100", "nvidia-tesla-v100", Some("v100-16gb")),
    ("p100", "nvidia-tesla-p100", None),
    ("p4", "nvidia-tesla-p4", None),
    ("k80", "nvidia-tesla-k80", None),
];

/// An N1 instance type with GPUs attached, as the catalogs name it
/// (`n1-standard-8-t4`): Compute Engine's machine type (`n1-standard-8`)
/// and the accelerator attached to each instance. N1 GPUs are not part of
/// the machine type: a reservation must list them as guest accelerators.
pub fn n1_gpus(instance_type: &str) -> Option<(&str, &'static str)> {
    let (machine, gpu) = instance_type.rsplit_once('-')?;
    if !machine.starts_with("n1-") {
        return None;
    }
    N1_GPUS
        .iter()
        .find(|(suffix, _, _)| *suffix == gpu)
        .map(|(_, accelerator, _)| (machine, *accelerator))
}

/// How a commitment for `instance_type` is bought, given the catalog model
/// of the pool it covers (`None`: not known). `Err` says why capops cannot
/// write one: a machine series it does not know, or a machine whose GPUs are
/// not the pool's model.
pub fn commitment(instance_type: &str, model: Option<&str>) -> Result<Commitment, String> {
    let machine = instance_type.trim();
    if let Some((_, accelerator)) = n1_gpus(machine) {
        let expected = N1_GPUS
            .iter()
            .find(|(_, a, _)| *a == accelerator)
            .and_then(|(_, _, m)| *m);
        return match (model, expected) {
            (Some(m), Some(e)) if m != e => Err(mismatch(machine, accelerator, m)),
            _ => Ok(Commitment {
                commitment_type: None,
                accelerator,
            }),
        };
    }
    let series: String = machine.splitn(3, '-').take(2).collect::<Vec<_>>().join("-");
    let Some((_, kind, accelerator, models)) = SERIES.iter().find(|s| s.0 == series) else {
        return Err(format!(
            "capops does not know which commitment type Compute Engine sells `{machine}` under"
        ));
    };
    if let Some(m) = model
        && !models.contains(&m)
    {
        return Err(mismatch(machine, accelerator, m));
    }
    Ok(Commitment {
        commitment_type: Some(kind),
        accelerator,
    })
}

fn mismatch(machine: &str, accelerator: &str, model: &str) -> String {
    format!("`{machine}` carries `{accelerator}` GPUs, but the pool it covers has `{model}`")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Commitment types as the Compute API's `Commitment.type` enum spells
    /// them (there is no `GRAPHICS_OPTIMIZED_G2`: G2 is `GRAPHICS_OPTIMIZED`),
    /// and the A3 Mega's own accelerator type.
    #[test]
    fn commitment_types_and_accelerators_of_the_gpu_series() {
        for (machine, model, kind, accelerator) in [
            (
                "a2-highgpu-8g",
                "a100-40gb",
                Some("ACCELERATOR_OPTIMIZED"),
                "nvidia-tesla-a100",
            ),
            (
                "a2-ultragpu-8g",
                "a100-80gb",
                Some("ACCELERATOR_OPTIMIZED"),
                "nvidia-a100-80gb",
            ),
            (
                "a3-highgpu-8g",
                "h100-80gb-sxm",
                Some("ACCELERATOR_OPTIMIZED_A3"),
                "nvidia-h100-80gb",
            ),
            (
                "a3-megagpu-8g",
                "h100-80gb-sxm",
                Some("ACCELERATOR_OPTIMIZED_A3_MEGA"),
                "nvidia-h100-mega-80gb",
            ),
            (
                "a3-ultragpu-8g",
                "h200-141gb",
                Some("ACCELERATOR_OPTIMIZED_A3_ULTRA"),
                "nvidia-h200-141gb",
            ),
            (
                "a4-highgpu-8g",
                "b200-180gb",
                Some("ACCELERATOR_OPTIMIZED_A4"),
                "nvidia-b200",
            ),
            (
                "a4x-highgpu-4g",
                "gb200-186gb",
                Some("ACCELERATOR_OPTIMIZED_A4X"),
                "nvidia-gb200",
            ),
            (
                "g2-standard-48",
                "l4",
                Some("GRAPHICS_OPTIMIZED"),
                "nvidia-l4",
            ),
            (
                "g4-standard-384",
                "rtx-pro-6000-96gb",
                Some("GRAPHICS_OPTIMIZED_G4"),
                "nvidia-rtx-pro-6000",
            ),
            ("n1-standard-8-t4", "t4", None, "nvidia-tesla-t4"),
        ] {
            let c = commitment(machine, Some(model)).unwrap();
            assert_eq!(
                (c.commitment_type, c.accelerator),
                (kind, accelerator),
                "{machine}"
            );
        }
    }

    #[test]
    fn unknown_series_and_other_models_are_refused() {
        let e = commitment("a5x-highgpu-4g", Some("b300-269gb")).unwrap_err();
        assert!(e.contains("does not know"), "{e}");
        let e = commitment("a3-highgpu-8g", Some("h200-141gb")).unwrap_err();
        assert!(
            e.contains("`nvidia-h100-80gb`") && e.contains("`h200-141gb`"),
            "{e}"
        );
        let e = commitment("n1-standard-8-t4", Some("v100-16gb")).unwrap_err();
        assert!(e.contains("nvidia-tesla-t4"), "{e}");
        assert_eq!(
            n1_gpus("n1-standard-8-v100"),
            Some(("n1-standard-8", "nvidia-tesla-v100"))
        );
        assert_eq!(n1_gpus("a2-highgpu-1g"), None);
    }
}
