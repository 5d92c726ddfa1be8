//! Source files and spans.
//!
//! Every value capops reads keeps a [`Span`]: the file it came from and a byte
//! range in that file. The [`SourceMap`] owns the file texts so that any stage
//! (validation, policy, rendering) can turn a span back into `file:line:column`
//! and a snippet, long after parsing is done.

use std::fmt;
use std::sync::Arc;

/// Index of a file in a [`SourceMap`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct FileId(pub u32);

/// A byte range in one source file. `end` is exclusive; an empty range marks a point.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct Span {
    pub file: FileId,
    pub start: u32,
    pub end: u32,
}

impl Span {
    pub fn new(file: FileId, start: usize, end: usize) -> Self {
        let start = u32::try_from(start).unwrap_or(u32::MAX);
        let end = u32::try_from(end).unwrap_or(u32::MAX).max(start);
        Span { file, start, end }
    }

    /// A zero-width span at the start of a file: used for problems with a whole file.
    pub fn file_start(file: FileId) -> Self {
        Span {
            file,
            start: 0,
            end: 0,
        }
    }

    pub fn len(&self) -> usize {
        (self.end - self.start) as usize
    }

    pub fn is_empty(&self) -> bool {
        self.end == self.start
    }
}

/// A 1-based line and column; the column counts characters, as editors do.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct LineCol {
    pub line: usize,
    pub column: usize,
}

impl fmt::Display for LineCol {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.line, self.column)
    }
}

/// Where a file's text came from.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum SourceKind {
    /// The working tree being checked.
    #[default]
    WorkTree,
    /// A git revision (`check --base`), named as given.
    Revision(String),
    /// Built into capops (the default policy pack).
    BuiltIn,
}

/// What is kept of a file's text.
#[derive(Debug, Clone)]
pub enum Text {
    /// The whole text (lossily decoded when the file was not UTF-8; empty
    /// when it was not read).
    Full(Arc<str>),
    /// Only the rows that spans point into: a usage CSV that read without a
    /// problem keeps its header and the first row of each series (hundreds
    /// of megabytes of history are not held for a few diagnostics).
    Rows(Arc<Rows>),
}

/// Some rows of a text, with where they sit in it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rows {
    /// The whole text's length in bytes.
    pub len: u32,
    /// Rows by byte offset.
    pub rows: Vec<Row>,
    /// How the whole text can be read again (a working-tree file), for its
    /// content id and for what needs every row.
    pub origin: Option<Reread>,
}

/// Reads a file's whole text again (the loader gives it: I/O stays at the edge).
#[derive(Clone)]
pub struct Reread(pub Arc<dyn Fn() -> Option<String> + Send + Sync>);

impl fmt::Debug for Reread {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Reread")
    }
}

impl PartialEq for Reread {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl Eq for Reread {}

/// One kept row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Row {
    /// Byte offset of the row's start in the whole text.
    pub start: u32,
    /// 0-based line number.
    pub line: u32,
    /// The row, without its line break.
    pub text: Box<str>,
}

impl Rows {
    /// Keeps the rows of `text` that hold any of `offsets` (and the first row).
    pub fn keep(
        text: &str,
        offsets: impl IntoIterator<Item = u32>,
        origin: Option<Reread>,
    ) -> Rows {
        let mut offsets: Vec<usize> = offsets
            .into_iter()
            .map(|o| (o as usize).min(text.len()))
            .chain([0])
            .collect();
        offsets.sort_unstable();
        offsets.dedup();
        let bytes = text.as_bytes();
        let mut rows: Vec<Row> = Vec::new();
        // Lines counted once, from one kept offset to the next.
        let (mut line, mut counted_to) = (0usize, 0usize);
        for off in offsets {
            if rows
                .last()
                .is_some_and(|r| off <= r.start as usize + r.text.len())
            {
                continue;
            }
            let start = bytes[..off]
                .iter()
                .rposition(|&b| b == b'\n')
                .map_or(0, |i| i + 1);
            line += bytes[counted_to..start]
                .iter()
                .filter(|&&b| b == b'\n')
                .count();
            counted_to = start;
            let end = bytes[off..]
                .iter()
                .position(|&b| b == b'\n')
                .map_or(text.len(), |i| off + i);
            rows.push(Row {
                start: start as u32,
                line: line as u32,
                text: text[start..end].into(),
            });
        }
        Rows {
            len: u32::try_from(text.len()).unwrap_or(u32::MAX),
            rows,
            origin,
        }
    }

