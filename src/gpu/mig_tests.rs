//! MIG names and placements, case by case.

use super::*;
use crate::gpu::catalog::{PlacementStatus, model};

fn h100() -> &'static MigModel {
    model("h100-80gb-sxm").unwrap().mig.as_ref().unwrap()
}

fn layout(mig: &'static MigModel, spec: &[(&str, u32)]) -> Vec<(&'static MigProfile, u32)> {
    spec.iter()
        .map(|(n, c)| (resolve(mig, n).unwrap().profile, *c))
        .collect()
}

#[test]
fn parses_profile_names() {
    assert_eq!(
        parse_name("1c.2g.10gb").unwrap(),
        ParsedName {
            compute_instance: Some(1),
            gpu_slices: 2,
            memory_gb: 10,
            attributes: String::new()
        }
    );
    assert_eq!(parse_name("1g.10gb+me").unwrap().attributes, "+me");
    assert_eq!(parse_name("2g.48gb-me").unwrap().attributes, "-me");
    assert!(parse_name("1g10gb").is_none());
    assert!(parse_name("1g.10").is_none());
    assert!(parse_name("1g.10gb+").is_none());
}

#[test]
fn spelling_is_what_the_device_plugin_advertises() {
    for (written, spelled) in [
        ("1g.10gb", "1g.10gb"),
        ("1G.10GB", "1g.10gb"),
        (" 1g.10gb ", "1g.10gb"),
        ("01g.010gb", "1g.10gb"),
        ("1c.1g.10gb", "1g.10gb"),
        ("1g.10gb+ME", "1g.10gb+me"),
        ("7g.79gb", "7g.79gb"),
        ("nonsense", "nonsense"),
    ] {
        assert_eq!(spelling(written), spelled, "{written}");
    }
}

#[test]
fn resolves_aliases() {
    let mig = h100();
    let r = resolve(mig, "7g.79gb").unwrap();
    assert_eq!((r.profile.name, r.alias), ("7g.80gb", true));
    let r = resolve(mig, "3g.39gb").unwrap();
    assert_eq!((r.profile.name, r.alias), ("3g.40gb", true));
    assert!(!resolve(mig, "1g.10gb").unwrap().alias);
    assert_eq!(resolve(mig, "1g.5gb"), Err(NameError::Unknown));
    assert_eq!(resolve(mig, "1c.2g.20gb"), Err(NameError::ComputeInstance));
    assert_eq!(resolve(mig, "big"), Err(NameError::Malformed));
    let gb200 = model("gb200").unwrap().mig.as_ref().unwrap();
    assert_eq!(resolve(gb200, "7g.189gb").unwrap().profile.name, "7g.186gb");
    assert_eq!(resource_name("1g.10gb+me"), "nvidia.com/mig-1g.10gb.me");
}

#[test]
fn valid_layouts_fit() {
    let mig = h100();
    for spec in [
        vec![("7g.80gb", 1)],
        vec![("4g.40gb", 1), ("3g.40gb", 1)],
        vec![("1g.10gb", 7)],
        vec![("2g.20gb", 3), ("1g.20gb", 1)],
        vec![("3g.40gb", 1), ("2g.20gb", 1), ("1g.10gb", 2)],
        vec![("1g.10gb+me", 1), ("1g.10gb", 6)],
    ] {
        assert!(place(mig, &layout(mig, &spec)).is_ok(), "{spec:?}");
    }
}

#[test]
fn invalid_layouts_say_why() {
    let mig = h100();
    assert_eq!(
        place(mig, &layout(mig, &[("3g.40gb", 2), ("1g.10gb", 1)])),
        Err(FitError::Memory { used: 9, total: 8 })
    );
    assert_eq!(
        place(mig, &layout(mig, &[("1g.20gb", 4), ("1g.10gb", 1)])),
        Err(FitError::Memory { used: 9, total: 8 })
    );
    // Counts of one profile (spelt two ways) that add up past 2^32 are
    // too many, not a sum that wrapped round to 1.
    assert!(matches!(
        place(mig, &layout(mig, &[("1g.10gb", u32::MAX), ("1g.10gb", 2)])),
        Err(FitError::TooMany {
            count: u32::MAX,
            ..
        })
    ));
    assert_eq!(
        place(mig, &layout(mig, &[("1g.10gb+me", 2)])),
        Err(FitError::TooMany {
            profile: "1g.10gb+me",
            count: 2,
            max: 1
        })
    );
    assert_eq!(
        place(
            mig,
            &layout(mig, &[("4g.40gb", 1), ("3g.40gb", 1), ("1g.10gb", 1)])
        ),
        Err(FitError::Compute { used: 8, total: 7 })
    );
    let nearest = nearest_fits(mig, &layout(mig, &[("1g.20gb", 4), ("1g.10gb", 1)]), 3);
    assert!(nearest.iter().all(|l| place(mig, l).is_ok()));
    let described: Vec<String> = nearest.iter().map(|l| describe(l)).collect();
    assert!(
        described.contains(&"4×1g.20gb".to_string()),
        "{described:?}"
    );
    assert!(
        described.contains(&"3×1g.20gb + 1×1g.10gb".to_string()),
        "{described:?}"
    );
}

