//! Field values in the fixed order (EF, "Fixed order"; EC, "Field values"): one table-driven case
//! per rule, each a ruleset, a character, and the sheet parts it must give.

mod common;

use common::{character, ruleset};
use expect_test::{Expect, expect};
use ocf_engine::Session;
use serde_json::Value;

/// Computes the sheet and prints `field = value  [base …] breakdown…` for the fields named, then
/// the `competing`, `issues` and `errors` lists when not empty.
fn check(rules: &str, pc: &str, fields: &[&str], expected: Expect) {
    let mut session = Session::new(ruleset(rules));
    let id = session.open(&character(pc), &[]);
    let sheet = session.sheet_json(id).unwrap();
    let mut out = String::new();
    for field in fields {
        let v = &sheet["values"][*field];
        let shown = match &v["error"] {
            Value::String(code) => format!("error {code}"),
            _ => v["value"].to_string(),
        };
        out.push_str(&format!("{field} = {shown} (base {})", v["base"]));
        for step in v["breakdown"].as_array().into_iter().flatten() {
            out.push_str(&format!(
                " {} {} from {}",
                step["op"], step["value"], step["source"]["id"]
            ));
        }
        out.push('\n');
    }
    for list in ["competing", "issues", "errors"] {
        for entry in sheet[list].as_array().into_iter().flatten() {
            out.push_str(&format!("{list}: {entry}\n"));
        }
    }
    expected.assert_eq(&out);
}

const ABILITY: &str = r#"
fields:
  t:str: { type: integer, input: true, default: 10, min: 1, max: 30 }
  t:mod: { type: integer, formula: "floor((str - 10) / 2)" }
  t:ac: { type: integer, formula: "10 + mod" }
"#;

