//! Step 1, check the packs: spec versions, duplicates, dependencies in range.

use ocf_model::{LoadedPack, PackRelease};

use super::{LoadOptions, done, scope::scope_of};
use crate::error::LoadErrorRecord;
use crate::version::{parse_version, satisfies};

pub fn check(
    releases: &[PackRelease],
    options: &LoadOptions,
) -> Result<Vec<LoadedPack>, Vec<LoadErrorRecord>> {
    let mut errors = Vec::new();
    let engine = parse_version(&options.spec_version).unwrap_or((0, 0, 0));
    for release in releases {
        let pack = release.id.as_str();
        match parse_version(release.spec_version.as_str()) {
            Some(v) if v <= engine => {}
            _ => errors.push(
                LoadErrorRecord::new(
                    "spec-version-unsupported",
                    format!(
                        "pack `{pack}` is written for spec {}, this engine implements {}",
                        release.spec_version, options.spec_version
                    ),
                )
                .with("pack", pack)
                .with("specVersion", release.spec_version.as_str())
                .with("supported", options.spec_version.as_str()),
            ),
        }
    }
    for (i, release) in releases.iter().enumerate() {
        let pack = release.id.as_str();
        if releases[..i].iter().any(|r| r.id == release.id) {
            errors.push(
                LoadErrorRecord::new("duplicate-pack", format!("pack `{pack}` is loaded twice"))
                    .with("pack", pack),
            );
        }
    }
    for release in releases {
        let pack = release.id.as_str();
        for (dep, range) in release.dependencies.iter() {
            let loaded = releases.iter().find(|r| r.id.as_str() == dep);
            let found = loaded.and_then(|r| parse_version(r.version.as_str()));
            let ok = found.and_then(|v| satisfies(v, range.as_str())) == Some(true);
            if !ok {
                let why = match loaded {
                    None => "is not loaded".to_owned(),
                    Some(r) => format!("is loaded at {}", r.version),
                };
                let mut error = LoadErrorRecord::new(
                    "missing-dependency",
                    format!("pack `{pack}` needs `{dep}` {range}, which {why}"),
                )
                .with("pack", pack)
                .with("dependency", dep)
                .with("range", range.as_str());
                if let Some(r) = loaded {
                    error = error.with("version", r.version.as_str());
                }
                errors.push(error);
            }
        }
    }
    done(errors)?;
    Ok(releases
        .iter()
        .map(|r| LoadedPack {
            id: r.id.as_str().to_owned(),
            version: r.version.clone(),
            spec_version: r.spec_version.clone(),
            dependencies: r.dependencies.clone(),
            scope: scope_of(r.id.as_str(), releases),
        })
        .collect())
}
