//! Prints the debug tree of each argument: `cargo run -p ocf-syntax --example tree -- '1 + 2'`.
fn main() {
    for text in std::env::args().skip(1) {
        print!("{}", ocf_syntax::parse(&text).debug_tree());
    }
}
