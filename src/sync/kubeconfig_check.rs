//! A kubeconfig file read before kube reads it, to say what is wrong with
//! one that does not read, and where, without quoting it (a kubeconfig
//! holds credentials): its size, binary data, an encoding other than UTF-8,
//! YAML that does not parse (by capops' own reader: a position and what
//! kind of problem, never the text), or nothing in it at all. What kube
//! then refuses (a field of the wrong type) is placed by the line and
//! column its message gives, with the message itself left out.

use std::path::Path;

/// The most a kubeconfig may hold: far more than any has (a few KiB).
pub const MAX_KUBECONFIG_BYTES: u64 = 16 * 1024 * 1024;

/// What an empty kubeconfig is said to be (kubectl merges one as nothing).
pub const EMPTY: &str = "it is empty: it names no cluster, user or context";

/// Why the kubeconfig at `path` cannot be read, if it cannot; [`EMPTY`]
/// when it holds nothing.
pub fn precheck(path: &Path) -> Result<(), String> {
    #[allow(clippy::disallowed_methods)]
    let meta = std::fs::metadata(path).map_err(|e| e.to_string())?;
    if meta.len() > MAX_KUBECONFIG_BYTES {
        return Err(format!(
            "it is {} bytes, more than a kubeconfig holds (at most {MAX_KUBECONFIG_BYTES})",
            meta.len()
        ));
    }
    #[allow(clippy::disallowed_methods)]
    let bytes = std::fs::read(path).map_err(|e| e.to_string())?;
    judge(&bytes)
}

