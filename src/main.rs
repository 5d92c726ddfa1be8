//! The `capops` binary: hands the command line to `capops::cli`.

fn main() {
    let code = capops::cli::main(std::env::args_os().collect());
    std::process::exit(code);
}
