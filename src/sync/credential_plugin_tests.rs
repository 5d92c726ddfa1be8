//! The credential plugin runner against real processes (shell scripts):
//! deadlines, what is shown, answers checked, one run per user.

use super::*;

fn script(dir: &std::path::Path, body: &str) -> String {
    use std::os::unix::fs::PermissionsExt;
    let p = dir.join("plugin.sh");
    std::fs::write(&p, format!("#!/bin/sh\n{body}\n")).unwrap();
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
    p.display().to_string()
}

fn exec(command: &str) -> ExecConfig {
    ExecConfig {
        api_version: Some("client.authentication.k8s.io/v1".into()),
        command: Some(command.into()),
        args: None,
        env: None,
        drop_env: None,
        install_hint: None,
        interactive_mode: Some(ExecInteractiveMode::Never),
        provide_cluster_info: false,
        cluster: None,
        other: Default::default(),
    }
}

#[test]
fn a_token_is_read_and_the_spec_passed() {
    let d = tempfile::tempdir().unwrap();
    // The plugin answers only when it was told it is not interactive.
    let cmd = script(
        d.path(),
        r#"case "$KUBERNETES_EXEC_INFO" in *'"interactive":false'*) ;; *) exit 7;; esac
echo '{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"TOK-1234","expirationTimestamp":"2030-01-01T00:00:00Z"}}'"#,
    );
    let c = run(&exec(&cmd), None, true).unwrap();
    assert_eq!(c.token.unwrap().expose_secret(), "TOK-1234");
    assert_eq!(c.expires.unwrap().to_string(), "2030-01-01T00:00:00Z");
}

#[test]
fn a_plugin_that_never_answers_is_stopped_at_the_deadline() {
    let d = tempfile::tempdir().unwrap();
    let cmd = script(d.path(), "sleep 600");
    let t = Instant::now();
    let e = run(&exec(&cmd), Some(Duration::from_millis(300)), false).unwrap_err();
    assert!(matches!(e, PluginError::TimedOut { .. }), "{e}");
    assert!(t.elapsed() < Duration::from_secs(10), "{:?}", t.elapsed());
}

#[test]
fn a_failure_never_shows_the_output() {
    let d = tempfile::tempdir().unwrap();
    let cmd = script(d.path(), "echo SECRET-OUT; echo SECRET-ERR >&2; exit 3");
    let e = run(&exec(&cmd), None, false).unwrap_err().to_string();
    assert!(e.contains("failed") && e.contains('3'), "{e}");
    assert!(!e.contains("SECRET"), "{e}");
}

#[test]
fn always_interactive_needs_a_terminal() {
    let mut x = exec("/bin/true");
    x.interactive_mode = Some(ExecInteractiveMode::Always);
    assert!(matches!(
        run(&x, None, false),
        Err(PluginError::NeedsTerminal { .. })
    ));
}

#[test]
fn answers_are_checked_without_quoting_them() {
    let v1 = Some("client.authentication.k8s.io/v1");
    for (out, want) in [
        ("", "empty"),
        ("{not json", "not JSON"),
        (
            r#"{"apiVersion":"client.authentication.k8s.io/v1beta1","status":{"token":"SECRET-x"}}"#,
            "apiVersion",
        ),
        (r#"{"status":{}}"#, "neither"),
        (
            r#"{"status":{"clientCertificateData":"SECRET-c"}}"#,
            "without its key",
        ),
        (
            r#"{"status":{"token":"SECRET-x","expirationTimestamp":"soon"}}"#,
            "RFC 3339",
        ),
        (
            r#"{"status":{"token":"SECRET\r\nX-Evil: 1"}}"#,
            "line break",
        ),
        (
            r#"{"status":{"token":"SECRET\u001b[31m"}}"#,
            "control character",
        ),
    ] {
        let e = parse(out.as_bytes(), v1).err().unwrap_or_default();
        assert!(e.contains(want) && !e.contains("SECRET"), "{out} -> {e}");
    }
    // YAML, as some plugins print, and a certificate.
    let c = parse(
        b"status:\n  clientCertificateData: CERT\n  clientKeyData: KEY\n",
        v1,
    )
    .unwrap();
    let mut info = AuthInfo::default();
    c.apply_to(&mut info);
    assert_eq!(info.client_certificate_data.as_deref(), Some("Q0VSVA=="));
    assert!(info.exec.is_none() && info.token.is_none());
}

#[test]
fn a_credential_is_fetched_again_near_its_expiry() {
    let at = |s: &str| s.parse::<jiff::Timestamp>().unwrap();
    let c = Credential {
        token: None,
        certificate: None,
        expires: Some(at("2030-01-01T00:10:00Z")),
    };
    assert!(!c.stale(at("2030-01-01T00:08:00Z")));
    assert!(c.stale(at("2030-01-01T00:09:30Z")));
    assert!(c.stale(at("2030-01-01T00:11:00Z")));
}

#[test]
fn what_a_plugin_leaves_running_is_stopped_and_its_answer_read() {
    let d = tempfile::tempdir().unwrap();
    let pids = d.path().join("pids");
    // It answers at once, leaving a child that holds its stdout open.
    let cmd = script(
        d.path(),
        &format!(
            "sleep 600 &\necho $! > {}\necho '{{\"status\":{{\"token\":\"T-0002\"}}}}'",
            pids.display()
        ),
    );
    let t = Instant::now();
    let c = run(&exec(&cmd), Some(Duration::from_secs(30)), false).unwrap();
    assert_eq!(c.token.unwrap().expose_secret(), "T-0002");
    assert!(t.elapsed() < Duration::from_secs(10), "{:?}", t.elapsed());
    // The child it left was stopped with its group.
    let pid = std::fs::read_to_string(&pids).unwrap().trim().to_string();
    std::thread::sleep(Duration::from_millis(200));
    let state = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    assert!(
        state.is_empty() || state.split_whitespace().nth(2) == Some("Z"),
        "{state}"
    );
}

#[tokio::test]
async fn a_failure_is_given_to_every_cluster_of_the_user_without_running_again() {
    let d = tempfile::tempdir().unwrap();
    let count = d.path().join("runs");
    let cmd = script(d.path(), &format!("echo x >> {}\nexit 1", count.display()));
    let plugins = Plugins::new(None, false);
    let now = || "2030-01-01T00:00:00Z".parse().unwrap();
    for _ in 0..3 {
        assert!(plugins.credential(&exec(&cmd), now).await.is_err());
    }
    assert_eq!(std::fs::read_to_string(&count).unwrap().lines().count(), 1);
}

#[tokio::test]
async fn one_run_serves_every_cluster_of_a_user() {
    let d = tempfile::tempdir().unwrap();
    let count = d.path().join("runs");
    let cmd = script(
        d.path(),
        &format!(
            "echo x >> {}\necho '{{\"status\":{{\"token\":\"T-0001\"}}}}'",
            count.display()
        ),
    );
    let plugins = Plugins::new(None, false);
    let now = || "2030-01-01T00:00:00Z".parse().unwrap();
    for _ in 0..3 {
        plugins.credential(&exec(&cmd), now).await.unwrap();
    }
    assert_eq!(std::fs::read_to_string(&count).unwrap().lines().count(), 1);
}
