//! The server's build, made of memoized steps, reports what `ocf check` reports: for each build
//! fixture and the 5E pack, the problems of the pack as loaded, then after each edit of each file
//! (a line deleted, which breaks the file's YAML, a declaration or a reference) and after it is
//! put back, equal to a fresh build of the same texts (`ocf_load::build::build_files`).
//!
//! Every file of the build fixtures is edited; of the 5E pack (390 files, a debug build of it 2 s),
//! a spread of each folder's files in name order, so the test stays minutes, not hours, on two cores
//! (each edit is two whole builds of the pack).

use std::path::Path;

use ocf_load::build::{BuildOptions, build_files};
use ocf_lsp::db::{Database, Pack, build, given};
use ocf_lsp::world::World;

fn fresh(world: &World, pack: Pack) -> Vec<ocf_load::build::Problem> {
    let files: Vec<(String, String)> = pack
        .files(&world.db)
        .iter()
        .map(|f| (f.name(&world.db).clone(), f.text(&world.db).clone()))
        .collect();
    let options = BuildOptions {
        dependencies: given(&world.db, pack).to_vec(),
        with_errors: ocf_lsp::db::given_with_errors(&world.db, pack).clone(),
        ..BuildOptions::default()
    };
    build_files(&files, &options).problems
}

fn agrees(world: &World, pack: Pack, what: &str) {
    let served = &build(&world.db, pack).problems;
    assert_eq!(served, &fresh(world, pack), "{what}");
}

/// The files to edit: all of each folder's, or every k-th of a folder holding more than
/// `per_folder`.
fn sample(
    names: Vec<(String, ocf_lsp::db::SourceFile)>,
    per_folder: usize,
) -> Vec<ocf_lsp::db::SourceFile> {
    let mut by_folder: std::collections::BTreeMap<String, Vec<(String, ocf_lsp::db::SourceFile)>> =
        Default::default();
    for (name, file) in names {
        let folder = name.rsplit_once('/').map_or("", |(f, _)| f).to_owned();
        by_folder.entry(folder).or_default().push((name, file));
    }
    let mut out = Vec::new();
    for (_, mut files) in by_folder {
        files.sort_by(|a, b| a.0.cmp(&b.0));
        let step = files.len().div_ceil(per_folder).max(1);
        out.extend(files.into_iter().step_by(step).map(|(_, f)| f));
    }
    out
}

fn check(dir: &Path, per_folder: usize) {
    let dir = dir.canonicalize().unwrap();
    let mut world = World::new(Database::default());
    world.add_folder(&dir);
    let (pack, _) = world.file(&dir.join("pack.yaml")).unwrap();
    agrees(&world, pack, "as loaded");
    let files = pack.files(&world.db).clone();
    let named = files
        .iter()
        .map(|f| (f.name(&world.db).clone(), *f))
        .collect();
    for file in sample(named, per_folder) {
        let name = file.name(&world.db).clone();
        let text = file.text(&world.db).clone();
        let path = dir.join(&name);
        let lines: Vec<&str> = text.lines().collect();
        for cut in [2, lines.len() / 2] {
            if cut >= lines.len() {
                continue;
            }
            let mut edited: Vec<&str> = lines.clone();
            edited.remove(cut);
            world.set_text(&path, edited.join("\n") + "\n");
            agrees(&world, pack, &format!("{name} without line {}", cut + 1));
            world.set_text(&path, text.clone());
            agrees(&world, pack, &format!("{name} put back"));
        }
    }
}

fn testdata(path: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../testdata")
        .join(path)
}

#[test]
fn the_build_fixtures_agree_edit_by_edit() {
    for fixture in [
        "base",
        "broken",
        "unreadable",
        "loops",
        "families",
        "family-problems",
    ] {
        check(&testdata("build").join(fixture), usize::MAX);
    }
}

#[test]
fn the_5e_pack_agrees_edit_by_edit() {
    check(&testdata("packs/5e-srd-5.1"), 1);
}
