//! The documentation keeps up with the code: every diagnostic code is in
//! `docs/codes.md` with its severity, and every field of every kind's schema
//! is in `docs/documents.md` under that kind, and every link between the
//! README and the docs reaches its file and heading.

use capops::diag::Code;
use capops::model::{Kind, schema};
use serde_json::Value;
use std::collections::BTreeSet;

fn read(path: &str) -> String {
    std::fs::read_to_string(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(path)).unwrap()
}

#[test]
fn every_code_is_documented_with_its_severity() {
    let doc = read("docs/codes.md");
    let headings: BTreeSet<&str> = doc.lines().filter_map(|l| l.strip_prefix("### ")).collect();
    for code in Code::ALL {
        let name = code.as_str();
        assert!(headings.contains(name), "docs/codes.md lacks `### {name}`");
        let section = doc.split(&format!("### {name}\n")).nth(1).unwrap();
        let severity = format!("Severity: {}.", code.default_severity());
        assert!(
            section.lines().take(3).any(|l| l == severity),
            "docs/codes.md: {name} should say `{severity}`"
        );
    }
    for h in headings {
        assert!(
            Code::parse(h).is_some(),
            "docs/codes.md documents `{h}`, which is not a code"
        );
    }
}

/// Property names of a schema, following `$ref`s into `$defs`.
fn property_names(schema: &Value, node: &Value, out: &mut BTreeSet<String>, depth: usize) {
    if depth > 12 {
        return;
    }
    if let Some(r) = node.get("$ref").and_then(Value::as_str)
        && let Some(target) = schema.pointer(r.trim_start_matches('#'))
    {
        property_names(schema, target, out, depth + 1);
    }
    if let Some(props) = node.get("properties").and_then(Value::as_object) {
        for (k, v) in props {
            out.insert(k.clone());
            property_names(schema, v, out, depth + 1);
        }
    }
    for key in ["items", "additionalProperties"] {
        if let Some(inner) = node.get(key).filter(|v| v.is_object()) {
            property_names(schema, inner, out, depth + 1);
        }
    }
    for key in ["anyOf", "oneOf", "allOf"] {
        if let Some(list) = node.get(key).and_then(Value::as_array) {
            for v in list {
                property_names(schema, v, out, depth + 1);
            }
        }
    }
}

#[test]
fn every_field_is_documented_under_its_kind() {
    let doc = read("docs/documents.md");
    for kind in Kind::ALL {
        let schema = schema::generate(kind);
        let spec = &schema["properties"]["spec"];
        let mut names = BTreeSet::new();
        property_names(&schema, spec, &mut names, 0);
        let section = doc
            .split(&format!("\n## {}\n", kind.as_str()))
            .nth(1)
            .unwrap_or_else(|| panic!("docs/documents.md has no `## {kind}` section"));
        let section = section.split("\n## ").next().unwrap();
        for name in names {
            let documented = section
                .lines()
                .filter(|l| l.starts_with("| `"))
                .any(|l| names_segment(l.split('|').nth(1).unwrap_or(""), &name));
            assert!(
                documented,
                "docs/documents.md: {kind} field `{name}` is not in the field table"
            );
        }
    }
}

/// Whether `name` is a whole segment of a backticked field path in `cell`
/// (`thresholds.lowUtilization`, `nodePools[].mig.layout`, `roles.<role>.teams`).
fn names_segment(cell: &str, name: &str) -> bool {
    cell.split('`')
        .skip(1)
        .step_by(2)
        .any(|path| path.split(['.', '[', ']']).any(|segment| segment == name))
}

/// The fact table of `docs/policy.md` is the one the fact structs imply
/// (`CAPOPS_BLESS=1 cargo test --test docs` rewrites it).
#[test]
fn the_fact_table_is_generated_from_the_fact_structs() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/policy.md");
    let doc = std::fs::read_to_string(&path).unwrap();
    let header = "| fact | type | subjects | meaning |";
    let start = doc.find(header).expect("docs/policy.md has the fact table");
    let end = doc[start..].find("\n\n").map_or(doc.len(), |e| start + e);
    let table = capops::policy::facts::table();
    if std::env::var_os("CAPOPS_BLESS").is_some() {
        let new = format!("{}{}{}", &doc[..start], table.trim_end(), &doc[end..]);
        std::fs::write(&path, new).unwrap();
        return;
    }
    assert_eq!(
        doc[start..end].trim_end(),
        table.trim_end(),
        "docs/policy.md's fact table is stale; run `CAPOPS_BLESS=1 cargo test --test docs`"
    );
}

