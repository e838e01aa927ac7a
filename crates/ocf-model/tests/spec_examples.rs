//! Every YAML example of pack data in the spec chapters loads into the type its directive names, and
//! survives a JSON round trip unchanged (so the serialized form, a pack release's, says the same).

use std::fmt::Debug;
use std::fs;
use std::path::{Path, PathBuf};

use ocf_model::{
    Action, Change, ChangesValue, ContentItem, Effect, RollModifier, RollPart, RulesDocument, Step,
    from_json_str, from_yaml_str,
};
use serde::Serialize;
use serde::de::DeserializeOwned;

fn examples_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/spec-examples")
}

fn examples() -> Vec<(String, String)> {
    let mut files: Vec<_> = fs::read_dir(examples_dir())
        .expect("testdata/spec-examples exists")
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "yaml"))
        .collect();
    files.sort();
    files
        .into_iter()
        .map(|path| {
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            (name, fs::read_to_string(&path).unwrap())
        })
        .collect()
}

fn directive(text: &str) -> Option<&str> {
    text.lines()
        .find_map(|line| line.strip_prefix("# ocf-model: "))
        .map(str::trim)
}

/// Loads `text` as `T`, then checks that JSON of it loads back to the same value.
fn load<T>(name: &str, text: &str) -> Result<(), String>
where
    T: DeserializeOwned + Serialize + PartialEq + Debug,
{
    let value: T = from_yaml_str(text, name).map_err(|e| e.to_string())?;
    let json = serde_json::to_string(&value).map_err(|e| e.to_string())?;
    let again: T = from_json_str(&json, name).map_err(|e| format!("round trip: {e}\n{json}"))?;
    if again != value {
        return Err(format!(
            "round trip changed the value:\n{value:#?}\n{again:#?}"
        ));
    }
    Ok(())
}

#[test]
fn every_spec_example_loads() {
    let examples = examples();
    // 9 from effects.md, 45 from dice-and-actions.md (one of them twice, quoted).
    assert_eq!(
        examples.len(),
        54,
        "the number of extracted examples changed"
    );
    let mut failures = Vec::new();
    let mut expected_failures = Vec::new();
    for (name, text) in &examples {
        let result = match directive(text) {
            Some("effects") => load::<Vec<Effect>>(name, text),
            Some("steps") => load::<Vec<Step>>(name, text),
            Some("actions") => load::<Vec<Action>>(name, text),
            Some("action") => load::<Action>(name, text),
            Some("changes") => load::<Vec<Change>>(name, text),
            Some("changes-value") => load::<ChangesValue>(name, text),
            Some("item") => load::<ContentItem>(name, text),
            Some("rules") => load::<RulesDocument>(name, text),
            Some("roll-modifiers") => load::<Vec<RollModifier>>(name, text),
            Some("roll-parts") => load::<Vec<RollPart>>(name, text),
            other => Err(format!("no known `# ocf-model:` directive ({other:?})")),
        };
        let expected_to_fail = text.lines().any(|line| line == "# ocf-model-fails: yes");
        match (result, expected_to_fail) {
            (Ok(()), false) => {}
            (Err(error), true) => expected_failures.push(error),
            (Err(error), false) => failures.push(format!("{name}: {error}")),
            (Ok(()), true) => failures.push(format!("{name}: loads, but is marked to fail")),
        }
    }
    assert!(
        failures.is_empty(),
        "{} examples failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
    // The spec's own mistake reads as what it is: a key that isn't one.
    expect_test::expect!["unknown key `abilities.cha.mod)` at `da-inline-roll-modifiers.yaml: /0` (line 9, column 97)"].assert_eq(&expected_failures.join("\n"));
}
