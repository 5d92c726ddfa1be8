//! A real Prometheus for tests: history written as OpenMetrics, turned into
//! TSDB blocks by `promtool tsdb create-blocks-from openmetrics`, served by
//! `prometheus` on a loopback port from a folder of its own. The server is
//! stopped when the value is dropped.
//!
//! Debian's `prometheus` package provides both tools (`.ci/prometheus.sh`
//! installs it). When they are missing the tests say so and pass, unless
//! `CAPOPS_CI` is set: then a missing tool is a failure.

#![allow(dead_code)]

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// Whether `prometheus` and `promtool` can run here; panics under `CAPOPS_CI` when not.
pub fn available() -> bool {
    let ok = ["prometheus", "promtool"].iter().all(|tool| {
        Command::new(tool)
            .arg("--version")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    });
    if ok && let Ok(out) = Command::new("prometheus").arg("--version").output() {
        let text = String::from_utf8_lossy(&out.stdout);
        eprintln!(
            "testing against {}",
            text.lines().next().unwrap_or("prometheus")
        );
    }
    if !ok {
        assert!(
            std::env::var_os("CAPOPS_CI").is_none(),
            "prometheus and promtool are needed (CAPOPS_CI is set): run .ci/prometheus.sh"
        );
        eprintln!("skipping: prometheus/promtool not installed (apt-get install prometheus)");
    }
    ok
}

/// OpenMetrics text being written: samples grouped by metric family.
#[derive(Default)]
pub struct OpenMetrics {
    families: BTreeMap<String, String>,
    pub samples: usize,
}

impl OpenMetrics {
    /// Appends samples of one series (`labels` as written inside braces), in time order.
    pub fn series(
        &mut self,
        family: &str,
        labels: &str,
        points: impl IntoIterator<Item = (i64, f64)>,
    ) {
        let out = self.families.entry(family.to_string()).or_default();
        for (t, v) in points {
            let _ = writeln!(out, "{family}{{{labels}}} {v} {t}");
            self.samples += 1;
        }
    }

    pub fn text(&self) -> String {
        let mut s = String::new();
        for (family, lines) in &self.families {
            let _ = writeln!(s, "# TYPE {family} gauge");
            s.push_str(lines);
        }
        s.push_str("# EOF\n");
        s
    }
}

/// A running Prometheus.
pub struct Prometheus {
    child: Option<Child>,
    pub dir: tempfile::TempDir,
    pub url: String,
    pub port: u16,
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

impl Prometheus {
    /// Backfills `history` and starts a server on it. `web_config` is the
    /// content of `--web.config.file` (TLS), if any.
    pub fn start(history: &OpenMetrics, web_config: Option<&str>) -> Prometheus {
        let dir = tempfile::tempdir().unwrap();
        let om = dir.path().join("history.om");
        std::fs::write(&om, history.text()).unwrap();
        let data = dir.path().join("data");
        let out = Command::new("promtool")
            .args(["tsdb", "create-blocks-from", "openmetrics"])
            .arg(&om)
            .arg(&data)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "promtool failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        std::fs::remove_file(&om).unwrap();
        let config = dir.path().join("prometheus.yml");
        std::fs::write(&config, "scrape_configs: []\n").unwrap();
        let web = web_config.map(|w| {
            let path = dir.path().join("web.yml");
            std::fs::write(&path, w).unwrap();
            path
        });
        let scheme = if web.is_some() { "https" } else { "http" };
        let log_path = dir.path().join("prometheus.log");
        let mut p = Prometheus {
            child: None,
            url: String::new(),
            port: 0,
            dir,
        };
        // A port taken between the probe and the start is tried again.
        for _ in 0..5 {
            let port = free_port();
            let log = std::fs::File::create(&log_path).unwrap();
            let mut cmd = Command::new("prometheus");
            cmd.arg(format!("--config.file={}", config.display()))
                .arg(format!("--storage.tsdb.path={}", data.display()))
                .arg("--storage.tsdb.retention.time=100y")
                .arg(format!("--web.listen-address=127.0.0.1:{port}"))
                .stdout(Stdio::null())
                .stderr(log);
            if let Some(w) = &web {
                cmd.arg(format!("--web.config.file={}", w.display()));
            }
            p.child = Some(cmd.spawn().expect("prometheus starts"));
            p.port = port;
            p.url = format!("{scheme}://127.0.0.1:{port}");
            if p.wait_ready(&log_path, Duration::from_secs(30)) {
                return p;
            }
            p.stop();
            let log = std::fs::read_to_string(&log_path).unwrap_or_default();
            assert!(
                log.contains("address already in use"),
                "prometheus did not become ready:\n{log}"
            );
        }
        panic!("no free port for prometheus");
    }

    /// Waits until the server logs that it is ready for web requests.
    fn wait_ready(&mut self, log: &Path, limit: Duration) -> bool {
        let started = Instant::now();
        while started.elapsed() < limit {
            if let Some(Ok(Some(_))) = self.child.as_mut().map(|c| c.try_wait()) {
                return false;
            }
            let text = std::fs::read_to_string(log).unwrap_or_default();
            if text.contains("Server is ready to receive web requests") {
                return true;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        false
    }

    /// Stops the server (it stays stopped; the folder stays until drop).
    pub fn stop(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }

    pub fn data_dir(&self) -> PathBuf {
        self.dir.path().join("data")
    }
}

impl Drop for Prometheus {
    fn drop(&mut self) {
        self.stop();
    }
}

/// Writes a file, creating its folder.
pub fn write(path: &Path, text: &str) {
    if let Some(p) = path.parent() {
        std::fs::create_dir_all(p).unwrap();
    }
    std::fs::write(path, text).unwrap();
}
