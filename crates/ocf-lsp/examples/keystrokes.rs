//! Keystrokes in the 5E pack, for callgrind (instruction counts do not depend on the machine's
//! load): loads the pack, computes every file's diagnostics once, then makes N keystrokes in
//! rules/abilities.yaml, each followed by that file's diagnostics.
//!
//! `cargo build --release -p ocf-lsp --example keystrokes` then
//! `valgrind --tool=callgrind target/release/examples/keystrokes 0` and `... 10`: the difference
//! over 10 is one keystroke.

use std::path::Path;

use ocf_lsp::db::{Database, file_diagnostics};
use ocf_lsp::world::World;

fn main() {
    let n: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(10);
    let srd = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../testdata/packs/5e-srd-5.1")
        .canonicalize()
        .expect("the 5E pack");
    let mut world = World::new(Database::default());
    world.add_folder(&srd);
    let path = srd.join("rules/abilities.yaml");
    let (pack, file) = world.file(&path).expect("the file");
    for f in pack.files(&world.db).clone() {
        file_diagnostics(&world.db, pack, f);
    }
    let a = file.text(&world.db).clone();
    let b = a.replacen(
        "(abilities.str.score - 10)",
        "(abilities.str.score - 11)",
        1,
    );
    let mut total = 0;
    for i in 0..n {
        world.set_text(&path, if i % 2 == 0 { b.clone() } else { a.clone() });
        total += file_diagnostics(&world.db, pack, file).len();
    }
    println!("{n} keystrokes, {total} diagnostics");
}
