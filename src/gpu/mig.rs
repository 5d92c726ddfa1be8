//! MIG profile names and layouts.
//!
//! A layout (profile -> instances per GPU) is valid only if every instance can
//! be given a start from its profile's placement list with no two
//! `[start, start + memory_slices)` ranges overlapping, no profile exceeds
//! its max count, and an instance that takes all media engines (`+me.all`)
//! shares the GPU only with instances that have none (`-me`). Engines are not
//! otherwise counted. [`place`] decides that by searching the placements; it does
//! not consult a list of known-good layouts. With at most seven instances per
//! GPU the search is instant.

use super::catalog::{GpuModel, MigModel, MigProfile};

/// A profile name as written, resolved against a model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resolved {
    pub profile: &'static MigProfile,
    /// Whether the name was a driver-specific alias of the canonical one.
    pub alias: bool,
}

/// Why a profile name could not be resolved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NameError {
    /// Not of the form `[<C>c.]<G>g.<GB>gb[+attr]`.
    Malformed,
    /// A compute-instance sub-profile (`1c.2g.10gb`): only GPU-instance profiles can be laid out.
    ComputeInstance,
    /// Well formed, but the model has no such profile.
    Unknown,
}

/// The parts of a profile name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParsedName {
    pub compute_instance: Option<u32>,
    pub gpu_slices: u32,
    pub memory_gb: u32,
    /// `+me`, `-me`, `+me.all`, ... including the sign; empty when none.
    pub attributes: String,
}

/// Parses `[<C>c.]<G>g.<GB>gb[+attr,...|-attr,...]`.
pub fn parse_name(name: &str) -> Option<ParsedName> {
    let (base, attributes) = match name.find(['+', '-']) {
        Some(i) => (&name[..i], name[i..].to_string()),
        None => (name, String::new()),
    };
    if !attributes.is_empty() {
        let body = &attributes[1..];
        if body.is_empty()
            || !body
                .split(',')
                .all(|a| !a.is_empty() && a.chars().all(|c| c.is_ascii_alphanumeric() || c == '.'))
        {
            return None;
        }
    }
    let parts: Vec<&str> = base.split('.').collect();
    let (ci, g, gb) = match parts.as_slice() {
        [g, gb] => (None, *g, *gb),
        [c, g, gb] => (Some(*c), *g, *gb),
        _ => return None,
    };
    let num = |s: &str, suffix: &str| -> Option<u32> {
        let digits = s.strip_suffix(suffix)?;
        if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        digits.parse().ok()
    };
    let compute_instance = match ci {
        Some(c) => Some(num(c, "c")?),
        None => None,
    };
    Some(ParsedName {
        compute_instance,
        gpu_slices: num(g, "g")?,
        memory_gb: num(gb, "gb")?,
        attributes,
    })
}

/// Resolves a profile name on a model, accepting the aliases drivers produce
/// (`7g.79gb` for `7g.80gb`): the model's known aliases, and otherwise a name
/// whose slices and attributes match and whose memory is within 4% of exactly
/// one profile.
pub fn resolve(mig: &'static MigModel, name: &str) -> Result<Resolved, NameError> {
    let name = name.trim().to_ascii_lowercase();
    if let Some(p) = mig.profiles.iter().find(|p| p.name == name) {
        return Ok(Resolved {
            profile: p,
            alias: false,
        });
    }
    if let Some((_, canonical)) = mig.aliases.iter().find(|(seen, _)| *seen == name)
        && let Some(p) = mig.profiles.iter().find(|p| p.name == *canonical)
    {
        return Ok(Resolved {
            profile: p,
            alias: true,
        });
    }
    let parsed = parse_name(&name).ok_or(NameError::Malformed)?;
    if parsed
        .compute_instance
        .is_some_and(|c| c != parsed.gpu_slices)
    {
        return Err(NameError::ComputeInstance);
    }
    let canonical_attrs = |p: &MigProfile| -> String {
        p.name
            .find(['+', '-'])
            .map(|i| p.name[i..].to_string())
            .unwrap_or_default()
    };
    let candidates: Vec<&'static MigProfile> = mig
        .profiles
        .iter()
        .filter(|p| {
            p.compute_slices == parsed.gpu_slices && canonical_attrs(p) == parsed.attributes
        })
        .filter(|p| {
            let tol = (p.memory_gb as f64 * 0.04).max(1.0);
            (p.memory_gb as f64 - parsed.memory_gb as f64).abs() <= tol
        })
        .collect();
    match candidates.as_slice() {
        [p] => Ok(Resolved {
            profile: p,
            alias: p.name != name,
        }),
        _ => Err(NameError::Unknown),
    }
}