    /// The kept row that holds `offset` (its line break included); `None`
    /// when no kept row does.
    pub fn row_at(&self, offset: u32) -> Option<&Row> {
        let i = self.rows.partition_point(|r| r.start <= offset);
        let row = self.rows.get(i.checked_sub(1)?)?;
        (offset as usize <= row.start as usize + row.text.len()).then_some(row)
    }
}

/// One file as loaded: its repository-relative path and its text.
#[derive(Debug)]
pub struct SourceFile {
    /// Path relative to the capacity repository root, with `/` separators.
    pub path: String,
    pub kind: SourceKind,
    text: Text,
    /// Where each line starts, found when a position is first asked for.
    line_starts: std::sync::OnceLock<Vec<u32>>,
    /// The git blob id of the text, computed when first asked for.
    blob: std::sync::OnceLock<Option<[u8; 20]>>,
    /// The whole text of a file kept as rows, read again the first time a
    /// span outside its rows is asked for (a diagnostic found later).
    whole: std::sync::OnceLock<Option<Arc<str>>>,
}

impl SourceFile {
    fn new(path: String, text: Text, kind: SourceKind) -> Self {
        SourceFile {
            path,
            kind,
            text,
            line_starts: std::sync::OnceLock::new(),
            blob: std::sync::OnceLock::new(),
            whole: std::sync::OnceLock::new(),
        }
    }

    /// The whole text, when it is kept (always, but for usage CSVs that
    /// read cleanly: [`Text::Rows`]).
    pub fn full_text(&self) -> Option<&Arc<str>> {
        match &self.text {
            Text::Full(t) => Some(t),
            Text::Rows(_) => None,
        }
    }

    /// What is kept of the text.
    pub fn text(&self) -> &Text {
        &self.text
    }

