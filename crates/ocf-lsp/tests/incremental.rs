//! A keystroke re-checks the file it is in and what reads it, not the pack: salsa's log of the
//! queries that really ran after one edit to one file of a generated 100-file pack.

use std::path::Path;

use expect_test::expect;
use ocf_lsp::db::{Database, file_diagnostics};
use ocf_lsp::world::World;

#[test]
fn an_edit_reruns_that_files_queries_and_the_checks_that_read_it() {
    let mut world = World::new(Database::with_execution_log());
    let root = Path::new("/generated/big");
    let pack = world.add_pack_texts(root, ocf_lsp::synthetic::pack(50, 49));
    let files = pack.files(&world.db).clone();
    assert_eq!(files.len(), 100);
    let all = |world: &World| -> usize {
        files
            .iter()
            .map(|f| file_diagnostics(&world.db, pack, *f).len())
            .sum()
    };
    assert_eq!(all(&world), 0, "the generated pack has no problems");
    let cold = world.db.take_executed();
    assert_eq!(
        cold.iter().filter(|q| q.starts_with("file_index")).count(),
        100
    );
    // The build read each file once, through its per-file step.
    assert_eq!(
        cold.iter().filter(|q| q.starts_with("file_read")).count(),
        100
    );

    // A keystroke in one rules file: `+ 7` becomes `+ 70` in a formula. That file is read,
    // expanded and checked again; the pack's layout and families read every file and compare equal,
    // its declarations are equal, so the pack's scope and the other 99 files' steps are kept. The
    // rest of the build (merge, type check, agreement) reads every file's expansion and runs.
    let path = root.join("rules/r007.yaml");
    let (_, file) = world.file(&path).unwrap();
    let text = file.text(&world.db).replacen("+ 7\n", "+ 70\n", 1);
    world.set_text(&path, text);
    assert_eq!(all(&world), 0);
    expect![[r#"
        pack_layout
        file_read(rules/r007.yaml)
        build
        pack_families
        file_expanded(rules/r007.yaml)
        expansion_spent(rules/r007.yaml)
        file_declared(rules/r007.yaml)
        file_checks(rules/r007.yaml)
        pack_problems
        file_diagnostics
        file_index(rules/r007.yaml)
    "#]]
    .assert_eq(&(world.db.take_executed().join("\n") + "\n"));

    // A keystroke that makes an error: only the files whose problems changed re-run theirs.
    let text = file.text(&world.db).replacen("+ 70\n", "+ \n", 1);
    world.set_text(&path, text);
    assert_eq!(all(&world), 1);
    expect![[r#"
        pack_layout
        file_read(rules/r007.yaml)
        build
        pack_families
        file_expanded(rules/r007.yaml)
        expansion_spent(rules/r007.yaml)
        file_declared(rules/r007.yaml)
        file_checks(rules/r007.yaml)
        pack_problems
        file_diagnostics
        file_index(rules/r007.yaml)
    "#]]
    .assert_eq(&(world.db.take_executed().join("\n") + "\n"));

    // A keystroke that changes a declaration (the field `f7.v0` renamed): the pack's scope changes,
    // so every file's document checks run again, and the files that read the field report it.
    let text = file.text(&world.db).replacen("+ \n", "+ 7\n", 1);
    world.set_text(&path, text);
    all(&world);
    world.db.take_executed();
    let text = file.text(&world.db).replacen("  f7.v0:", "  f7.w0:", 1);
    world.set_text(&path, text);
    assert!(all(&world) > 0, "the files reading `f7.v0` report it");
    let ran = world.db.take_executed();
    let count = |query: &str| ran.iter().filter(|q| q.starts_with(query)).count();
    assert_eq!(count("pack_scope"), 1);
    assert_eq!(count("file_checks("), 100);
    assert_eq!(count("file_expanded("), 1);
    assert_eq!(count("file_read("), 1);
}
