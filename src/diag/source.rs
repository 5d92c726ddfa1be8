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

/// One file as loaded: its repository-relative path and its text.
#[derive(Debug)]
pub struct SourceFile {
    /// Path relative to the capacity repository root, with `/` separators.
    pub path: String,
    pub kind: SourceKind,
    /// The text (lossily decoded when the file was not UTF-8; empty when it was not read).
    pub text: Arc<str>,
    /// Where each line starts, found when a position is first asked for.
    line_starts: std::sync::OnceLock<Vec<u32>>,
    /// The git blob id of the text, computed when first asked for.
    blob: std::sync::OnceLock<Option<[u8; 20]>>,
}

impl SourceFile {
    fn new(path: String, text: Arc<str>, kind: SourceKind) -> Self {
        SourceFile {
            path,
            kind,
            text,
            line_starts: std::sync::OnceLock::new(),
            blob: std::sync::OnceLock::new(),
        }
    }

    fn line_starts(&self) -> &[u32] {
        self.line_starts.get_or_init(|| {
            let mut starts = vec![0u32];
            for (i, b) in self.text.bytes().enumerate() {
                if b == b'\n' {
                    starts.push(u32::try_from(i + 1).unwrap_or(u32::MAX));
                }
            }
            starts
        })
    }

    /// The text's content id, computed once by `id` (the git blob id, see
    /// `load::cache::key_of`) and kept.
    pub fn content_id(&self, id: impl FnOnce(&str) -> Option<[u8; 20]>) -> Option<[u8; 20]> {
        *self.blob.get_or_init(|| id(&self.text))
    }

    /// Line and column of a byte offset (clamped to the text).
    pub fn line_col(&self, offset: u32) -> LineCol {
        let offset = (offset as usize).min(self.text.len());
        let line_idx = match self.line_starts().binary_search(&(offset as u32)) {
            Ok(i) => i,
            Err(i) => i - 1,
        };
        let line_start = self.line_starts()[line_idx] as usize;
        let mut end = offset;
        while end > line_start && !self.text.is_char_boundary(end) {
            end -= 1;
        }
        let column = self.text[line_start..end].chars().count() + 1;
        LineCol {
            line: line_idx + 1,
            column,
        }
    }

    /// Byte offset of a 1-based line and column (clamped).
    pub fn offset_of(&self, line: usize, column: usize) -> usize {
        let idx = line.saturating_sub(1).min(self.line_starts().len() - 1);
        let start = self.line_starts()[idx] as usize;
        let rest = &self.text[start..];
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
        let id = FileId(u32::try_from(self.files.len()).expect("fewer than 2^32 files"));
        self.files
            .push(SourceFile::new(path.into(), text.into(), kind));
        id
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
        let text = &self.get(span.file).text;
        text.get(span.start as usize..span.end as usize)
            .unwrap_or("")
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
}