/// How the driver, the device plugin and mig-parted spell a profile name
/// written as `name`: trimmed, lower case, without a compute-instance prefix
/// equal to the GPU slices (`1c.1g.10gb` is `1g.10gb`) and without leading
/// zeros. A name that does not parse is only trimmed and lower-cased.
pub fn spelling(name: &str) -> String {
    let lower = name.trim().to_ascii_lowercase();
    match parse_name(&lower) {
        Some(p) => format!("{}g.{}gb{}", p.gpu_slices, p.memory_gb, p.attributes),
        None => lower,
    }
}

/// The resource name the device plugin advertises for a profile under the mixed strategy.
pub fn resource_name(profile_name: &str) -> String {
    format!("nvidia.com/mig-{}", profile_name.replace('+', "."))
}

/// An instance placed on a GPU.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Placement {
    pub profile: &'static MigProfile,
    pub start: u32,
}

/// Why a layout does not fit on one GPU.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FitError {
    /// More instances of a profile than the GPU allows.
    TooMany {
        profile: &'static str,
        count: u32,
        max: u32,
    },
    /// More compute slices than the GPU has.
    Compute { used: u32, total: u32 },
    /// More memory slices than the GPU has.
    Memory { used: u32, total: u32 },
    /// Enough slices in total, but no arrangement of the allowed starts avoids overlaps.
    NoPlacement,
    /// A `+me.all` instance takes all of the GPU's media engines, and
    /// another instance would have some (only `-me` profiles have none).
    MediaEngines {
        all: &'static str,
        other: &'static str,
    },
}

impl std::fmt::Display for FitError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            FitError::TooMany {
                profile,
                count,
                max,
            } => write!(
                f,
                "{count} instances of {profile}, but a GPU holds at most {max}"
            ),
            FitError::Compute { used, total } => {
                write!(
                    f,
                    "the layout uses {used} compute slices; the GPU has {total}"
                )
            }
            FitError::Memory { used, total } => {
                write!(
                    f,
                    "the layout uses {used} memory slices; the GPU has {total}"
                )
            }
            FitError::NoPlacement => write!(
                f,
                "no arrangement of the instances on the GPU's memory slices avoids an overlap"
            ),
            FitError::MediaEngines { all, other } => write!(
                f,
                "{all} takes all of the GPU's media engines, and {other} has some; only `-me` profiles can share the GPU with it"
            ),
        }
    }
}