    /// The whole text's length in bytes.
    pub fn len(&self) -> usize {
        match &self.text {
            Text::Full(t) => t.len(),
            Text::Rows(r) => r.len as usize,
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn line_starts(&self) -> &[u32] {
        self.line_starts.get_or_init(|| {
            let mut starts = vec![0u32];
            let text = self.whole().map_or("", |t| t);
            let bytes = text.as_bytes();
            // YAML's line breaks: LF, CRLF, and a CR alone (old Mac files),
            // as the parser and the drawn snippets count them.
            for (i, &b) in bytes.iter().enumerate() {
                if b == b'\n' || (b == b'\r' && bytes.get(i + 1) != Some(&b'\n')) {
                    starts.push(u32::try_from(i + 1).unwrap_or(u32::MAX));
                }
            }
            starts
        })
    }

    /// The text's content id, computed once by `id` (the git blob id, see
    /// `load::cache::key_of`) and kept.
    /// A file kept as [`Text::Rows`] is read again from its origin; a text
    /// that is gone or changed size since has no id (so it counts as
    /// changed, never as the same).
    pub fn content_id(&self, id: impl FnOnce(&str) -> Option<[u8; 20]>) -> Option<[u8; 20]> {
        *self.blob.get_or_init(|| id(&self.read_text()?))
    }

    /// The whole text: the kept one, or for a file kept as [`Text::Rows`]
    /// the file read again, once, and kept from then on (for spans outside
    /// the kept rows).
    pub fn whole(&self) -> Option<&Arc<str>> {
        match &self.text {
            Text::Full(t) => Some(t),
            Text::Rows(_) => self
                .whole
                .get_or_init(|| self.read_text().map(|t| Arc::from(t.into_owned())))
                .as_ref(),
        }
    }

    /// The whole text: the kept one, or for a file kept as [`Text::Rows`]
    /// the file read again from its origin (`None` when it is gone, no
    /// longer UTF-8 or no longer of the same length).
    pub fn read_text(&self) -> Option<std::borrow::Cow<'_, str>> {
        match &self.text {
            Text::Full(t) => Some(std::borrow::Cow::Borrowed(t)),
            Text::Rows(rows) => {
                let text = (rows.origin.as_ref()?.0)()?;
                (text.len() == rows.len as usize).then_some(std::borrow::Cow::Owned(text))
            }
        }
    }

    /// Line and column of a byte offset (clamped to the text).
    pub fn line_col(&self, offset: u32) -> LineCol {
        if let Text::Rows(rows) = &self.text
            && let Some(row) = rows.row_at(offset)
        {
            let mut end = ((offset - row.start) as usize).min(row.text.len());
            while end > 0 && !row.text.is_char_boundary(end) {
                end -= 1;
            }
            return LineCol {
                line: row.line as usize + 1,
                column: row.text[..end].chars().count() + 1 - bom(row.line == 0, &row.text, end),
            };
        }
        self.line_col_in_whole(offset)
    }

    /// Line and column of a byte offset in the whole text (see [`SourceFile::whole`]).
    fn line_col_in_whole(&self, offset: u32) -> LineCol {
        let text = self.whole().map_or("", |t| t);
        let offset = (offset as usize).min(text.len());
        let line_idx = match self.line_starts().binary_search(&(offset as u32)) {
            Ok(i) => i,
            Err(i) => i - 1,
        };
        let line_start = self.line_starts()[line_idx] as usize;
        let mut end = offset;
        while end > line_start && !text.is_char_boundary(end) {
            end -= 1;
        }
        let column = text[line_start..end].chars().count() + 1 - bom(line_idx == 0, text, end);
        LineCol {
            line: line_idx + 1,
            column,
        }
    }

    /// Byte offset of a 1-based line and column (clamped).
    pub fn offset_of(&self, line: usize, column: usize) -> usize {
        let (start, rest) = match &self.text {
            Text::Full(text) => {
                let idx = line.saturating_sub(1).min(self.line_starts().len() - 1);
                let start = self.line_starts()[idx] as usize;
                (start, &text[start..])
            }
            Text::Rows(rows) => match rows.rows.iter().find(|r| r.line as usize + 1 == line) {
                Some(r) => (r.start as usize, &r.text[..]),
                None => match self.whole() {
                    Some(text) => {
                        let idx = line.saturating_sub(1).min(self.line_starts().len() - 1);
                        let start = self.line_starts()[idx] as usize;
                        (start, &text[start..])
                    }
                    None => return 0,
                },
            },
        };
        // An editor shows no byte-order mark: column 1 is after it.
        let column = column + bom(line <= 1, rest, rest.len());
        let mut off = start;
        for (n, (i, ch)) in rest.char_indices().enumerate() {
            if n + 1 >= column || ch == '\n' {
                return start + i;
            }
            off = start + i + ch.len_utf8();
        }
        off
    }
}

/// 1 when `text` is the first line, starts with a byte-order mark, and the
/// column counted reaches past it (`end`): editors do not show it.
fn bom(first_line: bool, text: &str, end: usize) -> usize {
    usize::from(first_line && end >= 3 && text.starts_with('\u{FEFF}'))
}

/// All files of one load, addressed by [`FileId`].
#[derive(Debug, Default)]
pub struct SourceMap {
    files: Vec<SourceFile>,
}

impl SourceMap {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn add(&mut self, path: impl Into<String>, text: impl Into<Arc<str>>) -> FileId {
        self.add_from(path, text, SourceKind::WorkTree)
    }