#[test]
fn base_from_input_default_and_formula() {
    check(
        ABILITY,
        "values: { t:str: 14 }",
        &["t:str", "t:mod", "t:ac"],
        expect![[r#"
            t:str = 14 (base 14)
            t:mod = 2 (base 2)
            t:ac = 12 (base 12)
        "#]],
    );
}

#[test]
fn a_saved_value_out_of_range_is_reported_and_clamped() {
    check(
        ABILITY,
        "values: { t:str: 40 }",
        &["t:str", "t:mod"],
        expect![[r#"
            t:str = 30 (base 30)
            t:mod = 10 (base 10)
            errors: {"code":"out-of-range","message":"the saved value 40 is outside the field's bounds; it is read as 30","path":"/values/t:str","data":{"field":"t:str","value":40,"bound":30}}
        "#]],
    );
}

const CONTENT: &str = r#"
contentTypes:
  t:feature: {}
  t:armor: {}
"#;

/// The ability fields plus `fields` (more field declarations, indented as map entries) and
/// `rest` (other top-level keys).
fn with_fields(fields: &str, rest: &str) -> String {
    format!("{ABILITY}{fields}{CONTENT}{rest}")
}

fn with(rest: &str) -> String {
    with_fields("", rest)
}

#[test]
fn competing_set_effects_report_and_apply_the_recommendation() {
    let rules = with(
        r#"
content:
  t:mage-armor: { id: t:mage-armor, type: t:feature, effects: [{ target: t:ac, op: set, value: "13 + mod" }] }
  t:unarmored: { id: t:unarmored, type: t:feature, effects: [{ target: t:ac, op: set, value: "10 + mod + 2" }] }
"#,
    );
    check(
        &rules,
        "{ values: { t:str: 14 }, features: [{ id: a, item: t:mage-armor }, { id: b, item: t:unarmored }] }",
        &["t:ac"],
        expect![[r#"
            t:ac = 15 (base 12) "set" 15 from "t:mage-armor"
            competing: {"field":"t:ac","op":"set","options":[{"id":"t:mage-armor#0","value":15,"source":{"type":"item","id":"t:mage-armor","entry":"a"}},{"id":"t:unarmored#0","value":14,"source":{"type":"item","id":"t:unarmored","entry":"b"}}],"recommended":"t:mage-armor#0","applied":"t:mage-armor#0"}
        "#]],
    );
    // The player's pick applies instead.
    check(
        &rules,
        "{ values: { t:str: 14 }, competing: ['t:unarmored#0'], features: [{ id: a, item: t:mage-armor }, { id: b, item: t:unarmored }] }",
        &["t:ac"],
        expect![[r#"
            t:ac = 14 (base 12) "set" 14 from "t:unarmored"
            competing: {"field":"t:ac","op":"set","options":[{"id":"t:mage-armor#0","value":15,"source":{"type":"item","id":"t:mage-armor","entry":"a"}},{"id":"t:unarmored#0","value":14,"source":{"type":"item","id":"t:unarmored","entry":"b"}}],"recommended":"t:mage-armor#0","applied":"t:unarmored#0"}
        "#]],
    );
}

#[test]
fn stacking_policies() {
    let rules = |policy: &str| {
        with(&format!(
            r#"
settings: {{ stacking: {{ keys: {{ status: {policy}, source: highestOnly }} }} }}
content:
  t:bless: {{ id: t:bless, type: t:feature, effects: [{{ target: t:ac, op: add, value: 1d4, stackKey: source }}] }}
  t:ring: {{ id: t:ring, type: t:feature, effects: [{{ target: t:ac, op: add, value: 1, stackKey: status }}] }}
  t:cloak: {{ id: t:cloak, type: t:feature, effects: [{{ target: t:ac, op: add, value: 2, stackKey: status }}] }}
  t:plain: {{ id: t:plain, type: t:feature, effects: [{{ target: t:ac, op: add, value: 1 }}] }}
"#
        ))
    };
    let pc =
        "features: [{ id: r, item: t:ring }, { id: c, item: t:cloak }, { id: p, item: t:plain }]";
    check(
        &rules("addAll"),
        pc,
        &["t:ac"],
        expect![[r#"
            t:ac = 14 (base 10) "add" 1 from "t:ring" "add" 2 from "t:cloak" "add" 1 from "t:plain"
        "#]],
    );
    check(
        &rules("highestOnly"),
        pc,
        &["t:ac"],
        expect![[r#"
            t:ac = 13 (base 10) "add" 2 from "t:cloak" "add" 1 from "t:plain"
        "#]],
    );
    check(
        &rules("lowestOnly"),
        pc,
        &["t:ac"],
        expect![[r#"
            t:ac = 12 (base 10) "add" 1 from "t:ring" "add" 1 from "t:plain"
        "#]],
    );
    check(
        &rules("playerChooses"),
        pc,
        &["t:ac"],
        expect![[r#"
            t:ac = 13 (base 10) "add" 2 from "t:cloak" "add" 1 from "t:plain"
            competing: {"field":"t:ac","op":"add","stackKey":"status","options":[{"id":"t:ring#0","value":1,"source":{"type":"item","id":"t:ring","entry":"r"}},{"id":"t:cloak#0","value":2,"source":{"type":"item","id":"t:cloak","entry":"c"}}],"recommended":"t:cloak#0","applied":"t:cloak#0"}
        "#]],
    );
}

#[test]
fn the_reserved_source_key_groups_copies_of_the_same_content() {
    // Two Blesses don't stack; a 1d4 and a flat 2 compare by average (2.5 against 2).
    let rules = with_fields(
        "  t:attack: { type: dice, default: \"1d20\" }\n",
        r#"
settings: { stacking: { keys: { source: highestOnly } } }
content:
  t:bless: { id: t:bless, type: t:feature, effects: [{ target: t:attack, op: add, value: 1d4, stackKey: source }] }
"#,
    );
    check(
        &rules,
        "features: [{ id: b1, item: t:bless }, { id: b2, item: t:bless }]",
        &["t:attack"],
        expect![[r#"
            t:attack = "1d20 + 1d4" (base "1d20") "add" "1d4" from "t:bless"
        "#]],
    );
}

#[test]
fn multiply_rounds_after_each_step_and_decimals_keep_six_places() {
    let rules = r#"
settings: { rounding: floor }
fields:
  t:hp: { type: integer, default: 50 }
  t:speed: { type: integer, default: 50, rounding: ceil }
  t:weight: { type: decimal, default: 0.1 }
  t:half: { type: integer, default: 5 }
contentTypes: { t:feature: {} }
content:
  t:x:
    id: t:x
    type: t:feature
    effects:
      - { target: t:hp, op: multiply, value: 0.5 }
      - { target: t:hp, op: multiply, value: 0.5 }
      - { target: t:speed, op: multiply, value: 0.14 }
      - { target: t:weight, op: add, value: 0.2 }
      - { target: t:half, op: add, value: 0.5 }
"#;
    // 50 × 0.5 = 25, × 0.5 = 12.5 → 12 (floor after each); 50 × 0.14 is 7 exactly, ceil 7 not 8;
    // 0.1 + 0.2 is 0.3; an integer field's decimal add rounds once at the end (5.5 → 5).
    check(
        rules,
        "features: [{ id: x, item: t:x }]",
        &["t:hp", "t:speed", "t:weight", "t:half"],
        expect![[r#"
            t:hp = 12 (base 50) "multiply" 0.5 from "t:x" "multiply" 0.5 from "t:x"
            t:speed = 7 (base 50) "multiply" 0.14 from "t:x"
            t:weight = 0.3 (base 0.1) "add" 0.2 from "t:x"
            t:half = 5 (base 5) "add" 0.5 from "t:x"
        "#]],
    );
}

#[test]
fn at_least_then_at_most_and_derived_clamping() {
    let rules = with_fields(
        "  t:capped: { type: integer, formula: \"str * 3\", max: 40 }\n",
        r#"
content:
  t:gauntlets: { id: t:gauntlets, type: t:feature, effects: [{ target: t:str, op: atLeast, value: 19, when: self.equipped }] }
  t:curse: { id: t:curse, type: t:feature, effects: [{ target: t:str, op: atMost, value: 17 }, { target: t:str, op: atLeast, value: 12 }] }
"#,
    );
    check(
        &rules,
        "{ values: { t:str: 8 }, features: [{ id: g, item: t:gauntlets, equipped: true }, { id: c, item: t:curse }] }",
        &["t:str", "t:capped"],
        expect![[r#"
            t:str = 17 (base 8) "atLeast" 19 from "t:gauntlets" "atMost" 17 from "t:curse"
            t:capped = 40 (base 51)
        "#]],
    );
    // Unequipped, the gauntlets' `when` fails; the curse's atLeast 12 applies.
    check(
        &rules,
        "{ values: { t:str: 8 }, features: [{ id: g, item: t:gauntlets }, { id: c, item: t:curse }] }",
        &["t:str"],
        expect![[r#"
            t:str = 12 (base 8) "atLeast" 12 from "t:curse"
        "#]],
    );
}

#[test]
fn an_effect_on_a_set_of_fields_stacks_on_each_field() {
    let rules = r#"
settings: { stacking: { keys: { status: highestOnly } } }
fields:
  t:check.a: { type: integer, default: 1, tags: [check] }
  t:check.b: { type: integer, default: 2, tags: [check] }
  t:dc: { type: integer, default: 10, tags: [dc] }
  t:name: { type: string, default: x, tags: [check] }
contentTypes: { t:condition: {} }
content:
  t:frightened:
    id: t:frightened
    type: t:condition
    effects: [{ target: { fields: { where: "'check' in item.tags" } }, op: add, value: -2, stackKey: status }]
  t:sickened:
    id: t:sickened
    type: t:condition
    effects: [{ target: t:check.a, op: add, value: -1, stackKey: status }]
"#;
    check(
        rules,
        "features: [{ id: f, item: t:frightened }, { id: s, item: t:sickened }]",
        &["t:check.a", "t:check.b", "t:dc"],
        expect![[r#"
            t:check.a = 0 (base 1) "add" -1 from "t:sickened"
            t:check.b = 0 (base 2) "add" -2 from "t:frightened"
            t:dc = 10 (base 10)
        "#]],
    );
}

#[test]
fn scope_holder_and_applied() {
    // A caster who knows Bless doesn't bless themselves; the character it is applied to does.
    let rules = with(
        r#"
content:
  t:bless:
    id: t:bless
    type: t:feature
    effects:
      - { target: t:ac, op: add, value: 1, scope: applied }
      - { target: t:str, op: add, value: 1 }
"#,
    );
    check(
        &rules,
        "features: [{ id: known, item: t:bless }]",
        &["t:str", "t:ac"],
        expect![[r#"
            t:str = 11 (base 10) "add" 1 from "t:bless"
            t:ac = 10 (base 10)
        "#]],
    );
    check(
        &rules,
        "applied: [{ id: cast, source: t:bless }]",
        &["t:str", "t:ac"],
        expect![[r#"
            t:str = 10 (base 10)
            t:ac = 11 (base 10) "add" 1 from "t:bless"
        "#]],
    );
}

#[test]
fn immunities_block_applied_entries() {
    let rules = with(
        r#"
content:
  t:poisoned: { id: t:poisoned, type: t:feature, effects: [{ target: t:ac, op: add, value: -2, scope: applied }] }
  t:petrified:
    id: t:petrified
    type: t:feature
    immuneTo: [{ id: no-poison, items: [t:poisoned], scope: applied }]
    effects: [{ target: t:str, op: set, value: 1, scope: applied }]
  t:purity:
    id: t:purity
    type: t:feature
    immuneTo: [{ id: poison, items: [t:poisoned] }]
"#,
    );
    // Petrified blocks poisoned whether it comes before or after it.
    check(
        &rules,
        "applied: [{ id: p1, source: t:poisoned }, { id: p2, source: t:petrified }]",
        &["t:ac", "t:str"],
        expect![[r#"
            t:ac = 5 (base 5)
            t:str = 1 (base 10) "set" 1 from "t:petrified"
            issues: {"code":"immune","id":"t:petrified/no-poison","source":{"type":"item","id":"t:petrified","entry":"p2"},"data":{"entry":"p1","item":"t:poisoned"}}
        "#]],
    );
    // A holder immunity blocks it too, reported against the holder's activation.
    check(
        &rules,
        "{ features: [{ id: m, item: t:purity }], applied: [{ id: p1, source: t:poisoned }] }",
        &["t:ac"],
        expect![[r#"
            t:ac = 10 (base 10)
            issues: {"code":"immune","id":"t:purity/poison","source":{"type":"item","id":"t:purity","entry":"m"},"data":{"entry":"p1","item":"t:poisoned"}}
        "#]],
    );
}

#[test]
fn grants_follow_when_and_add_to_set_fields() {
    let rules = with_fields(
        "  t:level: { type: integer, input: true, default: 1 }\n  t:proficiencies: { type: set, default: [t:light] }\n",
        r#"
content:
  t:fighter:
    id: t:fighter
    type: t:feature
    grants: [{ item: t:extra-attack, when: "level >= 5" }]
    effects: [{ target: t:proficiencies, op: grant, value: { item: t:heavy } }]
  t:extra-attack: { id: t:extra-attack, type: t:feature, effects: [{ target: t:ac, op: add, value: 1 }] }
"#,
    );
    check(
        &rules,
        "{ values: { t:level: 4 }, features: [{ id: f, item: t:fighter }] }",
        &["t:ac", "t:proficiencies"],
        expect![[r#"
            t:ac = 10 (base 10)
            t:proficiencies = ["t:heavy","t:light"] (base ["t:heavy","t:light"]) "grant" "t:heavy" from "t:fighter"
        "#]],
    );
    check(
        &rules,
        "{ values: { t:level: 5 }, features: [{ id: f, item: t:fighter }] }",
        &["t:ac"],
        expect![[r#"
            t:ac = 11 (base 10) "add" 1 from "t:extra-attack"
        "#]],
    );
}

#[test]
fn prerequisites_and_limits_are_issues() {
    let rules = with(
        r#"
content:
  t:heavy-armor: { id: t:heavy-armor, type: t:feature, prerequisites: [{ id: strong, check: "str >= 13" }] }
"#,
    );
    let rules = rules.replacen(
        "t:ac: { type: integer, formula: \"10 + mod\" }",
        "t:ac: { type: integer, formula: \"10 + mod\", limits: { sane: { max: 11 } } }",
        1,
    );
    check(
        &rules,
        "{ values: { t:str: 14 }, features: [{ id: h, item: t:heavy-armor }] }",
        &["t:ac"],
        expect![[r#"
            t:ac = 12 (base 12)
            issues: {"code":"out-of-limits","id":"t:ac","data":{"field":"t:ac","limit":"sane","value":12,"bound":11}}
        "#]],
    );
    check(
        &rules,
        "{ values: { t:str: 10 }, features: [{ id: h, item: t:heavy-armor }] }",
        &["t:ac"],
        expect![[r#"
            t:ac = 10 (base 10)
            issues: {"code":"prerequisite-not-met","id":"t:heavy-armor/strong","source":{"type":"item","id":"t:heavy-armor","entry":"h"},"data":{}}
        "#]],
    );
}

#[test]
fn a_failing_effect_gives_its_field_the_error() {
    let rules = with(
        r#"
content:
  t:bad: { id: t:bad, type: t:feature, effects: [{ target: t:ac, op: add, value: "'x'" }] }
"#,
    );
    check(
        &rules,
        "features: [{ id: b, item: t:bad }]",
        &["t:ac", "t:mod"],
        expect![[r#"
            t:ac = error type-mismatch (base null)
            t:mod = 0 (base 0)
        "#]],
    );
}
