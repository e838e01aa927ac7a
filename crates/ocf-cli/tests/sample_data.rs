//! The sample packs (testdata/packs) build with no problem and load, and the sample characters
//! (testdata/characters) name only what their packs declare: the data the docs, the benchmarks and
//! the engine's tests are built on stays valid as the formats and checks grow.

use std::fs;
use std::path::{Path, PathBuf};

use ocf_load::build::{BuildOptions, build_report};
use ocf_load::{LoadOptions, load_ruleset};
use ocf_model::{Character, PackRelease, Ruleset, from_yaml_str};

fn testdata(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../testdata")
        .join(path)
}

fn sorted_entries(dir: &Path) -> Vec<PathBuf> {
    let mut entries: Vec<PathBuf> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    entries
}

/// Every pack folder under testdata/packs, built; a problem of any severity fails the test.
fn built_packs() -> Vec<PackRelease> {
    let mut releases = Vec::new();
    let mut problems = Vec::new();
    for dir in sorted_entries(&testdata("packs"))
        .into_iter()
        .filter(|p| p.is_dir())
    {
        let report = build_report(&dir, &BuildOptions::default());
        problems.extend(report.problems.iter().map(|p| p.headline(&dir)));
        releases.extend(report.release);
    }
    assert!(
        problems.is_empty(),
        "the sample packs have problems:\n{}",
        problems.join("\n")
    );
    releases
}

fn ruleset(releases: &[PackRelease], pins: &[&str]) -> Ruleset {
    let pinned: Vec<PackRelease> = pins
        .iter()
        .map(|id| {
            releases
                .iter()
                .find(|r| r.id.as_str() == *id)
                .unwrap_or_else(|| panic!("no sample pack `{id}`"))
                .clone()
        })
        .collect();
    load_ruleset(&pinned, &LoadOptions::default()).unwrap_or_else(|errors| {
        let codes: Vec<String> = errors.iter().map(|e| format!("{e:?}")).collect();
        panic!("{pins:?} does not load:\n{}", codes.join("\n"))
    })
}

#[test]
fn every_sample_pack_builds_and_loads() {
    let releases = built_packs();
    let ids: Vec<&str> = releases.iter().map(|r| r.id.as_str()).collect();
    assert_eq!(ids, ["5e-srd-5.1", "fitd-scoundrel"]);
    for release in &releases {
        let ruleset = ruleset(&releases, &[release.id.as_str()]);
        assert!(
            ruleset.fields.len() > 30,
            "{}: {} fields",
            release.id,
            ruleset.fields.len()
        );
        assert!(
            ruleset.content.len() > 30,
            "{}: {} items",
            release.id,
            ruleset.content.len()
        );
    }
}

#[test]
fn every_character_uses_only_what_its_packs_declare() {
    let releases = built_packs();
    let files = sorted_entries(&testdata("characters"));
    assert!(
        files.len() >= 7,
        "expected the sample characters, found {}",
        files.len()
    );
    for path in files {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let text = fs::read_to_string(&path).unwrap();
        let character: Character =
            from_yaml_str(&text, &name).unwrap_or_else(|e| panic!("{name}: {e}"));
        let pins: Vec<&str> = character.packs.iter().map(|p| p.id.as_str()).collect();
        let ruleset = ruleset(&releases, &pins);
        for (field, _) in character.values.iter() {
            let declared = ruleset
                .field(field)
                .unwrap_or_else(|| panic!("{name}: no field `{field}`"));
            assert_eq!(
                declared.decl.input,
                Some(true),
                "{name}: `{field}` is not an input field"
            );
        }
        for copy in character.features.iter().chain(&character.inventory) {
            assert!(
                ruleset.item(copy.item.as_str()).is_some(),
                "{name}: no item `{}`",
                copy.item
            );
            for template in &copy.templates {
                assert!(
                    ruleset.item(template.as_str()).is_some(),
                    "{name}: no template `{template}`"
                );
            }
        }
        for applied in &character.applied {
            let source = applied.source.as_str();
            assert!(ruleset.item(source).is_some(), "{name}: no item `{source}`");
        }
    }
}