    pub fn add_from(
        &mut self,
        path: impl Into<String>,
        text: impl Into<Arc<str>>,
        kind: SourceKind,
    ) -> FileId {
        self.add_text(path, Text::Full(text.into()), kind)
    }

    /// Adds a file with what is kept of its text.
    pub fn add_text(&mut self, path: impl Into<String>, text: Text, kind: SourceKind) -> FileId {
        let id = self.next_id();
        self.files.push(SourceFile::new(path.into(), text, kind));
        id
    }

    /// The id the next file added will have.
    pub fn next_id(&self) -> FileId {
        FileId(u32::try_from(self.files.len()).expect("fewer than 2^32 files"))
    }

    /// Replaces what is kept of a file's text (a file added before it was read).
    pub fn set_text(&mut self, id: FileId, text: Text) {
        let f = &mut self.files[id.0 as usize];
        *f = SourceFile::new(
            std::mem::take(&mut f.path),
            text,
            std::mem::take(&mut f.kind),
        );
    }

    pub fn get(&self, id: FileId) -> &SourceFile {
        &self.files[id.0 as usize]
    }

    pub fn path(&self, id: FileId) -> &str {
        &self.get(id).path
    }

    pub fn line_col(&self, span: Span) -> LineCol {
        self.get(span.file).line_col(span.start)
    }

    pub fn end_line_col(&self, span: Span) -> LineCol {
        self.get(span.file).line_col(span.end)
    }

    /// The text a span covers.
    pub fn snippet(&self, span: Span) -> &str {
        match &self.get(span.file).text {
            Text::Full(text) => text
                .get(span.start as usize..span.end as usize)
                .unwrap_or(""),
            Text::Rows(rows) => match rows.row_at(span.start) {
                Some(r) => r
                    .text
                    .get((span.start - r.start) as usize..(span.end - r.start) as usize)
                    .unwrap_or(""),
                None => self
                    .get(span.file)
                    .whole()
                    .and_then(|t| t.get(span.start as usize..span.end as usize))
                    .unwrap_or(""),
            },
        }
    }

    pub fn files(&self) -> impl Iterator<Item = (FileId, &SourceFile)> {
        self.files
            .iter()
            .enumerate()
            .map(|(i, f)| (FileId(i as u32), f))
    }

    pub fn len(&self) -> usize {
        self.files.len()
    }

    pub fn is_empty(&self) -> bool {
        self.files.is_empty()
    }