/// A file a kubeconfig names (a CA, a client certificate or key, a token
/// file) that kube would read forever or without end: a FIFO, socket or
/// device, or one over 16 MiB (a certificate is a few KiB). Said by the
/// entry and field, never the file's text.
pub fn referenced_file_problem(kc: &kube::config::Kubeconfig) -> Option<String> {
    let mut named: Vec<(String, &'static str, &str)> = Vec::new();
    for c in &kc.clusters {
        if let Some(p) = c
            .cluster
            .as_ref()
            .and_then(|c| c.certificate_authority.as_deref())
        {
            named.push((format!("cluster `{}`", c.name), "certificate-authority", p));
        }
    }
    for u in &kc.auth_infos {
        let Some(a) = &u.auth_info else { continue };
        for (field, p) in [
            ("client-certificate", a.client_certificate.as_deref()),
            ("client-key", a.client_key.as_deref()),
            ("tokenFile", a.token_file.as_deref()),
        ] {
            if let Some(p) = p {
                named.push((format!("user `{}`", u.name), field, p));
            }
        }
    }
    named.into_iter().find_map(|(entry, field, path)| {
        #[allow(clippy::disallowed_methods)]
        let meta = std::fs::metadata(path).ok()?;
        if !meta.is_file() {
            Some(format!(
                "the {field} of {entry} ({path}) is not a regular file (a folder, FIFO, socket or device)"
            ))
        } else if meta.len() > MAX_KUBECONFIG_BYTES {
            Some(format!(
                "the {field} of {entry} ({path}) is {} bytes, more than such a file holds (at most {})",
                meta.len(),
                MAX_KUBECONFIG_BYTES
            ))
        } else {
            None
        }
    })
}

/// Whether a text can be a bearer token in an HTTP header: visible ASCII,
/// spaces and tabs only (a line break would start a header of its own).
pub fn header_safe(token: &str) -> bool {
    token.chars().all(|c| c == '\t' || (' '..='~').contains(&c))
}

/// A name one kubeconfig file lists twice among its clusters, users or
/// contexts: kubectl refuses such a file ("duplicate name"), and which of
/// the two a reader takes is anyone's guess (a stale entry first would send
/// writes to another server).
pub fn duplicate_problem(kc: &kube::config::Kubeconfig) -> Option<String> {
    let lists: [(&str, Vec<&str>); 3] = [
        (
            "cluster",
            kc.clusters.iter().map(|c| c.name.as_str()).collect(),
        ),
        (
            "user",
            kc.auth_infos.iter().map(|c| c.name.as_str()).collect(),
        ),
        (
            "context",
            kc.contexts.iter().map(|c| c.name.as_str()).collect(),
        ),
    ];
    lists.into_iter().find_map(|(what, names)| {
        let mut seen = std::collections::HashSet::new();
        names.into_iter().find(|n| !seen.insert(*n)).map(|n| {
            format!(
                "it lists the {what} `{}` twice (kubectl refuses such a file); keep one entry of that name",
                n.escape_debug()
            )
        })
    })
}

/// A user's `token` that no HTTP header can carry (kube would panic on it),
/// said by the user's entry, never the token.
pub fn token_problem(kc: &kube::config::Kubeconfig) -> Option<String> {
    use secrecy::ExposeSecret;
    kc.auth_infos.iter().find_map(|u| {
        let t = u.auth_info.as_ref()?.token.as_ref()?;
        (!header_safe(t.expose_secret())).then(|| {
            format!(
                "the token of user `{}` holds a line break, a control character or a character that is not ASCII, which no HTTP header can carry",
                u.name
            )
        })
    })
}

/// [`precheck`] on a file's bytes.
pub fn judge(bytes: &[u8]) -> Result<(), String> {
    if let Some(nul) = bytes.iter().position(|b| *b == 0) {
        return Err(format!(
            "it holds binary data (a NUL byte at {}), not YAML",
            position(bytes, nul)
        ));
    }
    let text = std::str::from_utf8(bytes).map_err(|e| {
        format!(
            "it is not UTF-8 text (an invalid byte at {})",
            position(bytes, e.valid_up_to())
        )
    })?;
    let parsed = crate::load::yaml::parse(text, crate::diag::FileId(0));
    if let Some(d) = parsed.diagnostics.iter().find(|d| d.is_error()) {
        let at = d
            .primary
            .as_ref()
            .map(|l| format!(" at {}", position(bytes, l.span.start as usize)))
            .unwrap_or_default();
        return Err(format!(
            "it does not read as YAML: {}{at} ({})",
            d.code.as_str(),
            d.code.title()
        ));
    }
    if parsed
        .documents
        .iter()
        .all(|d| matches!(d.value, crate::load::yaml::Value::Null))
    {
        return Err(EMPTY.into());
    }
    Ok(())
}

/// Where kube's refusal of a kubeconfig points (`at line L column C` in
/// its message), said without the rest of the message, which may quote
/// the file.
pub fn kube_refusal(message: &str) -> String {
    // `at line L column C` or `line L column C: expected …`: the place, and
    // what was expected when that is plain words (never a value of the file).
    let place = message.rfind("line ").and_then(|i| {
        let rest = &message[i + 5..];
        let mut words = rest.split([' ', ',']).filter(|w| !w.is_empty());
        let line: usize = words.next()?.parse().ok()?;
        let column: usize = (words.next() == Some("column"))
            .then(|| words.next()?.trim_end_matches(':').parse().ok())
            .flatten()?;
        let expected = rest
            .split_once(": ")
            .map(|(_, e)| e.trim())
            .filter(|e| {
                e.starts_with("expected ")
                    && e.len() <= 80
                    && e.chars().all(|c| c.is_ascii_alphabetic() || c == ' ')
            })
            .map(|e| format!(": {e}"))
            .unwrap_or_default();
        Some(format!(" (at line {line}, column {column}{expected})"))
    });
    format!(
        "its fields are not those of a kubeconfig, or not of their types{}",
        place.unwrap_or_default()
    )
}

/// `line L, column C` of a byte offset.
fn position(bytes: &[u8], offset: usize) -> String {
    let before = &bytes[..offset.min(bytes.len())];
    let line = before.iter().filter(|b| **b == b'\n').count() + 1;
    let start = before
        .iter()
        .rposition(|b| *b == b'\n')
        .map_or(0, |i| i + 1);
    let column = String::from_utf8_lossy(&before[start..]).chars().count() + 1;
    format!("line {line}, column {column}")
}

#[cfg(test)]
#[path = "kubeconfig_check_tests.rs"]
mod tests;
