//! The facts of a changed PriceCatalog: what entries it adds and removes, and
//! the largest fall and rise of one GPU-hour price against the base, and
//! against the catalog as it was 30 days before the base (price cuts split
//! over several pull requests add up).

use super::super::Env;
use super::super::model::*;
use super::super::values::round;
use crate::model::*;
use crate::policy::change::Change;
use schemars::JsonSchema;
use serde::Serialize;
use std::collections::BTreeMap;

/// What a changed PriceCatalog's conditions read.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct CatalogSubject {
    /// The evaluation time (`--at`, default now), RFC 3339.
    pub now: String,
    pub config: ConfigFacts,
    /// What the change does to the rendered objects and files (zero without a base).
    pub effects: EffectFacts,
    pub change: CatalogChange,
    pub catalog: CatalogFacts,
}

#[derive(Debug, Clone, Default, Serialize, JsonSchema)]
pub struct CatalogFacts {
    /// The catalog's name.
    pub name: String,
    /// Price entries (provider, region, instance type).
    pub entries: u32,
}

#[derive(Debug, Clone, Default, Serialize, JsonSchema)]
pub struct CatalogChange {
    #[serde(flatten)]
    pub base: ChangeFacts,
    /// Entries the change adds.
    pub entries_added: u32,
    /// Entries the change removes.
    pub entries_removed: u32,
    /// Entries with at least one price that differs.
    pub prices_changed: u32,
    /// The largest fall of one GPU-hour price (a price over `gpusPerInstance`, so more GPUs per
    /// instance is a cut too), as a share of its old value (0.25: a quarter cheaper); a price
    /// added to an entry counts as a fall from the entry's old on-demand price, which pools
    /// were priced at in its place; a removed price or entry as a fall of 1. Measured on the
    /// base's pools too (the entry each resolves to, before and with the change; one left
    /// unpriced falls by 1), so an entry added where a region-less on-premises pool finds it
    /// first, or entries reordered, is a cut.
    pub largest_decrease: f64,
    /// The largest rise of one price, as a share of its old value.
    pub largest_increase: f64,
    /// `largest_decrease` measured from the prices as they were 30 days before the base
    /// revision, entry by entry (provider, region, instance type) whichever catalog held
    /// them (its git history; 0 without history or for entries new since): price cuts split
    /// over several pull requests add up, and renaming a catalog keeps its history.
    pub recent_largest_decrease: f64,
}

/// Builds the facts of a changed PriceCatalog.
pub fn catalog(env: &Env<'_>, doc: &Document<CatalogSpec>, change: &Change) -> CatalogSubject {
    let entries = |d: &Document<CatalogSpec>| -> BTreeMap<Key, Vec<Option<f64>>> {
        d.spec
            .prices
            .iter()
            .map(|e| {
                (
                    (
                        e.provider.value,
                        e.region.value.clone(),
                        e.instance_type.value.clone(),
                    ),
                    gpu_hour_prices(e),
                )
            })
            .collect()
    };
    let now = if change.kind == crate::policy::change::ChangeKind::Removed {
        BTreeMap::new()
    } else {
        entries(doc)
    };
    let before = change
        .previous::<CatalogSpec>()
        .map(entries)
        .unwrap_or_default();
    let (changed, down, up) = compare(&before, &now);
    // What each pool is priced at, before and after: an entry another pool
    // falls back to (a region-less on-premises pool takes the first of its
    // instance type in any region), or entries reordered, cut a price no
    // entry's own prices show.
    let down = down.max(pools_fall(env, doc, change));
    // Prices are known by provider, region and instance type across every
    // catalog (`duplicate-price`): the entries as they were 30 days before,
    // whichever catalog held them, so renaming a catalog or moving an entry
    // to another keeps its history.
    let recent = if change.kind == crate::policy::change::ChangeKind::Removed {
        0.0
    } else {
        let then: BTreeMap<Key, Vec<Option<f64>>> = env
            .aggregates
            .platform_growth
            .catalogs_then
            .values()
            .flat_map(entries)
            // The entries this catalog holds or held in the base: another
            // catalog's are not this one's to remove.
            .filter(|(k, _)| now.contains_key(k) || before.contains_key(k))
            .collect();
        compare(&then, &now).1
    };
    CatalogSubject {
        now: env.at.to_string(),
        config: super::super::config_facts(env.config, env.world),
        effects: env.effects.clone(),
        change: CatalogChange {
            base: super::super::change_facts(change),
            entries_added: now.keys().filter(|k| !before.contains_key(*k)).count() as u32,
            entries_removed: before.keys().filter(|k| !now.contains_key(*k)).count() as u32,
            prices_changed: changed,
            largest_decrease: round(down),
            largest_increase: round(up),
            recent_largest_decrease: round(recent),
        },
        catalog: CatalogFacts {
            name: doc.name().to_string(),
            entries: now.len() as u32,
        },
    }
}

