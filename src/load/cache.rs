//! The parse cache: YAML trees of files already read, keyed by their content.
//!
//! Parsing YAML is most of what loading a large repository costs, and a pull
//! request changes a few files of thousands. The cache keeps the tree
//! ([`Node`]) that [`yaml::parse`] built for a file, keyed by the file's git
//! blob id (the SHA-1 of its bytes, what git itself names the content by), so
//! a file read before, in the working tree or in any revision, is not parsed
//! again. Only trees of files that parsed without a single diagnostic are
//! kept; everything after parsing (envelope, JSON Schema, typing, every
//! cross-document check and decision) runs on the tree as always, so the
//! cache can only save the parser's work, never change what follows it.
//!
//! The cache lives in segments (bytes; [`super::cache_dir`] reads and writes
//! them as files): a header naming the format and the capops version, then
//! entries of key, length, checksum and encoded tree. A segment of another
//! format or version is foreign and ignored whole; an entry whose checksum
//! does not match, or that does not decode against the text it is looked up
//! for (a byte range outside the text, a string that is not the text's at its
//! range, nesting or size beyond the parser's limits), is ignored and the
//! file is parsed. This module does no I/O.

use super::yaml::{self, MAX_DEPTH, MAX_NODES, Node, Parsed, Value};
use crate::diag::FileId;
use std::collections::{HashMap, HashSet};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

/// The first bytes of every segment.
const MAGIC: &[u8; 16] = b"capops-parsetree";
/// The encoding of trees; a change to [`Node`], its encoding or what the
/// parser records in it bumps it (2: an alias's node is placed where the
/// alias is written).
const FORMAT: u32 = 2;
/// Key (20) + length (4) + checksum (8).
const ENTRY_HEAD: usize = 32;

/// A file's content id: its git blob id.
pub type Key = [u8; 20];

/// The git blob id of a text (what `git hash-object` prints).
pub fn key_of(text: &str) -> Option<Key> {
    let oid = git2::Oid::hash_object(git2::ObjectType::Blob, text.as_bytes()).ok()?;
    oid.as_bytes().try_into().ok()
}

/// Trees found in segments, and trees of files parsed during this run.
#[derive(Default)]
pub struct Cache {
    segments: Vec<Vec<u8>>,
    /// Where each key's entry is: segment, payload offset and length, checksum.
    index: HashMap<Key, (usize, usize, usize, u64)>,
    /// Keys whose entries were used (kept when the segments are compacted).
    used: Mutex<HashSet<Key>>,
    /// Entries of files parsed during this run.
    fresh: Mutex<Vec<(Key, Vec<u8>)>>,
    hits: AtomicUsize,
    misses: AtomicUsize,
    /// Segments and entries ignored (foreign or corrupt).
    ignored: AtomicUsize,
}

impl std::fmt::Debug for Cache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (hits, misses) = self.stats();
        f.debug_struct("Cache")
            .field("segments", &self.segments.len())
            .field("entries", &self.index.len())
            .field("hits", &hits)
            .field("misses", &misses)
            .finish()
    }
}

impl Cache {
    /// A cache with nothing in it (trees parsed are still recorded).
    pub fn new() -> Self {
        Cache::default()
    }

    /// A cache over segments read from storage. Foreign segments and corrupt
    /// entries are skipped: reading them costs a parse, never a decision.
    pub fn from_segments(segments: Vec<Vec<u8>>) -> Self {
        let mut cache = Cache::default();
        for (s, bytes) in segments.iter().enumerate() {
            match entries(bytes) {
                Some((list, clean)) => {
                    if !clean {
                        cache.ignored.fetch_add(1, Ordering::Relaxed);
                    }
                    for (key, at, len, sum) in list {
                        cache.index.entry(key).or_insert((s, at, len, sum));
                    }
                }
                None => {
                    cache.ignored.fetch_add(1, Ordering::Relaxed);
                }
            }
        }
        cache.segments = segments;
        cache
    }

