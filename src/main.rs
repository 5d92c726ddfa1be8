//! The `capops` binary: hands the command line to `capops::cli`, with
//! mimalloc as the allocator (see Cargo.toml; the `system-allocator`
//! feature keeps the system's, for heap profilers).

#[cfg(not(feature = "system-allocator"))]
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    // A write past the file size limit (`ulimit -f`) then fails with EFBIG,
    // which every writer handles (the old file stays, no temporary file is
    // left), instead of SIGXFSZ killing the process part way through.
    #[cfg(unix)]
    // SAFETY: sets one signal's disposition to "ignore" before any thread
    // starts; no handler runs.
    unsafe {
        libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
    }
    let code = capops::cli::main(std::env::args_os().collect());
    std::process::exit(code);
}
