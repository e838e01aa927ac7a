//! Reading packs from disk: a release `.json` file, or a pack source folder (`pack.yaml`,
//! `rules/**/*.yaml`, `content/**/*.yaml`), which the build turns into its release.

use std::path::Path;

use crate::build::{BuildOptions, build_pack};
use ocf_model::PackRelease;

/// Reads a pack release from a `.json` file or a source folder.
pub fn read_pack(path: &Path) -> Result<PackRelease, String> {
    if path.is_dir() {
        return read_folder(path);
    }
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    ocf_model::from_json_str(&text, &path.display().to_string()).map_err(|e| e.to_string())
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
