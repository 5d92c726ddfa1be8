//! The direct split of plain usage files reads exactly what the CSV reader
//! reads: the same rows, series, spans and diagnostics, on random files
//! made of valid rows, blank lines, short and long rows, bad cells and a
//! last line without its newline. The number and trim shortcuts give
//! what the standard parser and `str::trim` give, bit for bit.

use super::*;

/// Deterministic pseudo-random numbers (a 64-bit LCG).
struct Lcg(u64);

impl Lcg {
    fn next(&mut self, n: u64) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (self.0 >> 33) % n
    }
}

fn line(r: &mut Lcg) -> String {
    let ts = [
        "2026-11-01T00:00:00Z",
        "2026-11-01T01:30:00Z",
        " 2026-11-01T02:00:00Z ",
        "2026-11-01T05:59:59+01:00",
        "2126-11-01T00:00:00Z",
        "yesterday",
        "",
    ];
    let keys = ["c,p,t", "c,p,u", "c, p ,t", "c,pt,", "ç,p,团队", "c,p"];
    let nums = ["8", "4.5", "", " 2 ", "eight", "-1", "1e300", "0.125"];
    match r.next(12) {
        0 => String::new(),
        1 => " ".into(),
        2 => format!("{},{}", ts[r.next(7) as usize], keys[r.next(6) as usize]),
        3 => format!(
            "{},{},{},{},{}",
            ts[r.next(7) as usize],
            keys[r.next(6) as usize],
            nums[r.next(8) as usize],
            nums[r.next(8) as usize],
            nums[r.next(8) as usize]
        ),
        _ => format!(
            "{},{},{},{}",
            ts[r.next(7) as usize],
            keys[r.next(6) as usize],
            nums[r.next(8) as usize],
            nums[r.next(8) as usize]
        ),
    }
}

fn outcome(text: &str, plain: bool) -> String {
    let mut rows = UsageRows::default();
    let mut diags = Vec::new();
    read(text, FileId(3), &mut rows, &mut diags, plain);
    let diags: Vec<(String, String, Option<Span>)> = diags
        .iter()
        .map(|d| (d.code.as_str().to_string(), d.message.clone(), d.span()))
        .collect();
    format!(
        "{:?}\n{:?}\n{:?}\n{:?}",
        rows.series, rows.series_spans, rows.samples, diags
    )
}

#[test]
fn plain_files_split_directly_read_as_the_csv_reader_reads_them() {
    let mut r = Lcg(7);
    let mut rows_seen = 0;
    for _ in 0..400 {
        let mut text = String::from("timestamp,cluster,pool,team,allocated_gpus,used_gpus\n");
        if r.next(5) == 0 {
            text.push('\n');
        }
        for _ in 0..r.next(30) {
            text.push_str(&line(&mut r));
            text.push('\n');
        }
        if r.next(2) == 0 {
            text.push_str(&line(&mut r));
        }
        let plain = outcome(&text, true);
        assert_eq!(plain, outcome(&text, false), "{text}");
        rows_seen += plain.matches("UsageSample").count();
    }
    // The files had rows to read, not only errors.
    assert!(rows_seen > 500, "{rows_seen}");
}

/// A header-only file, an empty file, one without a newline at all, blank
/// lines before the header, a byte-order mark, rows of commas.
#[test]
fn edge_files_read_alike() {
    for text in [
        "",
        "timestamp,cluster,pool,team,allocated_gpus,used_gpus",
        "timestamp,cluster,pool,team,allocated_gpus,used_gpus\n",
        "timestamp,cluster,pool,team,allocated_gpus,used_gpus\n\n\n2026-11-01T00:00:00Z,c,p,t,1,1",
        " timestamp , cluster,pool,team,allocated_gpus,used_gpus\n2026-11-01T00:00:00Z,c,p,t,1,1\n",
        "timestamp,cluster,pool,team,allocated_gpus,used_gpus\n\n",
        "\n\ntimestamp,cluster,pool,team,allocated_gpus,used_gpus\n2026-11-01T00:00:00Z,c,p,t,1,x\n",
        "\u{FEFF}timestamp,cluster,pool,team,allocated_gpus,used_gpus\n2026-11-01T00:00:00Z,ç,p,t,1,x\n",
        ",,,,,\n,,,,,,\n",
    ] {
        assert_eq!(outcome(text, true), outcome(text, false), "{text:?}");
    }
}

