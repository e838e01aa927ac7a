//! The build over folders on disk: the format fixture pack, a broken pack with many problems at once,
//! and hostile input.

use std::path::{Path, PathBuf};

use expect_test::expect;
use ocf_load::build::{BuildOptions, Problem, build_pack, build_report};

fn testdata(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../testdata")
        .join(path)
}

/// Problems one a line: `file:line:col: code: message`.
fn lines(problems: &[Problem]) -> String {
    problems
        .iter()
        .map(|p| {
            let at = match (p.line, p.column) {
                (Some(line), Some(column)) => format!(":{line}:{column}"),
                _ => String::new(),
            };
            let severity = if p.is_error() { "" } else { "warning: " };
            format!(
                "{}{at}: {severity}{}: {} [{}]\n",
                p.file, p.code, p.message, p.pointer
            )
        })
        .collect()
}

#[test]
fn the_format_fixture_builds() {
    let report = build_report(&testdata("model/pack"), &BuildOptions::default());
    expect![[r#"
        pack.yaml:5:3: warning: unchecked-dependency: the dependency `core-rules` was not given: references and tags it may declare are not checked [/dependencies/core-rules]
        pack.yaml:6:3: warning: unchecked-dependency: the dependency `demo-extras` was not given: references and tags it may declare are not checked [/dependencies/demo-extras]
    "#]].assert_eq(&lines(&report.problems));
    let release = report.release.expect("no errors");
    let json = serde_json::to_string_pretty(&release).unwrap();
    expect_test::expect_file!["../../../testdata/build/model-pack.release.json"].assert_eq(&json);
}

/// `broken/` with its dependency `base/` given: every problem of every file at once.
#[test]
fn a_broken_pack_reports_every_problem() {
    let base = build_pack(&testdata("build/base"), &BuildOptions::default())
        .unwrap_or_else(|problems| panic!("{}", lines(&problems)));
    let options = BuildOptions {
        dependencies: vec![base],
        ..BuildOptions::default()
    };
    let problems = build_pack(&testdata("build/broken"), &options).unwrap_err();
    expect![[r#"
        rules/a-fields.yaml:5:65: formula-error: formula-syntax: expected `)` to close the arguments, found the end of the formula [/fields/str.mod/formula]
        rules/a-fields.yaml:6:54: unknown-tag: the tag `armour` is not declared [/fields/ac/tags/0]
        rules/b-actions.yaml:2:3: duplicate-id: `fields.level` is also declared at rules/a-fields.yaml:3 [/fields/level]
        rules/b-actions.yaml:6:40: unknown-reference: no band set `hits` in broken or its dependencies [/actions/0/steps/0/bands]
        rules/b-actions.yaml:6:53: unknown-tag: the tag `attack.melee` is not declared [/actions/0/steps/0/tags/0]
        content/classes.yaml:3:10: unknown-tag: the tag `martial` is not declared [/0/tags/0]
        content/classes.yaml:6:15: unknown-reference: no content item `features.missing` in broken or its dependencies [/0/grants/1/item]
        content/classes.yaml:7:36: formula-error: type-mismatch: an activation condition reads `ac`, which is not an input field: activation is decided before fields are computed [/0/grants/2/when]
        content/classes.yaml:8:15: unknown-reference: `other:features.dash` names the pack `other`, which is not a dependency of broken [/0/grants/3/item]
        content/classes.yaml:10:56: formula-error: formula-syntax: expected an expression after `+`, found the end of the formula [/0/effects/0/value]
        content/classes.yaml:11:17: unknown-reference: no field `speed` in broken or its dependencies [/0/effects/1/target]
        content/classes.yaml:13:27: unknown-reference: no content item `conditions.frightened` in broken or its dependencies [/0/immuneTo/0/items/0]
        content/classes.yaml:13:57: formula-error: type-mismatch: an activation condition reads `hp.max`, which is not an input field: activation is decided before fields are computed [/0/immuneTo/0/when]
        content/classes.yaml:14:3: duplicate-id: the content ID `classes.fighter` is also declared at content/classes.yaml:1 [/1/id]
        content/features.yaml:4:9: unknown-reference: no content type `feture` in broken or its dependencies [/1/type]
        content/features.yaml:5:3: circular-extends: `extends` loops: features.rage -> features.fury -> features.rage [/1/extends]
        content/features.yaml:15:38: formula-error: type-mismatch: expected bool, found int [/4/prerequisites/0/check]
    "#]].assert_eq(&lines(&problems));
}

/// Without its dependency, what could be the dependency's is left; the rest is still checked.
#[test]
fn without_dependencies_only_local_names_are_checked() {
    let problems = build_pack(&testdata("build/broken"), &BuildOptions::default()).unwrap_err();
    let codes: Vec<String> = problems
        .iter()
        .map(|p| format!("{}:{} {}", p.file, p.line.unwrap_or(0), p.code))
        .collect();
    expect![[r#"
        [
            "pack.yaml:5 unchecked-dependency",
            "rules/a-fields.yaml:5 formula-error",
            "rules/b-actions.yaml:2 duplicate-id",
            "content/classes.yaml:7 formula-error",
            "content/classes.yaml:8 unknown-reference",
            "content/classes.yaml:10 formula-error",
            "content/classes.yaml:14 duplicate-id",
            "content/features.yaml:5 circular-extends",
            "content/features.yaml:15 formula-error",
        ]
    "#]]
    .assert_debug_eq(&codes);
}

#[test]
fn files_that_do_not_read_are_each_reported() {
    let problems = build_pack(&testdata("build/unreadable"), &BuildOptions::default()).unwrap_err();
    expect![[r#"
        rules/fields.yaml:2:40: unknown-key: unknown key `defualt`, did you mean `default`? [/fields/level]
        rules/settings.yaml:2:13: invalid-document: unknown variant `sideways`, expected one of `floor`, `ceil`, `round` [/settings/rounding]
        content/truncated.yaml:4:1: invalid-yaml: while parsing a flow mapping, did not find expected ',' or '}' []
        content/wrong-type.yaml:2:7: invalid-document: invalid type: string "damage.fire", expected a sequence [/tags]
        content/notes.yml: warning: ignored-file: source files end in `.yaml`; this one is not read []
    "#]].assert_eq(&lines(&problems));
}

/// Loops between field formulas (each once, naming its fields), item field values read by their
/// declared type, and follow-up and `<item>#<id>` references.
#[test]
fn loops_item_values_and_follow_ups() {
    let problems = build_pack(&testdata("build/loops"), &BuildOptions::default()).unwrap_err();
    expect![[r#"
        rules/fields.yaml:3:38: circular-formula: the formulas of `hp.max`, `hp.bonus`, `toughness` read each other in a loop [/fields/hp.max/formula]
        rules/fields.yaml:6:37: circular-formula: the formula of `speed` reads `speed` itself [/fields/speed/formula]
        rules/fields.yaml:8:43: circular-formula: the formulas of `encumbrance`, `load` read each other in a loop [/fields/encumbrance/formula]
        rules/more-fields.yaml:21:39: unknown-reference: no rules action `weapons.axe#hack` in loops [/actions/0/steps/2/use]
        rules/more-fields.yaml:24:22: unknown-reference: no field `mana` in loops [/fieldHints/1/field]
        content/weapons.yaml:3:21: formula-error: formula-syntax: expected an expression after `+`, found the end of the formula [/0/fields/damage]
        content/weapons.yaml:3:37: formula-error: type-mismatch: expected int, found bool [/0/fields/bonus]
        content/weapons.yaml:14:42: unknown-reference: no follow-up `weapons.axe#parry` in loops [/0/actions/0/steps/0/changes/4/followUp]
        content/weapons.yaml:15:42: unknown-reference: no follow-up `riposte` in loops [/0/actions/0/steps/0/changes/5/followUp]
        content/weapons.yaml:20:34: formula-error: type-mismatch: expected int, found decimal [/1/fields/bonus]
    "#]].assert_eq(&lines(&problems));
    let loops: Vec<_> = problems
        .iter()
        .filter(|p| p.code == "circular-formula")
        .map(|p| p.data["fields"].clone())
        .collect();
    expect![[r#"[["hp.max","hp.bonus","toughness"],["speed"],["encumbrance","load"]]"#]]
        .assert_eq(&serde_json::to_string(&loops).unwrap());
}

/// The build expands family keys, so a problem inside an expanded entry is found once per value,
/// where the family key was written; a family key naming no family is `invalid-family`.
#[test]
fn family_keys_expand_with_positions_where_they_were_written() {
    let files = [
        ("pack.yaml", "id: fam\nversion: 1.0.0\nspecVersion: 1.0.0\n"),
        (
            "rules/a.yaml",
            "families:\n  ability: { str: {}, dex: {} }\nfields:\n  abilities.{ability}.mod: { type: integer, formula: \"abilities.{ability}.score +\" }\n  skills.{skill}: { type: integer }\n",
        ),
        ("content/saves.yaml", "id: saves.{ability}\ntype: save\n"),
    ];
    let files: Vec<(String, String)> = files
        .iter()
        .map(|(name, text)| (name.to_string(), text.to_string()))
        .collect();
    let report = ocf_load::build::build_files(&files, &BuildOptions::default());
    expect![[r#"
        rules/a.yaml:4:76: formula-error: formula-syntax: expected an expression after `+`, found the end of the formula [/fields/abilities.str.mod/formula]
        rules/a.yaml:4:76: formula-error: formula-syntax: expected an expression after `+`, found the end of the formula [/fields/abilities.dex.mod/formula]
        rules/a.yaml:5:3: invalid-family: pack `fam`: a family name names no family the pack sees (family `skill`) [/fields/skills.{skill}]
        content/saves.yaml:2:7: unknown-reference: no content type `save` in fam [/0/type]
        content/saves.yaml:2:7: unknown-reference: no content type `save` in fam [/1/type]
    "#]].assert_eq(&lines(&report.problems));
}

/// Every kind of expansion problem, each at the node that causes it: a family key at its key, a
/// `{family}` ID or a named `viewFields` set at its value, a family or value ID under `families`
/// at its key. The lines are `ocf build`'s, with the pointer and the `reason` after.
#[test]
fn family_problems_are_reported_where_they_are_written() {
    let dir = testdata("build/family-problems");
    let problems = build_pack(&dir, &BuildOptions::default()).unwrap_err();
    let shown = Path::new("testdata/build/family-problems");
    let lines: String = problems
        .iter()
        .map(|p| {
            format!(
                "{} [{}] {}\n",
                p.headline(shown),
                p.pointer,
                p.data.get("reason").and_then(|r| r.as_str()).unwrap_or("-")
            )
        })
        .collect();
    expect![[r#"
        testdata/build/family-problems/rules/a-families.yaml:5:3: invalid-family: pack `famprob`: a family name must be letters, digits, `_`, `-` and `.` (family `two words`) [/families/two words] invalid-name
        testdata/build/family-problems/rules/a-families.yaml:9:5: invalid-family: pack `famprob`: a family value ID must be letters, digits, `_`, `-` and `.` (family `famprob:size`) (value `big one`) [/families/size/big one] invalid-value
        testdata/build/family-problems/rules/a-families.yaml:10:3: invalid-family: pack `famprob`: a family name names no family the pack sees (family `other:gear`) [/families/other:gear] unknown-family
        testdata/build/family-problems/rules/a-families.yaml:20:3: invalid-family: pack `famprob`: an expanded key is written twice (key `abilities.str.score`) [/fields/abilities.{ability}.score] duplicate-key
        testdata/build/family-problems/rules/a-families.yaml:21:3: invalid-family: pack `famprob`: a family name names no family the pack sees (family `skill`) [/fields/skills.{skill}.mod] unknown-family
        testdata/build/family-problems/rules/a-families.yaml:22:3: invalid-family: pack `famprob`: a `{` in a key or ID opens no `{family}` placeholder (key `notes.{ability`) [/fields/notes.{ability] malformed-placeholder
        testdata/build/family-problems/rules/a-families.yaml:27:31: invalid-family: pack `famprob`: `fields` names no `viewFields` set the pack sees (viewFields `defences`) [/actions/0/participants/target/fields] unknown-view-fields
        testdata/build/family-problems/rules/a-families.yaml:28:7: invalid-family: pack `famprob`: a family name names no family the pack sees (family `stance`) [/actions/1/id] unknown-family
        testdata/build/family-problems/rules/b-additions.yaml:4:5: invalid-family: pack `famprob`: a family value is given twice (family `famprob:ability`) (value `str`) [/families/famprob:ability/str] duplicate-value
        testdata/build/family-problems/rules/c-large.yaml:9:3: invalid-family: pack `famprob`: expansion would produce more than the safety limit allows (family `f`) [/fields/grid.{a}.{b}.{c}.{d}.{e}.{f}] too-large
        testdata/build/family-problems/content/feats.yaml:1:5: invalid-family: pack `famprob`: a family name names no family the pack sees (family `skill`) [/id] unknown-family
        testdata/build/family-problems/content/gear.yaml:1:7: invalid-family: pack `famprob`: expansion would produce more than the safety limit allows (family `ability`) [/0/id] too-large
        testdata/build/family-problems/content/gear.yaml:8:23: invalid-family: pack `famprob`: `fields` names no `viewFields` set the pack sees (viewFields `kit-view`) [/1/actions/0/participants/user/fields] unknown-view-fields
        testdata/build/family-problems/content/gear.yaml:9:7: invalid-family: pack `famprob`: a `{` in a key or ID opens no `{family}` placeholder (key `gear.{size`) [/2/id] malformed-placeholder
    "#]].assert_eq(&lines);
}

/// A dependency's family problem has no node in the folder: it is at the dependency in
/// `pack.yaml`.
#[test]
fn a_dependency_family_problem_is_at_the_dependency() {
    let dependency: ocf_model::PackRelease = serde_json::from_value(serde_json::json!({
        "id": "dep", "version": "1.0.0", "specVersion": "1.0.0",
        "rules": { "families": { "ghost:skill": { "x": {} } } }
    }))
    .unwrap();
    let files: Vec<(String, String)> = [
        (
            "pack.yaml",
            "id: fam\nversion: 1.0.0\nspecVersion: 1.0.0\ndependencies:\n  dep: ^1.0.0\n",
        ),
        ("rules/a.yaml", "fields:\n  hp: { type: integer }\n"),
    ]
    .iter()
    .map(|(name, text)| (name.to_string(), text.to_string()))
    .collect();
    let options = BuildOptions {
        dependencies: vec![dependency],
        ..BuildOptions::default()
    };
    let report = ocf_load::build::build_files(&files, &options);
    expect![[r#"
        pack.yaml:5:3: invalid-family: pack `dep`: a family name names no family the pack sees (family `ghost:skill`) [/dependencies/dep]
    "#]].assert_eq(&lines(&report.problems));
}

/// A bad key inside an expanded entry is walked once per value, and reported once, where it is
/// written.
#[test]
fn a_problem_inside_an_expanded_entry_is_reported_once() {
    let files: Vec<(String, String)> = [
        ("pack.yaml", "id: fam\nversion: 1.0.0\nspecVersion: 1.0.0\n"),
        (
            "rules/a.yaml",
            "families:\n  ability: { str: {}, dex: {}, con: {} }\nlinks:\n  ally.{ability}:\n    fields:\n      \"x.{nope}\": { type: integer }\n",
        ),
    ]
    .iter()
    .map(|(name, text)| (name.to_string(), text.to_string()))
    .collect();
    let report = ocf_load::build::build_files(&files, &BuildOptions::default());
    expect![[r#"
        rules/a.yaml:6:7: invalid-family: pack `fam`: a family name names no family the pack sees (family `nope`) [/links/ally.{ability}/fields/x.{nope}]
    "#]].assert_eq(&lines(&report.problems));
}
