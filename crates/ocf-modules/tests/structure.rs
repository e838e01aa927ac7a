//! The structure of ocf-engine and ocf-actions (issue 46), measured from their sources: outside
//! ocf-engine's query map (`db`) no module imports its way back to itself, its step modules
//! import the map and the floors below it and never each other (the map is the only module they
//! share above those floors, [`ocf_modules::ENGINE_FLOORS`]), loading a character never calls back
//! into a step before, ocf-actions has no circle at all, and no file runs past 800 lines without a
//! reason written at its top.

use std::path::{Path, PathBuf};

use ocf_modules::Graph;

fn src(krate: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join(krate)
        .join("src")
}

fn assert_sound(krate: &str, map: &[&str]) {
    let graph = Graph::read(&src(krate)).unwrap();
    assert!(
        graph.modules.len() > 10,
        "{krate}: {} modules read",
        graph.modules.len()
    );
    let cycles: Vec<String> = graph
        .cycles(map)
        .iter()
        .map(|c| format!("{}\n  {}", c.modules.join(", "), c.imports.join("\n  ")))
        .collect();
    assert!(
        cycles.is_empty(),
        "{krate}: modules that import each other in a circle:\n{}",
        cycles.join("\n")
    );
    let long = graph.too_long();
    assert!(
        long.is_empty(),
        "{krate}: files over {} lines with no reason at their top (a line of the first comment \
         saying `over {} lines` and why):\n{}",
        ocf_modules::MAX_LINES,
        ocf_modules::MAX_LINES,
        long.join("\n")
    );
}

#[test]
fn engine_modules_meet_only_in_the_query_map() {
    assert_sound("ocf-engine", &["db"]);
    let graph = Graph::read(&src("ocf-engine")).unwrap();
    let off = graph.off_floor(&ocf_modules::ENGINE_FLOORS);
    assert!(
        off.is_empty(),
        "ocf-engine: imports its floors forbid (a step imports the map and the base and shared \
         modules, never another step; a shared module no step; a base module only base ones):\n{}",
        off.join("\n")
    );
    let back = graph.back_imports(ocf_modules::LOAD_ORDER);
    assert!(
        back.is_empty(),
        "ocf-engine: loading calls back into a step before:\n{}",
        back.join("\n")
    );
}

#[test]
fn actions_modules_have_no_circle() {
    assert_sound("ocf-actions", &[]);
}

/// The floors' rule finds a step importing another, and a base module importing the map.
#[test]
fn a_step_importing_another_is_found() {
    let dir = std::env::temp_dir().join(format!("ocf-modules-floors-{}", std::process::id()));
    std::fs::create_dir_all(dir.join("a")).unwrap();
    std::fs::write(
        dir.join("lib.rs"),
        "mod a;\nmod b;\nmod db;\nmod h;\nmod s;\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("a/mod.rs"),
        "mod c;\npub fn f() { crate::db::q(); }\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("a/c.rs"),
        "pub fn g() { super::f(); crate::s::k(); }\n",
    )
    .unwrap();
    std::fs::write(dir.join("b.rs"), "pub fn h() { crate::h::v(); }\n").unwrap();
    std::fs::write(
        dir.join("db.rs"),
        "pub fn q() { crate::a::f(); crate::b::h(); }\n",
    )
    .unwrap();
    std::fs::write(dir.join("h.rs"), "pub fn v() {}\n").unwrap();
    std::fs::write(dir.join("s.rs"), "pub fn k() { crate::db::q(); }\n").unwrap();
    let floors = ocf_modules::Floors {
        base: &["h"],
        shared: &["s"],
        map: &["db"],
        steps: &["a", "b"],
        calls: &[],
    };
    let graph = Graph::read(&dir).unwrap();
    assert!(
        graph.off_floor(&floors).is_empty(),
        "{:?}",
        graph.off_floor(&floors)
    );
    std::fs::write(dir.join("b.rs"), "pub fn h() { crate::a::f(); }\n").unwrap();
    std::fs::write(dir.join("h.rs"), "pub fn v() { crate::db::q(); }\n").unwrap();
    let graph = Graph::read(&dir).unwrap();
    let off = graph.off_floor(&floors);
    assert_eq!(off.len(), 2, "{off:?}");
    assert!(off[0].starts_with("b (Step) -> a (Step)"), "{off:?}");
    assert!(off[1].starts_with("h (Base) -> db (Map)"), "{off:?}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The measure finds what it is for: today's circles, drawn small.
#[test]
fn a_circle_is_found_and_the_map_is_left_out() {
    let dir = std::env::temp_dir().join(format!("ocf-modules-{}", std::process::id()));
    std::fs::create_dir_all(dir.join("b")).unwrap();
    std::fs::write(dir.join("lib.rs"), "mod a;\nmod b;\nmod db;\n").unwrap();
    std::fs::write(
        dir.join("a.rs"),
        "use crate::b::c::f;\npub fn g() { crate::db::q(); }\n",
    )
    .unwrap();
    std::fs::write(dir.join("b/mod.rs"), "pub mod c;\n").unwrap();
    std::fs::write(dir.join("b/c.rs"), "pub fn f() { super::super::a::g(); }\n").unwrap();
    std::fs::write(dir.join("db.rs"), "pub fn q() { crate::a::g(); }\n").unwrap();
    let graph = Graph::read(&dir).unwrap();
    let cycles = graph.cycles(&["db"]);
    assert_eq!(cycles.len(), 1, "{cycles:?}");
    assert_eq!(cycles[0].modules, ["a", "b::c"]);
    std::fs::write(dir.join("b/c.rs"), "pub fn f() { crate::db::q(); }\n").unwrap();
    let graph = Graph::read(&dir).unwrap();
    assert!(graph.cycles(&["db"]).is_empty());
    assert_eq!(graph.cycles(&[]).len(), 1, "through the map");
    std::fs::remove_dir_all(&dir).unwrap();
}