/// A row after blank lines in a CRLF file (the CSV reader's path) points at
/// its own line, not at the line ends before it.
#[test]
fn rows_after_blank_lines_point_at_their_own_line() {
    let text = "timestamp,cluster,pool,team,allocated_gpus,used_gpus\r\n\r\n\r\n2026-11-01T00:00:00Z,c,p,t,1,x\r\n\r\n2026-11-01T00:00:00Z,d,p,t,1,1\r\n";
    let mut rows = UsageRows::default();
    let mut diags = Vec::new();
    read_csv(text, FileId(0), &mut rows, &mut diags);
    let x = text.find(",x").unwrap() + 1;
    assert_eq!(diags.len(), 1, "{diags:?}");
    let span = diags[0].span().unwrap();
    assert_eq!((span.start as usize, span.end as usize), (x, x + 1));
    // The valid row's series is its key, `d,p,t`.
    let key = text.find(",d,").unwrap() + 1;
    let s = rows.series_spans[0];
    assert_eq!((s.start as usize, s.end as usize), (key, key + 5));
}

#[test]
fn the_shortcut_parses_numbers_bit_for_bit_as_the_standard_parser() {
    let mut cells: Vec<String> = [
        "0",
        "00",
        "0.0",
        "1",
        "7",
        "12.5",
        "3.25",
        "0.1",
        "0.3",
        "2.675",
        "1000000",
        "999999999999999",
        "99999999999999.9",
        "0.000000000000001",
        "123456789012345",
        "1234567890123456",
        "5.",
        ".5",
        "+1",
        "-0",
        "1e3",
        "1_0",
        "١",
        "",
        ".",
        "1..2",
        " 1",
        "inf",
        "NaN",
        "0x10",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    // Random decimals of every length the shortcut takes, and beyond.
    let mut x: u64 = 0x2545_f491_4f6c_dd1d;
    for _ in 0..20_000 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let digits = (x % 18 + 1) as usize;
        let text: String = format!("{:018}", x % 1_000_000_000_000_000_000)[18 - digits..].into();
        let dot = (x >> 40) as usize % (digits + 1);
        cells.push(if dot == 0 {
            text
        } else {
            format!("{}.{}", &text[..dot], &text[dot..])
        });
    }
    for cell in &cells {
        let ours = parse_count(cell).map(f64::to_bits).ok();
        let std = cell.parse::<f64>().map(f64::to_bits).ok();
        assert_eq!(ours, std, "{cell:?}");
        assert_eq!(trim(cell), cell.trim(), "{cell:?}");
    }
    for cell in [" 1 ", "\u{a0}2", "3\u{2003}", "\t", "x\n"] {
        assert_eq!(trim(cell), cell.trim(), "{cell:?}");
    }
}

#[test]
fn a_quote_or_carriage_return_anywhere_sends_a_file_to_the_csv_reader() {
    for len in [0, 1, 63, 64, 65, 200] {
        let clean = vec![b'a'; len];
        assert!(!has_quote_or_cr(&clean));
        for at in 0..len {
            for b in [b'"', b'\r'] {
                let mut bytes = clean.clone();
                bytes[at] = b;
                assert!(has_quote_or_cr(&bytes), "{len} {at} {b}");
            }
        }
    }
}

#[test]
fn series_key_hashes_tell_keys_apart_and_spread_over_the_low_bits() {
    let mut seen = std::collections::HashSet::new();
    let mut buckets = vec![0u32; 1 << 10];
    let mut keys = 0;
    // Names that differ in one digit in two places, which simpler
    // multiply-rotate hashes map together.
    for c in 0..20 {
        for t in 0..500 {
            let (cluster, team) = (format!("cluster-{c:03}"), format!("team-{t:04}"));
            for pool in ["a100", "h100-sxm"] {
                assert!(seen.insert(key_hash(&cluster, pool, &team)));
                buckets[(key_hash(&cluster, pool, &team) & 1023) as usize] += 1;
                keys += 1;
            }
        }
    }
    // Texts split differently hash differently.
    assert_ne!(key_hash("a", "bc", "d"), key_hash("ab", "c", "d"));
    assert_ne!(key_hash("", "a", ""), key_hash("a", "", ""));
    // 20,000 keys over 1,024 buckets: about 20 each; none far over.
    let most = *buckets.iter().max().unwrap();
    assert!(most < 3 * keys / 1024, "{most}");
}

#[test]
fn every_row_lands_on_the_series_of_its_own_key_in_any_order() {
    // Hours that list the series in the same order (the guess of the next
    // series holds), in rotated and random orders, with repeats and new
    // series mid-file: each row's sample carries its own key's series.
    let keys = ["a", "b", "c", "d", "e"];
    let mut rng = Lcg(7);
    let mut text = String::from("timestamp,cluster,pool,team,allocated_gpus,used_gpus\n");
    let mut expected = Vec::new();
    for hour in 0..40 {
        let order: Vec<usize> = match hour % 4 {
            0 => (0..keys.len()).collect(),
            1 => (0..keys.len()).map(|i| (i + hour) % keys.len()).collect(),
            2 => (0..6)
                .map(|_| rng.next(keys.len() as u64) as usize)
                .collect(),
            _ => (0..3.min(hour)).collect(),
        };
        for k in order {
            let team = format!("t-{}", keys[k]);
            text.push_str(&format!(
                "2026-01-{:02}T{:02}:00:00Z,c,p,{team},{},\n",
                1 + hour / 24,
                hour % 24,
                expected.len()
            ));
            expected.push(team);
        }
    }
    let mut rows = UsageRows::default();
    let mut diags = Vec::new();
    read_csv(&text, FileId(0), &mut rows, &mut diags);
    assert!(diags.is_empty(), "{diags:?}");
    assert_eq!(rows.samples.len(), expected.len());
    for (s, team) in rows.samples.iter().zip(&expected) {
        // The allocated number is the row's index: the sample is that row.
        let row = s.allocated().unwrap() as usize;
        assert_eq!(&rows.series[s.series as usize].team, &expected[row]);
        assert_eq!(&expected[row], team);
    }
}

