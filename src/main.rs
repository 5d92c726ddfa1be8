//! The `capops` binary: hands the command line to `capops::cli`, with
//! mimalloc as the allocator (see Cargo.toml; the `system-allocator`
//! feature keeps the system's, for heap profilers).

#[cfg(not(feature = "system-allocator"))]
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    let code = capops::cli::main(std::env::args_os().collect());
    std::process::exit(code);
}
