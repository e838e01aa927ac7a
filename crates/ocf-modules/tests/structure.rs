//! The structure of ocf-engine and ocf-actions (issue 46), measured from their sources: outside
//! ocf-engine's query map (`db`) no module imports its way back to itself, ocf-actions has no
//! such circle at all, and no file runs past 800 lines without a reason written at its top.

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
}

#[test]
fn actions_modules_have_no_circle() {
    assert_sound("ocf-actions", &[]);
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
