//! Builds a pack source folder (by default the 5E sample pack) and prints how many problems it has:
//! the build alone, for `scripts/callgrind-build` to count its instructions.

use std::path::PathBuf;

use ocf_load::build::{BuildOptions, build_report};

fn main() {
    let dir = std::env::args_os().nth(1).map_or_else(
        || PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../testdata/packs/5e-srd-5.1"),
        PathBuf::from,
    );
    let report = build_report(&dir, &BuildOptions::default());
    println!(
        "{}: {} problems, {}",
        dir.display(),
        report.problems.len(),
        if report.release.is_some() {
            "built"
        } else {
            "not built"
        }
    );
}