#[test]
fn every_rule_of_the_default_pack_is_in_the_policy_docs() {
    let pack: serde_json::Value =
        serde_saphyr::from_str(&read("policies/default.yaml")).expect("the default pack");
    let doc = read("docs/policy.md");
    let table: BTreeSet<String> = doc
        .lines()
        .filter_map(|l| l.strip_prefix("| `"))
        .filter_map(|l| l.split_once("` |").map(|(name, _)| name.to_string()))
        .collect();
    let rules: BTreeSet<String> = pack["spec"]["rules"]
        .as_array()
        .expect("rules")
        .iter()
        .map(|r| r["name"].as_str().expect("a rule's name").to_string())
        .collect();
    let tiers: BTreeSet<String> = pack["spec"]["tiers"]
        .as_array()
        .expect("tiers")
        .iter()
        .map(|r| r["name"].as_str().expect("a tier's name").to_string())
        .collect();
    for name in rules.iter().chain(&tiers) {
        assert!(
            table.contains(name),
            "docs/policy.md's default-pack tables lack `{name}`"
        );
    }
}

/// GitHub's anchor for a heading: lowercase, punctuation dropped, spaces as
/// `-` (letters, digits, `-` and `_` kept).
fn slug(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
            _ => None,
        })
        .collect()
}

/// The anchors of a Markdown file: its headings (a repeated one numbered
/// `-1`, `-2` as GitHub does) and explicit `<a id="...">`/`name` anchors.
fn anchors(text: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut fenced = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if fenced {
            continue;
        }
        if let Some(h) = line.strip_prefix('#') {
            let h = h.trim_start_matches('#');
            if h.starts_with(' ') {
                let base = slug(h);
                let mut a = base.clone();
                let mut n = 0;
                while !out.insert(a.clone()) {
                    n += 1;
                    a = format!("{base}-{n}");
                }
            }
        }
        for key in ["id=\"", "name=\""] {
            for (i, _) in line.match_indices(&format!("<a {key}")) {
                let rest = &line[i + 3 + key.len()..];
                if let Some(end) = rest.find('"') {
                    out.insert(rest[..end].to_string());
                }
            }
        }
    }
    out
}

#[test]
fn every_link_between_the_docs_reaches_its_file_and_heading() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = vec![root.join("README.md")];
    for e in std::fs::read_dir(root.join("docs")).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "md") {
            files.push(p);
        }
    }
    let mut broken = Vec::new();
    for file in &files {
        let text = std::fs::read_to_string(file).unwrap();
        let dir = file.parent().unwrap();
        for (i, _) in text.match_indices("](") {
            let rest = &text[i + 2..];
            let Some(end) = rest.find(')') else { continue };
            let target = &rest[..end];
            // Not a link: a pattern in code (`[a-z]([-a-z0-9]*)`).
            let pattern = target.contains(['[', '*', ' ']);
            if target.contains("://") || target.starts_with("mailto:") || pattern {
                continue;
            }
            let (path, anchor) = target.split_once('#').unwrap_or((target, ""));
            let dest = if path.is_empty() {
                file.clone()
            } else {
                dir.join(path)
            };
            let shown = format!("{}: ({target})", file.strip_prefix(root).unwrap().display());
            if !dest.exists() {
                broken.push(format!("{shown}: no such file"));
                continue;
            }
            if !anchor.is_empty() && dest.extension().is_some_and(|x| x == "md") {
                let known = anchors(&std::fs::read_to_string(&dest).unwrap());
                if !known.contains(anchor) {
                    broken.push(format!("{shown}: no heading with that anchor"));
                }
            }
        }
    }
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
}

#[test]
fn every_usage_pull_code_is_in_codes_md() {
    // `usage pull`'s failures carry codes of their own (src/ingest): each
    // is in codes.md's table.
    let doc = read("docs/codes.md");
    let mut codes = BTreeSet::new();
    for file in ["src/ingest/prometheus.rs", "src/ingest/plan.rs"] {
        for line in read(file).lines() {
            if let Some((_, rest)) = line.split_once("=> \"")
                && let Some((code, _)) = rest.split_once('"')
                && code.chars().all(|c| c.is_ascii_lowercase() || c == '-')
            {
                codes.insert(code.to_string());
            }
        }
    }
    assert!(codes.len() >= 10, "{codes:?}");
    for c in codes {
        assert!(
            doc.contains(&format!("| `{c}` |")),
            "docs/codes.md lacks `{c}`"
        );
    }
}
