//! The real API machinery for the contract suite: etcd and
//! `apiextensions-apiserver` (built by `.ci/kube-apiserver.sh`), started on
//! loopback ports with the test certificates, the Kueue CRDs installed and
//! established. Both processes are killed when the value is dropped.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// Where `.ci/kube-apiserver.sh` put the binaries and certificates:
/// `CAPOPS_KUBE_APISERVER_DIR`, else `~/.cache/capops/kube-apiserver/current`.
pub fn install_dir() -> Option<PathBuf> {
    let dir = match std::env::var_os("CAPOPS_KUBE_APISERVER_DIR").filter(|d| !d.is_empty()) {
        Some(d) => PathBuf::from(d),
        None => {
            let cache = std::env::var_os("XDG_CACHE_HOME")
                .map(PathBuf::from)
                .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))?;
            cache.join("capops/kube-apiserver/current")
        }
    };
    (dir.join("bin/apiextensions-apiserver").is_file()
        && dir.join("bin/etcd").is_file()
        && dir.join("pki/client.key").is_file())
    .then_some(dir)
}

/// The installation, or `None` (with a message) when the tier must skip:
/// only when the binaries are absent and CAPOPS_CI is unset.
pub fn available() -> Option<PathBuf> {
    match install_dir() {
        Some(d) => Some(d),
        None if std::env::var_os("CAPOPS_CI").is_some() => panic!(
            "CAPOPS_CI is set but the real apiextensions-apiserver is missing: run .ci/kube-apiserver.sh"
        ),
        None => {
            eprintln!(
                "skipped: the real apiextensions-apiserver is not built (run .ci/kube-apiserver.sh to enable the contract tier)"
            );
            None
        }
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// A running etcd + apiextensions-apiserver pair.
pub struct RealApiserver {
    children: Vec<Child>,
    _dir: tempfile::TempDir,
    #[allow(dead_code)]
    pub url: String,
    pub kubeconfig: PathBuf,
    pub log: PathBuf,
}

impl RealApiserver {
    pub fn start(install: &Path) -> RealApiserver {
        let dir = tempfile::tempdir().unwrap();
        let (client_port, peer_port, api_port) = (free_port(), free_port(), free_port());
        let etcd_log = std::fs::File::create(dir.path().join("etcd.log")).unwrap();
        let etcd = Command::new(install.join("bin/etcd"))
            .args([
                "--data-dir",
                dir.path().join("etcd").to_str().unwrap(),
                "--listen-client-urls",
                &format!("http://127.0.0.1:{client_port}"),
                "--advertise-client-urls",
                &format!("http://127.0.0.1:{client_port}"),
                "--listen-peer-urls",
                &format!("http://127.0.0.1:{peer_port}"),
                "--initial-advertise-peer-urls",
                &format!("http://127.0.0.1:{peer_port}"),
                "--initial-cluster",
                &format!("default=http://127.0.0.1:{peer_port}"),
            ])
            .stdout(Stdio::null())
            .stderr(etcd_log)
            .spawn()
            .expect("start etcd");
        // The apiserver's own kubeconfig points at nothing: there is no core API behind it.
        let nothing = dir.path().join("nothing.kubeconfig");
        std::fs::write(
            &nothing,
            "apiVersion: v1\nkind: Config\nclusters: [{name: none, cluster: {server: \"http://127.0.0.1:1\"}}]\n\
             users: [{name: none, user: {}}]\ncontexts: [{name: none, context: {cluster: none, user: none}}]\n\
             current-context: none\n",
        )
        .unwrap();
        let pki = install.join("pki");
        let p = |f: &str| pki.join(f).display().to_string();
        let log = dir.path().join("apiserver.log");
        let api = Command::new(install.join("bin/apiextensions-apiserver"))
            .args([
                "--etcd-servers",
                &format!("http://127.0.0.1:{client_port}"),
                "--etcd-prefix",
                "/capops-contract",
                "--bind-address",
                "127.0.0.1",
                "--secure-port",
                &api_port.to_string(),
                "--tls-cert-file",
                &p("serving.crt"),
                "--tls-private-key-file",
                &p("serving.key"),
                "--client-ca-file",
                &p("ca.crt"),
                "--authentication-skip-lookup",
                "--authentication-kubeconfig",
                nothing.to_str().unwrap(),
                "--authorization-kubeconfig",
                nothing.to_str().unwrap(),
                "--kubeconfig",
                nothing.to_str().unwrap(),
                "--disable-admission-plugins",
                "NamespaceLifecycle,MutatingAdmissionWebhook,ValidatingAdmissionWebhook,ValidatingAdmissionPolicy,MutatingAdmissionPolicy",
            ])
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&log).unwrap())
            .spawn()
            .expect("start apiextensions-apiserver");
        let url = format!("https://127.0.0.1:{api_port}");
        let kubeconfig = dir.path().join("kubeconfig");
        std::fs::write(
            &kubeconfig,
            format!(
                "apiVersion: v1\nkind: Config\nclusters:\n- name: real\n  cluster:\n    server: \"{url}\"\n    certificate-authority: \"{}\"\n\
                 users:\n- name: admin\n  user:\n    client-certificate: \"{}\"\n    client-key: \"{}\"\n\
                 contexts:\n- name: real\n  context: {{cluster: real, user: admin}}\ncurrent-context: real\n",
                p("ca.crt"),
                p("client.crt"),
                p("client.key")
            ),
        )
        .unwrap();
        RealApiserver {
            children: vec![etcd, api],
            _dir: dir,
            url,
            kubeconfig,
            log,
        }
    }

    /// Waits for the server, installs the Kueue CRDs and waits until they serve.
    pub async fn ready(&self, client: &kube::Client, crds: &Path) {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let req = http::Request::get("/livez").body(Vec::new()).unwrap();
            if client.request_text(req).await.is_ok() {
                break;
            }
            assert!(
                Instant::now() < deadline,
                "apiextensions-apiserver did not come up; its log:\n{}",
                std::fs::read_to_string(&self.log).unwrap_or_default()
            );
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
        let mut plurals = Vec::new();
        let mut files: Vec<PathBuf> = std::fs::read_dir(crds)
            .unwrap()
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|e| e == "json"))
            .collect();
        files.sort();
        for f in files {
            let body = std::fs::read(&f).unwrap();
            let crd: serde_json::Value = serde_json::from_slice(&body).unwrap();
            plurals.push(crd["spec"]["names"]["plural"].as_str().unwrap().to_string());
            let req =
                http::Request::post("/apis/apiextensions.k8s.io/v1/customresourcedefinitions")
                    .header("content-type", "application/json")
                    .body(body)
                    .unwrap();
            client
                .request::<serde_json::Value>(req)
                .await
                .unwrap_or_else(|e| panic!("installing {}: {e}", f.display()));
        }
        for p in plurals {
            loop {
                let req = http::Request::get(format!("/apis/kueue.x-k8s.io/v1beta2/{p}"))
                    .body(Vec::new())
                    .unwrap();
                if client.request::<serde_json::Value>(req).await.is_ok() {
                    break;
                }
                assert!(
                    Instant::now() < deadline,
                    "the CRD for {p} was never established"
                );
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        }
    }
}

impl Drop for RealApiserver {
    fn drop(&mut self) {
        for c in self.children.iter_mut().rev() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}
