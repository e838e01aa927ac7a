//! Families and `viewFields` as loading expands them: exactly the keys each pack sees, homebrew
//! expanded with the pinned packs' families, and an already expanded release left as it is.

use expect_test::expect;
use ocf_load::{LoadOptions, load_homebrew, load_ruleset};
use ocf_model::{Character, PackRelease, Ruleset};
use serde_json::{Value, json};

fn release(json: Value) -> PackRelease {
    serde_json::from_value(json).unwrap()
}

fn core() -> Value {
    json!({
        "id": "core", "version": "1.0.0", "specVersion": "1.0.0",
        "rules": {
            "families": {
                "ability": { "str": { "name": "Strength" }, "dex": { "name": "Dexterity" } },
                "skill": { "athletics": { "ability": "str" } }
            },
            "fields": {
                "abilities.{ability}.score": { "type": "integer", "default": 10 },
                "skills.{skill}.{ability}": { "type": "integer", "formula": "abilities.{ability}.score" }
            }
        }
    })
}

fn addition(id: &str, value: &str) -> Value {
    json!({
        "id": id, "version": "1.0.0", "specVersion": "1.0.0",
        "dependencies": { "core": "^1.0.0" },
        "rules": {
            "families": { "core:skill": { value: {} } },
            "fields": { "bonus.{skill}": { "type": "integer" } }
        }
    })
}

fn field_ids(ruleset: &Ruleset) -> String {
    ruleset
        .fields
        .iter()
        .map(|(id, _)| id)
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn each_pack_expands_with_the_values_it_sees() {
    let releases = [
        release(addition("sea", "sailing")),
        release(core()),
        release(addition("lore", "arcana")),
    ];
    let ruleset = load_ruleset(&releases, &LoadOptions::default()).unwrap();
    // Nested placeholders expand left to right; `sea` sees `sailing` but not `lore`'s `arcana`,
    // although it comes first in load order.
    expect![[r#"
        sea:bonus.athletics
        sea:bonus.sailing
        core:abilities.str.score
        core:abilities.dex.score
        core:skills.athletics.str
        core:skills.athletics.dex
        lore:bonus.athletics
        lore:bonus.arcana"#]]
    .assert_eq(&field_ids(&ruleset));
    // The family's values for formulas: the declaring pack's, then additions in load order.
    let skill = ruleset.family("lore", "skill").unwrap().1;
    let values: Vec<_> = skill
        .values
        .iter()
        .map(|(v, m)| (v, m.declared_in.as_str()))
        .collect();
    assert_eq!(
        values,
        [
            ("athletics", "core"),
            ("sailing", "sea"),
            ("arcana", "lore")
        ]
    );
    assert_eq!(
        ruleset.family_field("sea", "core:ability", "dex", "name"),
        Some(&json!("Dexterity"))
    );
    assert_eq!(
        ruleset.family_field("sea", "ability", "dex", "name"),
        Some(&json!("Dexterity"))
    );
    assert_eq!(ruleset.family_field("core", "ability", "con", "name"), None);
}

#[test]
fn homebrew_expands_with_the_pinned_packs_families() {
    let ruleset = load_ruleset(&[release(core())], &LoadOptions::default()).unwrap();
    let character: Character = serde_json::from_value(json!({
        "id": "c1", "specVersion": "1.0.0", "packs": [{ "id": "core", "version": "1.0.0" }],
        "homebrew": { "rules": { "fields": { "house.{ability}": { "type": "integer" } } } }
    }))
    .unwrap();
    let layered = load_homebrew(&ruleset, &character).unwrap();
    assert!(layered.field("homebrew:house.str").is_some());
    assert!(layered.field("homebrew:house.dex").is_some());
}

#[test]
fn an_expanded_release_loads_as_given() {
    let ruleset = load_ruleset(&[release(core())], &LoadOptions::default()).unwrap();
    // A release with families but no family key left: expansion is a no-op, so publishing the
    // expanded release changes nothing.
    let mut expanded = release(core());
    expanded.rules.fields = serde_json::from_value(json!({
        "abilities.str.score": { "type": "integer", "default": 10 },
        "abilities.dex.score": { "type": "integer", "default": 10 },
        "skills.athletics.str": { "type": "integer", "formula": "abilities.str.score" },
        "skills.athletics.dex": { "type": "integer", "formula": "abilities.dex.score" }
    }))
    .unwrap();
    let again = load_ruleset(&[expanded], &LoadOptions::default()).unwrap();
    assert_eq!(again.fields, ruleset.fields);
    assert_eq!(again.families, ruleset.families);
}
