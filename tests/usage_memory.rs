//! Usage history is read file by file and kept as numbers: a usage file that
//! reads cleanly keeps only the rows diagnostics point at, yet every
//! diagnostic still names the right line and column; a file with a problem
//! keeps its whole text; and the numbers are those of the rows, whatever
//! order the rows come in.

mod common;

use capops::diag::SourceKind;
use capops::load::files;
use common::{copy_dir, example, root};

#[test]
fn clean_usage_files_keep_rows_and_diagnostics_keep_their_place() {
    let dir = tempfile::tempdir().unwrap();
    copy_dir(&root().join(example()), dir.path());
    // A series no document names (a warning pointing at its first row), in
    // a file whose rows are otherwise fine, and a file with a bad cell.
    let unknown_row = "2026-11-20T05:00:00Z,prod-h100,h100-serve,ghost-team,1,1";
    let mut text = std::fs::read_to_string(dir.path().join("usage/prod-h100.csv")).unwrap();
    text.push_str(unknown_row);
    text.push('\n');
    std::fs::write(dir.path().join("usage/prod-h100.csv"), &text).unwrap();
    let bad_row = "2026-11-20T00:00:00Z,prod-h100,h100-serve,inference,eight,1";
    std::fs::write(
        dir.path().join("usage/broken.csv"),
        format!("timestamp,cluster,pool,team,allocated_gpus,used_gpus\n{bad_row}\n"),
    )
    .unwrap();

    let loaded = capops::load::load(files::collect(dir.path()).unwrap(), None);
    let file = |path: &str| {
        loaded
            .sources
            .files()
            .find(|(_, f)| f.path == path)
            .unwrap()
    };
    let (clean_id, clean) = file("usage/prod-h100.csv");
    assert_eq!(clean.kind, SourceKind::WorkTree);
    assert!(
        clean.full_text().is_none(),
        "a clean usage file keeps rows only"
    );
    assert_eq!(clean.len(), text.len());
    assert_eq!(clean.read_text().as_deref(), Some(text.as_str()));
    let (_, broken) = file("usage/broken.csv");
    assert!(
        broken.full_text().is_some(),
        "a file with a problem keeps its text"
    );

    // The unknown team's diagnostic points at its row: line and column
    // as the whole text has them.
    let out = capops::validate::validate(loaded);
    let d = out
        .diagnostics
        .iter()
        .find(|d| d.code.as_str() == "usage-unknown-reference")
        .expect("the ghost team is reported");
    let span = d.primary.as_ref().unwrap().span;
    assert_eq!(span.file, clean_id);
    let line = text.lines().count();
    let column = unknown_row.find("prod-h100").unwrap() + 1;
    assert_eq!(
        out.sources.describe(span),
        format!("usage/prod-h100.csv:{line}:{column}")
    );
    // The span is the row's key: cluster, pool and team.
    assert_eq!(out.sources.snippet(span), "prod-h100,h100-serve,ghost-team");
    // It says what becomes of the rows: the pool's, no team's.
    let help = d.help.as_deref().unwrap_or_default();
    assert!(
        help.contains("still count in their pool's demand"),
        "{help}"
    );
    let bad = out
        .diagnostics
        .iter()
        .find(|d| d.code.as_str() == "usage-bad-row")
        .unwrap();
    assert_eq!(
        out.sources.describe(bad.primary.as_ref().unwrap().span),
        format!("usage/broken.csv:2:{}", bad_row.find("eight").unwrap() + 1)
    );
}

/// The same rows in another order, split across files, give the same
/// numbers: every series' hours, gaps and conflicts.
#[test]
fn rows_in_any_order_and_any_files_give_the_same_history() {
    let header = "timestamp,cluster,pool,team,allocated_gpus,used_gpus\n";
    let mut rows = Vec::new();
    for h in 0..300u32 {
        for (t, team) in ["a", "b", "c"].into_iter().enumerate() {
            let at = format!("2026-10-{:02}T{:02}:00:00Z", 1 + h / 24, h % 24);
            let cells = if (h + t as u32 * 7).is_multiple_of(13) {
                String::from(",")
            } else {
                format!("{},{}", h % 17 + 3, h % 3)
            };
            rows.push(format!("{at},c,p,{team},{cells}\n"));
        }
    }
    let load = |files: Vec<(String, String)>| {
        let mut inputs = vec![capops::load::Input {
            path: "capops.yaml".into(),
            content: capops::load::Content::Bytes(
                b"apiVersion: capops.dev/v1alpha1\nkind: Config\nmetadata: {name: t}\nspec: {}\n"
                    .to_vec(),
            ),
        }];
        for (path, text) in files {
            inputs.push(capops::load::Input {
                path,
                content: capops::load::Content::Bytes(text.into_bytes()),
            });
        }
        let loaded = capops::load::load(inputs, None);
        assert!(loaded.diagnostics.is_empty(), "{:?}", loaded.diagnostics);
        loaded.usage
    };
    let one = load(vec![(
        "usage/all.csv".into(),
        format!("{header}{}", rows.concat()),
    )]);
    // Reversed, and dealt over three files.
    let mut parts = vec![String::from(header); 3];
    for (i, r) in rows.iter().rev().enumerate() {
        parts[i % 3].push_str(r);
    }
    let dealt = load(
        parts
            .into_iter()
            .enumerate()
            .map(|(i, t)| (format!("usage/part-{i}.csv"), t))
            .collect(),
    );
    let sorted = |u: &capops::model::Usage| {
        let mut s = u.series.clone();
        s.sort();
        s
    };
    assert_eq!(sorted(&one), sorted(&dealt));
    for (k, g) in one.series.iter().zip(&one.grids) {
        let j = dealt.series.iter().position(|x| x == k).unwrap();
        assert_eq!(g, &dealt.grids[j], "{k:?}");
    }
    assert_eq!(one.row_count(), 900);
    assert_eq!(dealt.row_count(), 900);
    let a = &one.grids[0];
    assert_eq!(a.allocated.hours(), 300);
    assert_eq!(a.allocated.get(a.allocated.start + 16), Some(19.0));
}

/// Two rows a century apart would be 876,000 hours of memory: the series
/// is refused with an error at its row, and the rest of the file is read.
#[test]
fn rows_a_century_apart_are_an_error_not_a_gigabyte() {
    let text = "timestamp,cluster,pool,team,allocated_gpus,used_gpus\n\
                2000-01-01T00:00:00Z,c,p,far,1,1\n\
                2026-11-01T00:00:00Z,c,p,near,2,1\n\
                2099-12-31T23:00:00Z,c,p,far,1,1\n";
    let loaded = capops::load::load(
        vec![capops::load::Input {
            path: "usage/u.csv".into(),
            content: capops::load::Content::Bytes(text.as_bytes().to_vec()),
        }],
        None,
    );
    let errors: Vec<_> = loaded
        .diagnostics
        .iter()
        .filter(|d| d.code.as_str() == "usage-bad-row")
        .collect();
    assert_eq!(errors.len(), 1, "{:?}", loaded.diagnostics);
    assert!(
        errors[0].message.contains("c/p/far"),
        "{}",
        errors[0].message
    );
    assert_eq!(
        loaded
            .sources
            .describe(errors[0].primary.as_ref().unwrap().span),
        // Of two rows, the median is the later: the first is the farthest.
        "usage/u.csv:2:1"
    );
    let far = loaded
        .usage
        .series
        .iter()
        .position(|k| k.team == "far")
        .unwrap();
    assert_eq!(loaded.usage.grids[far].allocated.hours(), 0);
    assert_eq!(loaded.usage.row_count(), 1, "the near series is read");
}