#[test]
fn an_unclosed_quote_is_said_so_not_counted_as_a_short_row() {
    let text = "timestamp,cluster,pool,team,allocated_gpus,used_gpus\n\
                2026-11-01T00:00:00Z,\"c,p,t,1,1\n\
                2026-11-01T01:00:00Z,c,p,t,1,1\n\
                2026-11-01T02:00:00Z,c,p,t,1,1\n";
    let mut usage = UsageRows::default();
    let mut diags = Vec::new();
    read_csv(text, crate::diag::FileId(0), &mut usage, &mut diags);
    assert_eq!(diags.len(), 1, "{diags:#?}");
    assert!(
        diags[0].message.contains(
            "a quote in this row is not closed: the 3 lines after it were read as one cell"
        ),
        "{}",
        diags[0].message
    );
    // At the quote: the row starts at 53, the quote is its 22nd byte.
    assert_eq!(diags[0].primary.as_ref().unwrap().span.start, 53 + 21);
}

#[test]
fn a_quoted_cell_over_two_lines_is_said_so_at_its_quote() {
    let text = "timestamp,cluster,pool,team,allocated_gpus,used_gpus\n\
                2026-11-01T00:00:00Z,c,\"p\nq\",t,1,1\n\
                2026-11-01T01:00:00Z,c,p,t,1,1\n";
    let mut usage = UsageRows::default();
    let mut diags = Vec::new();
    read_csv(text, crate::diag::FileId(0), &mut usage, &mut diags);
    assert_eq!(diags.len(), 1, "{diags:#?}");
    assert!(
        diags[0]
            .message
            .contains("a quoted cell holds a line break: it spans 2 lines of the file"),
        "{}",
        diags[0].message
    );
    assert_eq!(diags[0].primary.as_ref().unwrap().span.start, 53 + 23);
    // The row after it is read.
    assert_eq!(usage.series.len(), 1);
}

#[test]
fn a_count_out_of_range_is_said_so_not_called_a_non_number() {
    let text = "timestamp,cluster,pool,team,allocated_gpus,used_gpus\n\
                2026-11-01T00:00:00Z,c,p,t,1000001,1\n\
                2026-11-01T01:00:00Z,c,p,t,-1,0\n\
                2026-11-01T02:00:00Z,c,p,t,many,0\n";
    let mut usage = UsageRows::default();
    let mut diags = Vec::new();
    read_csv(text, crate::diag::FileId(0), &mut usage, &mut diags);
    let messages: Vec<&str> = diags.iter().map(|d| d.message.as_str()).collect();
    assert_eq!(
        messages,
        [
            "`1000001` in allocated_gpus is outside the GPUs a row can hold (0 to 1000000)",
            "`-1` in allocated_gpus is outside the GPUs a row can hold (0 to 1000000)",
            "`many` in allocated_gpus is not a number of GPUs",
        ]
    );
}

#[test]
fn the_quote_that_opens_the_broken_cell_is_the_one_shown() {
    // The row's first quote (`"c"`) closes; the one that opens the cell
    // over two lines is the fourth cell's. A `"` inside an unquoted cell is
    // a character, not a quote left open.
    for (row, at, says) in [
        (
            "2026-11-01T00:00:00Z,\"c\",p,\"t\nu\",1,1\n",
            27,
            "a quoted cell holds a line break",
        ),
        (
            "2026-11-01T00:00:00Z,c,p\"q,\"t\nu\",1,1\n",
            27,
            "a quoted cell holds a line break",
        ),
    ] {
        let text = format!("timestamp,cluster,pool,team,allocated_gpus,used_gpus\n{row}");
        let mut usage = UsageRows::default();
        let mut diags = Vec::new();
        read_csv(&text, crate::diag::FileId(0), &mut usage, &mut diags);
        assert_eq!(diags.len(), 1, "{diags:#?}");
        assert!(diags[0].message.contains(says), "{}", diags[0].message);
        assert_eq!(
            diags[0].primary.as_ref().unwrap().span.start,
            53 + at,
            "{row:?}"
        );
    }
}
