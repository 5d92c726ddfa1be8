//! Helpers shared by the integration tests: run the command line in-process
//! with a chosen environment and capture what it writes.

#![allow(dead_code)]

use std::path::PathBuf;

/// What one run of the command line returned and wrote.
pub struct Out {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

/// Runs `capops ARGS` in-process; `env` is all the environment it sees.
pub fn run(args: &[&str], env: &[(&str, &str)]) -> Out {
    let mut out = Vec::new();
    let mut err = Vec::new();
    let env: Vec<(String, String)> = env
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    let lookup = move |k: &str| env.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone());
    let mut io = capops::cli::Io {
        stdout: &mut out,
        stderr: &mut err,
        env: &lookup,
        stderr_is_terminal: false,
    };
    let mut argv: Vec<std::ffi::OsString> = vec!["capops".into()];
    argv.extend(args.iter().map(|a| a.into()));
    let code = capops::cli::run(argv, &mut io);
    Out {
        code,
        stdout: String::from_utf8(out).unwrap(),
        stderr: String::from_utf8(err).unwrap(),
    }
}

/// The crate's root folder.
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The bundled example capacity repository.
pub fn example() -> String {
    root().join("examples/acme").display().to_string()
}
