//! Documents compared by value: before a document's JSON form is
//! fingerprinted, the defaults its schema states are written out for the
//! fields it leaves out (serde reads them so), and where the schema holds a
//! decimal amount (`Money`, `Ratio`) the amount is given its canonical
//! text, so that `14.75`, `"14.7500"` and `14.750` are one value. A pull
//! request that writes a default out, or re-quotes a price, changes
//! nothing. A Config mapping left out (`render`, `thresholds`, a map) is
//! the mapping written empty, filled alike. Both are read from the embedded schemas themselves, so a new
//! field is covered without a list to keep.

use crate::model::Kind;
use serde_json::Value as Json;
use std::collections::BTreeMap;
use std::sync::OnceLock;

/// The schema definitions that are decimal amounts.
const AMOUNTS: [&str; 2] = ["Money", "Ratio"];

/// One step of a path into a document: a field, or any item or entry.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Step {
    Field(String),
    Any,
}

/// The paths at which `kind`'s schema holds an amount.
fn paths(kind: Kind) -> &'static [Vec<Step>] {
    static CACHE: OnceLock<BTreeMap<Kind, Vec<Vec<Step>>>> = OnceLock::new();
    let cache = CACHE.get_or_init(|| {
        Kind::ALL
            .into_iter()
            .map(|k| {
                let schema = schema(k);
                let mut out = Vec::new();
                walk(schema, schema, &mut Vec::new(), &mut Vec::new(), &mut out);
                (k, out)
            })
            .collect()
    });
    &cache[&kind]
}

/// Collects the paths of `node` (a part of `root`) that are amounts.
/// `through` holds the definitions being walked, so a recursive one ends.
fn walk<'a>(
    root: &'a Json,
    node: &'a Json,
    path: &mut Vec<Step>,
    through: &mut Vec<&'a str>,
    out: &mut Vec<Vec<Step>>,
) {
    if let Some(target) = node.get("$ref").and_then(Json::as_str) {
        let name = target.strip_prefix("#/$defs/").unwrap_or(target);
        if AMOUNTS.contains(&name) {
            out.push(path.clone());
        } else if let Some(def) = root
            .get("$defs")
            .and_then(|d| d.get(name))
            .filter(|_| !through.contains(&name))
        {
            through.push(name);
            walk(root, def, path, through, out);
            through.pop();
        }
    }
    if let Some(props) = node.get("properties").and_then(Json::as_object) {
        for (field, sub) in props {
            path.push(Step::Field(field.clone()));
            walk(root, sub, path, through, out);
            path.pop();
        }
    }
    for key in ["items", "additionalProperties"] {
        if let Some(sub) = node.get(key).filter(|s| s.is_object()) {
            path.push(Step::Any);
            walk(root, sub, path, through, out);
            path.pop();
        }
    }
    for key in ["anyOf", "oneOf", "allOf"] {
        for sub in node.get(key).and_then(Json::as_array).into_iter().flatten() {
            walk(root, sub, path, through, out);
        }
    }
}

/// Writes every amount of a document of `kind` as its canonical text (a
/// string, trailing zeros dropped), after writing out the defaults its
/// schema states for the fields left out. A value that does not read as a
/// decimal is left as it is: the shape check has refused it already.
pub fn canonicalize(kind: Kind, instance: &mut Json) {
    let schema = schema(kind);
    // Every mapping of the Config reads as its default when left out (none
    // is optional); elsewhere one left out may mean absent (a Cluster's
    // `kueue`), which the schema does not tell apart.
    fill_defaults(schema, schema, instance, 0, kind == Kind::Config);
    for path in paths(kind) {
        rewrite(instance, path);
    }
}

/// A kind's embedded schema, read once.
fn schema(kind: Kind) -> &'static Json {
    static CACHE: OnceLock<BTreeMap<Kind, Json>> = OnceLock::new();
    let cache = CACHE.get_or_init(|| {
        Kind::ALL
            .into_iter()
            .map(|k| {
                let schema = serde_json::from_str(crate::model::schema::embedded(k))
                    .expect("embedded schema is JSON");
                (k, schema)
            })
            .collect()
    });
    &cache[&kind]
}