type Key = (Provider, String, String);

/// An entry's GPU-hour prices (a price over the GPUs it buys): on demand,
/// spot, 1-year, 3-year, capacity block.
fn gpu_hour_prices(e: &PriceEntry) -> Vec<Option<f64>> {
    let per = (e.gpus_per_instance.value.0 as f64).max(1.0);
    let g = |m: Option<&Money>| m.map(|m| crate::cost::prices::float(m.0) / per);
    vec![
        g(Some(&e.on_demand.value)),
        g(e.spot.as_ref().map(|m| &m.value)),
        g(e.reserved1y.as_ref().map(|m| &m.value)),
        g(e.reserved3y.as_ref().map(|m| &m.value)),
        g(e.capacity_block.as_ref().map(|m| &m.value)),
    ]
}

/// The largest fall of a GPU-hour price of the entry each of the base's
/// pools resolves to, from the base's catalogs to the same with this
/// change (a pool left unpriced is a fall of 1).
fn pools_fall(env: &Env<'_>, doc: &Document<CatalogSpec>, change: &Change) -> f64 {
    use crate::policy::change::ChangeKind;
    let Some(base) = env.base else { return 0.0 };
    let before: BTreeMap<&str, &CatalogSpec> = base
        .catalogs
        .iter()
        .map(|(n, c)| (n.as_str(), &c.spec))
        .collect();
    let mut after = before.clone();
    if let Some(previous) = change.previous::<CatalogSpec>() {
        after.remove(previous.name());
    }
    after.remove(doc.name());
    if change.kind != ChangeKind::Removed {
        after.insert(doc.name(), &doc.spec);
    }
    let mut down = 0.0f64;
    for cluster in base.clusters.values() {
        let c = &cluster.spec;
        let region = c.region.as_ref().map(|r| r.value.as_str());
        for pool in &c.node_pools {
            let Some(t) = &pool.instance_type else {
                continue;
            };
            let price = |cats: &BTreeMap<&str, &CatalogSpec>| {
                crate::model::catalog::entry_in(
                    cats.values().copied(),
                    c.provider.value,
                    region,
                    &t.value,
                )
                .map(gpu_hour_prices)
            };
            let (Some(old), new) = (price(&before), price(&after)) else {
                continue;
            };
            let key: Key = (c.provider.value, String::new(), t.value.clone());
            let now: BTreeMap<Key, Vec<Option<f64>>> =
                new.map(|p| (key.clone(), p)).into_iter().collect();
            down = down.max(compare(&[(key, old)].into_iter().collect(), &now).1);
        }
    }
    down
}

/// Compares GPU-hour prices: entries with a price that differs, the largest
/// fall and the largest rise (shares of the old price).
fn compare(
    before: &BTreeMap<Key, Vec<Option<f64>>>,
    now: &BTreeMap<Key, Vec<Option<f64>>>,
) -> (u32, f64, f64) {
    let (mut changed, mut down, mut up) = (0u32, 0.0f64, 0.0f64);
    for (k, prices) in now {
        let Some(old) = before.get(k) else { continue };
        if old == prices {
            continue;
        }
        changed += 1;
        let old_on_demand = old[0];
        for (a, b) in old.iter().zip(prices) {
            match (a, b) {
                (Some(a), Some(b)) if *a > 0.0 => {
                    down = down.max((a - b) / a);
                    up = up.max((b - a) / a);
                }
                // A price that disappears is as good as free for what it priced.
                (Some(_), None) => down = down.max(1.0),
                // A price that appears replaces the on-demand price pools fell back to.
                (None, Some(b)) => {
                    if let Some(a) = old_on_demand.filter(|a| *a > 0.0) {
                        down = down.max((a - b) / a);
                    }
                }
                _ => {}
            }
        }
    }
    if before.keys().any(|k| !now.contains_key(k)) {
        // Without its entry a pool is unpriced, as good as free to every cost rule.
        down = 1.0;
    }
    (changed, down, up)
}
