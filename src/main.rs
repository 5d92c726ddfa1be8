//! The `capops` binary: hands the command line to `capops::cli`, with
//! mimalloc as the allocator (see Cargo.toml).

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    let code = capops::cli::main(std::env::args_os().collect());
    std::process::exit(code);
}