/// Writes into `node` the `default` of every field its schema (`schema`, a
/// part of `root`) states one for and the document leaves out: serde reads a
/// field left out as that default, so writing it out is no change. Only
/// plain objects (a struct's `properties`, or an optional one: `anyOf` of it
/// and null) are filled; where the schema offers shapes to choose between, a
/// default of one is not written into another.
fn fill_defaults(root: &Json, schema: &Json, node: &mut Json, depth: usize, empty_maps: bool) {
    if depth > 64 {
        return;
    }
    let mut schema = schema;
    // Follow references, and an optional value to what it holds.
    for _ in 0..8 {
        if let Some(target) = schema.get("$ref").and_then(Json::as_str) {
            let name = target.strip_prefix("#/$defs/").unwrap_or(target);
            match root.get("$defs").and_then(|d| d.get(name)) {
                Some(def) => schema = def,
                None => return,
            }
            continue;
        }
        let branches = schema.get("anyOf").and_then(Json::as_array);
        let not_null: Vec<&Json> = branches
            .into_iter()
            .flatten()
            .filter(|b| b.get("type").and_then(Json::as_str) != Some("null"))
            .collect();
        match (branches, not_null.as_slice()) {
            (Some(_), [one]) => schema = one,
            (Some(_), _) => return,
            (None, _) => break,
        }
    }
    match node {
        Json::Object(fields) => {
            if let Some(props) = schema.get("properties").and_then(Json::as_object) {
                for (name, sub) in props {
                    match fields.get_mut(name) {
                        Some(value) => fill_defaults(root, sub, value, depth + 1, empty_maps),
                        None => {
                            if let Some(default) = sub.get("default") {
                                fields.insert(name.clone(), default.clone());
                            } else if empty_maps
                                && !required(schema, name)
                                && defaults_to_empty(root, sub)
                            {
                                // A mapping serde reads as its default when
                                // left out (`render`, `thresholds`, a map):
                                // written out as `{}`, filled alike.
                                let mut empty = Json::Object(Default::default());
                                fill_defaults(root, sub, &mut empty, depth + 1, empty_maps);
                                fields.insert(name.clone(), empty);
                            }
                        }
                    }
                }
            } else if let Some(sub) = schema.get("additionalProperties").filter(|s| s.is_object()) {
                for value in fields.values_mut() {
                    fill_defaults(root, sub, value, depth + 1, empty_maps);
                }
            }
        }
        Json::Array(items) => {
            if let Some(sub) = schema.get("items").filter(|s| s.is_object()) {
                for item in items {
                    fill_defaults(root, sub, item, depth + 1, empty_maps);
                }
            }
        }
        _ => {}
    }
}

/// Whether `name` is a required field of the object schema `schema`.
fn required(schema: &Json, name: &str) -> bool {
    schema
        .get("required")
        .and_then(Json::as_array)
        .is_some_and(|r| r.iter().any(|n| n.as_str() == Some(name)))
}

/// Whether a field of schema `sub`, left out, reads as an empty mapping
/// filled with its defaults: a plain object (through references, not an
/// optional one: `anyOf` with null is absent, not empty) that requires no
/// field of its own.
fn defaults_to_empty(root: &Json, sub: &Json) -> bool {
    let mut schema = sub;
    for _ in 0..8 {
        match schema.get("$ref").and_then(Json::as_str) {
            Some(target) => {
                let name = target.strip_prefix("#/$defs/").unwrap_or(target);
                match root.get("$defs").and_then(|d| d.get(name)) {
                    Some(def) => schema = def,
                    None => return false,
                }
            }
            None => break,
        }
    }
    schema.get("type").and_then(Json::as_str) == Some("object")
        && schema.get("anyOf").is_none()
        && schema
            .get("required")
            .and_then(Json::as_array)
            .is_none_or(|r| r.is_empty())
}