    /// Parses `text` (file `file`, whose [`key_of`] is `key`), or takes its
    /// tree from the cache. The result is the one [`yaml::parse`] returns for
    /// the text.
    pub fn parse(&self, text: &str, file: FileId, key: Option<Key>) -> Parsed {
        let Some(key) = key else {
            return yaml::parse(text, file);
        };
        if let Some(documents) = self.lookup(&key, text) {
            self.hits.fetch_add(1, Ordering::Relaxed);
            if let Ok(mut used) = self.used.lock() {
                used.insert(key);
            }
            return Parsed {
                documents,
                diagnostics: Vec::new(),
            };
        }
        self.misses.fetch_add(1, Ordering::Relaxed);
        let parsed = yaml::parse(text, file);
        if parsed.diagnostics.is_empty() {
            let payload = encode(&parsed.documents, text);
            if let Ok(mut fresh) = self.fresh.lock() {
                fresh.push((key, payload));
            }
        }
        parsed
    }

    fn lookup(&self, key: &Key, text: &str) -> Option<Vec<Node>> {
        let &(s, at, len, sum) = self.index.get(key)?;
        let payload = self.segments.get(s)?.get(at..at + len)?;
        if checksum(key, payload) != sum {
            self.ignored.fetch_add(1, Ordering::Relaxed);
            return None;
        }
        let decoded = decode(payload, text);
        if decoded.is_none() {
            self.ignored.fetch_add(1, Ordering::Relaxed);
        }
        decoded
    }

    /// Files taken from the cache and files parsed.
    pub fn stats(&self) -> (usize, usize) {
        (
            self.hits.load(Ordering::Relaxed),
            self.misses.load(Ordering::Relaxed),
        )
    }

    /// Segments and entries that were ignored as foreign or corrupt.
    pub fn ignored(&self) -> usize {
        self.ignored.load(Ordering::Relaxed)
    }

    /// Segments read.
    pub fn segment_count(&self) -> usize {
        self.segments.len()
    }

    /// A segment of the trees parsed during this run, when there are any.
    pub fn fresh_segment(&self) -> Option<Vec<u8>> {
        let fresh = self.fresh.lock().ok()?;
        if fresh.is_empty() {
            return None;
        }
        Some(segment(fresh.iter().map(|(k, p)| (k, p.as_slice()))))
    }

    /// One segment of every entry this run used or parsed (what is worth
    /// keeping when the segments are compacted).
    pub fn compacted(&self) -> Vec<u8> {
        let used = self.used.lock().map(|u| u.clone()).unwrap_or_default();
        let fresh = self.fresh.lock().map(|f| f.clone()).unwrap_or_default();
        let mut seen: HashSet<Key> = HashSet::new();
        let mut list: Vec<(Key, &[u8])> = Vec::new();
        for key in &used {
            if let Some(&(s, at, len, _)) = self.index.get(key)
                && let Some(p) = self.segments.get(s).and_then(|b| b.get(at..at + len))
                && seen.insert(*key)
            {
                list.push((*key, p));
            }
        }
        for (key, p) in &fresh {
            if seen.insert(*key) {
                list.push((*key, p.as_slice()));
            }
        }
        list.sort_by_key(|e| e.0);
        segment(list.iter().map(|(k, p)| (k, *p)))
    }
}

/// The header every segment of this build starts with.
fn header() -> Vec<u8> {
    let version = env!("CARGO_PKG_VERSION").as_bytes();
    let mut out = Vec::with_capacity(MAGIC.len() + 8 + version.len());
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&FORMAT.to_le_bytes());
    out.extend_from_slice(&(version.len() as u32).to_le_bytes());
    out.extend_from_slice(version);
    out
}

fn segment<'a>(list: impl Iterator<Item = (&'a Key, &'a [u8])>) -> Vec<u8> {
    let mut out = header();
    for (key, payload) in list {
        let Ok(len) = u32::try_from(payload.len()) else {
            continue;
        };
        out.extend_from_slice(key);
        out.extend_from_slice(&len.to_le_bytes());
        out.extend_from_slice(&checksum(key, payload).to_le_bytes());
        out.extend_from_slice(payload);
    }
    out
}

