//! What a pack author or app developer sees when a document doesn't fit the format: the path, the
//! reason, and for a misspelt key the key that was meant. Never a panic.

use ocf_model::{
    Character, ContentItem, Effect, FieldDecl, LoadError, LoadErrorKind, PackManifest, PackRelease,
    RulesDocument, Step, from_json_str, from_yaml_str,
};
use serde::de::DeserializeOwned;

fn yaml_error<T: DeserializeOwned + std::fmt::Debug>(text: &str) -> LoadError {
    match from_yaml_str::<T>(text, "content/items/x.yaml") {
        Ok(value) => panic!("expected an error, loaded {value:?}"),
        Err(error) => error,
    }
}

/// One line per case: the error as displayed.
fn report(cases: &[(&str, LoadError)]) -> String {
    cases
        .iter()
        .map(|(name, error)| format!("{name}: {error}\n"))
        .collect()
}

#[test]
fn unknown_keys_name_the_nearest_known_key() {
    let cases = [
        ("item key", yaml_error::<ContentItem>("id: x\nefects: []\n")),
        (
            "effect key",
            yaml_error::<ContentItem>(
                "id: x\neffects:\n  - target: combat.ac\n    op: add\n    value: 1\n    stackkey: status\n",
            ),
        ),
        (
            "target key",
            yaml_error::<Vec<Effect>>("- target: { rools: [attack] }\n  op: add\n  value: 1\n"),
        ),
        (
            "roll modifier key",
            yaml_error::<Vec<Effect>>(
                "- target: { rolls: [attack] }\n  op: rollModifier\n  value: { kind: reroll, bellow: 2 }\n",
            ),
        ),
        (
            "change key",
            yaml_error::<Vec<Step>>(
                "- id: deal\n  kind: changes\n  changes:\n    - { type: adjust, feild: hp.current, by: -1 }\n",
            ),
        ),
        (
            "formula wrapper key",
            yaml_error::<FieldDecl>("type: integer\ntags: [{ formulas: x }]\n"),
        ),
        (
            "character key",
            yaml_error::<Character>("id: c\nspecVersion: 1.0.0\ninventry: []\n"),
        ),
        (
            "copy key",
            yaml_error::<Character>(
                "id: c\nspecVersion: 1.0.0\nfeatures:\n  - { id: f, item: classes.fighter, equiped: true }\n",
            ),
        ),
        ("no near key", yaml_error::<RulesDocument>("colour: red\n")),
    ];
    expect_test::expect![[r#"
        item key: unknown key `efects` at `content/items/x.yaml: /`, did you mean `effects`? (line 2, column 1)
        effect key: unknown key `stackkey` at `content/items/x.yaml: /effects/0`, did you mean `stackKey`? (line 6, column 5)
        target key: unknown key `rools` at `content/items/x.yaml: /0/target`, did you mean `rolls`? (line 1, column 13)
        roll modifier key: unknown key `bellow` at `content/items/x.yaml: /0/value`, did you mean `below`? (line 3, column 26)
        change key: unknown key `feild` at `content/items/x.yaml: /0/changes/0`, did you mean `field`? (line 4, column 23)
        formula wrapper key: unknown key `formulas` at `content/items/x.yaml: /tags/0`, did you mean `formula`? (line 2, column 10)
        character key: unknown key `inventry` at `content/items/x.yaml: /`, did you mean `inventory`? (line 3, column 1)
        copy key: unknown key `equiped` at `content/items/x.yaml: /features/0`, did you mean `equipped`? (line 4, column 37)
        no near key: unknown key `colour` at `content/items/x.yaml: /` (line 1, column 1)
    "#]].assert_eq(&report(&cases));
}

#[test]
fn wrong_types_and_values_say_what_was_expected() {
    let cases = [
        (
            "unknown op",
            yaml_error::<Vec<Effect>>("- { target: combat.ac, op: attLeast, value: 1 }\n"),
        ),
        (
            "missing op",
            yaml_error::<Vec<Effect>>("- { target: combat.ac, value: 1 }\n"),
        ),
        (
            "formula as a list",
            yaml_error::<Vec<Effect>>("- { target: combat.ac, op: add, value: [1] }\n"),
        ),
        (
            "two target kinds",
            yaml_error::<Vec<Effect>>(
                "- { target: { rolls: [a], choices: [b] }, op: add, value: 1 }\n",
            ),
        ),
        (
            "tally outside rolls",
            yaml_error::<Vec<Effect>>(
                "- { target: { choices: [a], tally: effect }, op: option }\n",
            ),
        ),
        (
            "mixed effect value",
            yaml_error::<Vec<Effect>>(
                "- { target: { rolls: [a] }, op: rollModifier, value: { kind: advantage, item: x } }\n",
            ),
        ),
        (
            "unknown step kind",
            yaml_error::<Vec<Step>>("- { id: r, kind: rol }\n"),
        ),
        (
            "choice options with two sources",
            yaml_error::<Vec<Step>>(
                "- { id: c, kind: choice, options: { content: { type: class }, copies: { type: class } } }\n",
            ),
        ),
        (
            "negative quantity",
            yaml_error::<Character>(
                "id: c\nspecVersion: 1.0.0\ninventory: [{ id: a, item: ammo.arrows, quantity: -1 }]\n",
            ),
        ),
        (
            "duplicate field",
            yaml_error::<RulesDocument>(
                "fields:\n  hp.max: { type: integer }\n  hp.max: { type: decimal }\n",
            ),
        ),
        ("field type", yaml_error::<FieldDecl>("type: number\n")),
        (
            "not yaml",
            yaml_error::<PackManifest>("id: \"unclosed\nversion: 1\n"),
        ),
    ];
    expect_test::expect![[r#"
        unknown op: unknown variant `attLeast`, expected one of `set`, `add`, `multiply`, `atLeast`, `atMost`, `grant`, `rollModifier`, `option`, `changes` at `content/items/x.yaml: /0/op` (line 1, column 28)
        missing op: missing field `op` at `content/items/x.yaml: /0` (line 1, column 3)
        formula as a list: invalid type: sequence, expected a formula, a grant value, a roll modifier, an option or `{ changes, to? }` at `content/items/x.yaml: /0/value` (line 1, column 40)
        two target kinds: a target has exactly one of `fields`, `rolls`, `incoming`, `choices`, `steps` at `content/items/x.yaml: /0/target` (line 1, column 3)
        tally outside rolls: `tally` belongs to a `rolls` target only at `content/items/x.yaml: /0/target` (line 1, column 3)
        mixed effect value: key `item` does not belong in a roll modifier at `content/items/x.yaml: /0/value` (line 1, column 3)
        unknown step kind: unknown variant `rol`, expected one of `roll`, `choice`, `allocate`, `branch`, `changes`, `action`, `outcome` at `content/items/x.yaml: /0/kind` (line 1, column 18)
        choice options with two sources: options have exactly one of `content`, `copies`, `pending` at `content/items/x.yaml: /0/options` (line 1, column 3)
        negative quantity: invalid type: integer `-1`, expected u64 at `content/items/x.yaml: /inventory/0/quantity` (line 3, column 51)
        duplicate field: duplicate key `hp.max` at `content/items/x.yaml: /fields` (line 2, column 3)
        field type: unknown variant `number`, expected one of `integer`, `decimal`, `boolean`, `string`, `enum`, `id`, `set`, `dice` at `content/items/x.yaml: /type` (line 1, column 7)
        not yaml: found unexpected end of stream at line 3 column 1, while scanning a quoted scalar at line 1 column 5 at `content/items/x.yaml: /id` (line 3, column 1)
    "#]].assert_eq(&report(&cases));
}

#[test]
fn json_releases_report_paths_too() {
    let error = from_json_str::<PackRelease>(
        r#"{ "id": "p", "version": "1.0.0", "specVersion": "1.0.0",
             "content": [ { "id": "a", "type": "feat", "efects": [] } ] }"#,
        "release.json",
    )
    .unwrap_err();
    expect_test::expect!["unknown key `efects` at `release.json: /content/0`, did you mean `effects`? (line 2, column 63)"].assert_eq(&error.to_string());
    assert!(matches!(
        error.kind,
        LoadErrorKind::UnknownKey { ref key, suggestion: Some(ref s) } if key == "efects" && s == "effects"
    ));

    let trailing = from_json_str::<PackManifest>(
        r#"{ "id": "p", "version": "1.0.0", "specVersion": "1.0.0" } x"#,
        "pack.json",
    )
    .unwrap_err();
    expect_test::expect!["trailing characters at `pack.json: /` (line 1, column 59)"]
        .assert_eq(&trailing.to_string());
}

#[test]
fn keys_and_values_must_fit_their_kind() {
    let cases = [
        (
            "allocate key on a roll",
            yaml_error::<Vec<Step>>(
                "- { id: r, kind: roll, parts: [{ dice: 1d20 }], budget: 4 }\n",
            ),
        ),
        (
            "allocate recommend on a choice",
            yaml_error::<Vec<Step>>(
                "- { id: c, kind: choice, options: [{ id: a }], recommend: { hp: 1 } }\n",
            ),
        ),
        (
            "release with each",
            yaml_error::<Vec<Step>>(
                "- { id: d, kind: changes, each: target, release: { steps: [s] } }\n",
            ),
        ),
        (
            "state key on adjust",
            yaml_error::<Vec<Step>>(
                "- id: d\n  kind: changes\n  changes:\n    - { type: adjust, field: hp.current, by: 1, key: used }\n",
            ),
        ),
        (
            "addItem by ID",
            yaml_error::<Vec<Step>>(
                "- id: d\n  kind: changes\n  changes:\n    - { type: addItem, entry: sword }\n",
            ),
        ),
        (
            "new copy outside addItem",
            yaml_error::<Vec<Step>>(
                "- id: d\n  kind: changes\n  changes:\n    - { type: equip, entry: { item: x }, equipped: true }\n",
            ),
        ),
        (
            "option on a field",
            yaml_error::<Vec<Effect>>("- { target: combat.ac, op: option, value: { id: x } }\n"),
        ),
        (
            "modifier with add",
            yaml_error::<Vec<Effect>>(
                "- { target: { rolls: [a] }, op: add, value: { kind: advantage } }\n",
            ),
        ),
        (
            "set on rolls without parts",
            yaml_error::<Vec<Effect>>("- { target: { rolls: [a] }, op: set, value: 1 }\n"),
        ),
        (
            "multiply on a tally",
            yaml_error::<Vec<Effect>>(
                "- { target: { rolls: [a], tally: effect }, op: multiply, value: 2 }\n",
            ),
        ),
        (
            "tags on a field effect",
            yaml_error::<Vec<Effect>>("- { target: combat.ac, op: add, value: 1, tags: [fire] }\n"),
        ),
        (
            "then on a field effect",
            yaml_error::<Vec<Effect>>(
                "- { target: combat.ac, op: add, value: 1, then: [{ type: setState, entry: self, key: k, value: 1 }] }\n",
            ),
        ),
        (
            "effect without value",
            yaml_error::<Vec<Effect>>("- { target: combat.ac, op: add }\n"),
        ),
    ];
    expect_test::expect![[r#"
        allocate key on a roll: key `budget` does not belong on a `roll` step at `content/items/x.yaml: /0` (line 1, column 1)
        allocate recommend on a choice: a choice step's `recommend` is a formula at `content/items/x.yaml: /0` (line 1, column 1)
        release with each: a step with `release` doesn't take `each` at `content/items/x.yaml: /0` (line 1, column 1)
        state key on adjust: key `key` does not belong on an `adjust` change at `content/items/x.yaml: /0/changes/0` (line 4, column 5)
        addItem by ID: an `addItem` entry is the new copy, `{ item, … }` at `content/items/x.yaml: /0/changes/0` (line 4, column 5)
        new copy outside addItem: an `equip` change names its entry by ID, `self`, `picked` or `{ formula }` at `content/items/x.yaml: /0/changes/0` (line 4, column 5)
        option on a field: `op: option` doesn't apply to this target at `content/items/x.yaml: /0` (line 1, column 1)
        modifier with add: this `value` doesn't fit `op: add` at `content/items/x.yaml: /0` (line 1, column 1)
        set on rolls without parts: `op: set` doesn't apply to this target at `content/items/x.yaml: /0` (line 1, column 1)
        multiply on a tally: `op: multiply` doesn't apply to this target at `content/items/x.yaml: /0` (line 1, column 1)
        tags on a field effect: `tags` is only for `add` on rolls at `content/items/x.yaml: /0` (line 1, column 1)
        then on a field effect: `then` is only for incoming-change effects at `content/items/x.yaml: /0` (line 1, column 1)
        effect without value: an effect needs a `value` at `content/items/x.yaml: /0` (line 1, column 1)
    "#]].assert_eq(&report(&cases));
}

/// Untrusted documents can't exhaust the stack or memory: deep nesting and alias bombs are errors.
#[test]
fn hostile_documents_are_refused() {
    // Branch cases nest steps: 1000 levels deep.
    let mut deep = String::from("x");
    for _ in 0..1000 {
        deep = format!("[{{ id: b, kind: branch, cases: [{{ when: true, steps: {deep} }}] }}]");
    }
    let error = from_yaml_str::<Vec<Step>>(&deep, "deep.yaml").unwrap_err();
    assert!(
        error.to_string().contains("recursion limit exceeded"),
        "{error}"
    );

    // Nine levels of aliases, each repeating the last nine times: 387 million entries if expanded.
    let mut bomb = String::from("id: c\nspecVersion: 1.0.0\nextensions:\n  app:\n");
    bomb.push_str("    a0: &a0 [x, x, x, x, x, x, x, x, x]\n");
    for i in 1..9 {
        let refs = vec![format!("*a{}", i - 1); 9].join(", ");
        bomb.push_str(&format!("    a{i}: &a{i} [{refs}]\n"));
    }
    let error = from_yaml_str::<Character>(&bomb, "bomb.yaml").unwrap_err();
    expect_test::expect!["repetition limit exceeded at `bomb.yaml: /extensions/app/a5/0/4/4/5/4`"]
        .assert_eq(&error.to_string());
}