fn rewrite(node: &mut Json, path: &[Step]) {
    let Some((step, rest)) = path.split_first() else {
        let text = match &*node {
            Json::Number(n) => n.to_string(),
            Json::String(s) => s.clone(),
            _ => return,
        };
        if let Ok(d) = text.parse::<rust_decimal::Decimal>() {
            *node = Json::String(d.normalize().to_string());
        }
        return;
    };
    match (step, node) {
        (Step::Field(f), Json::Object(m)) => {
            if let Some(v) = m.get_mut(f) {
                rewrite(v, rest);
            }
        }
        (Step::Any, Json::Object(m)) => m.values_mut().for_each(|v| rewrite(v, rest)),
        (Step::Any, Json::Array(items)) => items.iter_mut().for_each(|v| rewrite(v, rest)),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn every_amount_a_schema_names_is_found() {
        for kind in Kind::ALL {
            let text = crate::model::schema::embedded(kind);
            let named: usize = AMOUNTS
                .iter()
                .map(|a| text.matches(&format!("\"#/$defs/{a}\"")).count())
                .sum();
            assert!(
                paths(kind).len() >= named,
                "{kind:?}: {} paths for {named} references",
                paths(kind).len()
            );
        }
        // The kinds that hold money do hold it.
        assert!(!paths(Kind::PriceCatalog).is_empty());
        assert!(!paths(Kind::Reservation).is_empty());
        assert!(!paths(Kind::Team).is_empty());
        assert!(!paths(Kind::Config).is_empty());
    }

    #[test]
    fn an_amount_however_written_is_one_value() {
        let doc = |price: Json| {
            let mut d = json!({
                "metadata": {"name": "r"},
                "spec": {"hourlyPrice": price, "instanceType": "14.7500"}
            });
            canonicalize(Kind::Reservation, &mut d);
            d
        };
        let a = doc(json!(14.75));
        assert_eq!(a["spec"]["hourlyPrice"], "14.75");
        assert_eq!(doc(json!("14.7500")), a);
        assert_eq!(doc(json!("14.750")), a);
        assert_ne!(doc(json!("14.751")), a);
        assert_eq!(doc(json!(50000.0))["spec"]["hourlyPrice"], "50000");
        assert_eq!(doc(json!("50000"))["spec"]["hourlyPrice"], "50000");
        // What is not an amount is left as written.
        assert_eq!(a["spec"]["instanceType"], "14.7500");
        // Catalog prices sit in a list.
        let mut c = json!({"spec": {"prices": [{"onDemand": "21.960", "region": "1.10"}]}});
        canonicalize(Kind::PriceCatalog, &mut c);
        assert_eq!(c["spec"]["prices"][0]["onDemand"], "21.96");
        assert_eq!(c["spec"]["prices"][0]["region"], "1.10");
    }

    #[test]
    fn a_default_written_out_is_the_field_left_out() {
        let config = |thresholds: Json| {
            let mut d = json!({
                "metadata": {"name": "acme"},
                "spec": {"thresholds": thresholds}
            });
            canonicalize(Kind::Config, &mut d);
            d
        };
        let left_out = config(json!({"lowUtilization": 0.3}));
        assert_eq!(
            config(json!({"lowUtilization": 0.3, "idleSpendShare": 0.50, "autoApprovalGpus": 16})),
            left_out
        );
        assert_eq!(left_out["spec"]["thresholds"]["idleSpendShare"], "0.5");
        // Another value is another value.
        assert_ne!(
            config(json!({"lowUtilization": 0.3, "autoApprovalGpus": 17})),
            left_out
        );
        // An optional field left out is not written as some value.
        let mut c = json!({"metadata": {"name": "c"}, "spec": {"nodePools": [{"name": "p"}]}});
        canonicalize(Kind::Cluster, &mut c);
        assert!(c["spec"].get("kueue").is_none_or(Json::is_null), "{c}");
    }

    #[test]
    fn a_config_mapping_left_out_is_the_mapping_written_empty() {
        let config = |spec: Json| {
            let mut d = json!({"metadata": {"name": "acme"}, "spec": spec});
            canonicalize(Kind::Config, &mut d);
            d
        };
        let bare = config(json!({"roles": {}}));
        assert_eq!(
            config(
                json!({"roles": {}, "render": {}, "costs": {}, "severities": {}, "thresholds": {}})
            ),
            bare
        );
        // The thresholds' defaults, written out whole, are the block left out.
        assert_eq!(
            config(json!({"roles": {}, "thresholds": {"lowUtilization": "0.40"}})),
            config(json!({"roles": {}, "thresholds": {"lowUtilization": 0.4}}))
        );
        assert_ne!(
            config(json!({"roles": {}, "severities": {"usage-stale": "allow"}})),
            bare
        );
    }
}
