//! Reading packs from disk: a release `.json` file, or a pack source folder (`pack.yaml`,
//! `rules/**/*.yaml`, `content/**/*.yaml`). The folder reader is the seam the build replaces: until it
//! lands, rules files are merged the simplest way (maps key by key, lists concatenated, in path order).

use std::path::{Path, PathBuf};

use ocf_model::{ContentFile, PackManifest, PackRelease, RulesDocument};
use serde_json::{Map, Value};

/// Reads a pack release from a `.json` file or a source folder.
pub fn read_pack(path: &Path) -> Result<PackRelease, String> {
    if path.is_dir() {
        return read_folder(path);
    }
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    ocf_model::from_json_str(&text, &path.display().to_string()).map_err(|e| e.to_string())
}

/// The build's seam: a source folder as a release.
pub fn read_folder(dir: &Path) -> Result<PackRelease, String> {
    let manifest_path = dir.join("pack.yaml");
    let text = std::fs::read_to_string(&manifest_path)
        .map_err(|e| format!("{}: {e}", manifest_path.display()))?;
    let manifest: PackManifest =
        ocf_model::from_yaml_str(&text, "pack.yaml").map_err(|e| e.to_string())?;
    let mut rules = Map::new();
    for file in yaml_files(&dir.join("rules")) {
        let origin = file
            .strip_prefix(dir)
            .unwrap_or(&file)
            .display()
            .to_string();
        let text = std::fs::read_to_string(&file).map_err(|e| format!("{origin}: {e}"))?;
        // Each file is read as a rules document first, so errors name the file.
        let doc: RulesDocument =
            ocf_model::from_yaml_str(&text, &origin).map_err(|e| e.to_string())?;
        merge_json(
            &mut rules,
            serde_json::to_value(doc).map_err(|e| e.to_string())?,
        );
    }
    let rules: RulesDocument =
        serde_json::from_value(Value::Object(rules)).map_err(|e| e.to_string())?;
    let mut content = Vec::new();
    for file in yaml_files(&dir.join("content")) {
        let origin = file
            .strip_prefix(dir)
            .unwrap_or(&file)
            .display()
            .to_string();
        let text = std::fs::read_to_string(&file).map_err(|e| format!("{origin}: {e}"))?;
        let items: ContentFile =
            ocf_model::from_yaml_str(&text, &origin).map_err(|e| e.to_string())?;
        content.extend(items.into_items());
    }
    Ok(PackRelease {
        id: manifest.id,
        version: manifest.version,
        spec_version: manifest.spec_version,
        dependencies: manifest.dependencies,
        rules,
        content,
    })
}

/// Maps key by key, lists concatenated.
fn merge_json(into: &mut Map<String, Value>, from: Value) {
    let Value::Object(from) = from else { return };
    for (key, value) in from {
        match (into.get_mut(&key), value) {
            (Some(Value::Object(a)), Value::Object(b)) => merge_json(a, Value::Object(b)),
            (Some(Value::Array(a)), Value::Array(b)) => a.extend(b),
            (_, value) => {
                into.insert(key, value);
            }
        }
    }
}

/// The `.yaml`/`.yml` files under `dir`, in path order.
fn yaml_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "yaml" || e == "yml") {
                out.push(path);
            }
        }
    }
    out.sort();
    out
}
