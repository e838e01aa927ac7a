//! The checks of loadRuleset's step 1 ("Check the packs") that one folder can answer, so `ocf check`
//! reports them where the manifest says them rather than leaving them to `ocf load`: the
//! `specVersion` the engine implements (`spec-version-unsupported`), and each given dependency's
//! version in its range (`missing-dependency`).

use ocf_model::{PackManifest, PackRelease};

use super::locations::{Locations, escape};
use super::problem::Problem;
use crate::ruleset::SPEC_VERSION;
use crate::version::{parse_version, satisfies};

pub fn check(
    manifest: &PackManifest,
    locations: &Locations,
    dependencies: &[PackRelease],
    problems: &mut Vec<Problem>,
) {
    let pack = manifest.id.as_str();
    let written = manifest.spec_version.as_str();
    let engine = parse_version(SPEC_VERSION).unwrap_or((0, 0, 0));
    if parse_version(written).is_none_or(|v| v > engine) {
        problems.push(
            Problem::error(
                "spec-version-unsupported",
                format!(
                    "the pack is written for spec `{written}`, this engine implements \
                     {SPEC_VERSION} (a version is `MAJOR.MINOR.PATCH`, written as a string)"
                ),
            )
            .in_file("pack.yaml")
            .at("/specVersion", locations.value("/specVersion"))
            .with("pack", pack)
            .with("specVersion", written)
            .with("supported", SPEC_VERSION),
        );
    }
    for (id, range) in manifest.dependencies.iter() {
        let Some(given) = dependencies.iter().find(|d| d.id.as_str() == id) else {
            continue;
        };
        let found = parse_version(given.version.as_str());
        if found.and_then(|v| satisfies(v, range.as_str())) == Some(true) {
            continue;
        }
        let pointer = format!("/dependencies/{}", escape(id));
        problems.push(
            Problem::error(
                "missing-dependency",
                format!(
                    "the pack needs `{id}` {range}, which is given at {}",
                    given.version
                ),
            )
            .in_file("pack.yaml")
            .at(&pointer, locations.value(&pointer))
            .with("pack", pack)
            .with("dependency", id)
            .with("range", range.as_str())
            .with("version", given.version.as_str()),
        );
    }
}