/// The entries of a segment, and whether it was read to its end without a
/// damaged entry; `None` for a segment of another format or version.
#[allow(clippy::type_complexity)]
fn entries(bytes: &[u8]) -> Option<(Vec<(Key, usize, usize, u64)>, bool)> {
    let head = header();
    if bytes.get(..head.len())? != head.as_slice() {
        return None;
    }
    let mut out = Vec::new();
    let mut at = head.len();
    while at < bytes.len() {
        let Some(h) = bytes.get(at..at + ENTRY_HEAD) else {
            return Some((out, false));
        };
        let key: Key = h[..20].try_into().ok()?;
        let len = u32::from_le_bytes(h[20..24].try_into().ok()?) as usize;
        let sum = u64::from_le_bytes(h[24..32].try_into().ok()?);
        let start = at + ENTRY_HEAD;
        if start + len > bytes.len() {
            // A torn write: what follows cannot be located.
            return Some((out, false));
        }
        out.push((key, start, len, sum));
        at = start + len;
    }
    Some((out, true))
}

/// A 64-bit checksum of an entry (key and payload), to tell a damaged entry
/// from a good one. Not a defence against someone who can write the cache:
/// the cache folder is trusted as the capops binary is.
fn checksum(key: &Key, payload: &[u8]) -> u64 {
    sum(&[key, payload])
}

/// A 64-bit multiply-rotate hash of byte strings, eight bytes at a time.
fn sum(parts: &[&[u8]]) -> u64 {
    const PRIME: u64 = 0x0000_0100_0000_01b3;
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for part in parts {
        let mut chunks = part.chunks_exact(8);
        for chunk in &mut chunks {
            let word = u64::from_le_bytes(chunk.try_into().unwrap_or_default());
            h = (h ^ word).wrapping_mul(PRIME).rotate_left(29);
        }
        let rest = chunks.remainder();
        let mut word = [0u8; 8];
        word[..rest.len()].copy_from_slice(rest);
        h = (h ^ u64::from_le_bytes(word) ^ ((rest.len() as u64) << 56))
            .wrapping_mul(PRIME)
            .rotate_left(29);
        h ^= (part.len() as u64).wrapping_mul(PRIME);
    }
    h
}

// Tags of the encoding: a node is its tag, start and length (varints), then
// what its value needs.
const NULL: u8 = 0;
const FALSE: u8 = 1;
const TRUE: u8 = 2;
const INT: u8 = 3;
const UINT: u8 = 4;
const FLOAT: u8 = 5;
/// A string stated in the entry.
const STR: u8 = 6;
/// A string that is the text at the node's range.
const SLICE: u8 = 7;
const SEQ: u8 = 8;
const MAP: u8 = 9;

/// Encodes a file's documents, after the text's length and [`sum`] (so an
/// entry is only ever read for the text it was made from); strings equal to
/// the text at their node's range are stored as that range.
pub fn encode(documents: &[Node], text: &str) -> Vec<u8> {
    let mut out = Vec::with_capacity(text.len() / 2);
    varint(&mut out, text.len() as u64);
    out.extend_from_slice(&sum(&[text.as_bytes()]).to_le_bytes());
    varint(&mut out, documents.len() as u64);
    for d in documents {
        encode_node(d, text, &mut out);
    }
    out
}

fn encode_node(node: &Node, text: &str, out: &mut Vec<u8>) {
    let head = |out: &mut Vec<u8>, tag: u8| {
        out.push(tag);
        varint(out, u64::from(node.start));
        varint(out, u64::from(node.end.saturating_sub(node.start)));
    };
    match &node.value {
        Value::Null => head(out, NULL),
        Value::Bool(false) => head(out, FALSE),
        Value::Bool(true) => head(out, TRUE),
        Value::Int(i) => {
            head(out, INT);
            varint(out, ((i << 1) ^ (i >> 63)) as u64);
        }
        Value::UInt(u) => {
            head(out, UINT);
            varint(out, *u);
        }
        Value::Float(f) => {
            head(out, FLOAT);
            out.extend_from_slice(&f.to_bits().to_le_bytes());
        }
        Value::Str(s) => {
            if text.get(node.start as usize..node.end as usize) == Some(s.as_str()) {
                head(out, SLICE);
            } else {
                head(out, STR);
                varint(out, s.len() as u64);
                out.extend_from_slice(s.as_bytes());
            }
        }
        Value::Seq(items) => {
            head(out, SEQ);
            varint(out, items.len() as u64);
            for i in items {
                encode_node(i, text, out);
            }
        }
        Value::Map(entries) => {
            head(out, MAP);
            varint(out, entries.len() as u64);
            for (k, v) in entries {
                encode_node(k, text, out);
                encode_node(v, text, out);
            }
        }
    }
}

