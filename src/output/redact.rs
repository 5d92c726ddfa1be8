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
    let mut t = secrets
        .iter()
        .fold(text.to_string(), |t, s| t.replace(s.as_str(), "<redacted>"));
    // Credentials after an auth scheme or a token key, in any case, after
    // any spaces, colons, equals signs or quotes.
    for scheme in ["bearer", "basic", "token", "password", "secret"] {
        let mut from = 0;
        loop {
            let lower = t.to_ascii_lowercase();
            let Some(i) = lower[from..].find(scheme) else {
                break;
            };
            let mut start = from + i + scheme.len();
            let bytes = t.as_bytes();
            let mut separated = false;
            while start < t.len() {
                if matches!(bytes[start], b' ' | b'\t' | b':' | b'=' | b'"' | b'\'') {
                    separated = true;
                    start += 1;
                } else if t[start..].starts_with("%20") {
                    separated = true;
                    start += 3;
                } else {
                    break;
                }
            }
            let end = t[start..]
                .find(|c: char| !(c.is_ascii_alphanumeric() || "-._~+/=".contains(c)))
                .map_or(t.len(), |j| start + j);
            if separated && end >= start + 4 && &t[start..end] != "<redacted>" {
                t.replace_range(start..end, "<redacted>");
                from = start + "<redacted>".len();
            } else {
                from = (from + i + scheme.len()).min(t.len());
            }
        }
    }
    t
}