    /// `path:line:column` for people and annotations.
    pub fn describe(&self, span: Span) -> String {
        format!("{}:{}", self.path(span.file), self.line_col(span))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_and_column_count_characters() {
        let mut map = SourceMap::new();
        let id = map.add("a.yaml", "ab\nçd: x\n");
        let f = map.get(id);
        assert_eq!(f.line_col(0), LineCol { line: 1, column: 1 });
        assert_eq!(f.line_col(3), LineCol { line: 2, column: 1 });
        // 'ç' is two bytes; the 'd' after it is column 2.
        assert_eq!(f.line_col(5), LineCol { line: 2, column: 2 });
        assert_eq!(f.offset_of(2, 2), 5);
        assert_eq!(f.line_col(1000), LineCol { line: 3, column: 1 });
    }

    #[test]
    fn a_byte_order_mark_takes_no_column() {
        // Editors do not show it: `apiVersion` is at column 1, its value at 13.
        let mut map = SourceMap::new();
        let id = map.add("a.yaml", "\u{FEFF}apiVersion: foo/v1\nb: 1\n");
        let f = map.get(id);
        assert_eq!(f.line_col(3), LineCol { line: 1, column: 1 });
        assert_eq!(
            f.line_col(15),
            LineCol {
                line: 1,
                column: 13
            }
        );
        assert_eq!(f.offset_of(1, 13), 15);
        assert_eq!(f.line_col(22), LineCol { line: 2, column: 1 });
    }

    #[test]
    fn a_carriage_return_alone_ends_a_line_as_yaml_says() {
        let mut map = SourceMap::new();
        let id = map.add("a.yaml", "a: 1\rb: 2\r\nc: x\n");
        let f = map.get(id);
        assert_eq!(f.line_col(5), LineCol { line: 2, column: 1 });
        // CRLF is one break, not two.
        assert_eq!(f.line_col(11), LineCol { line: 3, column: 1 });
        assert_eq!(f.offset_of(3, 4), 14);
    }

    /// A file kept as some of its rows answers for those rows what the
    /// whole text answers: lines, columns (characters) and snippets.
    #[test]
    fn kept_rows_answer_as_the_whole_text() {
        let text = "ts,team\nr1,a\nça,bé\nr3,c\n";
        let b = text.find('b').unwrap() as u32;
        let rows = Rows::keep(text, [b, 9, b + 1], None);
        assert_eq!(
            rows.rows
                .iter()
                .map(|r| (r.line, &*r.text))
                .collect::<Vec<_>>(),
            vec![(0, "ts,team"), (1, "r1,a"), (2, "ça,bé")]
        );
        let mut map = SourceMap::new();
        let full = map.add("a.csv", text);
        let kept = map.add_text("b.csv", Text::Rows(Arc::new(rows)), SourceKind::WorkTree);
        assert_eq!(map.get(kept).len(), text.len());
        assert!(map.get(kept).full_text().is_none());
        let third = text.find("ça").unwrap();
        for off in (0..13).chain(third..third + "ça,bé".len()) {
            if !text.is_char_boundary(off) {
                continue;
            }
            let off = off as u32;
            assert_eq!(
                map.get(kept).line_col(off),
                map.get(full).line_col(off),
                "{off}"
            );
        }
        let span = |f: FileId| Span::new(f, b as usize, b as usize + "bé".len());
        assert_eq!(map.snippet(span(kept)), "bé");
        assert_eq!(map.snippet(span(kept)), map.snippet(span(full)));
        assert_eq!(map.describe(span(kept)), "b.csv:3:4");
        assert_eq!(map.get(kept).offset_of(3, 4), b as usize);
        // A file with no origin cannot be read again.
        assert!(map.get(kept).read_text().is_none());
        assert_eq!(map.get(full).read_text().as_deref(), Some(text));
    }

    /// A span found later outside the kept rows (a rewritten row of the
    /// history) is answered from the whole text, read again once.
    #[test]
    fn spans_outside_the_kept_rows_read_the_whole_text_again() {
        let text = "ts,team\r\nr1,a\r\nr2,b\r\n";
        let reads = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let counter = reads.clone();
        let whole = text.to_string();
        let reread = Reread(Arc::new(move || {
            counter.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            Some(whole.clone())
        }));
        let mut map = SourceMap::new();
        let kept = map.add_text(
            "u.csv",
            Text::Rows(Arc::new(Rows::keep(text, [], Some(reread)))),
            SourceKind::WorkTree,
        );
        // The header is kept: no read.
        assert_eq!(map.describe(Span::new(kept, 3, 7)), "u.csv:1:4");
        assert_eq!(reads.load(std::sync::atomic::Ordering::SeqCst), 0);
        let r2 = text.find("r2").unwrap();
        assert_eq!(map.describe(Span::new(kept, r2, r2 + 2)), "u.csv:3:1");
        assert_eq!(map.snippet(Span::new(kept, r2, r2 + 4)), "r2,b");
        assert_eq!(map.get(kept).offset_of(3, 4), r2 + 3);
        assert_eq!(
            reads.load(std::sync::atomic::Ordering::SeqCst),
            1,
            "read once"
        );
    }
}
