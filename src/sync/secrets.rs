//! Keeping credentials out of what sync prints: the secrets a kubeconfig
//! holds (tokens, passwords, client keys, a credential plugin's arguments
//! and environment, an auth provider's settings, userinfo in a server URL),
//! and any bearer or basic credential an error echoes, are replaced by
//! `<redacted>` in every message, plan and issue body.

use kube::config::Kubeconfig;

/// Every credential a kubeconfig holds (tokens, passwords, client keys, and
/// what credential plugins and auth providers are given), longest first.
pub fn kubeconfig_secrets(kc: &Kubeconfig) -> Vec<String> {
    use secrecy::ExposeSecret;
    let mut out: Vec<String> = Vec::new();
    for a in kc.auth_infos.iter().filter_map(|a| a.auth_info.as_ref()) {
        for s in [&a.token, &a.password, &a.client_key_data]
            .into_iter()
            .flatten()
        {
            out.push(s.expose_secret().to_string());
        }
        // A credential plugin's arguments and environment, and an auth
        // provider's settings, hold client secrets as often as not
        // (`--oidc-client-secret=...`); kube's exec errors print them.
        let mut loose: Vec<String> = Vec::new();
        if let Some(e) = &a.exec {
            for arg in e.args.iter().flatten() {
                loose.push(arg.clone());
                if let Some((_, v)) = arg.split_once('=') {
                    loose.push(v.to_string());
                }
            }
            for vars in e.env.iter().flatten() {
                loose.extend(vars.get("value").cloned());
            }
        }
        if let Some(p) = &a.auth_provider {
            loose.extend(p.config.values().cloned());
        }
        // Short values (`--region`, `json`) are not secrets and would blot
        // out ordinary words.
        out.extend(loose.into_iter().filter(|v| v.len() >= 8));
    }
    // Userinfo in a server or proxy URL.
    for c in kc.clusters.iter().filter_map(|c| c.cluster.as_ref()) {
        for url in [&c.server, &c.proxy_url].into_iter().flatten() {
            // A query (`?token=...`) is a secret whole and value by value.
            if let Some((_, query)) = url.split_once('?') {
                let query = query.split('#').next().unwrap_or("");
                out.push(query.to_string());
                out.extend(
                    query
                        .split('&')
                        .filter_map(|kv| kv.split_once('=').map(|(_, v)| v.to_string())),
                );
            }
            if let Some((_, rest)) = url.split_once("://")
                && let Some((userinfo, _)) = rest.split('/').next().unwrap_or("").rsplit_once('@')
            {
                out.push(userinfo.to_string());
                if let Some((_, password)) = userinfo.split_once(':') {
                    out.push(password.to_string());
                }
            }
        }
    }
    out.retain(|s| s.len() >= 4);
    // Longest first, so a secret inside another is not left half shown.
    out.sort_by_key(|s| std::cmp::Reverse(s.len()));
    out.dedup();
    out
}

pub use crate::output::redact::scrub_text;

/// A URL without its userinfo (`user:password@`) and query, credentials
/// never shown.
pub fn without_userinfo(url: &str) -> String {
    crate::model::usage_settings::redact_url(url)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plugin_arguments_environment_and_url_userinfo_are_secrets() {
        let kc: Kubeconfig = kubeconfig_of(
            "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n    server: https://admin:URLPASS-4242@10.0.0.1:6443/\n    proxy-url: http://puser:PROXYPASS-4242@10.0.0.2:3128\nusers:\n- name: u\n  user:\n    exec:\n      apiVersion: client.authentication.k8s.io/v1\n      command: kubelogin\n      args: [get-token, --oidc-client-secret=ARGSECRET-987654]\n      env:\n      - {name: CLIENT_SECRET, value: ENVSECRET-123456}\n      - {name: MODE, value: json}\ncontexts:\n- name: c\n  context: {cluster: c, user: u}\ncurrent-context: c\n",
        );
        let secrets = kubeconfig_secrets(&kc);
        let text = "exec failed: CLIENT_SECRET=\"ENVSECRET-123456\" args [\"get-token\", \"--oidc-client-secret=ARGSECRET-987654\"]; cannot reach https://admin:URLPASS-4242@10.0.0.1:6443 via http://puser:PROXYPASS-4242@10.0.0.2:3128; header Authorization: Bearer EXECTOKEN-abc.def/123=, mode json";
        let out = scrub_text(&secrets, text);
        for secret in [
            "ENVSECRET",
            "ARGSECRET",
            "URLPASS",
            "PROXYPASS",
            "EXECTOKEN",
        ] {
            assert!(!out.contains(secret), "{secret}: {out}");
        }
        // Short settings are not secrets and ordinary words stay.
        assert!(out.contains("mode json"), "{out}");
        assert!(out.contains("Bearer <redacted>, mode"), "{out}");
        assert_eq!(
            without_userinfo("https://admin:pw@h:6443/x"),
            "https://h:6443/x"
        );
        assert_eq!(
            without_userinfo("https://h:6443/k8s?token=QSECRET-123456&x=1#frag"),
            "https://h:6443/k8s?<redacted>"
        );
        assert_eq!(without_userinfo("https://u@h?t=1"), "https://h?<redacted>");
        // Any case, any separator, and token keys.
        for echoed in [
            "BEARER TOKEN-AAAA1111",
            "BeArEr\tTOKEN-AAAA1111",
            "Authorization: bearer:TOKEN-AAAA1111",
            "Bearer%20TOKEN-AAAA1111",
            "?token=TOKEN-AAAA1111&x=1",
            "basic  dXNlcjpwYXNz",
        ] {
            let out = scrub_text(&[], echoed);
            assert!(
                !out.contains("TOKEN-AAAA1111") && !out.contains("dXNlcjpwYXNz"),
                "{echoed} -> {out}"
            );
        }
        // A credential plugin's failure is not echoed at all.
        let out = scrub_text(
            &[],
            "auth exec command 'kubelogin' failed with status 1: Output { stdout: \"ISSUED\\\"TOKEN\" }",
        );
        assert!(
            !out.contains("ISSUED") && out.contains("credential plugin"),
            "{out}"
        );
    }

    fn kubeconfig_of(text: &str) -> Kubeconfig {
        Kubeconfig::from_yaml(text).unwrap()
    }
}
