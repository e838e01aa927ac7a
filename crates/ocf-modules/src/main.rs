//! `cargo run -p ocf-modules -- SRC [LEFT_OUT…]`: a crate's modules from the lowest up, each with
//! what it imports, then its cycles with LEFT_OUT (a query map) taken away, and the files too
//! long (for ocf-engine, also the imports its floors forbid). Exits 1 when there is any.

use std::path::Path;
use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(src) = args.first() else {
        eprintln!("usage: ocf-modules SRC [LEFT_OUT...]");
        return ExitCode::from(2);
    };
    let left_out: Vec<&str> = args[1..].iter().map(String::as_str).collect();
    let graph = match ocf_modules::Graph::read(Path::new(src)) {
        Ok(g) => g,
        Err(e) => {
            eprintln!("ocf-modules: {e}");
            return ExitCode::from(2);
        }
    };
    for (module, imports) in graph.floors(&left_out) {
        println!("{module}: {}", imports.join(", "));
    }
    let cycles = graph.cycles(&left_out);
    for cycle in &cycles {
        println!(
            "\ncycle of {}: {}",
            cycle.modules.len(),
            cycle.modules.join(", ")
        );
        for import in &cycle.imports {
            println!("  {import}");
        }
    }
    // ocf-engine's floors and loading order, when it is the crate read.
    let (off, back) = if Path::new(src).ends_with("ocf-engine/src") {
        (
            graph.off_floor(&ocf_modules::ENGINE_FLOORS),
            graph.back_imports(ocf_modules::LOAD_ORDER),
        )
    } else {
        (Vec::new(), Vec::new())
    };
    for import in off.iter().chain(&back) {
        println!("off its floor: {import}");
    }
    let long = graph.too_long();
    for file in &long {
        println!("too long, with no reason at its top: {file}");
    }
    if cycles.is_empty() && long.is_empty() && off.is_empty() && back.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