/// Places a layout (profile, instances per GPU) on one GPU, or says why it cannot be done.
pub fn place(
    mig: &MigModel,
    layout: &[(&'static MigProfile, u32)],
) -> Result<Vec<Placement>, FitError> {
    let mut merged: Vec<(&'static MigProfile, u32)> = Vec::new();
    for &(p, n) in layout {
        match merged.iter_mut().find(|(q, _)| std::ptr::eq(*q, p)) {
            Some((_, m)) => *m = m.saturating_add(n),
            None => merged.push((p, n)),
        }
    }
    for &(p, n) in &merged {
        if n > p.max_count {
            return Err(FitError::TooMany {
                profile: p.name,
                count: n,
                max: p.max_count,
            });
        }
    }
    // `+me.all` gives one instance every media engine of the GPU (NVDEC,
    // NVENC, JPEG, OFA): the others must be `-me`, which have none.
    if let Some(&(all, _)) = merged.iter().find(|(p, _)| p.name.ends_with("+me.all"))
        && let Some(&(other, _)) = merged
            .iter()
            .find(|(p, _)| !std::ptr::eq(*p, all) && !p.name.ends_with("-me"))
    {
        return Err(FitError::MediaEngines {
            all: all.name,
            other: other.name,
        });
    }
    let compute: u32 = merged.iter().map(|(p, n)| p.compute_slices * n).sum();
    if compute > mig.compute_slices {
        return Err(FitError::Compute {
            used: compute,
            total: mig.compute_slices,
        });
    }
    let memory: u32 = merged.iter().map(|(p, n)| p.memory_slices * n).sum();
    if memory > mig.memory_slices {
        return Err(FitError::Memory {
            used: memory,
            total: mig.memory_slices,
        });
    }
    let mut instances: Vec<&'static MigProfile> = merged
        .iter()
        .flat_map(|&(p, n)| std::iter::repeat_n(p, n as usize))
        .collect();
    // Largest and most constrained first: fewer dead ends.
    instances.sort_by_key(|p| (std::cmp::Reverse(p.memory_slices), p.starts.len()));
    let mut placed = Vec::with_capacity(instances.len());
    if search(&instances, 0, &mut placed) {
        placed.sort_by_key(|p: &Placement| p.start);
        Ok(placed)
    } else {
        Err(FitError::NoPlacement)
    }
}

fn search(instances: &[&'static MigProfile], used: u32, placed: &mut Vec<Placement>) -> bool {
    let Some((first, rest)) = instances.split_first() else {
        return true;
    };
    for &start in first.starts {
        let mask = ((1u32 << first.memory_slices) - 1) << start;
        if used & mask == 0 {
            placed.push(Placement {
                profile: first,
                start,
            });
            if search(rest, used | mask, placed) {
                return true;
            }
            placed.pop();
        }
    }
    false
}

/// Layouts that fit and are reached from `layout` by removing the fewest
/// instances: what to suggest when a layout does not fit (at most `limit`).
/// Counts above a profile's most on one GPU go first (no layout that fits
/// has more), and the search gives up after a bounded number of
/// candidates, so an absurd layout answers at once.
pub fn nearest_fits(
    mig: &MigModel,
    layout: &[(&'static MigProfile, u32)],
    limit: usize,
) -> Vec<Vec<(&'static MigProfile, u32)>> {
    let clamped: Vec<(&'static MigProfile, u32)> = layout
        .iter()
        .map(|(p, n)| (*p, (*n).min(p.max_count)))
        .collect();
    let total: u32 = clamped.iter().map(|(_, n)| n).sum();
    let mut budget = SEARCH_BUDGET;
    for removed in 0..=total {
        let mut found = Vec::new();
        let mut current = clamped.clone();
        let mut search = Search {
            mig,
            layout: &clamped,
            found: &mut found,
            limit,
            budget: &mut budget,
        };
        search.sub_layouts(0, removed, &mut current);
        if !found.is_empty() {
            // The layout as given does not fit, so removing nothing from
            // the clamped one can only fit when clamping removed some.
            return found;
        }
        if budget == 0 {
            break;
        }
    }
    Vec::new()
}

/// Candidate layouts `nearest_fits` looks at, at most.
const SEARCH_BUDGET: u32 = 200_000;

struct Search<'a> {
    mig: &'a MigModel,
    layout: &'a [(&'static MigProfile, u32)],
    found: &'a mut Vec<Vec<(&'static MigProfile, u32)>>,
    limit: usize,
    budget: &'a mut u32,
}

impl Search<'_> {
    fn sub_layouts(
        &mut self,
        i: usize,
        remove: u32,
        current: &mut Vec<(&'static MigProfile, u32)>,
    ) {
        if self.found.len() >= self.limit || *self.budget == 0 {
            return;
        }
        if i == self.layout.len() {
            *self.budget = self.budget.saturating_sub(1);
            if remove == 0 {
                let candidate: Vec<_> = current.iter().copied().filter(|(_, n)| *n > 0).collect();
                // Cheap bounds before placing: the slices must fit at all.
                let memory: u32 = candidate.iter().map(|(p, n)| p.memory_slices * n).sum();
                let compute: u32 = candidate.iter().map(|(p, n)| p.compute_slices * n).sum();
                if !candidate.is_empty()
                    && memory <= self.mig.memory_slices
                    && compute <= self.mig.compute_slices
                    && place(self.mig, &candidate).is_ok()
                {
                    self.found.push(candidate);
                }
            }
            return;
        }
        let have = self.layout[i].1;
        for take in 0..=have.min(remove) {
            current[i].1 = have - take;
            self.sub_layouts(i + 1, remove - take, current);
        }
        current[i].1 = have;
    }
}

/// Writes a layout as `2×3g.40gb + 1×1g.10gb`.
pub fn describe(layout: &[(&'static MigProfile, u32)]) -> String {
    layout
        .iter()
        .map(|(p, n)| format!("{n}×{}", p.name))
        .collect::<Vec<_>>()
        .join(" + ")
}

/// The MIG facts of a model, if it has MIG.
pub fn mig_of(model: &'static GpuModel) -> Option<&'static MigModel> {
    model.mig.as_ref()
}

#[cfg(test)]
#[path = "mig_tests.rs"]
mod tests;
