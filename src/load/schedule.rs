//! Parsing files on every core without holding many large trees at once: a
//! YAML file's tree takes tens of times its text (a 15 MB flow list of five
//! million values, about 600 MB), so files past [`LARGE`] are parsed one at
//! a time, after the others have been parsed in parallel. Peak memory then
//! grows with the largest file, not with the number of cores.

use crate::diag::FileId;
use rayon::prelude::*;

/// Files larger than this (bytes of text) are parsed one at a time.
pub const LARGE: usize = 256 * 1024;

/// `f` over `ids`, in their order: those of at most [`LARGE`] bytes
/// (`size`) in parallel, then the larger ones one by one.
pub fn by_size<T: Send>(
    ids: &[FileId],
    size: impl Fn(FileId) -> usize + Sync,
    f: impl Fn(FileId) -> T + Sync,
) -> Vec<T> {
    let mut out: Vec<Option<T>> = ids
        .par_iter()
        .map(|&id| (size(id) <= LARGE).then(|| f(id)))
        .collect();
    for (slot, &id) in out.iter_mut().zip(ids) {
        if slot.is_none() {
            *slot = Some(f(id));
        }
    }
    out.into_iter().flatten().collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn large_files_are_parsed_one_at_a_time_and_order_is_kept() {
        use std::sync::atomic::{AtomicUsize, Ordering};
        let ids: Vec<FileId> = (0..64).map(FileId).collect();
        let size = |id: FileId| {
            if id.0.is_multiple_of(3) {
                LARGE + 1
            } else {
                10
            }
        };
        let (now, most) = (AtomicUsize::new(0), AtomicUsize::new(0));
        let out = by_size(&ids, size, |id| {
            if size(id) > LARGE {
                let n = now.fetch_add(1, Ordering::SeqCst) + 1;
                most.fetch_max(n, Ordering::SeqCst);
                std::thread::sleep(std::time::Duration::from_millis(1));
                now.fetch_sub(1, Ordering::SeqCst);
            }
            id.0
        });
        assert_eq!(out, (0..64).collect::<Vec<_>>());
        assert_eq!(most.load(Ordering::SeqCst), 1);
    }
}
