//! Reading packs from disk: a release `.json` file, or a pack source folder (`pack.yaml`,
//! `rules/**/*.yaml`, `content/**/*.yaml`), which the build turns into its release.

use std::path::Path;

use crate::build::source::{check_size, decode, read_bounded};
use crate::build::{BuildOptions, Problem, ReadLimits, build_pack};
use ocf_model::PackRelease;

/// Reads a pack release from a `.json` file or a source folder.
pub fn read_pack(path: &Path) -> Result<PackRelease, String> {
    if path.is_dir() {
        return read_folder(path);
    }
    let text =
        read_release_text(path, &ReadLimits::default()).map_err(|p| p.headline(Path::new("")))?;
    ocf_model::from_json_str(&text, &path.display().to_string()).map_err(|e| e.to_string())
}

/// The text of a release file, read as the build reads a source file: never more than a whole
/// folder's sources may hold (`maxTotalBytes`: a release is a folder in one file), bytes that are
/// not UTF-8 refused at their line and column, and a UTF-8 byte-order mark (which some editors
/// write) dropped, as for source and character files.
pub fn read_release_text(path: &Path, limits: &ReadLimits) -> Result<String, Box<Problem>> {
    let file = path.display().to_string();
    let bytes = read_bounded(path, &file, limits.max_total_bytes)?;
    let release_limits = ReadLimits {
        max_file_bytes: limits.max_total_bytes,
        ..*limits
    };
    check_size(&file, bytes.len() as u64, &release_limits, &mut 0)?;
    let mut text = decode(&file, bytes)?;
    if text.starts_with('\u{feff}') {
        text.drain(..'\u{feff}'.len_utf8());
    }
    Ok(text)
}

/// A source folder as a release, made by the build ([`crate::build`]) with no dependencies given:
/// references a dependency may declare are left for loadRuleset to check.
pub fn read_folder(dir: &Path) -> Result<PackRelease, String> {
    build_pack(dir, &BuildOptions::default()).map_err(|problems| {
        problems
            .iter()
            .filter(|p| p.is_error())
            .map(|p| p.headline(dir))
            .collect::<Vec<_>>()
            .join("\n")
    })
}