/// The reference derives 77 valid non-empty multisets of the seven base
/// profiles (28 maximal, 17 using all 7 compute slices) for the 8-slot family.
#[test]
fn enumeration_matches_the_derived_combinations() {
    let mig = h100();
    let base: Vec<&'static MigProfile> = mig
        .profiles
        .iter()
        .filter(|p| !p.has_attributes())
        .collect();
    let mut valid: Vec<Vec<u32>> = Vec::new();
    let mut counts = vec![0u32; base.len()];
    fn rec(
        i: usize,
        base: &[&'static MigProfile],
        counts: &mut Vec<u32>,
        mig: &MigModel,
        valid: &mut Vec<Vec<u32>>,
    ) {
        if i == base.len() {
            if counts.iter().any(|&c| c > 0) {
                let l: Vec<_> = base
                    .iter()
                    .zip(counts.iter())
                    .filter(|(_, c)| **c > 0)
                    .map(|(p, c)| (*p, *c))
                    .collect();
                if place(mig, &l).is_ok() {
                    valid.push(counts.clone());
                }
            }
            return;
        }
        for c in 0..=base[i].max_count {
            counts[i] = c;
            rec(i + 1, base, counts, mig, valid);
        }
        counts[i] = 0;
    }
    rec(0, &base, &mut counts, mig, &mut valid);
    assert_eq!(valid.len(), 77);
    let full = valid
        .iter()
        .filter(|c| {
            c.iter()
                .zip(&base)
                .map(|(n, p)| n * p.compute_slices)
                .sum::<u32>()
                == 7
        })
        .count();
    assert_eq!(full, 17);
    let maximal = valid
        .iter()
        .filter(|c| {
            (0..base.len()).all(|i| {
                let mut more = (*c).clone();
                more[i] += 1;
                !valid.contains(&more)
            })
        })
        .count();
    assert_eq!(maximal, 28);
    assert_eq!(
        model("b200")
            .unwrap()
            .mig
            .as_ref()
            .unwrap()
            .placement_status,
        PlacementStatus::Inferred
    );
}

/// The search, not the slice totals, decides: here the totals fit but the starts collide.
#[test]
fn search_finds_collisions_the_totals_miss() {
    static EVEN: MigProfile = MigProfile {
        name: "2g.even",
        gi_profile_id: 1,
        compute_slices: 1,
        memory_slices: 2,
        memory_gb: 2,
        max_count: 2,
        starts: &[0, 2],
    };
    static ODD: MigProfile = MigProfile {
        name: "2g.odd",
        gi_profile_id: 2,
        compute_slices: 1,
        memory_slices: 2,
        memory_gb: 2,
        max_count: 1,
        starts: &[1],
    };
    static TOY: MigModel = MigModel {
        compute_slices: 4,
        memory_slices: 4,
        profiles: &[],
        placement_status: PlacementStatus::Observed,
        aliases: &[],
        source: "test",
    };
    assert_eq!(
        place(&TOY, &[(&EVEN, 1), (&ODD, 1)]),
        Err(FitError::NoPlacement)
    );
    let placed = place(&TOY, &[(&EVEN, 2)]).unwrap();
    assert_eq!(
        placed.iter().map(|p| p.start).collect::<Vec<_>>(),
        vec![0, 2]
    );
}

#[test]
fn a30_has_four_slices() {
    let a30 = model("a30").unwrap().mig.as_ref().unwrap();
    assert!(place(a30, &layout(a30, &[("2g.12gb", 1), ("1g.6gb", 2)])).is_ok());
    assert!(place(a30, &layout(a30, &[("2g.12gb", 2), ("1g.6gb", 1)])).is_err());
}
