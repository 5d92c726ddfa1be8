//! Credentials out of what capops prints: given secrets, and any bearer or
//! basic credential, token, password or secret a server's error echoes, are
//! replaced by `<redacted>` (for sync's kubeconfig secrets and usage pull's
//! Prometheus token alike).

/// Removes `secrets` from `text`, and any bearer or basic credential an
/// error echoes (a token a credential plugin obtained is not in the
/// kubeconfig, but a server or proxy may quote the header that carried it).
pub fn scrub_text(secrets: &[String], text: &str) -> String {
    let lower = text.to_ascii_lowercase();
    // kube's credential-plugin errors print the plugin's command line,
    // environment and output, escaped (so an exact match can miss): none
    // of it is shown.
    if ["auth exec", "exec auth", "exec-plugin"]
        .iter()
        .any(|m| lower.contains(m))
    {
        return "the kubeconfig's credential plugin (`exec`) failed; its command line, environment and output are not shown, since they may hold credentials: run the plugin by hand to see why".into();
    }
    let mut t = scrub_secrets(secrets, text);
    // Credentials after an auth scheme or a token key, in any case, after
    // any spaces, colons, equals signs or quotes: one pass a scheme, each
    // linear in the text (a body of megabytes that says "token" at every
    // word is read once, not once a word).
    for scheme in ["bearer", "basic", "token", "password", "secret"] {
        t = redact_after(&t, scheme);
    }
    t
}

/// Removes the given secrets, exactly as written, from `text` (what a
/// successful answer is scrubbed of: its prose keeps words such as "token").
pub fn scrub_secrets(secrets: &[String], text: &str) -> String {
    secrets
        .iter()
        .filter(|s| !s.is_empty())
        .fold(text.to_string(), |t, s| t.replace(s.as_str(), "<redacted>"))
}

/// `text` with the credential after each `scheme` (any case) replaced.
fn redact_after(text: &str, scheme: &str) -> String {
    // ASCII lower-casing keeps every byte offset.
    let lower = text.to_ascii_lowercase();
    let bytes = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let (mut copied, mut from) = (0, 0);
    while let Some(i) = lower[from..].find(scheme) {
        let mut start = from + i + scheme.len();
        let mut separated = false;
        while start < text.len() {
            if matches!(bytes[start], b' ' | b'\t' | b':' | b'=' | b'"' | b'\'') {
                separated = true;
                start += 1;
            } else if text[start..].starts_with("%20") {
                separated = true;
                start += 3;
            } else {
                break;
            }
        }
        if !separated {
            // `tokentoken…`: no credential follows, and the run after it is
            // not walked (walking it at every match would be quadratic).
            from += i + scheme.len();
            continue;
        }
        let end = text[start..]
            .find(|c: char| !(c.is_ascii_alphanumeric() || "-._~+/=".contains(c)))
            .map_or(text.len(), |j| start + j);
        if end >= start + 4 {
            out.push_str(&text[copied..start]);
            out.push_str("<redacted>");
            copied = end;
            from = end;
        } else {
            from += i + scheme.len();
        }
    }
    out.push_str(&text[copied..]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credentials_after_a_scheme_or_key_are_redacted_in_one_pass() {
        assert_eq!(
            scrub_text(
                &[],
                "Authorization: Bearer abcd1234 and token=ffff9999, password: 'hunter22'"
            ),
            "Authorization: Bearer <redacted> and token=<redacted>, password: '<redacted>'"
        );
        assert_eq!(
            scrub_text(&["s3cr3t-value".into()], "x s3cr3t-value y"),
            "x <redacted> y"
        );
        // Short words after a key are prose, not credentials.
        assert_eq!(scrub_text(&[], "the token is ok"), "the token is ok");
        // A successful answer keeps its prose: only the exact secret goes.
        assert_eq!(
            scrub_secrets(&["ghp_abc123".into()], "token throughput; echo ghp_abc123"),
            "token throughput; echo <redacted>"
        );
    }

    #[test]
    fn every_credential_of_a_long_body_is_redacted() {
        let text = "token abcd1234 ".repeat(1000);
        let out = scrub_text(&[], &text);
        assert_eq!(out.matches("token <redacted>").count(), 1000);
        assert!(!out.contains("abcd1234"));
        // A megabyte of scheme words run together (no credential follows
        // any of them) is passed over once, and the one after them found.
        let text = format!("{}token abcd1234", "token".repeat(200_000));
        let out = scrub_text(&[], &text);
        assert!(
            out.ends_with("token <redacted>"),
            "{}",
            &out[out.len() - 40..]
        );
        assert_eq!(
            out.len(),
            text.len() - "abcd1234".len() + "<redacted>".len()
        );
    }
}
