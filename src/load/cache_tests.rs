//! The parse cache gives back what the parser gives, or parses.

// Reads the repository's YAML files as test input.
#![allow(clippy::disallowed_methods)]

use super::*;

/// Every YAML file of the bundled example, the policy fixture and the
/// validation corpus (valid and broken ones alike).
fn texts() -> Vec<(String, String)> {
    fn walk(dir: &std::path::Path, out: &mut Vec<(String, String)>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                walk(&p, out);
            } else if p.extension().is_some_and(|x| x == "yaml" || x == "yml")
                && let Ok(t) = std::fs::read_to_string(&p)
            {
                out.push((p.display().to_string(), t));
            }
        }
    }
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut out = Vec::new();
    for d in ["examples", "policies", "tests/corpus"] {
        walk(&root.join(d), &mut out);
    }
    out.sort();
    assert!(out.len() > 50, "the test needs the repository's YAML files");
    out
}

const TRICKY: &str = "a: &x {k: [1, -2, 3.5, 0x1f, true, ~, 'q', \"e\\u00e9\"]}\nb: *x\nc: |\n  lit\n  eral\nd: >-\n  fold\n  ed\n\"e f\": 18446744073709551615\n---\n- plain\n- 'single ''quoted'''\n- !!str 12\n";

#[test]
fn every_tree_decodes_to_what_the_parser_built() {
    let mut all = texts();
    all.push(("tricky".into(), TRICKY.into()));
    let mut checked = 0;
    for (path, text) in &all {
        let parsed = yaml::parse(text, FileId(0));
        let bytes = encode(&parsed.documents, text);
        let back = decode(&bytes, text).unwrap_or_else(|| panic!("{path} does not decode"));
        assert_eq!(back, parsed.documents, "{path}");
        checked += 1;
    }
    assert!(checked > 50);
}

#[test]
fn a_cached_file_is_the_parse_of_its_text_and_a_broken_one_is_not_kept() {
    let good = "apiVersion: capops.dev/v1alpha1\nkind: Team\nmetadata: {name: ml}\n";
    let broken = "a: 1\na: 2\n";
    let first = Cache::new();
    let p1 = first.parse(good, FileId(3), key_of(good));
    let p2 = first.parse(broken, FileId(4), key_of(broken));
    assert!(!p2.diagnostics.is_empty(), "duplicate key reported");
    assert_eq!(first.stats(), (0, 2));
    let segment = first.fresh_segment().expect("the good file is kept");

    let second = Cache::from_segments(vec![segment]);
    let again = second.parse(good, FileId(9), key_of(good));
    assert_eq!(again.documents, p1.documents);
    assert!(again.diagnostics.is_empty());
    let broken_again = second.parse(broken, FileId(4), key_of(broken));
    assert_eq!(broken_again.diagnostics.len(), p2.diagnostics.len());
    assert_eq!(second.stats(), (1, 1), "the good file came from the cache");
    assert!(second.fresh_segment().is_none(), "nothing new to keep");
}

#[test]
fn damaged_segments_cost_a_parse_never_a_different_tree() {
    let text = "apiVersion: capops.dev/v1alpha1\nkind: Team\nmetadata:\n  name: ml\nspec:\n  leads: [ana]\n  gpus: 12\n";
    let expected = yaml::parse(text, FileId(0)).documents;
    let c = Cache::new();
    c.parse(text, FileId(0), key_of(text));
    let segment = c.fresh_segment().unwrap();
    let mut served = 0;
    // Every byte flipped, and every truncation.
    for i in 0..segment.len() {
        for flip in [0x01u8, 0x80, 0xff] {
            let mut bad = segment.clone();
            bad[i] ^= flip;
            let cache = Cache::from_segments(vec![bad]);
            let got = cache.parse(text, FileId(0), key_of(text));
            assert_eq!(got.documents, expected, "byte {i} ^ {flip:#x}");
            served += cache.stats().0;
        }
    }
    for len in 0..segment.len() {
        let cache = Cache::from_segments(vec![segment[..len].to_vec()]);
        assert_eq!(
            cache.parse(text, FileId(0), key_of(text)).documents,
            expected
        );
        assert_eq!(cache.stats(), (0, 1), "a torn entry is not used ({len})");
    }
    assert_eq!(served, 0, "no damaged entry was served");
}

#[test]
fn foreign_segments_and_entries_made_for_another_text_are_ignored() {
    let a = "name: a\ngpus: 1\n";
    let b = "name: b\ngpus: 2\n";
    let c = Cache::new();
    c.parse(a, FileId(0), key_of(a));
    let segment = c.fresh_segment().unwrap();

    // Another capops version wrote it.
    let mut other = segment.clone();
    let version_at = MAGIC.len() + 8;
    other[version_at] ^= 0x20;
    let cache = Cache::from_segments(vec![other, b"not a cache at all".to_vec()]);
    assert_eq!(cache.ignored(), 2);
    assert_eq!(cache.parse(a, FileId(0), key_of(a)).documents.len(), 1);
    assert_eq!(cache.stats(), (0, 1));

    // `a`'s tree filed under `b`'s key, with a valid checksum: the same
    // length, so only the text's own sum tells them apart.
    let payload = encode(&yaml::parse(a, FileId(0)).documents, a);
    let key_b = key_of(b).unwrap();
    let forged = super::segment(std::iter::once((&key_b, payload.as_slice())));
    let cache = Cache::from_segments(vec![forged]);
    let got = cache.parse(b, FileId(0), Some(key_b));
    assert_eq!(got.documents, yaml::parse(b, FileId(0)).documents);
    assert_eq!(cache.stats(), (0, 1));
    assert_eq!(cache.ignored(), 1);
}

#[test]
fn compaction_keeps_what_the_run_used_and_parsed() {
    let (a, b, old) = ("x: 1\n", "y: 2\n", "z: 3\n");
    let first = Cache::new();
    for t in [a, old] {
        first.parse(t, FileId(0), key_of(t));
    }
    let run = Cache::from_segments(vec![first.fresh_segment().unwrap()]);
    run.parse(a, FileId(0), key_of(a));
    run.parse(b, FileId(0), key_of(b));
    let merged = Cache::from_segments(vec![run.compacted()]);
    for t in [a, b, old] {
        merged.parse(t, FileId(0), key_of(t));
    }
    assert_eq!(
        merged.stats(),
        (2, 1),
        "a and b kept, the unused one dropped"
    );
}

#[test]
fn keys_are_git_blob_ids() {
    // `printf 'hello\n' | git hash-object --stdin`
    let hex: String = key_of("hello\n")
        .unwrap()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    assert_eq!(hex, "ce013625030ba8dba906f756967f9e9ca394464a");
}
