//! The checker's misses found by the language server's authors (issue 41), as `ocf check` reports
//! them: an enum item field's value with a typo, an unknown item field, a key written twice, a pack
//! checked against a dependency with errors, a state key no declaration gives, and a string formula
//! aimed at an integer field.

use expect_test::expect;
use ocf_load::build::{BuildOptions, Problem, build_files};

fn files(list: &[(&str, &str)]) -> Vec<(String, String)> {
    list.iter()
        .map(|(name, text)| (name.to_string(), text.to_string()))
        .collect()
}

fn lines(problems: &[Problem]) -> String {
    problems
        .iter()
        .map(|p| {
            format!(
                "{}:{}:{}: {}: {} {}\n",
                p.file,
                p.line.unwrap_or(0),
                p.column.unwrap_or(0),
                p.code,
                p.message,
                p.data
                    .get("suggestion")
                    .map_or(String::new(), |s| format!("(suggestion {s})"))
            )
        })
        .collect()
}

const MANIFEST: &str = "id: gear\nversion: 1.0.0\nspecVersion: 1.0.0\n";
const TYPES: &str = "contentTypes:\n  gear:\n    fields:\n      rarity: { type: enum, values: [common, uncommon, rare] }\n      weight: { type: integer }\ntemplateFields:\n  magic: { type: boolean }\n";

#[test]
fn item_fields_are_checked_against_their_declarations() {
    let report = build_files(
        &files(&[
            ("pack.yaml", MANIFEST),
            ("rules/types.yaml", TYPES),
            (
                "content/items.yaml",
                "- id: ring\n  type: gear\n  fields: { rarity: uncomon, magic: true }\n- id: rope\n  type: gear\n  fields:\n    rarty: common\n    weight: 1\n- id: rope.long\n  extends: rope\n  fields: { wieght: 2 }\n",
            ),
        ]),
        &BuildOptions::default(),
    );
    expect![[r#"
        content/items.yaml:3:21: type-mismatch: `uncomon` is not a value of the enum field `rarity` (one of "common", "uncommon", "rare"), did you mean `uncommon`? (suggestion "uncommon")
        content/items.yaml:7:5: unknown-key: unknown item field `rarty`: neither the item's content type nor `templateFields` declares it, did you mean `rarity`? (suggestion "rarity")
        content/items.yaml:11:13: unknown-key: unknown item field `wieght`: neither the item's content type nor `templateFields` declares it, did you mean `weight`? (suggestion "weight")
    "#]]
    .assert_eq(&lines(&report.problems));
}

#[test]
fn self_keys_and_effect_values_are_checked() {
    let report = build_files(
        &files(&[
            ("pack.yaml", MANIFEST),
            (
                "rules/types.yaml",
                "fields:\n  load: { type: integer, default: 0 }\n  heavy: { type: boolean, default: false }\n  label: { type: string, default: '' }\ncontentTypes:\n  gear:\n    state:\n      attuned: { type: boolean, default: false }\n",
            ),
            (
                "content/items.yaml",
                concat!(
                    "- id: ring\n  type: gear\n  effects:\n",
                    "    - { target: load, op: add, value: '1', when: self.atuned }\n",
                    "    - { target: load, op: set, value: \"'heavy'\", when: self.attuned }\n",
                    "    - { target: heavy, op: set, value: '1 + 1' }\n",
                    "    - { target: label, op: set, value: \"'ring'\" }\n",
                    "    - { target: load, op: add, value: 'has(self.quantity) ? self.quantity : 0' }\n",
                ),
            ),
        ]),
        &BuildOptions::default(),
    );
    expect![[r#"
        content/items.yaml:4:50: unknown-name: `self.atuned`: no content type or item of the pack or its dependencies declares a state key or computed value `atuned`, so no copy ever has it, did you mean `attuned`? (suggestion "attuned")
        content/items.yaml:5:40: formula-error: type-mismatch: the value of `set` on the field `load`: expected int | decimal, found string 
        content/items.yaml:6:41: formula-error: type-mismatch: the value of `set` on the field `heavy`: expected bool, found int 
    "#]]
    .assert_eq(&lines(&report.problems));
}

#[test]
fn a_key_written_twice_is_placed_where_it_is_written_again() {
    let report = build_files(
        &files(&[
            ("pack.yaml", MANIFEST),
            ("rules/types.yaml", TYPES),
            (
                "content/a.yaml",
                "id: a\ntype: gear\ntags: []\ntype: gear\n",
            ),
        ]),
        &BuildOptions::default(),
    );
    expect![[r#"
        content/a.yaml:4:1: invalid-document: duplicate field `type` 
    "#]]
    .assert_eq(&lines(&report.problems));
}

#[test]
fn a_dependency_with_errors_is_given_as_drafted() {
    let base = build_files(
        &files(&[
            ("pack.yaml", MANIFEST),
            ("rules/types.yaml", TYPES),
            ("content/a.yaml", "id: a\ntype: gear\ntags: [nope]\n"),
        ]),
        &BuildOptions::default(),
    );
    assert!(base.release.is_none());
    let draft = base.draft.expect("the draft of a build with errors");
    let options = BuildOptions {
        dependencies: vec![draft],
        with_errors: vec!["gear".to_owned()],
        ..BuildOptions::default()
    };
    let report = build_files(
        &files(&[
            (
                "pack.yaml",
                "id: more\nversion: 1.0.0\nspecVersion: 1.0.0\ndependencies:\n  gear: ^1.0.0\n",
            ),
            (
                "content/b.yaml",
                "id: b\ntype: gear\nfields: { rarity: rar }\n",
            ),
        ]),
        &options,
    );
    expect![[r#"
        pack.yaml:5:3: dependency-has-errors: the dependency `gear` has errors (see its own problems): this pack is checked against it as written 
        content/b.yaml:3:19: type-mismatch: `rar` is not a value of the enum field `rarity` (one of "common", "uncommon", "rare"), did you mean `rare`? (suggestion "rare")
    "#]]
    .assert_eq(&lines(&report.problems));
}
