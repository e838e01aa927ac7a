//! Keystrokes in a large file and in a large pack, for callgrind (issue 41: a keystroke's cost is
//! linear in the edited file and flat in the pack's size beyond the pack-wide checks).
//!
//! - `large file KIB N`: a generated pack (`ocf_lsp::synthetic`, 10 rules files, 10 items) with a
//!   content file of KIB KiB of items, each extending the next and reading a field in an effect;
//!   N keystrokes change a formula's literal in that file, each followed by its diagnostics.
//! - `large pack ITEMS N`: a generated pack of 50 rules files and ITEMS content files; N keystrokes
//!   in one item's file, each followed by its diagnostics.
//!
//! `cargo build --release -p ocf-lsp --example large`, then `valgrind --tool=callgrind
//! target/release/examples/large file 1024 0` and `... 1024 10`: the difference over 10 is one
//! keystroke (the first call loads the pack and checks every file once).

use std::path::Path;

use ocf_lsp::db::{Database, file_diagnostics};
use ocf_lsp::world::World;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let mode = args.get(1).map_or("file", String::as_str);
    let size: usize = args.get(2).and_then(|a| a.parse().ok()).unwrap_or(1024);
    let n: usize = args.get(3).and_then(|a| a.parse().ok()).unwrap_or(10);
    let root = Path::new("/large");
    let mut world = World::new(Database::default());
    let (files, edited) = match mode {
        "pack" => {
            let files = ocf_lsp::synthetic::pack(50, size);
            let edited = format!("content/c{:03}.yaml", size / 2);
            (files, edited)
        }
        _ => {
            let mut files = ocf_lsp::synthetic::pack(10, 10);
            let mut text = String::new();
            let mut i = 0;
            while text.len() < size << 10 {
                text.push_str(&format!(
                    "- id: big{i}\n  type: thing\n  extends: big{}\n  tags: [gen]\n  effects:\n    - {{ target: f0.v1, op: add, value: item.power + {i} }}\n",
                    i + 1
                ));
                i += 1;
            }
            text.push_str(&format!("- id: big{i}\n  type: thing\n"));
            files.push(("content/huge.yaml".to_owned(), text));
            (files, "content/huge.yaml".to_owned())
        }
    };
    let pack = world.add_pack_texts(root, files);
    let path = root.join(&edited);
    let (_, file) = world.file(&path).expect("the file");
    for f in pack.files(&world.db).clone() {
        file_diagnostics(&world.db, pack, f);
    }
    let a = file.text(&world.db).clone();
    let b = a.replacen("item.power + 1", "item.power + 2", 1);
    assert_ne!(a, b, "the keystroke changes the text");
    let mut total = 0;
    for i in 0..n {
        world.set_text(&path, if i % 2 == 0 { b.clone() } else { a.clone() });
        total += file_diagnostics(&world.db, pack, file).len();
    }
    println!("{mode} {size}: {n} keystrokes, {total} diagnostics");
}
