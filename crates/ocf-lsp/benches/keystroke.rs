//! A keystroke's diagnostics: an edit of one file set as the editor sends it, then the edited
//! file's diagnostics (what the server publishes), in the 5E pack (testdata/packs/5e-srd-5.1, 27
//! files) and in a generated pack of 100 files. Before timing, each case prints the queries salsa
//! ran for one keystroke: the edited file's index, the pack's build, and the edited file's
//! diagnostics, nothing of the other files.
//!
//! `cargo bench -p ocf-lsp -- --warm-up-time 1 --measurement-time 3`

use std::path::{Path, PathBuf};

use criterion::{Criterion, criterion_group, criterion_main};
use ocf_lsp::db::{Database, Pack, file_diagnostics};
use ocf_lsp::world::World;

/// Two texts of the file to swap between: the same length, a formula's literal changed.
fn variants(text: &str, from: &str, to: &str) -> (String, String) {
    assert!(text.contains(from), "the file holds `{from}`");
    (text.to_owned(), text.replacen(from, to, 1))
}

fn keystroke(world: &mut World, pack: Pack, path: &Path, text: &str) -> usize {
    let (_, file) = world.set_text(path, text.to_owned()).unwrap();
    file_diagnostics(&world.db, pack, file).len()
}

fn case(c: &mut Criterion, name: &str, mut world: World, path: PathBuf, from: &str, to: &str) {
    let (pack, file) = world.file(&path).unwrap();
    let (a, b) = variants(file.text(&world.db), from, to);
    // Everything computed once, as after opening the file.
    for f in pack.files(&world.db).clone() {
        file_diagnostics(&world.db, pack, f);
    }
    world.db.take_executed();
    keystroke(&mut world, pack, &path, &b);
    let ran = world.db.take_executed();
    eprintln!(
        "{name}: one keystroke ran {} queries: {}",
        ran.len(),
        ran.join(", ")
    );
    let mut flip = false;
    c.bench_function(name, |bench| {
        bench.iter(|| {
            flip = !flip;
            keystroke(&mut world, pack, &path, if flip { &a } else { &b })
        })
    });
}

fn bench(c: &mut Criterion) {
    let srd = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/packs/5e-srd-5.1");
    let srd = srd.canonicalize().unwrap();
    let mut world = World::new(Database::with_execution_log());
    world.add_folder(&srd);
    case(
        c,
        "keystroke/5e-srd-5.1 rules/abilities.yaml",
        world,
        srd.join("rules/abilities.yaml"),
        "(abilities.str.score - 10)",
        "(abilities.str.score - 11)",
    );

    let root = Path::new("/generated/big");
    let mut world = World::new(Database::with_execution_log());
    world.add_pack_texts(root, ocf_lsp::synthetic::pack(50, 49));
    case(
        c,
        "keystroke/generated 100 files rules/r025.yaml",
        world,
        root.join("rules/r025.yaml"),
        "+ 25\n",
        "+ 52\n",
    );
}

criterion_group!(benches, bench);
criterion_main!(benches);