fn varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// Decodes a file's documents against its text; `None` when the entry does
/// not fit the text or the parser's limits.
pub fn decode(bytes: &[u8], text: &str) -> Option<Vec<Node>> {
    let mut r = Reader {
        bytes,
        at: 0,
        text,
        nodes: 0,
    };
    if usize::try_from(r.varint()?).ok()? != text.len()
        || u64::from_le_bytes(r.take(8)?.try_into().ok()?) != sum(&[text.as_bytes()])
    {
        return None;
    }
    let count = r.count()?;
    let mut docs = Vec::with_capacity(count);
    for _ in 0..count {
        docs.push(r.node(0)?);
    }
    (r.at == bytes.len()).then_some(docs)
}

struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
    text: &'a str,
    nodes: usize,
}

impl Reader<'_> {
    fn byte(&mut self) -> Option<u8> {
        let b = *self.bytes.get(self.at)?;
        self.at += 1;
        Some(b)
    }

    fn varint(&mut self) -> Option<u64> {
        let mut v: u64 = 0;
        for shift in (0..64).step_by(7) {
            let b = self.byte()?;
            v |= u64::from(b & 0x7f).checked_shl(shift)?;
            if b < 0x80 {
                return Some(v);
            }
        }
        None
    }

    /// A count of items, each of which takes at least one byte.
    fn count(&mut self) -> Option<usize> {
        let n = usize::try_from(self.varint()?).ok()?;
        (n <= self.bytes.len() - self.at).then_some(n)
    }

    fn take(&mut self, n: usize) -> Option<&[u8]> {
        let s = self.bytes.get(self.at..self.at.checked_add(n)?)?;
        self.at += n;
        Some(s)
    }

    fn node(&mut self, depth: usize) -> Option<Node> {
        // The parser's own limits: the tree of an entry is never bigger than
        // a tree the parser could have built.
        self.nodes += 1;
        if depth > MAX_DEPTH + 1 || self.nodes > MAX_NODES {
            return None;
        }
        let tag = self.byte()?;
        let start = u32::try_from(self.varint()?).ok()?;
        let end = start.checked_add(u32::try_from(self.varint()?).ok()?)?;
        if end as usize > self.text.len() {
            return None;
        }
        let value = match tag {
            NULL => Value::Null,
            FALSE => Value::Bool(false),
            TRUE => Value::Bool(true),
            INT => {
                let z = self.varint()?;
                Value::Int(((z >> 1) as i64) ^ -((z & 1) as i64))
            }
            UINT => Value::UInt(self.varint()?),
            FLOAT => Value::Float(f64::from_bits(u64::from_le_bytes(
                self.take(8)?.try_into().ok()?,
            ))),
            STR => {
                let n = self.count()?;
                Value::Str(std::str::from_utf8(self.take(n)?).ok()?.to_string())
            }
            SLICE => Value::Str(self.text.get(start as usize..end as usize)?.to_string()),
            SEQ => {
                let n = self.count()?;
                let mut items = Vec::with_capacity(n);
                for _ in 0..n {
                    items.push(self.node(depth + 1)?);
                }
                Value::Seq(items)
            }
            MAP => {
                let n = self.count()?;
                let mut entries = Vec::with_capacity(n);
                for _ in 0..n {
                    let k = self.node(depth + 1)?;
                    let v = self.node(depth + 1)?;
                    entries.push((k, v));
                }
                Value::Map(entries)
            }
            _ => return None,
        };
        Some(Node { value, start, end })
    }
}

#[cfg(test)]
#[path = "cache_tests.rs"]
mod tests;
