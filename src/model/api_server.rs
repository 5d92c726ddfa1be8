//! An API server's URL in one spelling, so that a Cluster's pinned
//! `apiServer`, a kubeconfig context's `server` and a plan's, written in
//! two ways, are known to be one.

/// The form of a Cluster's `apiServer`: an http(s) URL without a user,
/// query or fragment.
pub const API_SERVER_PATTERN: &str = r"^[Hh][Tt][Tt][Pp][Ss]?://[^\s/?#@]+(/[^\s?#]*)?$";

/// A server URL in one spelling: scheme and host in lower case, an IP
/// address in its canonical form (an IPv4-mapped IPv6 address as IPv4,
/// `localhost` as 127.0.0.1), the port written out (443 for https, 80 for
/// http, leading zeros dropped), no trailing slash.
pub fn normal_server(url: &str) -> String {
    let trimmed = url.trim().trim_end_matches('/');
    let Some((scheme, rest)) = trimmed.split_once("://") else {
        return trimmed.to_ascii_lowercase();
    };
    let scheme = scheme.to_ascii_lowercase();
    // The scheme and host are case-blind; the path is not (a proxy that
    // routes by path, such as Rancher's /k8s/clusters/c-ABC, may tell
    // c-ABC and c-abc apart).
    let (authority, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
    let authority = authority.to_ascii_lowercase();
    let authority = authority.as_str();
    let (host, port) = match authority.strip_prefix('[') {
        Some(v6) => match v6.split_once(']') {
            Some((h, p)) => (h.to_string(), p.strip_prefix(':').map(str::to_string)),
            None => (v6.to_string(), None),
        },
        None => match authority.rsplit_once(':') {
            Some((h, p)) => (h.to_string(), Some(p.to_string())),
            None => (authority.to_string(), None),
        },
    };
    // A port that is no port (70000, `x`) is kept as written: it is no
    // server's, and never the default one.
    let port = match port {
        None => (if scheme == "http" { 80 } else { 443 }).to_string(),
        Some(p) => match p.parse::<u16>() {
            Ok(n) if n > 0 => n.to_string(),
            _ => p,
        },
    };
    let host = match host.parse::<std::net::IpAddr>() {
        Ok(std::net::IpAddr::V6(v6)) => match v6.to_ipv4_mapped() {
            Some(v4) => v4.to_string(),
            None => format!("[{v6}]"),
        },
        Ok(ip) => ip.to_string(),
        Err(_) if host == "localhost" => "127.0.0.1".into(),
        Err(_) => host,
    };
    format!("{scheme}://{host}:{port}{path}")
}

/// `text` with the user and password of any URL in it (`scheme://user:pw@`)
/// replaced by `***@`, for messages that quote a URL.
pub fn without_userinfo_text(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = rest.find("://") {
        let (head, tail) = rest.split_at(i + 3);
        out.push_str(head);
        let end = tail
            .find(|c: char| c == '/' || c == '"' || c.is_whitespace())
            .unwrap_or(tail.len());
        match tail[..end].rfind('@') {
            Some(at) => {
                out.push_str("***");
                rest = &tail[at..];
            }
            None => rest = tail,
        }
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_spelling_of_a_server() {
        for (a, b) in [
            ("HTTPS://K8S.Example:443/", "https://k8s.example"),
            ("https://[::ffff:10.0.0.1]:6443", "https://10.0.0.1:6443"),
            ("http://localhost", "http://127.0.0.1:80"),
            (
                "https://h:0443/k8s/clusters/c-1/",
                "https://h:443/k8s/clusters/c-1",
            ),
        ] {
            assert_eq!(normal_server(a), normal_server(b), "{a} {b}");
        }
        assert_ne!(normal_server("https://h:6443"), normal_server("https://h"));
        assert_ne!(normal_server("http://h"), normal_server("https://h"));
        // The path keeps its case; a port that is no port is no default.
        assert_ne!(
            normal_server("https://r/k8s/clusters/c-ABC"),
            normal_server("https://r/k8s/clusters/c-abc")
        );
        assert_ne!(normal_server("https://h:70000"), normal_server("https://h"));
    }

    #[test]
    fn credentials_in_a_quoted_url_are_hidden() {
        assert_eq!(
            without_userinfo_text("the string \"https://admin:s3cret@k8s.example/x\""),
            "the string \"https://***@k8s.example/x\""
        );
        assert_eq!(without_userinfo_text("ftp://h/a@b"), "ftp://h/a@b");
        assert_eq!(without_userinfo_text("no url"), "no url");
    }
}
