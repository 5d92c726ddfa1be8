//! A file's bytes as text: what cannot be read as UTF-8 YAML or CSV
//! (binary data, another encoding, too large, unreadable, a link or a
//! submodule not followed) is reported with what to do about it.

use super::*;

/// The text of a file's content, to be added as file `id`, and whether it
/// can be parsed; a problem (binary, not UTF-8, too large, unreadable, a
/// link or submodule not followed) is reported in `diags`.
pub(super) fn decode<'a>(
    path: &str,
    content: &'a Content,
    id: FileId,
    diags: &mut Vec<Diagnostic>,
) -> (std::borrow::Cow<'a, str>, bool) {
    use std::borrow::Cow;
    let empty = Cow::Borrowed("");
    match content {
        Content::Bytes(bytes) => {
            // UTF-16 and UTF-32 text (a byte-order mark, or every other
            // byte NUL in the first characters) is text in another encoding.
            if let Some(encoding) = wide_encoding(bytes) {
                diags.push(
                    Diagnostic::new(
                        Code::FileNotUtf8,
                        format!("this file is {encoding} text, not UTF-8"),
                    )
                    .at(Span::new(id, 0, 0), "not UTF-8")
                    .help("save the file as UTF-8 (`iconv -f UTF-16 -t UTF-8`, or your editor's encoding setting)"),
                );
                return (empty, false);
            }
            // A vectorized search: the common case costs little.
            if let Some(nul) = memchr::memchr(0, bytes) {
                let head = String::from_utf8_lossy(&bytes[..nul.min(64 * 1024)]).into_owned();
                let at = head.len();
                diags.push(
                    Diagnostic::new(
                        Code::FileBinary,
                        if path.ends_with(".csv") {
                            "this file holds binary data, not CSV text"
                        } else {
                            "this file holds binary data, not YAML text"
                        },
                    )
                        .at(Span::new(id, at, at), "first NUL byte")
                        .help("remove the file from the repository or list it under the Config's `ignore`"),
                );
                return (Cow::Owned(head), false);
            }
            match std::str::from_utf8(bytes) {
                Ok(text) => (Cow::Borrowed(text), true),
                Err(e) => {
                    let valid = e.valid_up_to();
                    // The lossy text replaces bad bytes; the valid prefix is unchanged.
                    diags.push(
                        Diagnostic::new(Code::FileNotUtf8, "this file is not valid UTF-8")
                            .at(Span::new(id, valid, valid + 1), "invalid byte sequence")
                            .help("save the file as UTF-8"),
                    );
                    (String::from_utf8_lossy(bytes), false)
                }
            }
        }
        Content::TooLarge(size) => {
            diags.push(
                Diagnostic::new(
                    Code::FileTooLarge,
                    format!(
                        "this file is {size} bytes ({:.1} MiB); capops reads files of at most {} MiB ({MAX_FILE_BYTES} bytes)",
                        *size as f64 / (1024.0 * 1024.0),
                        MAX_FILE_BYTES / (1024 * 1024)
                    ),
                )
                .at(Span::file_start(id), "not read")
                .help("split the documents across smaller files, or list the file under the Config's `ignore`"),
            );
            (empty, false)
        }
        Content::NameNotUtf8 => {
            diags.push(
                Diagnostic::new(
                    Code::PathNotUtf8,
                    "this file's name is not valid UTF-8 (shown with the invalid bytes replaced), so it is not read".to_string(),
                )
                .at(Span::file_start(id), "not read")
                .help("rename it to a UTF-8 name (`git mv`): git and the file system can name it differently"),
            );
            (empty, false)
        }
        Content::Unreadable(why) if path.ends_with('/') => {
            diags.push(
                Diagnostic::new(Code::FileUnreadable, format!("cannot read this folder: {why}"))
                    .at(Span::file_start(id), "not listed")
                    .help("give capops read and search permission on the folder (chmod a+rx), or list it in the Config's `ignore`"),
            );
            (empty, false)
        }
        Content::Unreadable(why) => {
            diags.push(
                Diagnostic::new(
                    Code::FileUnreadable,
                    format!("cannot read this file: {why}"),
                )
                .at(Span::file_start(id), "not read")
                .help(if why.contains("not a regular file") {
                    "replace it with a plain file, remove it, or list it in the Config's `ignore` (capops never opens a FIFO, socket or device: it could block the run forever)"
                } else if why.contains("is a folder") && path == super::CONFIG_FILE {
                    "the Config is the file `capops.yaml` at the repository's root: move the folder away and write the Config there"
                } else {
                    "check the file's permissions, or remove a broken symbolic link"
                }),
            );
            (empty, false)
        }
        Content::SymlinkLoop(p) => {
            diags.push(symlink_loop(id, p));
            (empty, false)
        }
        Content::Symlink => {
            diags.push(
                Diagnostic::new(
                    Code::SymlinkNotFollowed,
                    format!(
                        "`{path}` is a symbolic link; capops does not follow links, so what it points to was not read"
                    ),
                )
                .at(Span::file_start(id), "link not followed")
                .help("replace the link with the file itself, or list the path under the Config's `ignore`"),
            );
            (empty, false)
        }
        Content::Submodule => {
            diags.push(
                Diagnostic::new(
                    Code::SubmoduleNotRead,
                    format!(
                        "`{path}` is a git submodule or a nested repository; capops does not read it"
                    ),
                )
                .at(Span::file_start(id), "not read")
                .help("move its documents into the capacity repository, or list the folder under the Config's `ignore`"),
            );
            (empty, false)
        }
        Content::Deferred(_) => {
            // Read by the caller before decoding.
            diags.push(
                Diagnostic::new(
                    Code::FileUnreadable,
                    "cannot read this file: it was not read",
                )
                .at(Span::file_start(id), "not read"),
            );
            (empty, false)
        }
    }
}

/// The wide encoding a file's first bytes show: a UTF-32 or UTF-16
/// byte-order mark, or ASCII text with a NUL after (or before) each
/// character.
fn wide_encoding(bytes: &[u8]) -> Option<&'static str> {
    if bytes.starts_with(&[0xFF, 0xFE, 0, 0]) || bytes.starts_with(&[0, 0, 0xFE, 0xFF]) {
        return Some("UTF-32");
    }
    if bytes.starts_with(&[0xFF, 0xFE]) || bytes.starts_with(&[0xFE, 0xFF]) {
        return Some("UTF-16");
    }
    let head = &bytes[..bytes.len().min(64) & !1];
    let pairs = head.chunks_exact(2);
    let n = pairs.len();
    let le = head
        .chunks_exact(2)
        .filter(|p| p[0] != 0 && p[1] == 0)
        .count();
    let be = head
        .chunks_exact(2)
        .filter(|p| p[0] == 0 && p[1] != 0)
        .count();
    (n >= 4 && (le == n || be == n)).then_some("UTF-16")
}
